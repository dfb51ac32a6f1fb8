"""The command line: ``python -m retrieval evaluate`` prints the article's tables or the JSON report.

Bad input exits with status 2 and one line on stderr naming the file and line, or the parameter.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import dataset as datasets
from . import metrics, stats
from .diagnosis import THRESHOLD_DEFAULT, diagnose
from .errors import InputError
from .experiment import Params, bootstrap_report, evaluate, to_json


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit status 2, like every other bad input here."""

    def error(self, message: str) -> None:  # noqa: D102 - argparse hook
        raise InputError(message)


def _run_arg(value: str) -> tuple[str | None, str]:
    """`NAME=PATH` or a bare `PATH` (the name is then the run's tag)."""
    if "=" in value and not Path(value).exists():
        name, path = value.split("=", 1)
        if not name:
            raise argparse.ArgumentTypeError(f"--run {value!r}: empty NAME before '='")
        return name, path
    return None, value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with its subcommands."""
    p = _Parser(prog="python -m retrieval", description="Measure a RAG system's retriever on its own.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    e = sub.add_parser("evaluate", help="evaluate BM25, LSA, the two fusions and any run files")
    e.add_argument("--data", default="invented", help="'invented' (built in) or a BEIR folder or .zip (default: invented)")
    e.add_argument("--k1", type=float, default=Params.k1, help="BM25 term-frequency saturation (default 1.2)")
    e.add_argument("--b", type=float, default=Params.b, help="BM25 length normalisation in [0, 1] (default 0.75)")
    e.add_argument("--dims", type=int, default=Params.dims, help="LSA dimensions (default 6)")
    e.add_argument("--rrf-k", type=float, default=Params.rrf_k, help="RRF constant k in 1/(k + rank) (default 60)")
    e.add_argument("--alpha", type=float, default=Params.alpha, help="weight of BM25 in the weighted fusion (default 0.5)")
    e.add_argument("--metrics", default=",".join(metrics.DEFAULT_METRICS), help="comma-separated, e.g. hit@3,recall@5,mrr,ndcg@5")
    e.add_argument("--run", action="append", default=[], type=_run_arg, metavar="NAME=PATH",
                   help="a TREC run file (qid Q0 docid rank score tag) as an extra system; ranked by score, "
                        "descending, ties by document id, ascending; repeatable")
    e.add_argument("--bootstrap", default="ndcg@5", metavar="METRIC", help="metric of the paired bootstrap (default ndcg@5)")
    e.add_argument("--compare", default="BM25,LSA", metavar="A,B", help="the two systems of the bootstrap, A - B (default BM25,LSA)")
    e.add_argument("--threshold", type=int, default=THRESHOLD_DEFAULT, help="diagnose questions whose first relevant rank is beyond this (default 3)")
    e.add_argument("--json", action="store_true", help="print the JSON report instead of tables")
    e.set_defaults(func=cmd_evaluate)
    return p


def _fmt_rank(r: int) -> str:
    """A first-relevant rank for a table ('-' = not found)."""
    return str(r) if r > 0 else "-"


def cmd_evaluate(args: argparse.Namespace) -> int:
    """The `evaluate` subcommand."""
    params = Params(k1=args.k1, b=args.b, dims=args.dims, rrf_k=args.rrf_k, alpha=args.alpha).check()
    metric_list = metrics.parse_list(args.metrics)
    boot_metric = metrics.parse(args.bootstrap)
    pair = [s.strip() for s in args.compare.split(",")]
    if len(pair) != 2:
        raise InputError(f"--compare: expected two systems A,B, got {args.compare!r}")
    if args.threshold < 0:
        raise InputError(f"--threshold must be >= 0, got {args.threshold}")
    ds = datasets.load(args.data)
    runs = []
    for name, path in args.run:
        runs.append(datasets.parse_run(datasets._read(Path(path)), path, name))
    names = [m.name for m in metric_list]
    all_metrics = names + ([boot_metric.name] if boot_metric.name not in names else [])
    ev = evaluate(ds, params, all_metrics, tuple(runs))
    boot = bootstrap_report(ev, boot_metric.name, *pair)
    for w in list(ds.warnings) + list(ev.notes):
        print(f"warning: {w}", file=sys.stderr)
    if args.json:
        report = to_json(ev, params, boot)
        report["metrics"] = names
        for row in report["systems"].values():
            for m in list(row):
                if m not in names:
                    del row[m]
        for rows in report["per_query"].values():
            for row in rows.values():
                for m in list(row):
                    if m not in names and m != "first_relevant_rank":
                        del row[m]
        print(json.dumps(report, indent=2))
        return 0
    print(f"dataset {ds.name}: {ds.n_docs} documents, {ds.n_queries} questions, {ds.evaluated.size} with a relevant document")
    print(f"k1={params.k1} b={params.b} dims={params.dims} rrf_k={params.rrf_k} alpha={params.alpha}\n")
    width = max(9, *(len(s) for s in ev.systems))
    print(f"{'system':{width}s} " + " ".join(f"{n:>10s}" for n in names))
    for s in ev.systems:
        print(f"{s:{width}s} " + " ".join(f"{ev.mean(s, n):10.6f}" for n in names))
    print("\nrank of the first relevant document (- = not found):")
    qids = [ds.query_ids[q] for q in ds.evaluated]
    qw = max(4, *(len(q) for q in qids))
    print(f"  {'q':{qw}s} " + " ".join(f"{s:>{max(len(s), 4)}s}" for s in ev.systems))
    for i, qid in enumerate(qids):
        print(f"  {qid:{qw}s} " + " ".join(f"{_fmt_rank(int(ev.first_rank[s][i])):>{max(len(s), 4)}s}" for s in ev.systems))
    conf = int(stats.CONFIDENCE * 100)
    print(f"\nmean {boot['metric']} difference ({boot['a']} - {boot['b']}) = {boot['mean_diff']:+.3f}  "
          f"{conf}% bootstrap interval = [{boot['ci_low']:+.3f}, {boot['ci_high']:+.3f}]"
          f"  ({boot['resamples']} resamples, seed {boot['seed']})")
    cases = diagnose(ds, ev.rankings["BM25"], args.threshold)
    print(f"\ndiagnosis (BM25, first relevant document not in the top {args.threshold}): {len(cases)} questions")
    for c in cases:
        where = f"rank {c.rank}" if c.rank else "not found"
        first = f"first result: {c.first_result}" if c.first_result else "no result at all"
        shares = f" (shares {', '.join(repr(w) for w in c.first_result_words)})" if c.first_result_words else ""
        print(f"{c.qid} {c.question!r} -> {where}, {first}{shares}: {c.kind}")
        for did, grade, words in c.relevant:
            print(f"    {did} (grade {grade}): words in common = {', '.join(words) if words else 'none'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point: exit status 0, or 2 with one line on stderr for bad input."""
    try:
        args = build_parser().parse_args(argv)
        return args.func(args)
    except InputError as e:
        print(f"retrieval: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
