"""Sweeps' common parts: the grids, a sweep's result (`Sweep`), the exact judged ranks a metric is read from
(`judged_ranks`), and the BM25 k1 x b sweep (`bm25_grid_scores`, `sweep_bm25`), scored from the count matrix built once."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ...core.errors import InputError
from ...core.params import Params, grid_for
from ...corpus.dataset import Dataset, Qrels
from ...corpus.text import Analysis
from ...engine.engine import Engine, for_dataset
from ...evaluation import metrics
from ...retrievers import bm25
from ...retrievers.ranking import THRESHOLD, judged_layout, rank_rows

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
    """Dense BM25 scores at (k1, b), equal to bm25.score's to the last bit (tests/kernels/test_kernels.py)."""
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
    ranks as `judged_ranks(bm25_grid_scores(...))`, the dense reference (tests/analyses/test_tuning.py)."""
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
