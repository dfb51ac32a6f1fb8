"""`compare --qrels FILE --run NAME=PATH ...`: the comparison table of run files on judgements alone (no corpus,
no engine; scipy for the tests). retrieval/cli/__init__.py loads it instead of evaluate.py when `compare`'s command
line has --qrels."""

from __future__ import annotations

import argparse

from ..core.params import Params
from ..core.words import plural
from ..evaluation import comparison, metrics
from ..evaluation.report import tie_json, ties_line
from .common import _t, print_json
from .judged import common_arguments, evaluated


def _compare_arguments(c: argparse.ArgumentParser) -> None:
    """compare's arguments on judgements alone: the shared ones, then the table's own (as evaluate.py's)."""
    common_arguments(c, "--fusion-alpha")
    c.add_argument("--test", default=comparison.DEFAULT_TEST, metavar="|".join(comparison.TESTS))
    c.add_argument("--alpha", dest="level", type=float, default=comparison.ALPHA, metavar="LEVEL")
    shown = c.add_mutually_exclusive_group()
    for form in ("json", "latex", "markdown", "csv"):
        shown.add_argument(f"--{form}", dest="form", action="store_const", const=form)
    c.set_defaults(func=cmd_compare, form="text")


def cmd_compare(args: argparse.Namespace) -> int:
    """`compare --qrels`: the comparison table of the runs."""
    names = [m.name for m in metrics.parse_list(args.metrics)]
    comparison.check_options(args.test, args.level)
    ev, runs = evaluated(args, names)
    table = comparison.compare_table(ev, names, args.test, args.level)
    ds = ev.dataset
    if args.form == "json":
        head = {"dataset": {"name": ds.name, "documents": 0, "queries": ds.n_queries}, "params": Params().to_json()}
        print_json(tie_json({**head, **table.to_json()}, runs, args.ties))
    elif args.form in ("latex", "markdown", "csv"):
        print(getattr(table, f"to_{args.form}")(), end="")
    else:
        print(f"judgements {_t(ds.name)} (no documents): {plural(ds.n_queries, 'question')}")
        line = ties_line(runs, args.ties)
        if line:
            print(line)
        print()
        print(table.to_text(), end="")
    return 0


ARGUMENTS = {"compare": _compare_arguments}
