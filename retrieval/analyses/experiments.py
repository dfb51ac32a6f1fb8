"""Saved experiments: what is kept of a view (its report, runs, grades rule), two of them compared question by
question, and a metric across a dataset's experiments in time order.

A record is the report of `python -m retrieval evaluate --json` (`evaluation.experiment.to_json`: the dataset,
every parameter, the metrics' means and per-question values of every system) with what else decides the numbers:
the runs' names and contents' fingerprints, and the rule and count of the workspace raters' grades.

>>> import retrieval
>>> ds = retrieval.load("invented")
>>> a = record(retrieval.evaluate(ds, retrieval.Params(), ["ndcg@5"]), retrieval.Params())
>>> b = record(retrieval.evaluate(ds, retrieval.Params(k1=0.5), ["ndcg@5"]), retrieval.Params(k1=0.5))
>>> c = compare(a, b, "BM25", "BM25", "ndcg@5")
>>> c.questions, round(c.interval.mean, 6) == round(c.mean_a - c.mean_b, 6), c.verdict.startswith("can't be told apart")
(14, True, True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.errors import InputError
from ..core.params import Params
from ..core.words import plural
from ..corpus.dataset import TrecRun
from ..evaluation import stats
from ..evaluation.experiment import Evaluation, to_json
from ..evaluation.records import VERSION

# VERSION: of the record's shape, read by evaluation.records.check (what a reader of a saved experiment relies on)


def record(evaluation: Evaluation, params: Params, runs: tuple[TrecRun, ...] = (), rule: str = "original",
           workspace_grades: int = 0) -> dict:
    """What a saved experiment keeps: the JSON report, and the runs, grades rule and count behind it."""
    return {
        "version": VERSION,
        "report": to_json(evaluation, params, None),
        "runs": [{"name": r.name, "fingerprint": r.fingerprint} for r in runs],
        "grades": {"rule": rule, "from_workspace": int(workspace_grades)},
    }


def _values(rec: dict, system: str, metric: str, which: str) -> dict[str, float]:
    per = rec["report"]["per_query"]
    if system not in per:
        raise InputError(f"{which}: no system {system!r} (it has {', '.join(per)})")
    rows = per[system]
    if rows and metric not in next(iter(rows.values())):
        raise InputError(f"{which}: no metric {metric!r} (it has {', '.join(rec['report']['metrics'])})")
    return {q: (np.nan if row[metric] is None else float(row[metric])) for q, row in rows.items()}


@dataclass(frozen=True)
class Comparison:
    """Two experiments' system on one metric over the questions both evaluated: each one's mean there, the
    per-question differences a - b, and the paired bootstrap interval of their mean."""

    system_a: str
    system_b: str
    metric: str
    question_ids: tuple[str, ...]
    differences: np.ndarray
    mean_a: float
    mean_b: float
    interval: stats.Interval

    @property
    def questions(self) -> int:
        return len(self.question_ids)

    @property
    def verdict(self) -> str:
        """'can't be told apart' when the 95% interval holds zero, as the Compare page says, else which is better."""
        iv = self.interval
        span = f"95% interval of the mean difference [{iv.low:+.4f}, {iv.high:+.4f}] over {plural(self.questions, 'question')}"
        if iv.holds_zero:
            return f"can't be told apart: the {span} holds zero"
        better = "A" if iv.mean > 0 else "B"
        return f"{better} is better: the {span} leaves zero out"


def compare(a: dict, b: dict, system_a: str, system_b: str, metric: str) -> Comparison:
    """Experiment a's system_a against experiment b's system_b on `metric`, paired over the questions both
    evaluated (a question with no value in either, e.g. a metric undefined there, is left out)."""
    va, vb = _values(a, system_a, metric, "experiment A"), _values(b, system_b, metric, "experiment B")
    common = tuple(q for q in va if q in vb and not (np.isnan(va[q]) or np.isnan(vb[q])))
    if not common:
        raise InputError("the two experiments have no evaluated question in common (are they of the same dataset?)")
    xa = np.array([va[q] for q in common])
    xb = np.array([vb[q] for q in common])
    return Comparison(system_a, system_b, metric, common, xa - xb, float(xa.mean()), float(xb.mean()),
                      stats.paired_bootstrap(xa, xb))


@dataclass(frozen=True)
class Point:
    """One system's mean of a metric in one saved experiment."""

    experiment: int
    name: str
    created_at: str  # ISO 8601, UTC
    system: str
    mean: float | None


def history(saved: list[tuple[int, str, str, dict]], metric: str) -> list[Point]:
    """A metric's mean for every system of each saved experiment (id, name, time in ISO 8601, record), in time
    order; an experiment that did not measure the metric is left out."""
    out = []
    for eid, name, at, rec in sorted(saved, key=lambda x: (x[2], x[0])):
        means = rec["report"]["systems"]
        for system, row in means.items():
            if metric in row:
                out.append(Point(eid, name, at, system, row[metric]))
    return out
