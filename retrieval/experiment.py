"""One evaluation end to end: the four built-in systems (and any run files) on a dataset, every metric per question.

Each step is a separate function so that the app can cache it on exactly what it depends on: the index on
the dataset, BM25 scores on (k1, b), the LSA on d, the fusions on alpha and the RRF constant.
"""

from __future__ import annotations

import ctypes
import math
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np
import scipy.sparse as sp

from . import bm25, fusion, lsa, metrics, stats
from .dataset import Dataset, TrecRun
from .errors import InputError
from .ranking import Ranking, from_run, judged_layout
from .text import TermIndex, build_index, query_counts

SYSTEMS = ("BM25", "LSA", "weighted", "RRF")


@dataclass(frozen=True)
class Params:
    """The retrieval parameters; the defaults are the article's."""

    k1: float = bm25.K1_DEFAULT
    b: float = bm25.B_DEFAULT
    dims: int = lsa.DIMS_DEFAULT
    rrf_k: float = fusion.RRF_K_DEFAULT
    alpha: float = fusion.ALPHA_DEFAULT
    fusion_depth: int = fusion.DEPTH_DEFAULT
    depth: int = 100

    def check(self) -> "Params":
        """Self, or an error naming the first absurd parameter."""
        bm25.check_params(self.k1, self.b)
        fusion.check_alpha(self.alpha)
        fusion.check_rrf_k(self.rrf_k)
        if isinstance(self.dims, bool) or int(self.dims) != self.dims or self.dims < 1:
            raise InputError(f"dims must be a whole number >= 1, got {self.dims}")
        for name in ("fusion_depth", "depth"):
            v = getattr(self, name)
            if int(v) != v or v < 1:
                raise InputError(f"{name} must be a whole number >= 1, got {v}")
        return self


@dataclass(frozen=True, eq=False)
class Prepared:
    """Everything built once per dataset: the term index, BM25's columns and the questions' term counts.

    It also keeps bounded caches of what the sliders reuse (BM25 runs per (k1, b), LSA fits per d, the
    weighted fusion's cross look-ups per (k1, b, d)), so that `rankings` on the same `Prepared` recomputes only
    what a parameter change touches. Keep one `Prepared` per dataset (e.g. in a resource cache).
    """

    index: TermIndex
    bm25: bm25.Bm25Index
    qcounts: sp.csr_matrix
    plan: bm25.QuestionPlan | None = None
    cache: dict = field(default_factory=dict, repr=False, compare=False)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def __getstate__(self) -> dict:
        """Pickled without its caches and lock (a copy starts with empty caches)."""
        state = dict(self.__dict__)
        state.pop("lock", None)
        state["cache"] = {}
        return state

    def __setstate__(self, state: dict) -> None:
        for k, v in state.items():
            object.__setattr__(self, k, v)
        object.__setattr__(self, "lock", threading.Lock())


_CACHE_SIZES = {"bm25": 8, "fit": 4, "cross": 8, "weighted": 16, "probe": 4, "judged": 2}


def _cached(prep: Prepared, kind: str, key: tuple, make):
    """prep.cache[kind][key], made on a miss; the oldest entries beyond the kind's size are dropped."""
    with prep.lock:
        store = prep.cache.setdefault(kind, {})
        if key in store:
            store[key] = store.pop(key)  # most recently used last
            return store[key]
    value = make()
    with prep.lock:
        store[key] = value
        while len(store) > _CACHE_SIZES.get(kind, 8):
            store.pop(next(iter(store)))
    return value


def release_free_memory() -> None:
    """Hand the heap the tokeniser freed back to the operating system (glibc's malloc_trim; elsewhere nothing):
    45 MB at 100,000 documents (measured after `prepare`) that would otherwise stay resident under everything
    built after it."""
    try:
        trim = getattr(ctypes.CDLL(None), "malloc_trim", None)  # the process's own symbols: libc's among them
    except (OSError, TypeError):  # no such handle on this platform
        return
    if trim is not None:
        trim(0)


def prepare(dataset: Dataset, progress: Callable[[str, float], None] | None = None) -> Prepared:
    """Tokenise the corpus and the questions once, and slice the question terms' postings.

    `progress(stage, fraction)` receives the stage's name and the fraction of the whole preparation done (0 to 1),
    for a progress bar: tokenising takes about 85% of the time.
    """
    def step(share0: float, share1: float):
        if progress is None:
            return None
        return lambda stage, f: progress(stage, share0 + (share1 - share0) * f)

    index = build_index(dataset.doc_texts, step(0.0, 0.85))
    release_free_memory()
    if progress is not None:
        progress("preparing BM25", 0.85)
    bm = bm25.prepare(index)
    if progress is not None:
        progress("tokenising questions", 0.95)
    qcounts = query_counts(index, dataset.query_texts)
    qplan = bm25.plan(bm, qcounts)
    if progress is not None:
        progress("ready", 1.0)
    return Prepared(index, bm, qcounts, qplan)


def _plan(prep: Prepared) -> bm25.QuestionPlan:
    """The question plan (made on demand for a Prepared built by hand)."""
    if prep.plan is None:
        object.__setattr__(prep, "plan", bm25.plan(prep.bm25, prep.qcounts))
    return prep.plan


def bm25_scores(prep: Prepared, k1: float, b: float) -> sp.csr_matrix:
    """BM25 scores of every question (sparse): the reference algebra. The sliders use `bm25_run` instead."""
    return bm25.score(prep.bm25, prep.qcounts, k1, b)


def bm25_run(dataset: Dataset, prep: Prepared, k1: float, b: float, depth: int = 100, fit: LsaFit | None = None) -> bm25.Bm25Run:
    """BM25 at (k1, b) for every question without a score matrix (cached per (k1, b, depth) on `prep`).

    Its `.ranking` is `bm25.search(dataset, bm25_scores(prep, k1, b), depth)` exactly; pass the run itself where
    `base_rankings` and `fused_rankings` take `scores`. With the current LSA `fit`, the same pass also scores
    LSA's best documents, which the weighted fusion needs.
    """
    bm25.check_params(k1, b)
    plan = _plan(prep)
    side = lsa_run(dataset, fit, depth) if fit is not None else None
    probe, probe_n = (side.top_d, side.n_top) if side is not None else (None, None)

    def make() -> bm25.Bm25Run:
        j_ptr, j_doc = judged_layout(dataset)
        judged = _located(prep, "judged", dataset.qrels, lambda: bm25.locate(plan, j_doc, j_ptr))
        probe_at = None if side is None else _located(prep, "probe", side.top_d,
                                                      lambda: bm25.locate_lists(plan, side.top_d, side.n_top))
        return _keep(bm25.run(prep.bm25, plan, dataset, k1, b, depth, probe=probe, probe_n=probe_n,
                              hint=_latest(prep, "bm25"), probe_at=probe_at, judged_at=judged), dataset)

    return _cached(prep, "bm25", (id(dataset), float(k1), float(b), int(depth)), make)


def _located(prep: Prepared, kind: str, owner, make):
    """Positions in BM25's question layout of the documents `owner` holds (the judgements, LSA's best lists):
    they change with neither k1 nor b, so they are found once per owner (held in the cache, so its id is not
    reused while the entry lives) rather than at every slider tick."""
    held, pos = _cached(prep, kind, (id(owner),), lambda: (owner, make()))
    return pos if held is owner else make()


def _latest(prep: Prepared, kind: str):
    """The most recently used value of a cache kind on `prep`, or None."""
    with prep.lock:
        store = prep.cache.get(kind)
        return next(reversed(store.values())) if store else None


def _keep(value, dataset: Dataset):
    """Tie a cached value to the dataset it was computed for (so an id in a cache key is never reused)."""
    object.__setattr__(value, "_dataset", dataset)
    return value


@dataclass(frozen=True, eq=False)
class LsaFit:
    """A fitted LSA and the projected questions."""

    model: lsa.LsaModel
    qvec: np.ndarray
    cache: dict = field(default_factory=dict, repr=False, compare=False)


def fit_lsa(prep: Prepared, dims: int) -> LsaFit:
    """LSA with d dimensions and the questions projected into it (cached per d on `prep`)."""
    def make() -> LsaFit:
        model = lsa.fit(prep.index, dims)
        return LsaFit(model, lsa.query_vectors(model, prep.qcounts))

    if isinstance(dims, bool) or not isinstance(dims, (int, np.integer)):
        return make()  # lsa.fit names what is wrong with it (or takes a whole float as it is)
    return _cached(prep, "fit", (int(dims),), make)


def lsa_run(dataset: Dataset, fit: LsaFit, depth: int = 100) -> lsa.LsaRun:
    """LSA's cosines ranked for every question (cached per depth on the fit): `.ranking` is `lsa.search`'s."""
    return lsa.cached_run(dataset, fit.model, fit.qvec, depth)


def base_rankings(dataset: Dataset, scores: sp.csr_matrix | bm25.Bm25Run, fit: LsaFit, depth: int) -> tuple[Ranking, Ranking]:
    """BM25 and LSA rankings (`scores`: the sparse matrix of `bm25_scores` or a `bm25_run`)."""
    return bm25.search(dataset, scores, depth), lsa_run(dataset, fit, depth).ranking


def fused_rankings(
    dataset: Dataset, scores: sp.csr_matrix | bm25.Bm25Run, fit: LsaFit, bm: Ranking, ls: Ranking, params: Params,
    prep: Prepared | None = None,
) -> tuple[Ranking, Ranking]:
    """The weighted and RRF fusions of BM25 and LSA.

    The weighted fusion min-max normalises over every document; it is computed from both retrievers' best
    lists with an exact bound (fusion.weighted_lists), the same ranking as fusing every document's scores.
    """
    depth = max(params.depth, params.fusion_depth)
    side_b = scores if isinstance(scores, bm25.Bm25Run) else fusion.csr_side(dataset, scores, max(depth, bm25.keep_for(dataset.n_docs)))
    side_l = lsa_run(dataset, fit, depth)  # its list is max(depth, lsa.KEEP_DEFAULT) deep: the run bm25_run probed
    cross = None
    if prep is not None and isinstance(scores, bm25.Bm25Run):
        key = (id(dataset), scores.k1, scores.b, id(fit), side_b.top_d.shape[1], side_l.top_d.shape[1])
        cross = _cached(prep, "cross", key, lambda: _keep_tuple(fusion.cross_scores(side_b, side_l), fit, scores))
    if prep is not None and isinstance(scores, bm25.Bm25Run):
        key = (id(dataset), id(scores), id(fit), float(params.alpha), int(params.fusion_depth))
        w = _cached(prep, "weighted", key, lambda: _keep(
            fusion.weighted_lists(dataset, side_b, side_l, params.alpha, params.fusion_depth, cross=cross and cross[:2]),
            (dataset, scores, fit)))
    else:
        w = fusion.weighted_lists(dataset, side_b, side_l, params.alpha, params.fusion_depth, cross=cross and cross[:2])
    r = fusion.rrf(dataset, [bm, ls], params.rrf_k, params.fusion_depth)
    return w, r


def _keep_tuple(pair: tuple, *refs) -> tuple:
    """The pair plus references that keep its key's ids alive."""
    return (*pair, refs)


def rankings(dataset: Dataset, params: Params, runs: tuple[TrecRun, ...] = (), prep: Prepared | None = None) -> dict[str, Ranking]:
    """All systems' rankings: BM25, LSA, weighted, RRF, then each run file, by name.

    With the same `prep`, a k1 or b change re-scores BM25 (and the fusions), a d change refits only the LSA,
    an alpha or RRF change recomputes only that fusion.
    """
    params.check()
    prep = prep or prepare(dataset)
    depth = max(params.depth, params.fusion_depth)
    fit = fit_lsa(prep, params.dims)
    run = bm25_run(dataset, prep, params.k1, params.b, depth, fit)
    bm, ls = base_rankings(dataset, run, fit, depth)
    w, r = fused_rankings(dataset, run, fit, bm, ls, params, prep)
    out = {"BM25": bm, "LSA": ls, "weighted": w, "RRF": r}
    for run_file in runs:
        if run_file.name in out:
            raise InputError(f"run name {run_file.name!r} is already taken (built-in systems: {', '.join(SYSTEMS)})")
        out[run_file.name] = from_run(run_file, dataset)
    return out


@dataclass(frozen=True, eq=False)
class Evaluation:
    """Per-question values of every metric for every system, over the questions that have a relevant document."""

    dataset: Dataset
    metrics: tuple[metrics.Metric, ...]
    rankings: dict[str, Ranking]
    values: dict[str, dict[str, np.ndarray]]  # system -> metric name -> values over dataset.evaluated
    first_rank: dict[str, np.ndarray]  # system -> rank of the first relevant document over dataset.evaluated (0 = not found)
    notes: tuple[str, ...] = field(default=())

    @property
    def systems(self) -> list[str]:
        """System names in display order."""
        return list(self.rankings)

    def mean(self, system: str, metric: str) -> float:
        """Mean of a metric for a system."""
        return float(self.values[system][metric].mean()) if self.values[system][metric].size else float("nan")

    def means(self) -> dict[str, dict[str, float]]:
        """system -> metric -> mean."""
        return {s: {m.name: self.mean(s, m.name) for m in self.metrics} for s in self.rankings}


def score(dataset: Dataset, ranks: dict[str, Ranking], metric_list: list[metrics.Metric], notes: tuple[str, ...] = ()) -> Evaluation:
    """Every metric for every system, per question."""
    ev = dataset.evaluated
    values = {
        s: {m.name: metrics.per_query(dataset.qrels, dataset.n_queries, r.judged_rank, m)[ev] for m in metric_list}
        for s, r in ranks.items()
    }
    first = {s: metrics.first_relevant_rank(dataset.qrels, dataset.n_queries, r.judged_rank)[ev] for s, r in ranks.items()}
    return Evaluation(dataset, tuple(metric_list), ranks, values, first, notes)


def evaluate(
    dataset: Dataset,
    params: Params = Params(),
    metric_names: str | list[str] = metrics.DEFAULT_METRICS,
    runs: tuple[TrecRun, ...] = (),
    prep: Prepared | None = None,
) -> Evaluation:
    """The whole evaluation with the given parameters."""
    metric_list = metrics.parse_list(metric_names)
    params.check()
    prep = prep or prepare(dataset)
    ranks = rankings(dataset, params, runs, prep)
    notes = tuple(w for r in ranks.values() for w in r.warnings)
    return score(dataset, ranks, metric_list, notes)


def bootstrap_report(evaluation: Evaluation, metric: str, a: str, b: str, resamples: int = stats.RESAMPLES, seed: int = stats.SEED) -> dict:
    """The paired bootstrap of a - b on one metric, as the JSON report writes it."""
    for s in (a, b):
        if s not in evaluation.values:
            raise InputError(f"unknown system {s!r}: known are {', '.join(evaluation.values)}")
    if metric not in evaluation.values[a]:
        metric = metrics.parse(metric).name
        if metric not in evaluation.values[a]:
            raise InputError(f"metric {metric!r} was not computed: computed are {', '.join(evaluation.values[a])}")
    iv = stats.paired_bootstrap(evaluation.values[a][metric], evaluation.values[b][metric], resamples, seed)
    return {"metric": metric, "a": a, "b": b, "mean_diff": iv.mean, "ci_low": iv.low, "ci_high": iv.high,
            "resamples": resamples, "seed": seed}


def _clean(x: float) -> float | None:
    """A float for JSON (NaN becomes null)."""
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def to_json(evaluation: Evaluation, params: Params, boot: dict | None) -> dict:
    """The report contract shared by `python -m retrieval evaluate --json` and the app's download."""
    ds = evaluation.dataset
    qids = [ds.query_ids[q] for q in ds.evaluated]
    per_query = {}
    for s in evaluation.systems:
        rows = {}
        for i, qid in enumerate(qids):
            fr = int(evaluation.first_rank[s][i])
            row = {"first_relevant_rank": fr if fr > 0 else None}
            row.update({m: _clean(float(v[i])) for m, v in evaluation.values[s].items()})
            rows[qid] = row
        per_query[s] = rows
    return {
        "dataset": {"name": ds.name, "documents": ds.n_docs, "queries": ds.n_queries},
        "params": asdict(params),
        "metrics": [m.name for m in evaluation.metrics],
        "systems": {s: {m: _clean(v) for m, v in row.items()} for s, row in evaluation.means().items()},
        "per_query": per_query,
        "bootstrap": boot,
        "warnings": list(ds.warnings) + list(evaluation.notes),
    }
