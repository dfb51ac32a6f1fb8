"""Tuning without fooling yourself: metric landscapes over parameter grids, the region tied with the best, cross-validation.

A sweep evaluates one metric for one system at every setting of a grid and keeps the *per-question* values
(settings x questions), so that every later question is answered on the same matrix:

- the best setting (highest mean; exact ties go to the first setting in grid order);
- the settings that can't be told apart from it: those whose paired bootstrap interval of (setting - best)
  over questions holds zero (the article's bootstrap, the same resamples for every setting, all at once);
- k-fold cross-validation: the questions are split into k folds by a seeded permutation; for each fold the
  best setting on the other folds is measured on the held-out fold. The cross-validated mean (over all
  questions, each measured by a setting chosen without it) beside the in-sample best mean shows how much of
  a tuned gain is over-fitting;
- the verdict on the current setting (`verdict`, one rule for the Tuning page and `python -m retrieval tune`):
  the paired permutation test against the best with Holm's correction over every comparison with the best,
  read together with the cross-validated gain over the current setting.

The four sweeps, each reusing what the others keep fixed:

- ``k1,b``: BM25 over a k1 x b grid (k1 0..3 in 16 steps, b 0..1 in 11 steps), re-weighting the count matrix
  built once (never re-tokenising);
- ``dims``: LSA over 1..min(max allowed, 200) dimensions;
- ``rrf_k``: RRF's constant 1..200 over the fixed lists of the fused members (``Params.members``: the article's
  BM25 and LSA, or any systems, TREC runs and dense vectors included);
- ``alpha``: the weighted fusion's weight 0..1 over the fixed scores of exactly two members (alpha weighs the
  first); more members each have their own weight, which is set, not swept.

Three joint sweeps vary a fusion's own parameter and LSA's d together (``alpha,dims``, ``rrf_k,dims``, ``k1,dims``,
see JOINT): each axis is the parameter's tuning grid (params.grid_for) thinned to at most JOINT_POINTS values, d
at geometric positions; each d is one LSA fit and run from the engine, the fusion goes through the one-parameter
sweeps' fast paths, so every cell is exact.

Every sweep gives exactly what ``experiment.evaluate`` gives at the same setting (ties by document id
included); the tests check it point by point. The only exception, stated in the sweep's notes: a dims curve
of more than ``REFIT_UP_TO`` points truncates one SVD instead of fitting one per d, which is the same
mathematics and differs only in the last digits.

Speed: the BM25 grid scores every question densely per setting with bm25.score's own sums (listed once,
re-weighted per setting with bm25.bm25_weight; tests/test_kernels.py checks them against bm25.score to the
last bit), and a metric cut at k only needs each row's top k (a partition, not a sort). The 176 settings take about 0.6 s of CPU on Cranfield (bench/tuning.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

import retrieval.fusion as fusion

from ..core.errors import InputError
from ..core.params import MAX_DIMS, SPECS, Params, grid_for
from ..corpus.dataset import Dataset, Qrels
from ..corpus.text import Analysis, build_index, query_counts
from ..engine.engine import Engine, for_dataset
from ..evaluation import metrics, significance, stats
from ..evaluation.experiment import Evaluation
from ..retrievers import bm25, lsa
from ..retrievers.ranking import THRESHOLD, Ranking, judged_layout, order_by_score, rank_rows
from ..retrievers.systems import Sources

K1_GRID = grid_for("k1")  # 0, 0.2, ..., 3.0 (exact decimals: 6 * 3 / 15 == 1.2)
B_GRID = grid_for("b")  # 0, 0.1, ..., 1.0
RRF_K_GRID = grid_for("rrf_k")  # 1, 2, ..., 200
ALPHA_GRID = grid_for("alpha")  # 0, 0.05, ..., 1.0
REFIT_UP_TO = 40  # dims curves up to this many points fit one SVD per d; longer ones truncate one SVD
DIRECT_UP_TO = 32  # a truncated curve's cosines are normalised-then-multiplied up to this d, updated beyond it
FOLDS = 5
SEED = 0
PARAMS = ("k1,b", "dims", "rrf_k", "alpha", "alpha,dims", "rrf_k,dims", "k1,dims", "analysis")
SYSTEM_OF = {
    "k1,b": "BM25",
    "dims": "LSA",
    "rrf_k": "RRF",
    "alpha": "weighted",
    "alpha,dims": "weighted",
    "rrf_k,dims": "RRF",
    "k1,dims": "weighted",
    "analysis": "BM25",
}
PARAMS_FORMS = " | ".join(f"{k} ({SYSTEM_OF[k]})" for k in PARAMS)  # what --params takes, each with the system it
# scores: `tune --help` and the error of an unknown value list it alike
_DECIMALS = 12  # means are compared at this many decimals, so exact ties never depend on summation order
_BOOT_CELLS = 8_000_000  # settings x resamples x questions bootstrapped at once
_NEAR_ZERO = 1e-9  # interval ends this close to zero are recomputed exactly


# ------------------------------------------------------------------------------------------- ranks


def judged_ranks(
    dataset: Dataset, scores: np.ndarray, threshold: float = THRESHOLD, depth: int | None = None
) -> np.ndarray:
    """Rank of every judged document in dense scores (questions x documents), as ranking.rank_rows gives it.

    Results are the scores above `threshold`, ordered by score descending then document id; 0 = not
    retrieved. With `depth`, a rank beyond it is 0 too (the list is cut there, as in the fusions; a metric
    cut at k needs no deeper rank). Each row goes through the compiled dense pass every dense ranking uses
    (`kernels.rank_dense` through `rank_rows`: a sampled cut, no sort of the row), keeping the best `depth`.
    """
    s = np.asarray(scores, dtype=np.float64)
    if s.shape[1] == 0 or len(dataset.qrels) == 0:
        return np.zeros(len(dataset.qrels), dtype=np.int64)
    keep = 1 if depth is None else max(1, min(int(depth), s.shape[1]))
    ranking = rank_rows("judged", dataset, [(0, s)], keep, threshold, truncate=depth is not None)
    return np.asarray(ranking.judged_rank, dtype=np.int64)


def _ranks(
    dataset: Dataset, scores: np.ndarray, metric: metrics.Metric, threshold: float = THRESHOLD, depth: int | None = None
) -> np.ndarray:
    """Judged ranks from dense scores, ranked only as deep as the metric (or the cut list) looks."""
    cut = metric.k if depth is None else (depth if metric.k is None else min(depth, metric.k))
    return judged_ranks(dataset, scores, threshold, cut)


def _values(dataset: Dataset, judged_rank: np.ndarray, metric: metrics.Metric) -> np.ndarray:
    """One metric per evaluated question for each row of judged ranks (settings x judgements): one metrics.per_query call.

    The judgements are tiled once per setting, each copy under its own block of question numbers, so a single
    call computes every setting with the same arithmetic as a call per setting.
    """
    r = np.atleast_2d(np.asarray(judged_rank, dtype=np.int64))
    n, nq, qr = r.shape[0], dataset.n_queries, dataset.qrels
    tiled = Qrels(
        query=(qr.query[None, :] + nq * np.arange(n)[:, None]).ravel(),
        doc=np.tile(qr.doc, n),
        doc_id=np.tile(qr.doc_id, n),
        grade=np.tile(qr.grade, n),
    )
    return metrics.per_query(tiled, nq * n, r.ravel(), metric).reshape(n, nq)[:, dataset.evaluated]


# ------------------------------------------------------------------------------------------- sweeps


@dataclass(frozen=True, eq=False)
class Sweep:
    """One metric's per-question values for one system over a grid of one or two parameters."""

    system: str
    metric: str
    names: tuple[str, ...]  # ("k1", "b"), ("dims",), ("rrf_k",) or ("alpha",)
    axes: tuple[np.ndarray, ...]  # the values of each parameter
    values: np.ndarray  # settings x questions; settings in row-major grid order
    qids: tuple[str, ...]  # the evaluated questions, column order
    base: Params  # the parameters held fixed
    notes: tuple[str, ...] = field(default=())
    choices: tuple[str, ...] = ()  # the analysis sweep's: the name of each value of its "analysis" axis (0, 1, ...)

    @property
    def shape(self) -> tuple[int, ...]:
        """Grid shape, one length per parameter."""
        return tuple(a.size for a in self.axes)

    @property
    def means(self) -> np.ndarray:
        """Mean over questions of every setting."""
        return self.values.mean(axis=1)

    def grid(self) -> np.ndarray:
        """The means in grid shape (k1 rows x b columns for the BM25 grid)."""
        return self.means.reshape(self.shape)

    def setting(self, i: int) -> dict[str, float]:
        """The parameter values of setting `i`."""
        pos = np.unravel_index(int(i), self.shape)
        return {
            n: self.choices[int(a[p])] if n == "analysis" else _num(a[p], n)
            for n, a, p in zip(self.names, self.axes, pos)
        }

    def nearest(self, **params: float) -> int:
        """Index of the grid setting closest to the given parameter values (missing ones: the base's)."""
        pos = []
        for n, a in zip(self.names, self.axes):
            if n == "analysis":
                name = params.get(n, "/".join(self.base.analysis))
                pos.append(self.choices.index(name) if name in self.choices else 0)
                continue
            v = params.get(n, getattr(self.base, n))
            pos.append(int(np.argmin(np.abs(a - float(v)))))
        return int(np.ravel_multi_index(tuple(pos), self.shape))


def _num(x: float, name: str) -> float | int:
    """A parameter value as a plain Python number: an int for dims, a float otherwise."""
    return int(x) if name == "dims" else float(x)


def _axis(values, name: str, lo: float, hi: float | None, integer: bool = False) -> np.ndarray:
    """A validated, sorted, duplicate-free parameter axis."""
    a = np.unique(np.asarray(values, dtype=np.float64).ravel())
    if a.size == 0:
        raise InputError(f"{name}: no value to try")
    if not np.isfinite(a).all() or a[0] < lo or (hi is not None and a[-1] > hi):
        rng = f"[{lo}, {hi}]" if hi is not None else f">= {lo}"
        raise InputError(f"{name} values must be in {rng}")
    if integer and not np.all(a == np.round(a)):
        raise InputError(f"{name} values must be whole numbers")
    return a


def engine_for(dataset: Dataset, base: Params, engine: Engine | None = None) -> Engine:
    """`engine`, else the dataset's engine for the text analysis of `base` (`for_dataset`)."""
    return engine or for_dataset(dataset, analysis=Analysis(*base.analysis))


def _start(
    dataset: Dataset, metric: str | metrics.Metric, engine: Engine | None, base: Params = Params()
) -> tuple[metrics.Metric, Engine, tuple[str, ...]]:
    """Parse the metric, prepare the dataset once, and check there is something to evaluate."""
    m = metrics.parse(metric) if isinstance(metric, str) else metric
    if dataset.evaluated.size == 0:
        raise InputError(f"dataset {dataset.name}: no question has a relevant document, nothing to tune")
    return m, engine_for(dataset, base, engine), tuple(dataset.query_ids[q] for q in dataset.evaluated)


@dataclass(frozen=True, eq=False)
class Bm25Grid:
    """The part of BM25 scoring that does not depend on k1 and b, kept for a whole grid."""

    doc: np.ndarray  # per stored count of a question term: its document
    tf: np.ndarray
    idf: np.ndarray
    elem: np.ndarray  # per (question, question term, document) product: its stored count
    cell: np.ndarray  # ... and its cell question * n_docs + document
    shape: tuple[int, int]


class Analysed(NamedTuple):
    """What BM25's grid reads of a corpus under one text analysis: its BM25 columns and the questions' counts
    (an Engine has both; `sweep_analysis` builds them for the analyses it has no engine of)."""

    bm25: bm25.Bm25Index
    qcounts: sp.csr_matrix


def bm25_grid(engine: Engine | Analysed, base: Params = Params()) -> Bm25Grid:
    """bm25.score's algebra with everything but the weights hoisted out of the grid loop.

    bm25.score multiplies the questions' 0/1 term matrix (CSR) by the term weights; each score is the sum of
    its terms' weights in the order the question's terms are stored. The products are listed once in that
    order, so a bincount over them adds the same numbers in the same order, to the same last bit. The rule for
    repeated question words (`base.query_words`, `base.k3`) weighs the idf as bm25.score does.
    """
    bmi = engine.bm25
    nq, nd = engine.qcounts.shape[0], bmi.counts.shape[0]
    q = sp.csr_matrix(engine.qcounts)
    q.sum_duplicates()
    q.sort_indices()
    terms, qtf, at = bm25.question_terms(q, base.query_words != "once")
    qsub = sp.csr_matrix((np.ones(at.size), at, q.indptr), shape=(nq, terms.size))
    sub = bmi.counts[:, terms]
    col = np.repeat(np.arange(sub.shape[1]), np.diff(sub.indptr))
    qrow = np.repeat(np.arange(nq), np.diff(qsub.indptr))
    lens = np.diff(sub.indptr)[qsub.indices]
    within = np.arange(lens.sum()) - np.repeat(np.cumsum(lens) - lens, lens)
    elem = np.repeat(sub.indptr[qsub.indices], lens) + within
    cell = np.repeat(qrow, lens) * nd + sub.indices[elem]
    idf = bmi.idf[terms] * bm25.question_weight(qtf, base.query_words, base.k3)
    return Bm25Grid(sub.indices.astype(np.int64), sub.data, idf[col], elem, cell, (nq, nd))


def bm25_grid_scores(g: Bm25Grid, engine: Engine | Analysed, k1: float, b: float) -> np.ndarray:
    """Dense BM25 scores at (k1, b), equal to bm25.score's to the last bit (tests/test_kernels.py)."""
    norm = bm25.length_norm(engine.bm25.doc_len, engine.bm25.avg_len, k1, b)
    weights = bm25.bm25_weight(g.tf, g.idf, norm[g.doc], k1 + 1.0)
    return np.bincount(g.cell, weights=weights[g.elem], minlength=g.shape[0] * g.shape[1]).reshape(g.shape)


def sweep_bm25(
    dataset: Dataset,
    metric: str | metrics.Metric,
    k1s=K1_GRID,
    bs=B_GRID,
    engine: Engine | None = None,
    base: Params = Params(),
) -> Sweep:
    """BM25's per-question metric over the k1 x b grid, re-weighting the count matrix built once."""
    m, engine, qids = _start(dataset, metric, engine, base)
    k1s = _axis(k1s, "k1", 0.0, None)
    bs = _axis(bs, "b", 0.0, 1.0)
    ranks = _bm25_ranks(dataset, m, engine, base, k1s, bs)
    notes = ("no question shares a word with the corpus",) if engine.qcounts.nnz == 0 else ()
    return Sweep("BM25", m.name, ("k1", "b"), (k1s, bs), _values(dataset, ranks, m), qids, base, notes)


def _bm25_ranks(
    dataset: Dataset, m: metrics.Metric, corpus: Engine | Analysed, base: Params, k1s: np.ndarray, bs: np.ndarray
) -> np.ndarray:
    """The judged ranks at every (k1, b) of the grid (settings x judgements), k1 the slower axis.

    Each setting is `bm25.run`, the compiled pass a k1 tick runs (the engine's plan and judged positions, the
    previous setting's run as the hint): memory bounded per question, no questions x documents matrix. The same
    ranks as `judged_ranks(bm25_grid_scores(...))`, the dense reference (tests/test_tuning.py)."""
    ranks = np.zeros((k1s.size * bs.size, len(dataset.qrels)), dtype=np.int64)
    if corpus.qcounts.nnz == 0:
        return ranks
    qplan, judged_at = _bm25_plan(dataset, corpus, base)
    hint = None
    i = 0
    for k1 in k1s:
        for b in bs:
            hint = bm25.run(corpus.bm25, qplan, dataset, float(k1), float(b), hint=hint, judged_at=judged_at)
            r = hint.ranking.judged_rank
            ranks[i] = r if m.k is None else np.where(r <= m.k, r, 0)
            i += 1
    return ranks


def _bm25_plan(dataset: Dataset, corpus: Engine | Analysed, base: Params) -> tuple[bm25.QuestionPlan, np.ndarray]:
    """BM25's question plan for base's rule for repeated question words and the judged documents' positions in it:
    the engine's own, else built for these columns as the engine builds them (`Engine.bm25_plan`)."""
    if isinstance(corpus, Engine):
        return corpus.bm25_plan(base), corpus.judged_positions()
    counted = base.query_words != "once"
    qplan = bm25.plan(corpus.bm25, corpus.qcounts, counted=counted)
    if counted:
        qplan = bm25.weighed(qplan, base.query_words, base.k3)
    j_ptr, j_doc = judged_layout(dataset)
    return qplan, bm25.locate(qplan, j_doc, j_ptr)


ANALYSES = tuple(Analysis(st, sw) for st in SPECS["stemmer"].options for sw in SPECS["stopwords"].options)
ANALYSIS_POINTS = 6  # k1 and b values per analysis in the analysis sweep: the k1 x b sweep's grid at evenly spaced
# positions (`even`: every third k1, 0, 0.6, ..., 3; every other b, 0, 0.2, ..., 1), a subset of it, and the base's
# values added: 9 x 6 x 7 settings at the article's k1 = 1.2, b = 0.75 (retrieval.analyses.grids says what it can't see)


def analysis_name(a: Analysis) -> str:
    """An analysis as a setting's value: 'snowball/lucene' (stemmer/stop words)."""
    return f"{a.stemmer}/{a.stopwords}"


def sweep_analysis(
    dataset: Dataset,
    metric: str | metrics.Metric,
    analyses: tuple[Analysis, ...] = ANALYSES,
    k1s=None,
    bs=None,
    engine: Engine | None = None,
    base: Params = Params(),
    progress=None,
) -> Sweep:
    """BM25's per-question metric over the text analyses (stemmer x stop words) jointly with k1 x b (each grid
    thinned to ANALYSIS_POINTS evenly spaced values of its own unless given: `even`), the repeated question words' rule at `base`. The analysis in
    `base` reuses its engine, and the axes hold base's k1 and b; every other one builds its BM25 columns once (one index build each, not kept: the
    engines' cache keeps serving the pages). `progress(analysis name, fraction)` after each analysis."""
    m, engine, qids = _start(dataset, metric, engine, base)
    k1s = _axis([*even(K1_GRID, ANALYSIS_POINTS), base.k1] if k1s is None else k1s, "k1", 0.0, None)
    bs = _axis([*even(B_GRID, ANALYSIS_POINTS), base.b] if bs is None else bs, "b", 0.0, 1.0)
    if not analyses or len(set(analyses)) != len(analyses):
        raise InputError("analyses: give distinct text analyses to compare")
    blocks = []
    for i, a in enumerate(analyses):
        if a == engine.analysis:
            corpus = engine
        else:
            index = build_index(dataset.doc_texts, analysis=a)
            corpus = Analysed(bm25.prepare(index), query_counts(index, dataset.query_texts))
        blocks.append(_bm25_ranks(dataset, m, corpus, base, k1s, bs))
        if progress is not None:
            progress(analysis_name(a), (i + 1) / len(analyses))
    values = _values(dataset, np.concatenate(blocks), m)
    axis = np.arange(len(analyses), dtype=np.float64)
    return Sweep(
        "BM25",
        m.name,
        ("analysis", "k1", "b"),
        (axis, k1s, bs),
        values,
        qids,
        base,
        choices=tuple(analysis_name(a) for a in analyses),
    )


def dims_axis(engine: Engine, max_dims: int = MAX_DIMS) -> np.ndarray:
    """The dimensions a dims curve covers: 1 up to what the corpus allows, at most `max_dims`."""
    top = min(lsa.max_dims(engine.index), int(max_dims))
    return np.arange(1, top + 1, dtype=np.float64)


def sweep_dims(
    dataset: Dataset,
    metric: str | metrics.Metric,
    dims=None,
    engine: Engine | None = None,
    base: Params = Params(),
    refit: bool | None = None,
    max_dims: int = MAX_DIMS,
) -> Sweep:
    """LSA's per-question metric over its dimensions (default 1..min(allowed, 200)).

    With `refit` (the default up to REFIT_UP_TO points) one SVD is fitted per d, exactly as evaluate does;
    otherwise one SVD with the largest d is fitted and truncated, the same subspaces up to rounding.
    """
    m, engine, qids = _start(dataset, metric, engine)
    limit = lsa.max_dims(engine.index)
    if limit < 1:
        raise InputError(
            f"LSA needs at least 2 documents and 2 terms; {dataset.name} has {engine.index.n_docs} and {len(engine.index.vocabulary)}"
        )
    axis = dims_axis(engine, max_dims) if dims is None else _axis(dims, "dims", 1.0, None, integer=True)
    notes: list[str] = []
    if axis[-1] > limit:
        notes.append(f"dims above {limit} are lowered to {limit}, the most this corpus allows")
    used = np.minimum(axis, limit).astype(int)
    refit = axis.size <= REFIT_UP_TO if refit is None else refit
    ranks = np.zeros((axis.size, len(dataset.qrels)), dtype=np.int64)
    if refit:
        cache: dict[int, np.ndarray] = {}
        for i, d in enumerate(used):
            if d not in cache:  # the d tick's compiled pass (lsa.run): no questions x documents matrix
                f = engine.lsa_fit(int(d))
                r = lsa.run(dataset, f.model, f.qvec).ranking.judged_rank
                cache[d] = r if m.k is None else np.where(r <= m.k, r, 0)
            ranks[i] = cache[d]
    else:
        f = engine.lsa_fit(int(used.max()))
        model = f.model
        z = lsa.project(model, engine.index.counts)
        qz = lsa.project(model, engine.qcounts)
        notes.append(
            f"one {model.dims}-dimension SVD ({model.algorithm}) truncated to each d: same subspaces as a fit per d, up to rounding"
        )
        # the cosines at d from those at d - 1: add the new dimensions' products and squared norms
        dot = np.zeros((engine.qcounts.shape[0], z.shape[0]))
        zsq, qsq = np.zeros(z.shape[0]), np.zeros(qz.shape[0])
        done = 0
        for i, d in enumerate(used):
            if d <= DIRECT_UP_TO:  # few dimensions, many near-ties: normalise, then multiply, as lsa.search does
                zd, qd = z[:, :d], qz[:, :d]
                docs = zd / np.maximum(np.linalg.norm(zd, axis=1, keepdims=True), 1e-12)
                qn = np.linalg.norm(qd, axis=1, keepdims=True)
                ranks[i] = _ranks(dataset, np.where(qn > 1e-12, qd / np.where(qn > 1e-12, qn, 1.0), 0.0) @ docs.T, m)
                continue
            if d > done:
                dot += qz[:, done:d] @ z[:, done:d].T
                zsq += (z[:, done:d] ** 2).sum(axis=1)
                qsq += (qz[:, done:d] ** 2).sum(axis=1)
                done = d
            zn, qn = np.maximum(np.sqrt(zsq), 1e-12), np.sqrt(qsq)
            qinv = np.where(qn > 1e-12, 1.0 / np.where(qn > 1e-12, qn, 1.0), 0.0)
            ranks[i] = _ranks(dataset, dot * qinv[:, None] / zn[None, :], m)
    return Sweep("LSA", m.name, ("dims",), (axis,), _values(dataset, ranks, m), qids, base, tuple(notes))


@dataclass(frozen=True, eq=False)
class Fixed:
    """What a fusion sweep holds fixed: the members (`params.members`, any systems, extra sources included) at the
    base parameters, each with its ranking, its score of every document (questions x documents, the member's
    `row`, bit-identical to what the fused ranking reads) and whether it answers each question."""

    members: tuple[str, ...]
    rankings: tuple[Ranking, ...]  # per member: its ranking (what RRF fuses)
    rows: tuple[np.ndarray, ...]  # per member: questions x documents scores (what the weighted fusion min-maxes)
    answers: np.ndarray  # members x questions: the member answers the question

    def member(self, name: str) -> int:
        """A member's position, or an error naming the members."""
        if name not in self.members:
            raise InputError(f"{name!r} is not a fused member: the members are {', '.join(self.members)}")
        return self.members.index(name)


def _member_part(
    dataset: Dataset, name: str, params: Params, engine: Engine, sources: Sources
) -> tuple[Ranking, np.ndarray, np.ndarray]:
    """One member at `params`: its ranking, its score of every document (questions x documents) and whether it
    answers each question, from the engine's own run."""
    run = engine.run(name, params, sources)
    member = engine.system(name, sources).member(run)
    rows = np.array([member.row(q) for q in range(dataset.n_queries)], dtype=np.float64).reshape(
        dataset.n_queries, dataset.n_docs
    )
    return run.ranking, rows, np.asarray(member.answers, dtype=bool)


def _combine(members: tuple[str, ...], parts: list[tuple[Ranking, np.ndarray, np.ndarray]], n_queries: int) -> Fixed:
    """A Fixed from each member's part (`_member_part`), in member order."""
    return Fixed(
        tuple(members),
        tuple(p[0] for p in parts),
        tuple(p[1] for p in parts),
        np.array([p[2] for p in parts], dtype=bool).reshape(len(parts), n_queries),
    )


def fixed_parts(dataset: Dataset, params: Params, engine: Engine | None = None, sources: Sources = ()) -> Fixed:
    """The members of `params.members` at `params` (their runs the engine's own, `sources` holding the sources
    that are not registered retrievers: TREC runs, dense vectors), for the fusion sweeps and explanations."""
    engine = engine_for(dataset, params, engine)
    parts = [_member_part(dataset, name, params, engine, sources) for name in params.members]
    return _combine(tuple(params.members), parts, dataset.n_queries)


def _fixed_for(dataset: Dataset, base: Params, engine: Engine, fixed: Fixed | None, sources: Sources) -> Fixed:
    """The given fixed parts (which must be of base's members), or those of `base`."""
    if fixed is None:
        return fixed_parts(dataset, base, engine, sources)
    if fixed.members != tuple(base.members):
        raise InputError(
            f"the fixed parts are of {', '.join(fixed.members)}, the parameters fuse {', '.join(base.members)}"
        )
    return fixed


def _outside_col(docs: np.ndarray, n_docs: int) -> np.ndarray:
    """A ranking's documents with a run's documents outside the corpus (-1) as column n_docs: RRF fuses all of a
    question's outside documents as one candidate (the fused list's -1) whose tie key is the last document's."""
    return np.where(docs >= 0, docs, n_docs)


def _rrf_entries(dataset: Dataset, rankings: tuple[Ranking, ...], depth: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each member's top `depth` as (question * (n_docs + 1) + document, rank) pairs, one array pair per round:
    a round holds at most one entry per candidate, so points added round by round add in the fusion's order."""
    nq, width = dataset.n_queries, dataset.n_docs + 1
    out = []
    for r in rankings:
        lens = np.minimum(np.diff(r.indptr), depth)
        q = np.repeat(np.arange(nq), lens)
        pos = np.arange(lens.sum()) - np.repeat(np.cumsum(lens) - lens, lens)
        keys = q * width + _outside_col(r.docs[np.repeat(r.indptr[:-1], lens) + pos], dataset.n_docs)
        order = np.argsort(keys, kind="stable")  # an entry's round: how many earlier entries share its candidate
        sk = keys[order]
        first = np.searchsorted(sk, sk, side="left")
        occurrence = np.empty(keys.size, dtype=np.int64)
        occurrence[order] = np.arange(keys.size) - first
        for rnd in range(int(occurrence.max()) + 1 if keys.size else 0):
            at = occurrence == rnd
            out.append((keys[at], pos[at] + 1.0))
    return out


def sweep_rrf_k(
    dataset: Dataset,
    metric: str | metrics.Metric,
    ks=RRF_K_GRID,
    engine: Engine | None = None,
    base: Params = Params(),
    fixed: Fixed | None = None,
    sources: Sources = (),
) -> Sweep:
    """RRF's per-question metric over its constant k, fusing the fixed members' lists (top fusion_depth of each)."""
    m, engine, qids = _start(dataset, metric, engine)
    ks = _axis(ks, "rrf_k", 0.0, None)
    fixed = _fixed_for(dataset, base, engine, fixed, sources)
    nq, width, depth = dataset.n_queries, dataset.n_docs + 1, base.fusion_depth
    lists = _rrf_entries(dataset, fixed.rankings, depth)
    keys = np.unique(np.concatenate([k for k, _ in lists])) if lists else np.zeros(0, dtype=np.int64)
    rank_in = np.zeros((len(lists), keys.size))  # each candidate's rank in each list (round), 0 = absent
    for i, (k, r) in enumerate(lists):
        rank_in[i, np.searchsorted(keys, k)] = r
    cq, cd = keys // width, keys % width
    start = np.searchsorted(cq, np.arange(nq + 1))
    slots = int(np.diff(start).max()) if keys.size else 0
    slot = np.arange(keys.size) - start[cq]
    tie_key = np.append(dataset.tie_key, dataset.tie_key[-1] if dataset.n_docs else 0)
    tk = np.full((nq, max(slots, 1)), np.iinfo(np.int64).max)
    tk[cq, slot] = tie_key[cd]
    # each judgement's candidate slot, if it is a candidate
    qrels = dataset.qrels
    jfound, jq, jslot = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if keys.size:
        jk = qrels.query * width + qrels.doc
        jpos = np.minimum(np.searchsorted(keys, jk), keys.size - 1)
        jfound = np.flatnonzero((qrels.doc >= 0) & (keys[jpos] == jk))
        jq, jslot = cq[jpos[jfound]], slot[jpos[jfound]]
    ranks = np.zeros((ks.size, len(qrels)), dtype=np.int64)
    step = max(1, 4_000_000 // max(nq * max(slots, 1) ** 2, 1))
    for lo in range(0, ks.size, step):
        kk = ks[lo : lo + step]
        total = np.zeros((kk.size, keys.size))
        for i in range(len(lists)):
            r = rank_in[i]
            total = total + np.where(r > 0, fusion.rrf_points(np.where(r > 0, r, 1.0)[None, :], kk[:, None]), 0.0)
        t = np.full((kk.size, nq, max(slots, 1)), -np.inf)
        t[:, cq, slot] = total
        ti, tj = t[:, :, :, None], t[:, :, None, :]
        before = (tj > ti) | ((tj == ti) & (tk[None, :, None, :] < tk[None, :, :, None]))
        rank = before.sum(axis=-1) + 1  # k x questions x slots
        ranks[lo : lo + kk.size, jfound] = rank[:, jq, jslot]
    return Sweep("RRF", m.name, ("rrf_k",), (ks,), _values(dataset, ranks, m), qids, base)


def check_alpha_members(members: tuple[str, ...]) -> None:
    """The alpha sweep needs exactly two fused systems: otherwise an error saying where the weights are set."""
    if len(members) != 2:
        raise InputError(
            f"the alpha sweep weighs two fused systems (alpha the first, 1 - alpha the second); {len(members)} "
            f"{'is' if len(members) == 1 else 'are'} fused ({', '.join(members)}): "
            + (
                "a single member has weight 1"
                if len(members) == 1
                else "with more than two, each member's weight is set in the sidebar (--weights on the command line) and alpha is not used"
            )
        )


def sweep_alpha(
    dataset: Dataset,
    metric: str | metrics.Metric,
    alphas=ALPHA_GRID,
    engine: Engine | None = None,
    base: Params = Params(),
    fixed: Fixed | None = None,
    sources: Sources = (),
) -> Sweep:
    """The weighted fusion's per-question metric over alpha, over the fixed scores of exactly two members: alpha x
    min-max(first) + (1 - alpha) x min-max(second), what `Engine.rankings` gives at that alpha without `weights`."""
    m, engine, qids = _start(dataset, metric, engine)
    alphas = _axis(alphas, "alpha", 0.0, 1.0)
    check_alpha_members(base.members)
    fixed = _fixed_for(dataset, base, engine, fixed, sources)
    first, second = (fusion.minmax(r) for r in fixed.rows)
    silent = ~fixed.answers.any(axis=0)
    ranks = np.zeros((alphas.size, len(dataset.qrels)), dtype=np.int64)
    for i, a in enumerate(alphas):
        fused = a * first + (1.0 - a) * second  # fusion.fuse_rows((a, 1 - a), rows), to the last bit
        fused[silent] = -np.inf
        ranks[i] = _ranks(dataset, fused, m, threshold=-1.0, depth=base.fusion_depth)
    return Sweep("weighted", m.name, ("alpha",), (alphas,), _values(dataset, ranks, m), qids, base)


# ------------------------------------------------------------------------------------------- joint sweeps

JOINT = {  # a joint sweep: (its first parameter, the fusion it scores); the second parameter is always LSA's d
    "alpha,dims": ("alpha", "weighted"),
    "rrf_k,dims": ("rrf_k", "RRF"),
    "k1,dims": ("k1", "weighted"),
}
JOINT_POINTS = (
    21  # at most this many values per axis of a joint sweep (each d is one LSA fit): alpha's and k1's grids whole
)
_NEEDS = {"alpha": None, "rrf_k": None, "k1": "BM25"}  # the member a joint sweep's first parameter is read by


def thin(axis: np.ndarray, points: int = JOINT_POINTS) -> np.ndarray:
    """At most `points` values of a tuning grid, both ends kept: the whole grid when it is short enough, else
    values at geometrically spaced positions (dense at the start, where d and RRF's k change the most)."""
    a = np.asarray(axis, dtype=np.float64)
    if a.size <= points:
        return a
    at = np.unique(np.round(np.geomspace(1, a.size, points)).astype(np.int64) - 1)
    return a[at]


def even(axis: np.ndarray, points: int) -> np.ndarray:
    """At most `points` values of a grid at evenly spaced positions, both ends kept: a subset of the grid with a
    coarser step (K1_GRID's 16 values to 6: every third, 0, 0.6, ..., 3; B_GRID's 11 to 6: every other)."""
    a = np.asarray(axis, dtype=np.float64)
    if a.size <= points:
        return a
    return a[np.unique(np.round(np.linspace(0, a.size - 1, points)).astype(np.int64))]


def joint_axes(key: str, engine: Engine) -> tuple[np.ndarray, np.ndarray]:
    """The default axes of a joint sweep: its first parameter's grid (params.grid_for) and d's up to what the
    corpus allows, each thinned to at most JOINT_POINTS values."""
    first, _ = JOINT[key]
    return thin(grid_for(first)), thin(dims_axis(engine))


def check_joint_members(key: str, members: tuple[str, ...]) -> None:
    """A joint sweep varies LSA's d inside a fusion: LSA must be fused; k1 needs BM25 fused; alpha two members."""
    first, _ = JOINT[key]
    if "LSA" not in members:
        raise InputError(
            f"the {first} x d sweep varies LSA's dimensions inside the fusion, and LSA is not fused "
            f"(the fused systems are {', '.join(members)})"
        )
    if _NEEDS[first] and _NEEDS[first] not in members:
        raise InputError(
            f"the k1 x d sweep varies BM25's k1 inside the fusion, and BM25 is not fused "
            f"(the fused systems are {', '.join(members)})"
        )
    if first == "alpha":
        check_alpha_members(members)


def sweep_joint(
    dataset: Dataset,
    key: str,
    metric: str | metrics.Metric,
    firsts=None,
    dims=None,
    engine: Engine | None = None,
    base: Params = Params(),
    sources: Sources = (),
) -> Sweep:
    """A fusion's per-question metric over (its first parameter x LSA's d), the other parameters at `base`.

    Settings are in row-major order (first parameter, then d). Each d is one LSA fit and its run from the engine
    (so every cell is what `Engine.rankings` gives at that setting, exactly); the BM25 member of the k1 x d
    sweep is the engine's run at each k1. The fusion itself goes through the one-parameter sweeps' exact fast
    paths: `sweep_alpha` and `sweep_rrf_k` over the members fixed at each d (and k1).
    """
    if key not in JOINT:
        raise InputError(f"unknown joint sweep {key!r}: valid are {' | '.join(JOINT)}")
    m, engine, qids = _start(dataset, metric, engine)
    first, system = JOINT[key]
    check_joint_members(key, base.members)
    default_first, default_dims = joint_axes(key, engine)
    spec_lo = {"alpha": (0.0, 1.0), "rrf_k": (0.0, None), "k1": (0.0, None)}[first]
    fa = default_first if firsts is None else _axis(firsts, first, *spec_lo)
    limit = lsa.max_dims(engine.index)
    if limit < 1:
        raise InputError(
            f"LSA needs at least 2 documents and 2 terms; {dataset.name} has {engine.index.n_docs} and "
            f"{len(engine.index.vocabulary)}"
        )
    da = default_dims if dims is None else _axis(dims, "dims", 1.0, float(limit), integer=True)
    members = tuple(base.members)
    parts: dict[tuple, tuple] = {}  # (member, the value it reads) -> its part, each computed once

    def part(name: str, p: Params) -> tuple:
        k = (name, p.dims if name == "LSA" else p.k1 if name == "BM25" else None)
        if k not in parts:
            parts[k] = _member_part(dataset, name, p, engine, sources)
        return parts[k]

    values = np.zeros((fa.size, da.size, len(qids)))
    for j, d in enumerate(da):
        if first == "k1":
            for i, k1 in enumerate(fa):
                p = replace(base, k1=float(k1), dims=int(d))
                fixed = _combine(members, [part(n, p) for n in members], dataset.n_queries)
                values[i, j] = _weighted_values(dataset, m, p, fixed)
            continue
        p = replace(base, dims=int(d))
        fixed = _combine(members, [part(n, p) for n in members], dataset.n_queries)
        one = (
            sweep_alpha(dataset, m, fa, engine, p, fixed, sources)
            if first == "alpha"
            else sweep_rrf_k(dataset, m, fa, engine, p, fixed, sources)
        )
        values[:, j] = one.values
    return Sweep(system, m.name, (first, "dims"), (fa, da), values.reshape(fa.size * da.size, len(qids)), qids, base)


def _weighted_values(dataset: Dataset, m: metrics.Metric, p: Params, fixed: Fixed) -> np.ndarray:
    """The weighted fusion's per-question metric at `p` over fixed members: fusion.fuse_rows with the fusion's
    weights (alpha and 1 - alpha, or each member's), what the engine's weighted ranking gives, to the last bit."""
    fused = np.array(fusion.fuse_rows(p.fusion_weights(), list(fixed.rows)), dtype=np.float64)
    fused[~fixed.answers.any(axis=0)] = -np.inf
    return _values(dataset, _ranks(dataset, fused, m, threshold=-1.0, depth=p.fusion_depth), m)[0]


def sweep(
    dataset: Dataset,
    params: str,
    metric: str | metrics.Metric,
    base: Params = Params(),
    engine: Engine | None = None,
    fixed: Fixed | None = None,
    sources: Sources = (),
) -> Sweep:
    """The default sweep of `params` ('k1,b', 'dims', 'rrf_k', 'alpha' or a joint one of JOINT: 'alpha,dims',
    'rrf_k,dims', 'k1,dims'), the other parameters at `base`; the fusion sweeps fuse `base.members` (`sources`: the
    sources among them that are not registered retrievers)."""
    key = _params_key(params)
    engine = engine_for(dataset, base, engine)
    if key == "k1,b":
        return sweep_bm25(dataset, metric, engine=engine, base=base)
    if key == "analysis":
        return sweep_analysis(dataset, metric, engine=engine, base=base)
    if key == "dims":
        return sweep_dims(dataset, metric, engine=engine, base=base)
    if key == "rrf_k":
        return sweep_rrf_k(dataset, metric, engine=engine, base=base, fixed=fixed, sources=sources)
    if key in JOINT:
        return sweep_joint(dataset, key, metric, engine=engine, base=base, sources=sources)
    return sweep_alpha(dataset, metric, engine=engine, base=base, fixed=fixed, sources=sources)


def _params_key(params: str) -> str:
    """Normalise a --params value, or an error listing the valid ones."""
    key = ",".join(p.strip().lower().replace("-", "_") for p in params.split(","))
    key = {"b,k1": "k1,b", "dims,alpha": "alpha,dims", "dims,rrf_k": "rrf_k,dims", "dims,k1": "k1,dims"}.get(key, key)
    if key not in PARAMS:
        raise InputError(f"unknown parameters {params!r}: valid are {PARAMS_FORMS}")
    return key


def current_values(
    dataset: Dataset,
    params: str,
    metric: str | metrics.Metric,
    base: Params = Params(),
    engine: Engine | None = None,
    fixed: Fixed | None = None,
    sources: Sources = (),
) -> np.ndarray:
    """Per-question values of the swept system at the current setting `base` (which need not be a grid point)."""
    key = _params_key(params)
    engine = engine_for(dataset, base, engine)
    if key in ("k1,b", "analysis"):
        s = sweep_bm25(dataset, metric, [base.k1], [base.b], engine, base)
    elif key == "dims":
        s = sweep_dims(dataset, metric, [base.dims], engine, base, refit=True)
    elif key == "rrf_k":
        s = sweep_rrf_k(dataset, metric, [base.rrf_k], engine, base, fixed, sources)
    elif key in JOINT:
        s = sweep_joint(dataset, key, metric, [getattr(base, JOINT[key][0])], [base.dims], engine, base, sources)
    else:
        s = sweep_alpha(dataset, metric, [base.alpha], engine, base, fixed, sources)
    return s.values[0]


# ------------------------------------------------------------------------------------------- analysis


def best_setting(values: np.ndarray) -> int:
    """Index of the setting with the highest mean (rows x questions); exact ties go to the first."""
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 2 or v.shape[0] == 0 or v.shape[1] == 0:
        raise InputError(f"expected settings x questions values, got shape {v.shape}")
    return int(np.argmax(np.round(v.mean(axis=1), _DECIMALS)))


@dataclass(frozen=True, eq=False)
class TieRegion:
    """The settings that can't be told apart from the best: the paired bootstrap interval of (setting - best) holds zero."""

    best: int
    intervals: np.ndarray  # settings x 2: interval ends of mean(setting - best)
    tied: np.ndarray  # bool per setting (the best included)
    resamples: int
    seed: int
    confidence: float

    @property
    def size(self) -> int:
        """Number of settings tied with the best (the best included)."""
        return int(self.tied.sum())


def tie_region(
    values: np.ndarray,
    best: int | None = None,
    resamples: int = stats.RESAMPLES,
    seed: int = stats.SEED,
    confidence: float = stats.CONFIDENCE,
) -> TieRegion:
    """Paired bootstrap of every setting against the best, all settings at once (identical rows bootstrapped once).

    The intervals come from one matrix product over the shared resamples; every row with an end within 1e-9
    of zero, where the verdict could hang on rounding, is recomputed exactly by stats.intervals. Elsewhere
    the ends equal stats.intervals' to within about 1e-13, far from changing which side of zero they fall.
    """
    v = np.asarray(values, dtype=np.float64)
    best = best_setting(v) if best is None else int(best)
    if resamples < 2 or not 0 < confidence < 1:
        stats.intervals(v[:1], resamples, seed, confidence)  # raises the library's error
    diffs = v - v[best]
    uniq, inverse = np.unique(diffs, axis=0, return_inverse=True)
    ends = stats.intervals(uniq, resamples, seed, confidence, exact=False)
    near = np.flatnonzero((np.abs(ends) <= _NEAR_ZERO).any(axis=1))
    step = max(1, _BOOT_CELLS // (resamples * v.shape[1]))
    for lo in range(0, near.size, step):
        rows = near[lo : lo + step]
        ends[rows] = stats.intervals(uniq[rows], resamples, seed, confidence, exact=True)
    ends = ends[np.asarray(inverse).ravel()]
    tied = (ends[:, 0] <= 0) & (ends[:, 1] >= 0)
    tied[best] = True
    return TieRegion(best, ends, tied, resamples, seed, confidence)


def sign_vectors_for(n_settings: int, level: float = 0.05) -> int:
    """How many random sign vectors to draw for the comparisons of a grid's settings with its best: enough that
    Holm's smallest possible adjusted p over the family (at most n_settings comparisons, each p at least
    2 / (R + 1)) is at most half the level, so the corrected test can reject at all: R + 1 >= 4 m / level (80 m
    at 0.05); at least significance.RESAMPLES."""
    return max(significance.RESAMPLES, math.ceil(4 * n_settings / level) - 1)


def versus_best(
    values: np.ndarray, best: int | None = None, resamples: int = significance.RESAMPLES, seed: int = SEED
) -> tuple[np.ndarray, np.ndarray]:
    """Paired randomisation p-value of every setting against the best, and the Holm-adjusted p-values.

    The comparisons with the best form one family of (settings - 1) tests; the best itself gets 1 and 1.
    """
    v = np.asarray(values, dtype=np.float64)
    best = best_setting(v) if best is None else int(best)
    uniq, inverse = np.unique(v - v[best], axis=0, return_inverse=True)
    p = significance.permutation_pvalues(uniq, resamples, seed)[np.asarray(inverse).ravel()]
    others = np.arange(v.shape[0]) != best
    adjusted = np.ones(v.shape[0])
    if others.any():
        adjusted[others] = significance.holm(p[others])
    p[best] = 1.0
    return p, adjusted


@dataclass(frozen=True, eq=False)
class CrossValidation:
    """k-fold cross-validation of choosing the best setting: in-sample best mean against the held-out estimate."""

    folds: int
    seed: int
    in_sample: float  # the best setting's mean over all questions (chosen on them)
    in_sample_best: int
    cross_validated: float  # mean over all questions, each measured with the setting chosen without its fold
    chosen: tuple[int, ...]  # per fold: the setting chosen on the other folds
    train_means: tuple[float, ...]  # per fold: the chosen setting's mean on the other folds
    test_means: tuple[float, ...]  # per fold: its mean on the held-out fold
    fold_sizes: tuple[int, ...]
    assignment: np.ndarray  # fold of each question

    @property
    def optimism(self) -> float:
        """How much of the in-sample score is over-fitting: in-sample minus cross-validated."""
        return self.in_sample - self.cross_validated


def fold_assignment(n: int, folds: int = FOLDS, seed: int = SEED) -> np.ndarray:
    """Fold of each of n questions: a seeded permutation cut into `folds` near-equal parts (numpy.array_split)."""
    if isinstance(folds, bool) or int(folds) != folds or folds < 2:
        raise InputError(f"folds must be a whole number >= 2, got {folds}")
    if folds > n:
        raise InputError(f"folds: {folds} folds need at least {folds} questions, there are {n}")
    perm = np.random.default_rng(seed).permutation(n)
    out = np.empty(n, dtype=np.int64)
    for f, part in enumerate(np.array_split(perm, int(folds))):
        out[part] = f
    return out


def cross_validate(values: np.ndarray, folds: int = FOLDS, seed: int = SEED) -> CrossValidation:
    """For each fold, pick the best setting on the other folds and measure it on the held-out one (all folds at once)."""
    v = np.asarray(values, dtype=np.float64)
    best = best_setting(v)
    n = v.shape[1]
    fold = fold_assignment(n, folds, seed)
    onehot = np.zeros((n, int(folds)))
    onehot[np.arange(n), fold] = 1.0
    sizes = onehot.sum(axis=0)
    fold_sums = v @ onehot  # settings x folds
    train = (v.sum(axis=1, keepdims=True) - fold_sums) / (n - sizes)
    chosen = np.argmax(np.round(train, _DECIMALS), axis=0)
    cols = np.arange(int(folds))
    test = np.array([v[chosen[f], fold == f].mean() for f in cols])
    held_out = v[chosen[fold], np.arange(n)]
    return CrossValidation(
        int(folds),
        int(seed),
        float(v[best].mean()),
        best,
        float(held_out.mean()),
        tuple(int(c) for c in chosen),
        tuple(float(x) for x in train[chosen, cols]),
        tuple(float(x) for x in test),
        tuple(int(s) for s in sizes),
        fold,
    )


# ------------------------------------------------------------------------------------------- the verdict
#
# One rule, for the Tuning page (ui/tuning.py) and `python -m retrieval tune` alike: the current setting against the
# best of the grid, read from the paired permutation test with Holm's correction over the whole family of
# comparisons with the best (so picking the best of many settings is accounted for) and from cross-validation (so a
# gain is one that carries over to questions the choice never saw). The bootstrap's tie region (each setting alone,
# uncorrected) only decides "flat" (every setting tied with the best) and is quoted, never a verdict on its own.

ALPHA_LEVEL = 0.05  # the family-wise level of Holm's correction
GAIN_EPS = 1e-12  # a cross-validated gain at or below this is no gain
MINUS = "\u2212"  # a true minus, as the app writes every signed number


class Versus(NamedTuple):
    """The current setting against the best: its p-values and the family Holm's correction ran over."""

    p: float
    p_holm: float
    family: int
    family_text: str


def place(sweep: Sweep, current: dict) -> tuple[int, bool]:
    """The grid setting nearest to `current` (the swept parameters' values; missing ones: the sweep's base) and
    whether `current` is that grid setting exactly."""
    near = sweep.nearest(**current)
    at = sweep.setting(near)
    return near, all(
        at[n] == current.get(n, "/".join(sweep.base.analysis))
        if n == "analysis"
        else abs(float(at[n]) - float(current.get(n, getattr(sweep.base, n)))) < 1e-9
        for n in sweep.names
    )


def versus_current(
    values: np.ndarray,
    best: int,
    p: np.ndarray,
    p_holm: np.ndarray,
    current_values: np.ndarray,
    on_grid: bool,
    near: int,
    resamples: int = significance.RESAMPLES,
    seed: int = SEED,
) -> Versus:
    """The current setting against the best. On the grid, the sweep's own p-values of it (`p`, `p_holm`:
    `versus_best`'s); between grid points, its permutation p against the best (`resamples` sign vectors, `seed`),
    Holm-corrected together with the other settings' (a family one larger)."""
    n = int(np.asarray(p).size)
    if on_grid:
        return Versus(
            float(p[near]),
            float(p_holm[near]),
            n - 1,
            f"the {n - 1} comparisons of every other grid setting with the best",
        )
    v = np.asarray(values, dtype=np.float64)
    others = np.arange(n) != best
    alone = float(
        significance.permutation_pvalues(np.asarray(current_values, dtype=np.float64) - v[best], resamples, seed)[0]
    )
    adjusted = float(significance.holm(np.append(np.asarray(p)[others], alone))[-1])
    return Versus(
        alone,
        adjusted,
        n,
        f"the {n - 1} comparisons of every other grid setting with the best, plus the current "
        "setting, which lies between grid points",
    )


def tied_with_best(
    values: np.ndarray, best: int, ties: TieRegion, current_values: np.ndarray, on_grid: bool, near: int
) -> bool:
    """Whether the current setting can't be told apart from the best by the paired bootstrap, alone (uncorrected):
    on the grid, the tie region's answer; between grid points, its own interval (the tie region's resamples, seed
    and confidence)."""
    if on_grid:
        return bool(ties.tied[near])
    cur, top = np.asarray(current_values, dtype=np.float64), np.asarray(values, dtype=np.float64)[best]
    return bool(np.array_equal(cur, top)) or bool(
        stats.paired_bootstrap(cur, top, ties.resamples, ties.seed, ties.confidence).holds_zero
    )


class Signals(NamedTuple):
    """What the verdict weighs, each number computed from the sweep and the current setting."""

    n_settings: int
    n_tied: int  # settings whose bootstrap interval against the best holds zero, each alone (uncorrected), the best included
    all_same: bool  # every setting has the same mean
    at_best: bool  # the current setting is the best grid setting, scores exactly what it scores on every question, or
    # (between grid points) scores a higher mean than every grid setting
    current_tied: bool  # the current setting is in the (uncorrected) tie region
    diff: float  # current − best, in-sample
    p: float  # permutation p, current against the best, alone
    p_holm: float  # the same, Holm-adjusted over the family
    family: int
    gain: float | None  # cross-validated mean − the current setting's mean (None: too few questions to cross-validate)


def verdict_kind(s: Signals) -> str:
    """The verdict's rule, the first that applies:

    - ``same``: every setting has the same mean: nothing to tune;
    - ``flat``: every setting can't be told apart from the best (bootstrap, each alone): the best is a draw among equals;
    - ``best``: the current setting is the best (or scores exactly what it scores, or above it);
    - ``tune``: the best beats the current setting after Holm's correction, and tuning gains on held-out questions;
    - ``unstable``: the best beats it after Holm, but the gain does not carry over to held-out questions;
    - ``hint``: tuning gains on held-out questions, but no setting beats the current one after Holm;
    - ``keep``: neither: no gain on held-out questions, no setting beating the current one after Holm.
    """
    if s.all_same:
        return "same"
    if s.n_tied == s.n_settings:
        return "flat"
    if s.at_best:
        return "best"
    corrected = s.p_holm <= ALPHA_LEVEL
    gains = s.gain is not None and s.gain > GAIN_EPS
    if corrected:
        return "tune" if gains else "unstable"
    return "hint" if gains else "keep"


def offers_best(kind: str) -> bool:
    """Whether moving to the best is worth offering: not when everything ties with it, nor when the current setting
    is there (or above it)."""
    return kind not in ("same", "flat", "best")


def p_is(p: float) -> str:
    """'p = 0.006', 'p < 0.001', 'p = 1'."""
    return "p = 1" if p >= 0.9995 else f"p = {p:.3f}" if p >= 0.001 else "p < 0.001"


def about(x: float) -> str:
    """A gain to two significant digits with its sign and a true minus: +0.041, −0.0059."""
    return f"{x:+.2g}".replace("-", MINUS)


def names_text(names: tuple[str, ...]) -> str:
    """Swept parameters for reading: 'k1 and b', 'd', 'RRF k and d', 'the text analysis, k1 and b'."""
    said = [{"dims": "d", "rrf_k": "RRF k", "analysis": "the text analysis"}.get(n, n) for n in names]
    return " and ".join(said) if len(said) < 3 else ", ".join(said[:-1]) + " and " + said[-1]


def setting_text(setting: dict) -> str:
    """A setting for reading: 'k1 = 1.2, b = 0.75'."""
    return ", ".join(f"{n} = {v}" if isinstance(v, str) else f"{n} = {v:g}" for n, v in setting.items())


def expectation_text(gain: float, measured: float) -> str:
    """What a tuned setting gains on new questions, the cross-validated `gain`, beside the gain `measured` on the
    questions it was chosen on (best − current), each to two significant digits (`about`): said as one number when
    they read the same."""
    g, m = about(gain), about(measured)
    if g == m:
        return f"Expect about {g} on new questions too, as measured on these very questions."
    if gain < measured:
        return f"Expect about {g}, not the {m} measured on these very questions."
    return f"Expect about {g} on new questions, more than the {m} measured on these very questions."


def verdict_text(s: Signals, what: str, best: str, label: str) -> str:
    """The one plain verdict (Markdown: its headline in bold): what `verdict_kind` decided, with the numbers it
    decided on; `what` names the swept parameters (`names_text`), `best` the best setting (`setting_text`), `label`
    the metric. Every sentence holds for the numbers: a gain is claimed only when cross-validation shows one, a
    setting beating another only after Holm's correction."""
    kind = verdict_kind(s)
    holm = f"Holm's correction for {s.family} comparisons (adjusted {p_is(s.p_holm)})"
    cv = (
        "cross-validation needs at least 2 questions"
        if s.gain is None
        else f"cross-validated, {about(s.gain)} {label} on questions the choice never saw"
    )
    alone = (
        f" Alone, the current setting looks worse than the best ({p_is(s.p)}"
        + ("" if s.current_tied else ", outside the tie region on the chart")
        + f"), but picking the best of {s.n_settings} settings makes gaps like this one expected by chance."
        if s.p <= ALPHA_LEVEL and s.diff < 0
        else ""
    )
    if kind == "same":
        return f"**Every setting scores the same here**: all {s.n_settings} have the same mean {label}, so there is nothing to tune."
    if kind == "flat":
        return (
            f"**Every setting scores the same here, within noise**: all {s.n_settings} settings can't be told apart "
            f"from the best ({best}), so the best is one draw among equals, not a value to move to."
        )
    if kind == "best":
        head = (
            f"**The current setting scores above every setting of the grid**: {about(s.diff)} {label} over the best "
            f"of the {s.n_settings} ({best}). "
            if s.diff > 0
            else f"**The current setting is the best of the {s.n_settings} settings.** "
        )
        if s.gain is None:
            return head.rstrip()
        if s.gain < -GAIN_EPS:
            return head + (
                f"Expect less on new questions: tuning this way scores {about(s.gain)} {label} against it on "
                "questions the choice never saw (cross-validated)."
            )
        return head + (
            f"On questions the choice never saw, tuning this way scores {about(s.gain)} {label} against it "
            "(cross-validated): no loss from over-fitting shows."
        )
    if kind == "tune":
        return (
            f"**Tuning {what} pays**: about {about(s.gain)} {label} on questions the choice never saw (cross-validated), "
            f"and the best ({best}) beats the current setting even after {holm}. {expectation_text(s.gain, -s.diff)}"
        )
    if kind == "unstable":
        if s.gain is None:
            return (
                f"**The best ({best}) beats the current setting on these questions**, even after {holm}, **but whether "
                f"the gain carries over to new ones is unknown** ({cv}). Treat the best as a hint, not a finding."
            )
        return (
            f"**The best ({best}) beats the current setting on these questions**, even after {holm}, **but the gain "
            f"does not carry over to new ones** ({cv}): the folds choose different settings. Treat the best as a hint, "
            "not a finding."
        )
    if kind == "hint":
        return (
            f"**Tuning {what} may gain about {about(s.gain)} {label} on unseen questions** (cross-validated), **but no "
            f"single setting beats the current one once {s.family} comparisons are corrected for** (Holm-adjusted "
            f"{p_is(s.p_holm)}): treat the best ({best}) as a hint, not a finding.{alone}"
        )
    shown = (
        "there are too few questions to cross-validate (at least 2 are needed)"
        if s.gain is None
        else f"tuning shows no gain on unseen questions ({cv})"
    )
    return (
        f"**Keep the current setting**: no setting beats it once {s.family} comparisons are corrected for "
        f"(Holm-adjusted {p_is(s.p_holm)}), and {shown}.{alone}"
    )


@dataclass(frozen=True, eq=False)
class Verdict:
    """The verdict on the current setting: its kind (`verdict_kind`), its text (`verdict_text`, Markdown), what it
    weighed, and where the current setting lies on the grid."""

    kind: str
    text: str  # Markdown: the headline between ** (the page shows it as is; `plain` is the terminal's)
    signals: Signals
    versus: Versus
    near: int  # the grid setting nearest to the current one
    on_grid: bool  # the current setting is that grid setting exactly

    @property
    def plain(self) -> str:
        """The text without Markdown's bold markers: what the command line prints (the same words)."""
        return self.text.replace("**", "")

    @property
    def offers_best(self) -> bool:
        """Whether moving to the best is worth offering (`offers_best`)."""
        return offers_best(self.kind)


def verdict(
    sweep: Sweep,
    best: int,
    ties: TieRegion,
    p: np.ndarray,
    p_holm: np.ndarray,
    current: dict,
    current_values: np.ndarray,
    cv: CrossValidation | None,
    label: str | None = None,
    resamples: int = significance.RESAMPLES,
    seed: int = SEED,
    versus: Versus | None = None,
    current_tied: bool | None = None,
) -> Verdict:
    """The verdict on the current setting from a sweep's numbers: its best, tie region (`tie_region`), permutation
    p-values against the best with Holm's (`versus_best`, drawn with `resamples` sign vectors and `seed`), the
    current setting (`current`: the swept parameters' values) and its per-question values, and the cross-validation
    of the choice (`cv`, None when there are too few questions). `label` names the metric in the text (default: the
    sweep's metric name). `versus` and `current_tied`, when the caller kept them (`versus_current`,
    `tied_with_best`), are not computed again. The Tuning page and `python -m retrieval tune` both say this."""
    v = np.asarray(current_values, dtype=np.float64)
    near, on_grid = place(sweep, current)
    if versus is None:
        versus = versus_current(sweep.values, best, p, p_holm, v, on_grid, near, resamples, seed)
    if current_tied is None:
        current_tied = tied_with_best(sweep.values, best, ties, v, on_grid, near)
    means = sweep.means
    above = bool(
        np.round(v.mean(), _DECIMALS) > np.round(means[best], _DECIMALS)
    )  # between grid points, above the grid
    at_best = (on_grid and near == best) or bool(np.array_equal(v, sweep.values[best])) or above
    s = Signals(
        int(means.size),
        ties.size,
        bool(np.all(np.round(means, _DECIMALS) == np.round(means[0], _DECIMALS))),
        at_best,
        bool(current_tied),
        float(v.mean() - means[best]),
        float(versus.p),
        float(versus.p_holm),
        int(versus.family),
        None if cv is None else float(cv.cross_validated - v.mean()),
    )
    text = verdict_text(s, names_text(sweep.names), setting_text(sweep.setting(best)), label or sweep.metric)
    return Verdict(verdict_kind(s), text, s, versus, near, on_grid)


@dataclass(frozen=True, eq=False)
class Oracle:
    """The per-question oracle: the best system on each question, the upper bound a router between them could reach."""

    systems: tuple[str, ...]
    qids: tuple[str, ...]
    best: tuple[str, ...]  # per question: the first system (in order) reaching the best value
    winners: tuple[tuple[str, ...], ...]  # per question: every system reaching it
    values: np.ndarray  # per question: the best value
    mean: float
    system_means: dict[str, float]

    def wins(self) -> dict[str, int]:
        """Questions on which each system is the oracle's choice (ties go to the first system)."""
        return {s: sum(1 for b in self.best if b == s) for s in self.systems}


def oracle(values: dict[str, np.ndarray], qids: tuple[str, ...] | None = None) -> Oracle:
    """The best system per question and the mean of the per-question maxima, from system -> per-question values."""
    if not values:
        raise InputError("oracle: no system to choose from")
    names = tuple(values)
    v = np.stack([np.asarray(values[s], dtype=np.float64) for s in names])
    if v.ndim != 2:
        raise InputError("oracle: every system needs one value per question")
    qids = tuple(qids) if qids is not None else tuple(str(i) for i in range(v.shape[1]))
    if len(qids) != v.shape[1]:
        raise InputError(f"oracle: {len(qids)} question ids for {v.shape[1]} values")
    top = v.max(axis=0)
    win = np.isclose(v, top[None, :], rtol=0, atol=1e-12)
    winners = tuple(tuple(names[i] for i in np.flatnonzero(win[:, j])) for j in range(v.shape[1]))
    best = tuple(names[int(np.argmax(win[:, j]))] for j in range(v.shape[1]))
    return Oracle(
        names,
        qids,
        best,
        winners,
        top,
        float(top.mean()) if top.size else math.nan,
        {s: float(v[i].mean()) for i, s in enumerate(names)},
    )


def oracle_of(evaluation: Evaluation, metric: str, systems: list[str] | None = None) -> Oracle:
    """The per-question oracle over an evaluation's systems (all by default) on one computed metric."""
    name = metrics.parse(metric).name
    systems = systems or evaluation.systems
    for s in systems:
        if s not in evaluation.values:
            raise InputError(f"unknown system {s!r}: known are {', '.join(evaluation.values)}")
        if name not in evaluation.values[s]:
            raise InputError(f"metric {name!r} was not computed: computed are {', '.join(evaluation.values[s])}")
    ds = evaluation.dataset
    return oracle({s: evaluation.values[s][name] for s in systems}, tuple(ds.query_ids[q] for q in ds.evaluated))


# ------------------------------------------------------------------------------------------- fusion explained


def _row_ranks(row: np.ndarray, key: np.ndarray, threshold: float) -> np.ndarray:
    """Rank of every document in one score row (score descending, ties by id); 0 when not a result."""
    res = np.flatnonzero(row > threshold)
    order = res[order_by_score(row[res], key[res])]
    out = np.zeros(row.size, dtype=np.int64)
    out[order] = np.arange(1, order.size + 1)
    return out


def member_ranks(dataset: Dataset, ranking: Ranking, row: np.ndarray, q: int) -> np.ndarray:
    """Rank of every document in a member's ranking for question q (0 = not a result): its place in the list the
    ranking keeps (a run's documents outside the corpus keep their places); beyond that list, from the member's
    scores, in the order its list follows, as far as it has results."""
    docs, _ = ranking.top(q)
    out = np.zeros(dataset.n_docs, dtype=np.int64)
    pos = np.arange(1, docs.size + 1)
    inside = docs >= 0
    out[docs[inside][::-1]] = pos[inside][::-1]  # a document listed twice keeps its first place
    n_results = int(ranking.n_results[q])
    if n_results > docs.size:
        rest = np.flatnonzero(out == 0)
        full = _row_ranks(row, dataset.tie_key, -np.inf)[rest]
        out[rest] = np.where(full <= n_results, full, 0)
    return out


def _question(dataset: Dataset, question: int | str) -> int:
    """A question's index from its index or id."""
    if isinstance(question, str):
        if question not in dataset.query_index:
            raise InputError(f"unknown question {question!r}")
        return dataset.query_index[question]
    if not 0 <= int(question) < dataset.n_queries:
        raise InputError(f"question index {question} out of range (0..{dataset.n_queries - 1})")
    return int(question)


def rescuer(holders: tuple[str, ...], n_members: int, relevant: bool = True) -> str | None:
    """Who brought a relevant document of the fused list in from their own top fusion_depth: the one member that
    alone had it there, "both" (two of them), "all" (every one of more than two), "several" (some), None (none).
    Only a relevant document is rescued: for any other (`relevant` False) the answer is None."""
    if not relevant or not holders:
        return None
    if len(holders) == 1:
        return holders[0]
    if len(holders) == n_members and n_members > 2:
        return "all"
    return "both" if len(holders) == 2 else "several"


def explain_fusion(
    dataset: Dataset,
    question: int | str,
    kind: str = "weighted",
    params: Params = Params(),
    engine: Engine | None = None,
    fixed: Fixed | None = None,
    top: int | None = None,
    sources: Sources = (),
) -> list[dict]:
    """Each document's contribution from each member of `params.members` to one question's fused list, best first.

    Rows: the fused top `top` (default: the fusion depth) and every relevant document. Columns: ``doc_id``,
    ``grade`` (0 = not judged relevant), ``judged`` (a judgement of this question names the document: a grade 0
    of an unjudged document is no judgement), ``ranks`` ({member: its rank, None = not a result}), ``contributions``
    ({member: value}: w x min-max score in the weighted fusion, w its weight (alpha and 1 - alpha for two);
    1 / (k + rank) for a document in the member's top fusion_depth in RRF, else 0), ``total`` (their sum, in
    member order, as the fusion adds), ``fused_rank`` (None = not in the fused list), ``in_top`` (the members
    whose top fusion_depth holds the document) and ``rescued_by`` (only for a relevant document of the fused list;
    see `rescuer`: the member that alone had it in its top fusion_depth, "both", "all", or None).
    """
    if kind not in ("weighted", "rrf", "RRF"):
        raise InputError(f"fusion kind must be 'weighted' or 'rrf', got {kind!r}")
    q = _question(dataset, question)
    engine = engine_for(dataset, params, engine)
    fixed = _fixed_for(dataset, params, engine, fixed, sources)
    names, depth, n = fixed.members, params.fusion_depth, dataset.n_docs
    top = depth if top is None else int(top)
    key = dataset.tie_key
    rows = [r[q] for r in fixed.rows]
    ranks = [member_ranks(dataset, rk, row, q) for rk, row in zip(fixed.rankings, rows)]
    in_top = np.array([(r > 0) & (r <= depth) for r in ranks]).reshape(len(names), n)
    if kind == "weighted":
        weights = params.fusion_weights()
        parts = [w * fusion.minmax(row[None, :])[0] for w, row in zip(weights, rows)]
        total = fusion.fuse_rows(weights, [row[None, :] for row in rows])[0]
        fused = _row_ranks(total, key, -1.0) if fixed.answers[:, q].any() else np.zeros(n, dtype=np.int64)
    else:
        k = params.rrf_k
        points = lambda r: fusion.rrf_points(np.maximum(r, 1).astype(np.float64), k)  # noqa: E731
        parts = [np.where(t, points(r), 0.0) for t, r in zip(in_top, ranks)]
        total = parts[0]
        for p in parts[1:]:
            total = total + p
        # a run's documents outside the corpus are fused as one candidate (the fused list's -1): it takes a place
        outside = 0.0
        for rk in fixed.rankings:
            docs, _ = rk.top(q, depth)
            for r in np.flatnonzero(docs < 0):
                outside = outside + float(fusion.rrf_points(r + 1.0, k))
        candidates = in_top.any(axis=0)
        scored = np.append(np.where(candidates, total, -1.0), outside if outside > 0 else -1.0)
        fused = _row_ranks(scored, np.append(key, key[-1]), -0.5)[:n]
    fused[fused > depth] = 0
    relevant = dataset.relevant_of(q)
    judged = set(dataset.qrels.doc_id[dataset.qrels.query == q].tolist())
    docs = set(np.flatnonzero((fused > 0) & (fused <= top)).tolist())
    docs |= {dataset.doc_index[d] for d in relevant if d in dataset.doc_index}
    out = []
    for d in docs:
        holders = tuple(m for i, m in enumerate(names) if in_top[i, d])
        grade = int(relevant.get(dataset.doc_ids[d], 0))
        out.append(
            {
                "doc_id": dataset.doc_ids[d],
                "grade": grade,
                "judged": dataset.doc_ids[d] in judged,
                "ranks": {m: int(ranks[i][d]) or None for i, m in enumerate(names)},
                "contributions": {m: float(parts[i][d]) for i, m in enumerate(names)},
                "total": float(total[d]),
                "fused_rank": int(fused[d]) or None,
                "in_top": holders,
                "rescued_by": rescuer(holders, len(names), grade > 0) if fused[d] > 0 else None,
            }
        )
    big = np.iinfo(np.int64).max
    out.sort(key=lambda r: (r["fused_rank"] or big, -r["total"], key[dataset.doc_index[r["doc_id"]]]))
    return out


# ------------------------------------------------------------------------------------------- one call


@dataclass(frozen=True, eq=False)
class Tuning:
    """A sweep with its analysis: best setting, tie region, cross-validation and the current setting's score."""

    dataset: str
    sweep: Sweep
    best: int
    ties: TieRegion
    cv: CrossValidation
    current: dict[str, float]  # the current setting (base params) of the swept parameters
    current_values: np.ndarray  # per question at the current setting
    current_tied: bool  # whether the current setting can't be told apart from the best (bootstrap, alone)
    p: np.ndarray  # per setting: permutation p against the best (`versus_best`)
    p_holm: np.ndarray  # ... Holm-adjusted over the comparisons with the best
    sign_vectors: int  # the random sign vectors the permutation tests drew (when not exact: `sign_vectors_for`)
    verdict: Verdict  # the current setting against the best (`verdict`: what the Tuning page says)


def tune(
    dataset: Dataset,
    params: str,
    metric: str | metrics.Metric,
    base: Params = Params(),
    folds: int = FOLDS,
    seed: int = SEED,
    engine: Engine | None = None,
    resamples: int = stats.RESAMPLES,
    sources: Sources = (),
    label: str | None = None,
) -> Tuning:
    """Sweep `params`, find the best setting and its tie region, cross-validate the choice, score the current setting
    and say the verdict on it (`verdict`: the permutation test against the best with Holm's correction, and the
    cross-validated gain; `label` names the metric in its text, default its name). A fusion sweep fuses
    `base.members` (`sources`: the sources among them that are not registered retrievers)."""
    key = _params_key(params)
    engine = engine_for(dataset, base, engine)
    if key == "alpha":
        check_alpha_members(base.members)
    fixed = fixed_parts(dataset, base, engine, sources) if key in ("rrf_k", "alpha") else None
    sw = sweep(dataset, key, metric, base, engine, fixed, sources)
    fold_assignment(sw.values.shape[1], folds, seed)  # fail early on bad folds
    best = best_setting(sw.values)
    ties = tie_region(sw.values, best, resamples, seed)
    sign_vectors = sign_vectors_for(sw.means.size, ALPHA_LEVEL)
    p, p_holm = versus_best(sw.values, best, sign_vectors, seed)
    cv = cross_validate(sw.values, folds, seed)
    cur = current_values(dataset, key, metric, base, engine, fixed, sources)
    current = current_setting(sw.names, base)
    said = verdict(sw, best, ties, p, p_holm, current, cur, cv, label, sign_vectors, seed)
    return Tuning(
        dataset.name, sw, best, ties, cv, current, cur, said.signals.current_tied, p, p_holm, sign_vectors, said
    )


def current_setting(names: tuple[str, ...], base: Params) -> dict:
    """The current values of the swept parameters: {'k1': 1.2, 'b': 0.75}, {'analysis': 'none/article', ...}."""
    return {n: "/".join(base.analysis) if n == "analysis" else _num(getattr(base, n), n) for n in names}


class AnalysisRow(NamedTuple):
    """One text analysis in the analysis sweep: its best (k1, b) on every question, that mean, and tuning k1 and
    b for it by cross-validation: the held-out mean and its gain over the current setting."""

    analysis: str
    best: dict
    best_mean: float
    cross_validated: float
    gain: float  # cross_validated - the current setting's mean


def analysis_rows(sw: Sweep, current_values: np.ndarray, folds: int = FOLDS, seed: int = SEED) -> list[AnalysisRow]:
    """Per analysis of an analysis sweep, its best (k1, b) and its k1 x b tuning cross-validated (`folds`, `seed`),
    against the current setting (its per-question values): what stemming or a stop list is worth once k1 and b are
    tuned for it without seeing the held-out questions."""
    if sw.names[0] != "analysis":
        return []
    per = int(np.prod(sw.shape[1:]))
    now = float(np.mean(current_values))
    rows = []
    for i, name in enumerate(sw.choices):
        block = sw.values[i * per : (i + 1) * per]
        best = best_setting(block)
        cv = cross_validate(block, folds, seed)
        setting = {n: v for n, v in sw.setting(i * per + best).items() if n != "analysis"}
        rows.append(AnalysisRow(name, setting, float(block[best].mean()), cv.cross_validated, cv.cross_validated - now))
    return rows


def to_json(t: Tuning) -> dict:
    """The tuning report as JSON-ready data: grid, best, tie region, cross-validation, current setting."""
    sw = t.sweep
    means = sw.means
    grid: dict = {
        n: list(sw.choices) if n == "analysis" else [_num(x, n) for x in a] for n, a in zip(sw.names, sw.axes)
    }
    shape = sw.shape
    grid["mean"] = means.reshape(shape).tolist()
    grid["tied"] = t.ties.tied.reshape(shape).tolist()
    return {
        "dataset": {"name": t.dataset, "questions": len(sw.qids)},
        "system": sw.system,
        "metric": sw.metric,
        "params": list(sw.names),
        "base": sw.base.to_json(),
        "grid": grid,
        "best": {"setting": sw.setting(t.best), "mean": float(means[t.best])},
        "ties": {
            "count": t.ties.size,
            "of": int(means.size),
            "settings": [sw.setting(i) for i in np.flatnonzero(t.ties.tied)],
            "resamples": t.ties.resamples,
            "seed": t.ties.seed,
            "confidence": t.ties.confidence,
        },
        "cv": {
            "folds": t.cv.folds,
            "seed": t.cv.seed,
            "in_sample": t.cv.in_sample,
            "cross_validated": t.cv.cross_validated,
            "optimism": t.cv.optimism,
            "chosen": [
                {
                    "fold": f,
                    "setting": sw.setting(c),
                    "questions": t.cv.fold_sizes[f],
                    "train_mean": t.cv.train_means[f],
                    "test_mean": t.cv.test_means[f],
                }
                for f, c in enumerate(t.cv.chosen)
            ],
        },
        "current": {
            "setting": t.current,
            "mean": float(t.current_values.mean()),
            "tied_with_best": t.current_tied,
            "on_grid": t.verdict.on_grid,
            "p": t.verdict.versus.p,
            "p_holm": t.verdict.versus.p_holm,
            "comparisons": t.verdict.versus.family,
            "sign_vectors": t.sign_vectors,
        },
        "verdict": {"kind": t.verdict.kind, "text": t.verdict.plain},
        "notes": list(sw.notes),
        **(
            {"analyses": [r._asdict() for r in analysis_rows(sw, t.current_values, t.cv.folds, t.cv.seed)]}
            if sw.names[0] == "analysis"
            else {}
        ),
    }


__all__ = [
    "ALPHA_GRID",
    "ALPHA_LEVEL",
    "B_GRID",
    "GAIN_EPS",
    "K1_GRID",
    "MAX_DIMS",
    "PARAMS",
    "RRF_K_GRID",
    "SYSTEM_OF",
    "CrossValidation",
    "Fixed",
    "JOINT",
    "JOINT_POINTS",
    "Oracle",
    "Signals",
    "Sweep",
    "TieRegion",
    "Tuning",
    "Verdict",
    "Versus",
    "about",
    "expectation_text",
    "names_text",
    "offers_best",
    "p_is",
    "place",
    "setting_text",
    "tied_with_best",
    "verdict",
    "verdict_kind",
    "verdict_text",
    "versus_current",
    "ANALYSES",
    "Analysed",
    "AnalysisRow",
    "analysis_name",
    "analysis_rows",
    "current_setting",
    "engine_for",
    "sweep_analysis",
    "best_setting",
    "check_alpha_members",
    "cross_validate",
    "current_values",
    "dims_axis",
    "explain_fusion",
    "fixed_parts",
    "fold_assignment",
    "judged_ranks",
    "member_ranks",
    "oracle",
    "oracle_of",
    "sweep",
    "sweep_alpha",
    "sweep_bm25",
    "check_joint_members",
    "even",
    "joint_axes",
    "sign_vectors_for",
    "rescuer",
    "sweep_dims",
    "sweep_joint",
    "sweep_rrf_k",
    "thin",
    "tie_region",
    "to_json",
    "tune",
    "versus_best",
]
