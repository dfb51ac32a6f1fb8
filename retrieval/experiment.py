"""One evaluation end to end: the four built-in systems (and any run files) on a dataset, every metric per question.

Each step is a separate function so that the app can cache it on exactly what it depends on: the index on
the dataset, BM25 scores on (k1, b), the LSA on d, the fusions on alpha and the RRF constant.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np
import scipy.sparse as sp

from . import bm25, fusion, lsa, metrics, stats
from .dataset import Dataset, TrecRun
from .errors import InputError
from .ranking import Ranking, from_run
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
    """Everything built once per dataset: the term index, BM25's columns and the questions' term counts."""

    index: TermIndex
    bm25: bm25.Bm25Index
    qcounts: sp.csr_matrix


def prepare(dataset: Dataset) -> Prepared:
    """Tokenise the corpus and the questions once."""
    index = build_index(dataset.doc_texts)
    return Prepared(index, bm25.prepare(index), query_counts(index, dataset.query_texts))


def bm25_scores(prep: Prepared, k1: float, b: float) -> sp.csr_matrix:
    """BM25 scores of every question (sparse)."""
    return bm25.score(prep.bm25, prep.qcounts, k1, b)


@dataclass(frozen=True, eq=False)
class LsaFit:
    """A fitted LSA and the projected questions."""

    model: lsa.LsaModel
    qvec: np.ndarray


def fit_lsa(prep: Prepared, dims: int) -> LsaFit:
    """LSA with d dimensions and the questions projected into it."""
    model = lsa.fit(prep.index, dims)
    return LsaFit(model, lsa.query_vectors(model, prep.qcounts))


def base_rankings(dataset: Dataset, scores: sp.csr_matrix, fit: LsaFit, depth: int) -> tuple[Ranking, Ranking]:
    """BM25 and LSA rankings."""
    return bm25.search(dataset, scores, depth), lsa.search(dataset, fit.model, fit.qvec, depth)


def fused_rankings(
    dataset: Dataset, scores: sp.csr_matrix, fit: LsaFit, bm: Ranking, ls: Ranking, params: Params
) -> tuple[Ranking, Ranking]:
    """The weighted and RRF fusions of BM25 and LSA."""
    w = fusion.weighted(dataset, scores, lsa.score_chunks(fit.model, fit.qvec), params.alpha, params.fusion_depth)
    r = fusion.rrf(dataset, [bm, ls], params.rrf_k, params.fusion_depth)
    return w, r


def rankings(dataset: Dataset, params: Params, runs: tuple[TrecRun, ...] = (), prep: Prepared | None = None) -> dict[str, Ranking]:
    """All systems' rankings: BM25, LSA, weighted, RRF, then each run file, by name."""
    params.check()
    prep = prep or prepare(dataset)
    scores = bm25_scores(prep, params.k1, params.b)
    fit = fit_lsa(prep, params.dims)
    bm, ls = base_rankings(dataset, scores, fit, max(params.depth, params.fusion_depth))
    w, r = fused_rankings(dataset, scores, fit, bm, ls, params)
    out = {"BM25": bm, "LSA": ls, "weighted": w, "RRF": r}
    for run in runs:
        if run.name in out:
            raise InputError(f"run name {run.name!r} is already taken (built-in systems: {', '.join(SYSTEMS)})")
        out[run.name] = from_run(run, dataset)
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
