"""One evaluation's results: every metric per question for every system, the bootstrap, the JSON report.

The systems are computed by the engine (engine.py), which owns every cache; `evaluate` here is the one-call
form for scripts: `evaluate(load("invented"))` is the article's evaluation at its parameters.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..core.errors import InputError
from ..core.jsonable import clean as _clean
from ..core.jsonable import json_ready  # noqa: F401 - the name the reports import from here
from ..core.memo import Memo
from ..core.params import Params
from ..corpus.dataset import Dataset
from . import metrics, significance, stats

if TYPE_CHECKING:  # annotations only: reading a saved report (`experiments`) needs none of the kernels
    from ..retrievers.ranking import Ranking


@dataclass(frozen=True, eq=False)
class Evaluation:
    """Per-question values of every metric for every system, over the questions that have a relevant document."""

    dataset: Dataset
    metrics: tuple[metrics.Metric, ...]
    rankings: dict[str, Ranking]
    values: dict[str, dict[str, np.ndarray]]  # system -> metric name -> values over dataset.evaluated
    first_rank: dict[
        str, np.ndarray
    ]  # system -> rank of the first relevant document over dataset.evaluated (0 = not found)
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


IDEALS = 256  # ideal DCG arrays kept (one per judgements, cutoff and gain: n_queries floats each, 8 KB at 1,000)
_IDEAL = Memo({"ideal": IDEALS})


def ideal_dcg(dataset: Dataset, metric: metrics.Metric) -> np.ndarray:
    """`metrics.ideal_dcg` of the dataset's judgements at the metric's cutoff and gain, read-only, kept under the
    dataset's fingerprint (its whole content, the judgements included): a slider step rescores every system, never
    the judgements (nDCG@1..20 on the Overview: scoring 24 metrics x 4 systems at 1,000 questions took 22-30 ms
    a rerun, 13-15 ms with them kept)."""
    exponential = metric.kind == "ndcg_exp"

    def make() -> np.ndarray:
        out = metrics.ideal_dcg(dataset.qrels, dataset.n_queries, metric.k, exponential)
        out.setflags(write=False)
        return out

    return _IDEAL.get("ideal", (dataset.fingerprint, metric.k, exponential), make)


def score(
    dataset: Dataset, ranks: dict[str, Ranking], metric_list: list[metrics.Metric], notes: tuple[str, ...] = ()
) -> Evaluation:
    """Every metric for every system, per question (each nDCG's ideal DCG computed once per judgements: `ideal_dcg`)."""
    ev = dataset.evaluated
    nq, qrels = dataset.n_queries, dataset.qrels
    ideal = {m.name: ideal_dcg(dataset, m) for m in metric_list if m.kind.startswith("ndcg")}
    values = {
        s: {m.name: metrics.per_query(qrels, nq, r.judged_rank, m, ideal.get(m.name))[ev] for m in metric_list}
        for s, r in ranks.items()
    }
    first = {s: metrics.first_relevant_rank(qrels, nq, r.judged_rank)[ev] for s, r in ranks.items()}
    return Evaluation(dataset, tuple(metric_list), ranks, values, first, notes)


def compare(
    evaluation: Evaluation,
    metric: str,
    pairs: list[tuple[str, str]] | None = None,
    resamples: int = significance.RESAMPLES,
    seed: int = significance.SEED,
    alpha: float = 0.05,
) -> list[dict]:
    """Paired randomisation tests of the systems' per-question values of one metric, for the given pairs (all pairs
    by default), Holm-adjusted as one family: one row per pair (`significance.compare_systems`)."""
    if metric not in evaluation.values[evaluation.systems[0]]:
        metric = metrics.parse(metric).name
    values = {s: evaluation.values[s][metric] for s in evaluation.systems if metric in evaluation.values[s]}
    if not values:
        raise InputError(f"metric {metric!r} was not computed")
    return significance.compare_systems(values, pairs, resamples, seed, alpha)


def bootstrap_report(
    evaluation: Evaluation, metric: str, a: str, b: str, resamples: int = stats.RESAMPLES, seed: int = stats.SEED
) -> dict:
    """The paired bootstrap of a - b on one metric, as the JSON report writes it."""
    for s in (a, b):
        if s not in evaluation.values:
            raise InputError(f"unknown system {s!r}: known are {', '.join(evaluation.values)}")
    if metric not in evaluation.values[a]:
        metric = metrics.parse(metric).name
        if metric not in evaluation.values[a]:
            raise InputError(f"metric {metric!r} was not computed: computed are {', '.join(evaluation.values[a])}")
    iv = stats.paired_bootstrap(evaluation.values[a][metric], evaluation.values[b][metric], resamples, seed)
    return {
        "metric": metric,
        "a": a,
        "b": b,
        "mean_diff": iv.mean,
        "ci_low": iv.low,
        "ci_high": iv.high,
        "resamples": resamples,
        "seed": seed,
    }


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
        "params": params.to_json(),
        "metrics": [m.name for m in evaluation.metrics],
        "systems": {s: {m: _clean(v) for m, v in row.items()} for s, row in evaluation.means().items()},
        "per_query": per_query,
        "bootstrap": boot,
        "warnings": list(ds.warnings) + list(evaluation.notes),
    }
