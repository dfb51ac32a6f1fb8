"""`experiments list|show|compare`: the experiments saved on the app's Experiments page, read from the workspace
store."""

from __future__ import annotations

import argparse
import sys

from ..analyses import experiments
from ..core.errors import InputError
from ..core.words import plural
from ..store import workspace
from .common import _Parser, _t, print_json


def _experiments_arguments(x: argparse.ArgumentParser) -> None:
    """`experiments`'s arguments."""
    xs = x.add_subparsers(dest="action", required=True, parser_class=_Parser)
    xl = xs.add_parser("list", help="every saved experiment, oldest first")
    xl.add_argument("--dataset", metavar="ID", help="only those of this dataset (its id, as the app's link names it)")
    xl.set_defaults(func=cmd_experiments_list)
    xw = xs.add_parser("show", help="one experiment: its dataset, parameters, runs, grades rule and means")
    xw.add_argument("id", type=int, help="the experiment's number")
    xw.set_defaults(func=cmd_experiments_show)
    xc = xs.add_parser(
        "compare",
        help="two experiments question by question: the paired bootstrap of a metric",
        description="Experiment A's system against experiment B's on one metric, paired over the "
        "questions both evaluated: each mean, the 95% paired bootstrap interval of the mean "
        'difference A - B, and "can\'t be told apart" when it holds zero.',
    )
    xc.add_argument("a", type=int, help="experiment A's number")
    xc.add_argument("b", type=int, help="experiment B's number")
    xc.add_argument("--system", default="BM25", help="A's system (default BM25)")
    xc.add_argument("--system-b", help="B's system (default: the same as A's)")
    xc.add_argument("--metric", default="ndcg@5", help="the metric (default ndcg@5)")
    xc.set_defaults(func=cmd_experiments_compare)
    for parser in (xl, xw, xc):
        parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    for parser in (xl, xw, xc):
        parser.add_argument("--store", metavar="URL", help="the workspace's database URL (default: the app's)")


def _entry_json(e: workspace.ExperimentEntry) -> dict:
    return {"id": e.id, "dataset": e.dataset_id, "name": e.name, "saved": e.created_at.isoformat(), "by": e.created_by}


def cmd_experiments_list(args: argparse.Namespace) -> int:
    ws = workspace.open_workspace(args.store)
    entries, bodies = [], []
    for e in ws.experiments(args.dataset):  # one that is not a saved view is said on stderr and left out
        try:
            bodies.append(experiments.readable(e.id, e.name, ws.experiment(e.id)[1]))
        except InputError as problem:
            print(f"warning: {_t(problem)}; left out", file=sys.stderr)
            continue
        entries.append(e)
    found = experiments.from_settings([experiments.settings_of(b) for b in bodies])
    if args.json:  # each entry with every setting; "differing": the settings whose value is not the same in all
        print_json(
            {
                "experiments": [{**_entry_json(e), "settings": v} for e, v in zip(entries, found.values)],
                "differing": list(found.differing),
            }
        )
        return 0
    names = {d.id: d.name for d in ws.datasets()}
    shown = [c for c in found.columns if c.key in found.differing]
    rows = [
        (
            str(e.id),
            f"{_t(names.get(e.dataset_id, '?'))} ({e.dataset_id})",
            _t(e.name),
            e.created_at.strftime("%Y-%m-%d %H:%M"),
            _t(e.created_by),
            *(_t(experiments.shown(v[c.key])) for c in shown),
        )
        for e, v in zip(entries, found.values)
    ]
    _print_rows(("#", "dataset", "name", "saved (UTC)", "by", *(c.label for c in shown)), rows)
    print(f"{plural(len(entries), 'experiment')}" + (f"; {found.sentence}" if len(entries) > 1 else ""))
    return 0


def _print_rows(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    for row in (header, *rows):
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())


def cmd_experiments_show(args: argparse.Namespace) -> int:
    entry, rec = workspace.open_workspace(args.store).experiment(args.id)
    rec = experiments.readable(entry.id, entry.name, rec)
    if args.json:
        print_json({**_entry_json(entry), "record": rec, "settings": experiments.settings_of(rec)})
        return 0
    report = rec["report"]
    print(
        f"experiment #{entry.id} {_t(entry.name)}: saved {entry.created_at:%Y-%m-%d %H:%M} UTC by {_t(entry.created_by)}"
    )
    print(
        f"dataset {_t(report['dataset']['name'])} ({entry.dataset_id}): "
        f"{plural(report['dataset']['documents'], 'document')}, {plural(report['dataset']['queries'], 'question')}"
    )
    print("parameters: " + ", ".join(f"{k} = {_t(v)}" for k, v in report["params"].items()))
    runs = rec.get("runs") or []
    print("runs: " + (", ".join(_t(r["name"]) for r in runs) if runs else "none"))
    grades = rec.get("grades", {})
    print(f"workspace grades: {grades.get('from_workspace', 0)}, combined by {_t(grades.get('rule', 'original'))}")
    settings = experiments.settings_of(rec)
    print(
        f"embeddings: {_t(experiments.shown(settings['embeddings']))}; cutoff k: {_t(settings['k'])}; "
        f"the view's metric: {_t(settings['metric'])}"
    )
    names = report["metrics"]
    rows = [
        (_t(s), *("" if row.get(m) is None else f"{row[m]:.4f}" for m in names)) for s, row in report["systems"].items()
    ]
    _print_rows(("system", *names), rows)
    return 0


def cmd_experiments_compare(args: argparse.Namespace) -> int:
    ws = workspace.open_workspace(args.store)
    (ea, a), (eb, b) = ws.experiment(args.a), ws.experiment(args.b)
    a, b = experiments.readable(ea.id, ea.name, a), experiments.readable(eb.id, eb.name, b)
    c = experiments.compare(a, b, args.system, args.system_b or args.system, args.metric)
    wins_a, wins_b = int((c.differences > 0).sum()), int((c.differences < 0).sum())
    if args.json:
        iv = c.interval
        print_json(
            {
                "a": {**_entry_json(ea), "system": c.system_a, "mean": c.mean_a},
                "b": {**_entry_json(eb), "system": c.system_b, "mean": c.mean_b},
                "metric": c.metric,
                "questions": c.questions,
                "difference": iv.mean,
                "interval": [iv.low, iv.high],
                "confidence": iv.confidence,
                "told_apart": not iv.holds_zero,
                "a_better_on": wins_a,
                "b_better_on": wins_b,
                "verdict": c.verdict,
            }
        )
        return 0
    print(f"A: #{ea.id} {_t(ea.name)}, {_t(c.system_a)}: {c.metric} {c.mean_a:.4f}")
    print(f"B: #{eb.id} {_t(eb.name)}, {_t(c.system_b)}: {c.metric} {c.mean_b:.4f}")
    print(f"A - B = {c.interval.mean:+.4f}; {c.verdict}")
    print(f"A is better on {plural(wins_a, 'question')}, B on {wins_b}, {c.questions - wins_a - wins_b} tied")
    return 0


ARGUMENTS = {  # each command's arguments, for retrieval/cli/__init__.py's parser
    "experiments": _experiments_arguments,
}
