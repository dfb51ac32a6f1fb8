"""Saved experiments: what is kept of a view (its report, runs, embeddings, grades rule, metric), every setting of
each and which of them differ among several, two of them compared question by question, and a metric across a
dataset's experiments in time order.

A record is the report of `python -m retrieval evaluate --json` (`evaluation.experiment.to_json`: the dataset,
every parameter, the metrics' means and per-question values of every system) with what else decides the numbers:
the runs' names and contents' fingerprints, the dense vectors' model and fingerprint, the rule and count of the
workspace raters' grades, and the view's cutoff and metric.

>>> import retrieval
>>> ds = retrieval.load("invented")
>>> a = record(retrieval.evaluate(ds, retrieval.Params(), ["ndcg@5"]), retrieval.Params())
>>> b = record(retrieval.evaluate(ds, retrieval.Params(k1=0.5), ["ndcg@5"]), retrieval.Params(k1=0.5))
>>> c = compare(a, b, "BM25", "BM25", "ndcg@5")
>>> c.questions, round(c.interval.mean, 6) == round(c.mean_a - c.mean_b, 6), c.verdict.startswith("can't be told apart")
(14, True, True)
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from ..core.errors import InputError
from ..core.params import SPECS, Params
from ..core.words import plural
from ..corpus.dataset import TrecRun
from ..corpus.embeddings import Aligned
from ..evaluation import records, stats
from ..evaluation.experiment import Evaluation, to_json
from ..evaluation.records import VERSION

# VERSION: of the record's shape, read by evaluation.records.check (what a reader of a saved experiment relies on)


def record(
    evaluation: Evaluation,
    params: Params,
    runs: tuple[TrecRun, ...] = (),
    rule: str = "original",
    workspace_grades: int = 0,
    embeddings: Aligned | None = None,
    k: int | None = None,
    metric: str | None = None,
) -> dict:
    """What a saved experiment keeps: the JSON report, and the runs, dense vectors (None: no dense system), grades
    rule and count behind it, and the view's cutoff k and metric (None: not said, e.g. a script's record)."""
    return {
        "version": VERSION,
        "report": to_json(evaluation, params, None),
        "runs": [{"name": r.name, "fingerprint": r.fingerprint} for r in runs],
        "grades": {"rule": rule, "from_workspace": int(workspace_grades)},
        "embeddings": None
        if embeddings is None
        else {"model": embeddings.model, "fingerprint": embeddings.fingerprint},
        "view": {"k": None if k is None else int(k), "metric": metric},
    }


# --------------------------------------------------------------------------- every setting, and which ones differ

NOT_RECORDED = "not recorded"  # a setting the record predates (runs, grades and parameters are always there)
SHORT = {"k": "k", "k1": "k1", "b": "b", "dims": "d", "rrf_k": "RRF k", "alpha": "alpha", "k3": "k3"}  # the
# table's short names of the sliders' parameters; every other parameter is named by its label in `params.SPECS`
FIELDS = {  # the `Params` fields that are not in the parameter table (a field neither names is shown by its name)
    "members": ("fused systems", "The systems both fusions combine."),
    "weights": ("fusion weights", "The weighted fusion's weight per fused system; none: alpha and 1 - alpha."),
}
OTHER = (  # what decides the numbers beside the parameters: key, label, help
    ("runs", "runs", "The uploaded run files: each name, and the first 8 hex digits of its content's fingerprint."),
    (
        "embeddings",
        "embeddings",
        (
            "The dense system's vectors: their model, and the first 8 hex digits of their "
            "fingerprint; none: no dense system."
        ),
    ),
    (
        "grades_rule",
        "grades rule",
        ("How the workspace raters' grades were combined into one per pair (original: the loaded judgements alone)."),
    ),
    ("workspace_grades", "raters' grades", "How many judgements the workspace raters' grades added."),
    ("metric", "metric", "The sidebar's metric when the experiment was saved."),
    ("metrics", "metrics", "The metrics measured."),
)


@dataclass(frozen=True)
class Setting:
    """One setting of a saved experiment: its key (`settings_of`), the table's column name and what it is."""

    key: str
    label: str
    help: str


def readable(experiment_id: int, name: str, body) -> dict:
    """A stored experiment's body when it is a saved view (`records.check`: every key a reader of it reads), else one
    InputError naming the experiment by number and name and the key that is wrong: what every reader (the
    Experiments page, `experiments list|show|compare`) reads a body through, so a body saved by an older version
    or written by hand is said as such, never a KeyError."""
    return records.check(body, f"experiment #{experiment_id} {name!r}")


def _part(rec: dict, *path: str) -> dict:
    """rec[path[0]][path[1]]... when each is a JSON object, else {} (a body from an imported zip may be any object)."""
    for key in path:
        rec = rec.get(key) if isinstance(rec, dict) else None
    return rec if isinstance(rec, dict) else {}


def _measured(rec: dict) -> list[str]:
    metrics = _part(rec, "report").get("metrics")
    return [str(m) for m in metrics] if isinstance(metrics, list) else []


def _cutoff(rec: dict):
    """The view's cutoff k: as recorded, else the cutoff of the first metric that has one (the app's metrics are
    all at k), else NOT_RECORDED."""
    k = _part(rec, "view").get("k")
    if k is not None:
        return k
    cut = next((m.partition("@")[2] for m in _measured(rec) if "@" in m), "")
    return int(cut) if cut.isdigit() else NOT_RECORDED


def settings_of(rec: dict) -> dict[str, object]:
    """Every setting of a saved experiment, JSON-ready, by key: the cutoff k and each parameter (every field of
    `Params`, in the order of the parameter table: one added later is there without a change here, and a record
    that predates it has its default, what the lab did before it existed), then the runs, the dense vectors, the
    grades rule and count, the sidebar's metric and the metrics measured. A part a body lacks (one from an imported
    zip may be any JSON object) reads as a default or NOT_RECORDED, never an error."""
    params, defaults = _part(rec, "report", "params"), Params().to_json()
    out: dict[str, object] = {"k": _cutoff(rec)}
    for name in (*(n for n in SPECS if n in params or n in defaults), *params, *defaults):
        out.setdefault(name, params[name] if name in params else defaults[name])
    grades = _part(rec, "grades")
    runs = rec.get("runs") if isinstance(rec.get("runs"), list) else []
    out.update(
        {
            "runs": [{"name": r.get("name"), "fingerprint": r.get("fingerprint")} for r in runs if isinstance(r, dict)],
            "embeddings": rec.get("embeddings", NOT_RECORDED),
            "grades_rule": grades.get("rule", "original"),
            "workspace_grades": grades.get("from_workspace", 0),
            "metric": _part(rec, "view").get("metric") or NOT_RECORDED,
            "metrics": _measured(rec),
        }
    )
    return out


def _same(value) -> str:
    """A value's identity for "differs": numbers as floats (6 and 6.0 are one value), the rest as canonical JSON."""

    def norm(v):
        if isinstance(v, bool) or v is None or isinstance(v, str):
            return v
        if isinstance(v, (int, float)):
            return float(v)
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        return [norm(x) for x in v]

    return json.dumps(norm(value), sort_keys=True)


def shown(value) -> str | int | float:
    """A setting's value as a table shows it: a number as it is, a list joined by commas ("none" when empty), a run
    or the embeddings by name (model) and the first 8 hex digits of the fingerprint, None as "none"."""
    if value is None:
        return "none"
    if isinstance(value, dict) and "fingerprint" in value:
        return f"{value.get('name') or value.get('model')} ({str(value['fingerprint'])[:8]})"
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True)
    if isinstance(value, (list, tuple)):
        return ", ".join(str(shown(v)) for v in value) if value else "none"
    return value


@dataclass(frozen=True)
class Settings:
    """Several saved experiments' settings: every setting any of them has (table order), each one's values, and
    the keys whose value is not the same in all."""

    columns: tuple[Setting, ...]
    values: tuple[dict[str, object], ...]
    differing: tuple[str, ...]

    def shown_columns(self, every: bool = False) -> tuple[Setting, ...]:
        """The settings a table shows: those that differ, or every one (`every`, or a single experiment)."""
        if every or len(self.values) < 2:
            return self.columns
        return tuple(c for c in self.columns if c.key in self.differing)

    def rows(self, every: bool = False) -> list[dict[str, object]]:
        """One row per experiment, column label -> the value shown; a column is numbers only when each of its
        values is a number, else text throughout."""
        cols = self.shown_columns(every)
        cells = [[shown(v[c.key]) for c in cols] for v in self.values]
        numeric = [
            all(isinstance(r[j], (int, float)) and not isinstance(r[j], bool) for r in cells) for j in range(len(cols))
        ]
        return [{c.label: (x if numeric[j] else str(x)) for j, (c, x) in enumerate(zip(cols, r))} for r in cells]

    @property
    def sentence(self) -> str:
        """What differs among the experiments, in one plain sentence."""
        n, m = len(self.values), len(self.columns)
        if n == 0:
            return "No experiment is listed."
        if n == 1:
            return f"One experiment: each of its {plural(m, 'setting')} is shown."
        if not self.differing:
            return (
                f"The {n:,} experiments share each of their {plural(m, 'setting')}: only their names and times differ."
            )
        labels = [c.label for c in self.columns if c.key in self.differing]
        named = labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]
        rest = m - len(labels)
        same = f"; the other {rest:,} {'is' if rest == 1 else 'are'} the same in all" if rest else ""
        return f"The {n:,} experiments differ in {plural(len(labels), 'setting')} of {m:,}: {named}{same}."


def compare_settings(records: list[dict]) -> Settings:
    """Every setting of these saved experiments (`settings_of`), in the order of the parameter table and then the
    other settings, and which of them differ among the experiments."""
    return from_settings([settings_of(r) for r in records])


def from_settings(each: list[dict[str, object]]) -> Settings:
    """`compare_settings` of the experiments' `settings_of` (so a long list need not hold every record at once)."""
    keys: list[str] = []
    for v in each:
        keys.extend(k for k in v if k not in keys)
    labels = {k: (label, help_) for k, label, help_ in OTHER}
    params = [k for k in keys if k not in labels]
    order = [k for k in SPECS if k in params] + [k for k in params if k not in SPECS] + list(labels)
    values = tuple({k: v.get(k, NOT_RECORDED) for k in order} for v in each)
    labels.update(FIELDS)
    columns = tuple(
        Setting(
            k,
            SHORT.get(k) or (SPECS[k].label if k in SPECS else labels.get(k, (k, ""))[0]),
            SPECS[k].help if k in SPECS else labels.get(k, (k, ""))[1],
        )
        for k in order
    )
    differing = tuple(k for k in order if len({_same(v[k]) for v in values}) > 1)
    return Settings(columns, values, differing)


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
    return Comparison(
        system_a, system_b, metric, common, xa - xb, float(xa.mean()), float(xb.mean()), stats.paired_bootstrap(xa, xb)
    )


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
