"""A saved experiment's record as JSON: its shape, and the check that an object read back (from the store, from an
imported workspace) is one, so a reader can rely on every key it reads.

A record (`analyses.experiments.record`) is ``{"version": 1, "report": ..., "runs": [...], "grades": {...}}``, its
report that of `experiment.to_json` (the dataset's name and counts, the parameters, the metrics, each system's
means and per-question values). `check` refuses anything else with one message naming the key that is wrong.

>>> check({"x": 1}, "exp.json")
Traceback (most recent call last):
...
retrieval.core.errors.InputError: exp.json: not a saved experiment: no 'version' (it has x)
"""

from __future__ import annotations

from ..core.errors import InputError

VERSION = 1  # of the record's shape

_RECORD = ("version", "report", "runs", "grades")
_REPORT = ("dataset", "params", "metrics", "systems", "per_query", "bootstrap", "warnings")


def _keys(obj, required: tuple[str, ...], where: str, path: str) -> dict:
    if not isinstance(obj, dict):
        raise InputError(f"{where}: not a saved experiment: {path or 'the record'} is not an object")
    for key in required:
        if key not in obj:
            have = ", ".join(map(str, list(obj)[:8])) or "nothing"
            raise InputError(f"{where}: not a saved experiment: no {path + '.' if path else ''}{key!r} (it has {have})")
    return obj


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_number(value) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))


def _wrong(where: str, path: str, what: str) -> InputError:
    return InputError(f"{where}: not a saved experiment: {path} is not {what}")


def _strings(value, where: str, path: str) -> list:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _wrong(where, path, "a list of strings")
    return value


def _numbers(row, where: str, path: str) -> None:
    """A row of values by name: each a number or null (a metric undefined on a question)."""
    if not isinstance(row, dict) or not all(_is_number(v) for v in row.values()):
        raise _wrong(where, path, "an object of numbers")


def check(rec, where: str) -> dict:
    """`rec` when it is a saved experiment's record, else one InputError naming `where` and the key."""
    _keys(rec, _RECORD, where, "")
    if rec["version"] != VERSION or isinstance(rec["version"], bool):
        raise InputError(
            f"{where}: not a saved experiment of this lab (version {rec['version']!r}, this lab reads {VERSION})"
        )
    report = _keys(rec["report"], _REPORT, where, "report")
    dataset = _keys(report["dataset"], ("name", "documents", "queries"), where, "report.dataset")
    if not isinstance(dataset["name"], str) or not _is_count(dataset["documents"]) or not _is_count(dataset["queries"]):
        raise _wrong(where, "report.dataset", "a name and two counts")
    if not isinstance(report["params"], dict):
        raise _wrong(where, "report.params", "an object")
    metrics = set(_strings(report["metrics"], where, "report.metrics"))
    _strings(report["warnings"], where, "report.warnings")
    if report["bootstrap"] is not None and not isinstance(report["bootstrap"], dict):
        raise _wrong(where, "report.bootstrap", "an object or null")
    systems, per_query = report["systems"], report["per_query"]
    if not isinstance(systems, dict) or not isinstance(per_query, dict):
        raise _wrong(where, "report.systems and report.per_query", "objects")
    for system, means in systems.items():
        _numbers(means, where, f"report.systems[{system!r}]")
        if not set(means) <= metrics:
            raise _wrong(where, f"report.systems[{system!r}]", "a mean of the report's metrics")
    for system, rows in per_query.items():
        if system not in systems or not isinstance(rows, dict):
            raise _wrong(where, f"report.per_query[{system!r}]", "the per-question values of one of its systems")
        for qid, row in rows.items():
            _numbers(row, where, f"report.per_query[{system!r}][{qid!r}]")
    runs = rec["runs"]
    if not isinstance(runs, list) or not all(
        isinstance(r, dict) and isinstance(r.get("name"), str) and isinstance(r.get("fingerprint"), str) for r in runs
    ):
        raise _wrong(where, "runs", "a list of runs, each a name and a fingerprint")
    grades = _keys(rec["grades"], ("rule", "from_workspace"), where, "grades")
    if not isinstance(grades["rule"], str) or not _is_count(grades["from_workspace"]):
        raise _wrong(where, "grades", "a rule and a count")
    return rec
