"""`gate`: exit 1 when a system got worse beyond noise between two `evaluate --json` reports. Reads two JSON files:
nothing of the engine is loaded."""

from __future__ import annotations

import argparse

from ..core.words import plural
from ..evaluation import gate, metrics
from .common import _t, print_json


def _gate_arguments(g: argparse.ArgumentParser) -> None:
    """`gate`'s arguments."""
    g.add_argument("--baseline", required=True, metavar="OLD.json", help="the earlier `evaluate --json` report")
    g.add_argument("--current", required=True, metavar="NEW.json", help="the new report, same dataset")
    g.add_argument("--metric", default="ndcg@5", help="the metric compared question by question (default ndcg@5)")
    g.add_argument("--system", default="BM25", help="the system compared (default BM25)")
    g.add_argument("--json", action="store_true", help="print the verdict as JSON")
    g.set_defaults(func=cmd_gate)


def cmd_gate(args: argparse.Namespace) -> int:
    """The `gate` subcommand: exit 1 when the current report is worse beyond noise."""
    metrics.parse(args.metric)
    result = gate.run(args.baseline, args.current, args.metric, args.system)
    if args.json:
        print_json(result.to_json())
        return result.exit_code
    iv = result.interval
    conf = int(iv.confidence * 100)
    print(f"gate: {_t(result.system)} {result.metric} on {_t(result.dataset)}, {plural(len(result.qids), 'question')}")
    print(
        f"baseline {result.baseline.mean():.6f}  current {result.current.mean():.6f}  "
        f"difference {iv.mean:+.6f}, {conf}% bootstrap interval [{iv.low:+.6f}, {iv.high:+.6f}] "
        f"({plural(iv.resamples, 'resample')}, seed {iv.seed}); paired randomisation p = {result.p_value:.4g}"
    )
    worse = result.worse()
    listing = [f"  {_t(q)}: {a:.6f} -> {b:.6f} ({b - a:+.6f})" for q, a, b in worse]
    if result.failed:
        print(
            f"FAIL: {_t(result.system)} is worse beyond noise (the interval lies below zero); "
            f"{plural(len(worse), 'question')} got worse: {', '.join(_t(q) for q, _, _ in worse)}"
        )
        print("\n".join(listing))
        return gate.FAIL
    print(f"PASS: no loss beyond noise ({plural(len(worse), 'question')} got worse, {len(result.better())} got better)")
    if listing:
        print("\n".join(listing))
    return gate.PASS


ARGUMENTS = {  # each command's arguments, for retrieval/cli/__init__.py's parser
    "gate": _gate_arguments,
}
