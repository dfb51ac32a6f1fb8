"""`evaluate --qrels FILE --run NAME=PATH ...` and `compare --qrels ...`: run files scored on judgements alone, as
trec_eval, pytrec_eval and ranx score them, with no corpus. No index is built and nothing of the engine, the kernels,
numba or scikit-learn is imported (`compare --qrels`, judged_compare.py, imports scipy for its tests): each run is read by the streamed parser,
aligned with the judgements and scored with numpy. A flag that needs text (BM25's k1, LSA's dims, the fusions,
--embeddings, the diagnosis' --threshold) is refused with one line saying it needs documents.

retrieval/cli/__init__.py loads this module instead of evaluate.py when `evaluate`'s command line has --qrels.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..core.errors import InputError
from ..core.params import Params
from ..core.words import plural
from ..corpus.judged import NEEDS_DOCUMENTS, read_judgements
from ..corpus.runs import TIES, TIES_DEFAULT, TrecRun, read_run
from ..evaluation import metrics, stats
from ..evaluation.experiment import Evaluation, score
from ..evaluation.report import json_report, tie_json, ties_line
from ..retrievers.listed import from_run
from .common import _t, print_json

TEXT_FLAGS = (  # what reads documents or question texts: refused here, by name
    "--data",
    "--k1",
    "--b",
    "--dims",
    "--rrf-k",
    "--fusion-depth",
    "--stemmer",
    "--stopwords",
    "--query-words",
    "--k3",
    "--fuse",
    "--weights",
    "--embeddings",
    "--threshold",
)


class _NeedsDocuments(argparse.Action):
    """A flag of the corpus path, refused with one line naming it."""

    def __call__(self, parser, namespace, values, option_string=None):
        if option_string == "--data":
            raise InputError("--data and --qrels: give one (a corpus with its judgements, or judgements alone)")
        raise InputError(f"{option_string} {NEEDS_DOCUMENTS}")


def _run_arg(value: str) -> tuple[str | None, str]:
    """`NAME=PATH` or a bare `PATH` (the name is then the run's tag)."""
    name, sep, path = value.partition("=")
    if not sep:
        return None, value
    if not name:
        raise argparse.ArgumentTypeError(f"--run {value!r}: empty NAME before '='")
    return name, path


def common_arguments(p: argparse.ArgumentParser, fusion_alpha: str) -> None:
    """The arguments evaluate and compare share on judgements alone."""
    p.add_argument("--qrels", required=True, metavar="FILE", help="the judgements (TREC qrels or a BEIR tsv)")
    p.add_argument(
        "--run",
        action="append",
        default=[],
        type=_run_arg,
        metavar="NAME=PATH",
        help="a run file: TREC (plain or .gz), ranx/ir_measures JSON, or Parquet (qid, docid, score); repeatable",
    )
    p.add_argument(
        "--ties",
        default=TIES_DEFAULT,
        choices=TIES,
        help="how tied scores are ranked: docid-asc (the article's rule, default) or trec_eval (document id "
        "descending, as trec_eval and pytrec_eval rank them)",
    )
    p.add_argument(
        "--systems",
        default="none",
        metavar="none",
        help="the built-in systems to evaluate: none on judgements alone (each needs documents)",
    )
    p.add_argument(
        "--metrics",
        default=",".join(metrics.DEFAULT_METRICS),
        help="comma-separated, e.g. hit@3,recall@5,mrr,ndcg@5; valid: " + metrics.VALID_FORMS,
    )
    for flag in TEXT_FLAGS + (fusion_alpha,):
        p.add_argument(flag, action=_NeedsDocuments, help=argparse.SUPPRESS)


def _evaluate_arguments(e: argparse.ArgumentParser) -> None:
    common_arguments(e, "--alpha")
    e.add_argument("--bootstrap", default="ndcg@5", metavar="METRIC", help="metric of the paired bootstrap")
    e.add_argument(
        "--compare", default=None, metavar="A,B", help="the two runs of the bootstrap (default: the first two)"
    )
    e.add_argument("--json", action="store_true", help="print the JSON report instead of tables")
    e.set_defaults(func=cmd_evaluate)


def evaluated(args: argparse.Namespace, metric_names: list[str]) -> tuple[Evaluation, tuple[TrecRun, ...]]:
    """The judgements of --qrels and every --run scored on the metrics (no corpus); warnings on stderr."""
    systems = [s.strip() for s in args.systems.split(",") if s.strip() and s.strip().lower() != "none"]
    if systems:
        raise InputError(f"--systems {','.join(systems)} {NEEDS_DOCUMENTS}")
    if not args.run:
        raise InputError("--qrels needs at least one --run NAME=PATH to evaluate")
    ds = read_judgements(args.qrels)
    runs = tuple(read_run(Path(path), name, args.ties) for name, path in args.run)
    names = [r.name for r in runs]
    if len(set(names)) != len(names):
        clash = next(n for n in names if names.count(n) > 1)
        raise InputError(f"system name {clash!r} is given to two runs: name them with --run NAME=PATH")
    ranks = {r.name: from_run(r, ds) for r in runs}
    notes = tuple(w for r in ranks.values() for w in r.warnings)
    ev = score(ds, ranks, metrics.parse_list(metric_names), notes)
    for w in ev.notes:
        print(f"warning: {_t(w)}", file=sys.stderr)
    return ev, runs


def cmd_evaluate(args: argparse.Namespace) -> int:
    """`evaluate --qrels`: every run's means, first relevant ranks and (two runs or more) the paired bootstrap."""
    names = [m.name for m in metrics.parse_list(args.metrics)]
    boot_metric = metrics.parse(args.bootstrap).name
    ev, runs = evaluated(args, names + ([boot_metric] if boot_metric not in names else []))
    pair = [s.strip() for s in args.compare.split(",")] if args.compare else list(ev.systems[:2])
    if args.compare and len(pair) != 2:
        raise InputError(f"--compare: expected two runs A,B, got {args.compare!r}")
    report = tie_json(
        json_report(ev, Params(), names, boot_metric, tuple(pair) if len(pair) == 2 else None), runs, args.ties
    )
    if args.json:
        print_json(report)
        return 0
    ds = ev.dataset
    print(
        f"judgements {_t(ds.name)} (no documents): {plural(ds.n_queries, 'question')}, "
        f"{ds.evaluated.size:,} with a relevant document"
    )
    line = ties_line(runs, args.ties)
    if line:
        print(line)
    print()
    width = max(9, *(len(_t(s)) for s in ev.systems))
    print(f"{'system':{width}s} " + " ".join(f"{n:>10s}" for n in names))
    for s in ev.systems:
        print(f"{_t(s):{width}s} " + " ".join(f"{ev.mean(s, n):10.6f}" for n in names))
    boot = report["bootstrap"]
    if boot:
        conf = int(stats.CONFIDENCE * 100)
        print(
            f"\nmean {boot['metric']} difference ({_t(boot['a'])} - {_t(boot['b'])}) = {boot['mean_diff']:+.3f}  "
            f"{conf}% bootstrap interval = [{boot['ci_low']:+.3f}, {boot['ci_high']:+.3f}]"
            f"  ({plural(boot['resamples'], 'resample')}, seed {boot['seed']})"
        )
    print("\ndiagnosis by words: " + NEEDS_DOCUMENTS.split(":")[0] + " (give --data)")
    return 0


ARGUMENTS = {"evaluate": _evaluate_arguments}
