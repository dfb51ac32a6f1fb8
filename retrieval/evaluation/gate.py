"""The regression gate: is one system worse, beyond noise, in a new `evaluate --json` report than in an old one?

Both reports must come from the same dataset (its name and the system's question ids). The per-question
differences current - baseline of one metric are bootstrapped (the article's paired bootstrap, seeded); the
gate fails when the whole interval lies below zero, and names the questions that got worse.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..core.errors import InputError
from . import metrics, significance, stats

PASS, FAIL = 0, 1


def load_report(path: str | Path) -> dict:
    """An `evaluate --json` report from a file, or an error naming the file (and the line of broken JSON)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{p}: is a folder, not a report") from None
    except UnicodeDecodeError:
        raise InputError(f"{p}: not UTF-8 text") from None
    except OSError as e:
        raise InputError(f"{p}: cannot be read ({e.strerror})") from None
    try:
        report = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{p}: line {e.lineno}: broken JSON ({e.msg})") from None
    except RecursionError:
        raise InputError(f"{p}: JSON nested too deep") from None
    if (
        not isinstance(report, dict)
        or not isinstance(report.get("per_query"), dict)
        or not isinstance(report.get("dataset"), dict)
    ):
        raise InputError(f"{p}: not an `evaluate --json` report (no 'dataset' and 'per_query' objects)")
    return report


@dataclass(frozen=True, eq=False)
class GateResult:
    """One system's per-question comparison between two reports, and the verdict."""

    dataset: str
    system: str
    metric: str
    qids: tuple[str, ...]
    baseline: np.ndarray
    current: np.ndarray
    interval: stats.Interval  # of mean(current - baseline)
    p_value: float  # paired randomisation test, two-sided

    @property
    def diffs(self) -> np.ndarray:
        """Per-question current - baseline."""
        return self.current - self.baseline

    @property
    def failed(self) -> bool:
        """True when the current system is worse beyond noise: the whole interval lies below zero."""
        return self.interval.high < 0

    @property
    def exit_code(self) -> int:
        """1 when the gate fails, else 0."""
        return FAIL if self.failed else PASS

    def worse(self) -> list[tuple[str, float, float]]:
        """(question, baseline, current) of the questions that got worse, the largest drop first."""
        d = self.diffs
        order = sorted(np.flatnonzero(d < 0), key=lambda i: (d[i], self.qids[i]))
        return [(self.qids[i], float(self.baseline[i]), float(self.current[i])) for i in order]

    def better(self) -> list[tuple[str, float, float]]:
        """(question, baseline, current) of the questions that got better, the largest gain first."""
        d = self.diffs
        order = sorted(np.flatnonzero(d > 0), key=lambda i: (-d[i], self.qids[i]))
        return [(self.qids[i], float(self.baseline[i]), float(self.current[i])) for i in order]

    def to_json(self) -> dict:
        """The verdict as JSON-ready data."""
        iv = self.interval
        return {
            "dataset": self.dataset,
            "system": self.system,
            "metric": self.metric,
            "questions": len(self.qids),
            "baseline": float(self.baseline.mean()),
            "current": float(self.current.mean()),
            "mean_diff": iv.mean,
            "ci_low": iv.low,
            "ci_high": iv.high,
            "resamples": iv.resamples,
            "seed": iv.seed,
            "p_value": self.p_value,
            "failed": self.failed,
            "worse": [{"qid": q, "baseline": a, "current": b} for q, a, b in self.worse()],
            "better": [{"qid": q, "baseline": a, "current": b} for q, a, b in self.better()],
        }


def _system_values(report: dict, source: str, system: str, metric: str) -> dict[str, float]:
    """question id -> value of one metric for one system, or an error naming the report."""
    per_query = report["per_query"]
    if system not in per_query or not isinstance(per_query[system], dict):
        raise InputError(f"{source}: unknown system {system!r} (the report has {', '.join(per_query) or 'none'})")
    listed = report.get("metrics")
    rows = per_query[system]
    in_rows = bool(rows) and all(isinstance(r, dict) and metric in r for r in rows.values())
    if (isinstance(listed, list) and metric not in listed) or not in_rows:
        have = ", ".join(listed) if isinstance(listed, list) else "none listed"
        raise InputError(f"{source}: metric {metric!r} is not in the report (it has {have})")
    out = {}
    for qid, row in rows.items():
        v = row[metric]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v):
            raise InputError(f"{source}: {system} {qid}: {metric} is {v!r}, not a number")
        out[qid] = float(v)
    return out


def compare(
    baseline: dict,
    current: dict,
    metric: str,
    system: str = "BM25",
    sources: tuple[str, str] = ("baseline", "current"),
    resamples: int = stats.RESAMPLES,
    seed: int = stats.SEED,
) -> GateResult:
    """Compare one system's metric question by question across two reports of the same dataset."""
    name = metrics.parse(metric).name
    names = []
    for rep, src in zip((baseline, current), sources):
        n = rep.get("dataset", {}).get("name") if isinstance(rep.get("dataset"), dict) else None
        if not isinstance(n, str):
            raise InputError(f"{src}: the report names no dataset")
        names.append(n)
    if names[0] != names[1]:
        raise InputError(f"different datasets: {sources[0]} is {names[0]!r}, {sources[1]} is {names[1]!r}")
    old = _system_values(baseline, sources[0], system, name)
    new = _system_values(current, sources[1], system, name)
    if set(old) != set(new):
        only_old, only_new = sorted(set(old) - set(new)), sorted(set(new) - set(old))
        parts = [
            f"{len(x)} only in {s} ({', '.join(x[:3])}{', ...' if len(x) > 3 else ''})"
            for x, s in ((only_old, sources[0]), (only_new, sources[1]))
            if x
        ]
        raise InputError(f"different questions in dataset {names[0]!r}: {'; '.join(parts)}")
    if not old:
        raise InputError(f"{sources[0]}: {system} has no question to compare")
    qids = tuple(old)
    a = np.array([old[q] for q in qids])
    b = np.array([new[q] for q in qids])
    iv = stats.paired_bootstrap(b, a, resamples, seed)
    p = significance.paired_permutation(b, a, seed=seed).p_value
    return GateResult(names[0], system, name, qids, a, b, iv, p)


def run(baseline_path: str | Path, current_path: str | Path, metric: str, system: str = "BM25") -> GateResult:
    """Load both reports and compare them."""
    return compare(
        load_report(baseline_path), load_report(current_path), metric, system, (str(baseline_path), str(current_path))
    )
