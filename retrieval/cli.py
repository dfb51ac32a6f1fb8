"""The command line: ``python -m retrieval evaluate`` prints the article's tables or the JSON report;
``compare`` prints the table of every system on chosen metrics with the significant differences marked (text,
JSON, LaTeX or Markdown); ``tune`` maps a metric over a parameter grid with its tie region and cross-validated
estimate; ``gate`` fails (exit 1) when a system got worse beyond noise between two ``evaluate --json`` reports.

Bad input exits with status 2 and one line on stderr naming the file and line, or the parameter.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path

import numpy as np

import retrieval.kernels as _kernels

from .analyses import experiments, grids, tuning
from .analyses.diagnosis import RELEVANT_LISTED, THRESHOLD_DEFAULT, diagnose
from .core.errors import InputError
from .core.params import ANALYSIS, ARTICLE_MEMBERS, QUESTION_SIDE, SPECS, Params
from .core.words import plural
from .corpus import dataset as datasets
from .corpus import embeddings
from .corpus.text import Analysis
from .engine.engine import (
    CLI_MAX_CHARS,
    check_size,
    compiled_dispatchers,
    evaluate,
    max_chars,
    repair_compiled_cache,
    warm_up,
)
from .evaluation import comparison, gate, metrics, stats
from .evaluation.experiment import json_ready
from .evaluation.report import json_report
from .retrievers import bm25, dense
from .store import access, transfer, workspace


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit status 2, like every other bad input here."""

    def error(self, message: str) -> None:  # noqa: D102 - argparse hook
        raise InputError(message)


def _t(value: object) -> str:
    """Text for the terminal: every control character (C0, DEL and C1: ESC, tab, newline too) written as an escape,
    so that an id or a message cannot drive the terminal or break a line."""
    return comparison.escape_control(str(value))


def print_json(obj: object) -> None:
    """A report as strict JSON: no NaN or Infinity (null instead), every character beyond ASCII escaped."""
    print(json.dumps(json_ready(obj), indent=2, allow_nan=False, ensure_ascii=True))


def _load(args: argparse.Namespace) -> datasets.Dataset:
    """--data, with the command line's bounds (higher than the app's: it serves one person) on what a zip may
    expand to and on the text it will index."""
    ds = datasets.load(args.data, datasets.zip_limits(datasets.CLI_LIMITS))
    check_size(ds, max_chars(CLI_MAX_CHARS))
    return ds


def _run_arg(value: str) -> tuple[str | None, str]:
    """`NAME=PATH` or a bare `PATH` (the name is then the run's tag)."""
    if "=" in value and not Path(value).exists():
        name, path = value.split("=", 1)
        if not name:
            raise argparse.ArgumentTypeError(f"--run {value!r}: empty NAME before '='")
        return name, path
    return None, value


def _checked(spec) -> object:
    """A flag's type that checks its value against the parameter table at once, so that a bad value's message
    names the flag as typed (a renamed one: `argument --fusion-alpha: alpha must be in [0, 1], got 3.0`)."""
    def value(text: str):
        try:
            return spec.check(float(text))
        except ValueError as e:  # InputError too
            raise argparse.ArgumentTypeError(str(e) if isinstance(e, InputError) else f"not a number: {text!r}") from None

    return value


PARAM_FLAGS = ("k1", "b", "dims", "rrf_k", "alpha", "fusion_depth", *ANALYSIS, *QUESTION_SIDE)  # each command's


def _param_flags(parser: argparse.ArgumentParser, names: tuple[str, ...], role: str = "",
                 flags: dict[str, str] | None = None) -> None:
    """One flag per parameter (--rrf-k for rrf_k, unless `flags` names it otherwise, checked as it is read), its
    type, default and help from the parameter table; a parameter with choices (the fusion depth) takes only those."""
    for name in names:
        s = SPECS[name]
        renamed = (flags or {}).get(name)
        if s.options:  # a choice of names (the text analysis)
            parser.add_argument(renamed or "--" + name.replace("_", "-"), dest=name, choices=s.options,
                                default=s.default, help=f"{s.help} {role + ' ' if role else ''}(default {s.default})")
            continue
        choices = f"; one of {', '.join(map(str, s.choices))}" if s.choices else ""
        parser.add_argument(renamed or "--" + name.replace("_", "-"), dest=name,
                            type=_checked(s) if renamed else int if s.integer else float,
                            default=s.cast(s.default), metavar=name.upper(), choices=s.choices or None,
                            help=f"{s.help} {role + ' ' if role else ''}(default {s.cast(s.default):g}{choices})")


def _fusion_flags(parser: argparse.ArgumentParser) -> None:
    """The systems beyond the built-in retrievers (--run, --embeddings) and the fusions' members (--fuse, --weights)."""
    parser.add_argument("--run", action="append", default=[], type=_run_arg, metavar="NAME=PATH",
                        help="a TREC run file (qid Q0 docid rank score tag) as an extra system; ranked by score, "
                             "descending, ties by document id, ascending; repeatable")
    parser.add_argument("--fuse", default=",".join(ARTICLE_MEMBERS), metavar="A,B[,...]",
                        help="the systems both fusions combine: built-in retrievers or --run names (default BM25,LSA)")
    parser.add_argument("--embeddings", default=None, metavar="PATH|e5-small",
                        help="a dense retriever, the system 'dense': e5-small (the bundled multilingual-e5-small, document "
                             "vectors computed once and cached on disk), an .npz (doc_ids, doc_vectors, query_ids, "
                             "query_vectors), or DOCS,QUESTIONS: two .jsonl or .parquet files of id and vector")
    parser.add_argument("--weights", default=None, metavar="W1,W2[,...]",
                        help="the weighted fusion's weight per --fuse member (default: alpha and 1 - alpha)")


def _data_flag(parser: argparse.ArgumentParser) -> None:
    """--data: the built-in corpus or a BEIR folder or zip."""
    parser.add_argument("--data", default="invented", help="'invented' (built in) or a BEIR folder or .zip (default: invented)")


def _metrics_flag(parser: argparse.ArgumentParser) -> None:
    """--metrics: a comma-separated list of metric names."""
    parser.add_argument("--metrics", default=",".join(metrics.DEFAULT_METRICS),
                        help="comma-separated, e.g. hit@3,recall@5,mrr,ndcg@5; valid: " + metrics.VALID_FORMS)


def _sources(args: argparse.Namespace, ds: datasets.Dataset) -> tuple:
    """The runs and the dense vectors the command line names, aligned with the dataset."""
    sources = [datasets.parse_run(datasets.read_file(Path(path)), path, name) for name, path in args.run]
    if args.embeddings:
        sources.append(_embeddings(args.embeddings, ds))
    return tuple(sources)


def _fused_params(args: argparse.Namespace) -> Params:
    """The parameters of the command line, the fusions' members and weights included."""
    return Params(k1=args.k1, b=args.b, dims=args.dims, rrf_k=args.rrf_k, alpha=args.alpha,
                  fusion_depth=args.fusion_depth, stemmer=args.stemmer, stopwords=args.stopwords,
                  query_words=args.query_words, k3=args.k3, members=_members(args.fuse), weights=_weights(args.weights))


def _evaluated(args: argparse.Namespace, params: Params, metric_names: list[str]):
    """The dataset of --data and its evaluation: every system (the built-in retrievers, --embeddings' dense one,
    the fusions, each --run) on the metrics; the dataset's and the systems' warnings on stderr."""
    ds = _load(args)
    ev = evaluate(ds, params, metric_names, _sources(args, ds))
    for w in list(ds.warnings) + list(ev.notes):
        print(f"warning: {_t(w)}", file=sys.stderr)
    return ds, ev


def _dataset_line(ds: datasets.Dataset) -> str:
    """`dataset NAME: N documents, M questions, K with a relevant document`."""
    return (f"dataset {_t(ds.name)}: {plural(ds.n_docs, 'document')}, {plural(ds.n_queries, 'question')}, "
            f"{ds.evaluated.size:,} with a relevant document")


def analysis_text(params: Params) -> str:
    """'no stemmer, the article's 45 stop words; each question word counted once' (the text header's line)."""
    return f"{Analysis(*params.analysis).describe()}; {bm25.question_words_text(params.query_words, params.k3)}"


def _meaning(ds: datasets.Dataset, names: list[str]) -> None:
    """The text header's warnings on the metrics that cannot mean what they say on these judgements (bpref, judged@k
    without a document judged not relevant: metrics.meaning_warnings, the JSON's too)."""
    for w in metrics.meaning_warnings(ds.qrels, ds.n_queries, names):
        print(f"warning: {_t(w)}")


def _members(value: str) -> tuple[str, ...]:
    """A --fuse list."""
    return tuple(x.strip() for x in value.split(",") if x.strip())


def _weights(value: str | None) -> tuple[float, ...] | None:
    """A --weights list, or an error naming the flag."""
    if value is None:
        return None
    try:
        return tuple(float(x) for x in value.split(","))
    except ValueError:
        raise InputError(f"--weights: expected numbers separated by commas, got {value!r}") from None


def _progress(done: int, total: int, rate: float, left: float) -> None:
    """The bundled model's encoding, on one line of stderr."""
    end = "\n" if done >= total else ""
    print(f"\rencoding documents: {done:,} of {total:,}, {rate:.1f} a second, {left:,.0f} s left   ",
          end=end, file=sys.stderr, flush=True)


def _embeddings(value: str, ds: datasets.Dataset):
    """--embeddings: the bundled model's vectors of the dataset, or a file (pair) of them, aligned with it."""
    if value == "e5-small":
        if not dense.cache_path(ds).exists() and ds.name not in dense.BUNDLED:
            print(f"encoding {plural(ds.n_docs, 'document')} with the bundled model, about {dense.estimate_seconds(ds):,.0f} s; "
                  f"the vectors are cached in {dense.cache_dir()}", file=sys.stderr)
        return embeddings.align(dense.embeddings_of(ds, _progress), ds)
    paths = [x.strip() for x in value.split(",")]
    try:
        embeddings.loader_for(paths)  # the files' kinds, before reading any
    except InputError:
        raise InputError(f"--embeddings {value!r}: give e5-small, or {embeddings.FORMS} as DOCS,QUESTIONS") from None
    files = [(p, datasets.read_file(Path(p))) for p in paths]
    return embeddings.align(embeddings.load_files(files, embeddings.Limits.of(ds)), ds)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with its subcommands."""
    p = _Parser(prog="python -m retrieval", description="Measure a RAG system's retriever on its own.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    e = sub.add_parser("evaluate", help="evaluate BM25, LSA, the two fusions and any run files")
    _data_flag(e)
    _param_flags(e, PARAM_FLAGS)
    _fusion_flags(e)
    _metrics_flag(e)
    e.add_argument("--bootstrap", default="ndcg@5", metavar="METRIC", help="metric of the paired bootstrap (default ndcg@5)")
    e.add_argument("--compare", default="BM25,LSA", metavar="A,B", help="the two systems of the bootstrap, A - B (default BM25,LSA)")
    e.add_argument("--threshold", type=int, default=THRESHOLD_DEFAULT, help="diagnose questions whose first relevant rank is beyond this (default 3)")
    e.add_argument("--json", action="store_true", help="print the JSON report instead of tables")
    e.set_defaults(func=cmd_evaluate)
    c = sub.add_parser(
        "compare", help="the table of every system on chosen metrics, the significant differences marked",
        description="The table the IR field publishes: every system's mean on each metric (the systems `evaluate` "
                    "measures: BM25, LSA, dense with --embeddings, the two fusions, each --run), the best of each "
                    "column marked, and on each value the letters of the systems it beats significantly: a higher "
                    "mean and a p-value below --alpha after Holm's correction over all pairs of systems (each "
                    "metric separately). Tests are paired and two-sided over the questions with a relevant "
                    "document. Here --alpha is the significance level; the weighted fusion's alpha is "
                    "--fusion-alpha.")
    _data_flag(c)
    _param_flags(c, PARAM_FLAGS, flags={"alpha": "--fusion-alpha"})
    _fusion_flags(c)
    _metrics_flag(c)
    c.add_argument("--test", default=comparison.DEFAULT_TEST, metavar="|".join(comparison.TESTS),
                   help="randomization: Fisher's (paired sign flips, exact up to 16 questions, else 10,000 seeded); "
                        "t-test: paired Student's t-test; bootstrap: paired bootstrap, shifted null, 5,000 seeded "
                        f"resamples (default {comparison.DEFAULT_TEST})")
    c.add_argument("--alpha", dest="level", type=float, default=comparison.ALPHA, metavar="LEVEL",
                   help=f"the significance level, in (0, 1) (default {comparison.ALPHA:g})")
    shown = c.add_mutually_exclusive_group()
    for form, named in (("json", "JSON"), ("latex", "LaTeX"), ("markdown", "Markdown"), ("csv", "CSV")):
        shown.add_argument(f"--{form}", dest="form", action="store_const", const=form,
                           help=f"print the table as {named} instead of text")
    c.set_defaults(func=cmd_compare, form="text")
    t = sub.add_parser(
        "tune", help="a metric over a parameter grid: best setting, tie region, cross-validated estimate",
        description="Evaluate one metric at every setting of a grid (k1,b: BM25 over k1 0..3 x b 0..1; dims: LSA over "
                    "1..200 dimensions; rrf_k: RRF over 1..200; alpha: the weighted fusion over 0..1), then print the best "
                    "setting, the settings that can't be told apart from it (paired bootstrap against the best), and "
                    "the best in-sample mean beside its k-fold cross-validated estimate (questions split by a seeded "
                    "permutation; each fold measured with the setting chosen on the others).")
    _data_flag(t)
    t.add_argument("--params", default="k1,b", help=f"what to sweep (the system it scores): {tuning.PARAMS_FORMS} (default k1,b)")
    t.add_argument("--metric", default="ndcg@10", help="the metric to tune (default ndcg@10); valid: " + metrics.VALID_FORMS)
    t.add_argument("--folds", type=int, default=tuning.FOLDS, help="cross-validation folds (default 5)")
    t.add_argument("--seed", type=int, default=tuning.SEED, help="seed of the folds and of the bootstrap (default 0)")
    _param_flags(t, PARAM_FLAGS, "held fixed or marked as current")
    _fusion_flags(t)
    t.add_argument("--json", action="store_true", help="print the JSON report instead of tables")
    t.set_defaults(func=cmd_tune)
    g = sub.add_parser(
        "gate", help="exit 1 when a system got worse beyond noise between two `evaluate --json` reports",
        description="Compare one system question by question across two `evaluate --json` reports of the same dataset "
                    "(same name and question ids). Exit status 1 when the paired bootstrap interval of current - "
                    "baseline lies entirely below zero (the questions that got worse are named), 0 otherwise, "
                    "2 on bad input.")
    g.add_argument("--baseline", required=True, metavar="OLD.json", help="the earlier `evaluate --json` report")
    g.add_argument("--current", required=True, metavar="NEW.json", help="the new report, same dataset")
    g.add_argument("--metric", default="ndcg@5", help="the metric compared question by question (default ndcg@5)")
    g.add_argument("--system", default="BM25", help="the system compared (default BM25)")
    g.add_argument("--json", action="store_true", help="print the verdict as JSON")
    g.set_defaults(func=cmd_gate)
    x = sub.add_parser(
        "experiments", help="the workspace's saved experiments: list them, show one, compare two",
        description="The experiments saved on the app's Experiments page, read from the workspace store "
                    "($RETRIEVAL_LAB_DATABASE_URL, else SQLite under $RETRIEVAL_LAB_HOME, or --store).")
    xs = x.add_subparsers(dest="action", required=True, parser_class=_Parser)
    xl = xs.add_parser("list", help="every saved experiment, oldest first")
    xl.add_argument("--dataset", metavar="ID", help="only those of this dataset (its id, as the app's link names it)")
    xl.set_defaults(func=cmd_experiments_list)
    xw = xs.add_parser("show", help="one experiment: its dataset, parameters, runs, grades rule and means")
    xw.add_argument("id", type=int, help="the experiment's number")
    xw.set_defaults(func=cmd_experiments_show)
    xc = xs.add_parser("compare", help="two experiments question by question: the paired bootstrap of a metric",
                       description="Experiment A's system against experiment B's on one metric, paired over the "
                                   "questions both evaluated: each mean, the 95% paired bootstrap interval of the mean "
                                   "difference A - B, and \"can't be told apart\" when it holds zero.")
    xc.add_argument("a", type=int, help="experiment A's number")
    xc.add_argument("b", type=int, help="experiment B's number")
    xc.add_argument("--system", default="BM25", help="A's system (default BM25)")
    xc.add_argument("--system-b", help="B's system (default: the same as A's)")
    xc.add_argument("--metric", default="ndcg@5", help="the metric (default ndcg@5)")
    xc.set_defaults(func=cmd_experiments_compare)
    for parser in (xl, xw, xc):
        parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    k = sub.add_parser("workspace", help="the whole workspace as one zip: export it, or import one into an empty store",
                       description="Every dataset (as a BEIR folder and as uploaded), run, embeddings file, grade "
                                   "(qrels per rater and combined by each rule) and saved experiment, in one zip; "
                                   "an import reads one back into an empty store, every dataset checked against "
                                   "its id and every record against what the export writes: all of it, or nothing.")
    ks = k.add_subparsers(dest="action", required=True, parser_class=_Parser)
    ke = ks.add_parser("export", help="write the workspace to a zip")
    ke.add_argument("file", help="the zip to write (replaced whole, or not at all)")
    ke.set_defaults(func=cmd_workspace_export)
    ki = ks.add_parser("import", help="read an exported zip into an empty store (all of it, or nothing)")
    ki.add_argument("file", help="the zip to read")
    ki.set_defaults(func=cmd_workspace_import)
    kt = ks.add_parser("trash", help="list the deleted datasets: who deleted each, when, and until when it can be "
                                     "restored")
    kt.add_argument("--json", action="store_true", help="print JSON instead of text")
    kt.set_defaults(func=cmd_workspace_trash)
    kd = ks.add_parser("delete", help="move a dataset, with its runs, grades and experiments, to the trash (its owner "
                                      "or an admin)")
    kd.set_defaults(func=cmd_workspace_delete)
    kr = ks.add_parser("restore", help="bring a dataset back from the trash (its owner or an admin)")
    kr.set_defaults(func=cmd_workspace_restore)
    for parser in (kd, kr):
        parser.add_argument("dataset", help="the dataset's id (as the Data page and `workspace trash` list it)")
        parser.add_argument("--as", dest="user", metavar="NAME", default=None,
                            help="who you are, as the proxy names you (default: your login name); an admin if in "
                                 f"${access.ADMINS_ENV}, or when ${access.USER_HEADER_ENV} is not set")
    for parser in (xl, xw, xc, ke, ki, kt, kd, kr):
        parser.add_argument("--store", metavar="URL", help="the workspace's database URL (default: the app's)")
    w = sub.add_parser(
        "warmup", help="compile the kernels once (numba's cache on disk), so that no first run or first visit waits",
        description="Compile every compiled kernel with the types the app and the command line use, or load it from "
                    "numba's cache (beside the package, or $NUMBA_CACHE_DIR). Run it once after installing: the first "
                    "evaluation of a corpus beyond the small ones then starts at once instead of after ~25 s.")
    w.add_argument("--quiet", action="store_true", help="print nothing")
    w.add_argument("--with-parent", action="store_true", help=argparse.SUPPRESS)  # the app's child: ends with it
    w.set_defaults(func=cmd_warmup)
    return p


def _exit_with_parent() -> None:
    """End this process when the one that started it ends (a server stopped mid warm-up leaves nothing behind), and
    yield the processor to it meanwhile."""
    parent = os.getppid()
    if hasattr(os, "nice"):  # behind the server it warms up for: its first pages come first on a busy machine
        os.nice(10)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def cmd_warmup(args: argparse.Namespace) -> int:
    """`warmup`: compile (or load) every kernel, say how long it took."""
    if args.with_parent:
        _exit_with_parent()
    t = time.perf_counter()
    sigs = warm_up()
    if not args.quiet:
        print(f"kernels ready: {plural(len(sigs), 'kernel')}, {plural(sum(sigs.values()), 'signature')}, "
              f"{time.perf_counter() - t:.1f} s"
              if sigs else "numba is disabled (NUMBA_DISABLE_JIT): the kernels run as plain Python")
    return 0


def _fmt_rank(r: int) -> str:
    """A first-relevant rank for a table ('-' = not found)."""
    return str(r) if r > 0 else "-"


def cmd_evaluate(args: argparse.Namespace) -> int:
    """The `evaluate` subcommand."""
    params = _fused_params(args)
    metric_list = metrics.parse_list(args.metrics)
    boot_metric = metrics.parse(args.bootstrap)
    pair = [s.strip() for s in args.compare.split(",")]
    if len(pair) != 2:
        raise InputError(f"--compare: expected two systems A,B, got {args.compare!r}")
    if args.threshold < 0:
        raise InputError(f"--threshold must be >= 0, got {args.threshold}")
    names = [m.name for m in metric_list]
    all_metrics = names + ([boot_metric.name] if boot_metric.name not in names else [])
    ds, ev = _evaluated(args, params, all_metrics)
    report = json_report(ev, params, names, boot_metric.name, (pair[0], pair[1]))
    boot = report["bootstrap"]
    if args.json:
        print_json(report)
        return 0
    print(_dataset_line(ds))
    print(f"text analysis: {analysis_text(params)}")
    print(f"k1={params.k1} b={params.b} dims={params.dims} rrf_k={params.rrf_k} alpha={params.alpha} "
          f"fusion_depth={params.fusion_depth}")
    _meaning(ds, all_metrics)
    print()
    shown = {s: _t(s) for s in ev.systems}
    width = max(9, *(len(s) for s in shown.values()))
    print(f"{'system':{width}s} " + " ".join(f"{n:>10s}" for n in names))
    for s in ev.systems:
        print(f"{shown[s]:{width}s} " + " ".join(f"{ev.mean(s, n):10.6f}" for n in names))
    if args.embeddings is None and dense.documents_ready(ds):  # the app's rule for showing dense at once
        print(f"note: dense, which the app shows on {_t(ds.name)}, is left out: add --embeddings e5-small (its vectors "
              "are here, nothing to encode)")
    print("\nrank of the first relevant document (- = not found):")
    qids = [_t(ds.query_ids[q]) for q in ds.evaluated]
    qw = max(4, *(len(q) for q in qids))
    print(f"  {'q':{qw}s} " + " ".join(f"{shown[s]:>{max(len(shown[s]), 4)}s}" for s in ev.systems))
    for i, qid in enumerate(qids):
        print(f"  {qid:{qw}s} " + " ".join(f"{_fmt_rank(int(ev.first_rank[s][i])):>{max(len(shown[s]), 4)}s}"
                                           for s in ev.systems))
    conf = int(stats.CONFIDENCE * 100)
    print(f"\nmean {boot['metric']} difference ({_t(boot['a'])} - {_t(boot['b'])}) = {boot['mean_diff']:+.3f}  "
          f"{conf}% bootstrap interval = [{boot['ci_low']:+.3f}, {boot['ci_high']:+.3f}]"
          f"  ({plural(boot['resamples'], 'resample')}, seed {boot['seed']})")
    cases = diagnose(ds, ev.rankings["BM25"], args.threshold, listed=RELEVANT_LISTED, analysis=Analysis(*params.analysis))
    print(f"\ndiagnosis (BM25, first relevant document not in the top {args.threshold}): {plural(len(cases), 'question')}")
    for c in cases:
        where = f"rank {c.rank}" if c.rank else "not found"
        first = f"first result: {_t(c.first_result)}" if c.first_result else "no result at all"
        shares = f" (shares {', '.join(repr(w) for w in c.first_result_words)})" if c.first_result_words else ""
        print(_t(f"{c.qid} {c.question!r}") + f" -> {where}, {first}{_t(shares)}: {c.kind}")
        for did, grade, words in c.relevant:
            print(f"    {_t(did)} (grade {grade}): words in common = {_t(', '.join(words)) if words else 'none'}")
        if c.more_relevant:
            print(f"    ... and {plural(c.more_relevant, 'more relevant document')} (the first {RELEVANT_LISTED} are listed)")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    """The `compare` subcommand: the comparison table as text, JSON, LaTeX or Markdown."""
    params = _fused_params(args)
    names = [m.name for m in metrics.parse_list(args.metrics)]
    comparison.check_options(args.test, args.level)
    ds, ev = _evaluated(args, params, names)
    table = comparison.compare_table(ev, names, args.test, args.level)
    if args.form == "json":
        print_json({"dataset": {"name": ds.name, "documents": ds.n_docs, "queries": ds.n_queries},
                    "params": params.to_json(), **table.to_json()})
    elif args.form == "latex":
        print(table.to_latex(), end="")
    elif args.form == "markdown":
        print(table.to_markdown(), end="")
    elif args.form == "csv":
        print(table.to_csv(), end="")
    else:
        print(_dataset_line(ds))
        _meaning(ds, names)
        print()
        print(table.to_text(), end="")
    return 0


VERDICT = "verdict: "  # the line of `tune` that says tuning.verdict's text


def _setting(values: dict) -> str:
    """A setting as `k1=1.2 b=0.75`."""
    return " ".join(f"{k}={v}" if isinstance(v, str) else f"{k}={v:g}" for k, v in values.items())


def cmd_tune(args: argparse.Namespace) -> int:
    """The `tune` subcommand."""
    base = _fused_params(args)
    metric = metrics.parse(args.metric)
    key = tuning._params_key(args.params)
    if args.folds < 2:
        raise InputError(f"--folds must be >= 2, got {args.folds}")
    ds = _load(args)
    for w in ds.warnings:
        print(f"warning: {_t(w)}", file=sys.stderr)
    result = tuning.tune(ds, key, metric, base, args.folds, args.seed, sources=_sources(args, ds))
    report = tuning.to_json(result)
    if args.json:
        print_json(report)
        return 0
    sw, ties, cv = result.sweep, result.ties, result.cv
    means = sw.means
    conf = int(ties.confidence * 100)
    axes = " x ".join(sw.names)
    print(f"tune {_t(sw.system)} on {_t(ds.name)} ({plural(len(sw.qids), 'question')}): {sw.metric} over {axes} "
          f"({plural(means.size, 'setting')})")
    print(f"* best, ~ can't be told apart from the best (paired bootstrap against the best, {conf}%, "
          f"{plural(ties.resamples, 'resample')}, seed {ties.seed})\n")
    mark = np.where(ties.tied, "~", " ")
    mark[result.best] = "*"
    if sw.names[0] == "analysis":  # per analysis (stemmer/stop words): its best k1 x b and that tuning cross-validated
        rows = tuning.analysis_rows(sw, result.current_values, cv.folds, cv.seed)
        width = max(len("analysis"), *(len(r.analysis) for r in rows))
        print(f"{'analysis':{width}s}  best k1    b   {sw.metric:>9s}  cross-validated  gain over current")
        for i, r in enumerate(rows):
            best = result.best // (means.size // len(rows)) == i
            print(f"{r.analysis:{width}s}  {r.best['k1']:7g} {r.best['b']:4g}   {r.best_mean:9.4f}  {r.cross_validated:15.4f}"
                  f"  {r.gain:+17.4f} {'*' if best else ''}".rstrip())
        fine = tuning.sweep_bm25(ds, metric, base=base)  # the finer k1 x b grid at the current analysis: the page's words
        print(f"\n{grids.compare(sw, fine, result.current_values, cv.folds, cv.seed).text}")
    elif len(sw.names) == 2:
        rows, cols = sw.axes
        grid, marks = means.reshape(sw.shape), mark.reshape(sw.shape)
        head = f"{sw.names[0]} \\ {sw.names[1]}"
        print(f"{head:>7s} " + " ".join(f"{c:>5g} " for c in cols).rstrip())
        for i, r in enumerate(rows):
            print(f"{r:>7g} " + " ".join(f"{grid[i, j]:5.3f}{marks[i, j]}" for j in range(cols.size)).rstrip())
    else:
        name = sw.names[0]
        print(f"{name:>7s} {sw.metric:>9s}")
        for i, v in enumerate(sw.axes[0]):
            print(f"{v:>7g} {means[i]:9.4f} {mark[i]}".rstrip())
    for n in sw.notes:
        print(f"note: {_t(n)}")
    cur, said = report["current"], result.verdict
    vs = said.versus
    print(f"\nbest: {_setting(sw.setting(result.best))}  {sw.metric} = {means[result.best]:.4f}")
    print(f"tie region: {ties.size} of {means.size} settings can't be told apart from the best (each alone, uncorrected)")
    side = "above" if said.signals.diff > 0 else "below"
    tie = ("can't be told apart from the best" if cur["tied_with_best"] else
           f"outside the tie region: {side} the best by its own bootstrap interval, uncorrected")
    between = "" if said.on_grid else "; between grid points"
    print(f"current: {_setting(cur['setting'])}  {sw.metric} = {cur['mean']:.4f} ({tie}{between})")
    print(f"current - best: {said.signals.diff:+.4f}; paired permutation p = {vs.p:.4g} alone, Holm-adjusted p = "
          f"{vs.p_holm:.4g} over {vs.family_text}")
    print(f"{cv.folds}-fold cross-validation (seed {cv.seed}): in-sample best {cv.in_sample:.4f}, "
          f"cross-validated {cv.cross_validated:.4f} (over-fitting {cv.optimism:+.4f})")
    for f, c in enumerate(cv.chosen):
        print(f"  fold {f + 1} ({plural(cv.fold_sizes[f], 'question')}): chose {_setting(sw.setting(c))}, "
              f"{cv.train_means[f]:.4f} on the other folds, {cv.test_means[f]:.4f} held out")
    print(f"\n{VERDICT}{_t(said.plain)}")  # tuning.verdict's words, the Tuning page's too (without its bold)
    return 0


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
    print(f"baseline {result.baseline.mean():.6f}  current {result.current.mean():.6f}  "
          f"difference {iv.mean:+.6f}, {conf}% bootstrap interval [{iv.low:+.6f}, {iv.high:+.6f}] "
          f"({plural(iv.resamples, 'resample')}, seed {iv.seed}); paired randomisation p = {result.p_value:.4g}")
    worse = result.worse()
    listing = [f"  {_t(q)}: {a:.6f} -> {b:.6f} ({b - a:+.6f})" for q, a, b in worse]
    if result.failed:
        print(f"FAIL: {_t(result.system)} is worse beyond noise (the interval lies below zero); "
              f"{plural(len(worse), 'question')} got worse: {', '.join(_t(q) for q, _, _ in worse)}")
        print("\n".join(listing))
        return gate.FAIL
    print(f"PASS: no loss beyond noise ({plural(len(worse), 'question')} got worse, {len(result.better())} got better)")
    if listing:
        print("\n".join(listing))
    return gate.PASS


def _store(args: argparse.Namespace) -> workspace.Workspace:
    return workspace.open_workspace(args.store)


def _entry_json(e: workspace.ExperimentEntry) -> dict:
    return {"id": e.id, "dataset": e.dataset_id, "name": e.name, "saved": e.created_at.isoformat(), "by": e.created_by}


def cmd_experiments_list(args: argparse.Namespace) -> int:
    ws = _store(args)
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
        print_json({"experiments": [{**_entry_json(e), "settings": v} for e, v in zip(entries, found.values)],
                    "differing": list(found.differing)})
        return 0
    names = {d.id: d.name for d in ws.datasets()}
    shown = [c for c in found.columns if c.key in found.differing]
    rows = [(str(e.id), f"{_t(names.get(e.dataset_id, '?'))} ({e.dataset_id})", _t(e.name),
             e.created_at.strftime("%Y-%m-%d %H:%M"), _t(e.created_by),
             *(_t(experiments.shown(v[c.key])) for c in shown)) for e, v in zip(entries, found.values)]
    _print_rows(("#", "dataset", "name", "saved (UTC)", "by", *(c.label for c in shown)), rows)
    print(f"{plural(len(entries), 'experiment')}" + (f"; {found.sentence}" if len(entries) > 1 else ""))
    return 0


def _print_rows(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    for row in (header, *rows):
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())


def cmd_experiments_show(args: argparse.Namespace) -> int:
    entry, rec = _store(args).experiment(args.id)
    rec = experiments.readable(entry.id, entry.name, rec)
    if args.json:
        print_json({**_entry_json(entry), "record": rec, "settings": experiments.settings_of(rec)})
        return 0
    report = rec["report"]
    print(f"experiment #{entry.id} {_t(entry.name)}: saved {entry.created_at:%Y-%m-%d %H:%M} UTC by {_t(entry.created_by)}")
    print(f"dataset {_t(report['dataset']['name'])} ({entry.dataset_id}): "
          f"{plural(report['dataset']['documents'], 'document')}, {plural(report['dataset']['queries'], 'question')}")
    print("parameters: " + ", ".join(f"{k} = {_t(v)}" for k, v in report["params"].items()))
    runs = rec.get("runs") or []
    print("runs: " + (", ".join(_t(r["name"]) for r in runs) if runs else "none"))
    grades = rec.get("grades", {})
    print(f"workspace grades: {grades.get('from_workspace', 0)}, combined by {_t(grades.get('rule', 'original'))}")
    settings = experiments.settings_of(rec)
    print(f"embeddings: {_t(experiments.shown(settings['embeddings']))}; cutoff k: {_t(settings['k'])}; "
          f"the view's metric: {_t(settings['metric'])}")
    names = report["metrics"]
    rows = [(_t(s), *("" if row.get(m) is None else f"{row[m]:.4f}" for m in names)) for s, row in report["systems"].items()]
    _print_rows(("system", *names), rows)
    return 0


def cmd_experiments_compare(args: argparse.Namespace) -> int:
    ws = _store(args)
    (ea, a), (eb, b) = ws.experiment(args.a), ws.experiment(args.b)
    a, b = experiments.readable(ea.id, ea.name, a), experiments.readable(eb.id, eb.name, b)
    c = experiments.compare(a, b, args.system, args.system_b or args.system, args.metric)
    wins_a, wins_b = int((c.differences > 0).sum()), int((c.differences < 0).sum())
    if args.json:
        iv = c.interval
        print_json({"a": {**_entry_json(ea), "system": c.system_a, "mean": c.mean_a},
                    "b": {**_entry_json(eb), "system": c.system_b, "mean": c.mean_b}, "metric": c.metric,
                    "questions": c.questions, "difference": iv.mean, "interval": [iv.low, iv.high],
                    "confidence": iv.confidence, "told_apart": not iv.holds_zero, "a_better_on": wins_a,
                    "b_better_on": wins_b, "verdict": c.verdict})
        return 0
    print(f"A: #{ea.id} {_t(ea.name)}, {_t(c.system_a)}: {c.metric} {c.mean_a:.4f}")
    print(f"B: #{eb.id} {_t(eb.name)}, {_t(c.system_b)}: {c.metric} {c.mean_b:.4f}")
    print(f"A - B = {c.interval.mean:+.4f}; {c.verdict}")
    print(f"A is better on {plural(wins_a, 'question')}, B on {wins_b}, {c.questions - wins_a - wins_b} tied")
    return 0


def cmd_workspace_export(args: argparse.Namespace) -> int:
    data = transfer.export_workspace(_store(args))
    target = Path(args.file)
    tmp = target.with_name(target.name + ".part")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, target)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise InputError(f"{target}: cannot be written ({e.strerror or e})") from None
    print(f"wrote {target}: {len(data):,} bytes")
    return 0


def cmd_workspace_import(args: argparse.Namespace) -> int:
    n = transfer.import_workspace(_store(args), datasets.read_file(Path(args.file)), args.file,
                                  datasets.zip_limits(datasets.CLI_LIMITS))
    print(f"imported {plural(n, 'dataset')} from {_t(args.file)}")
    return 0


def _actor(args: argparse.Namespace) -> access.Actor:
    """Who runs the command: `--as NAME`, else the login name (the store checks what they may change)."""
    name = (args.user or os.environ.get("USER") or os.environ.get("USERNAME") or "").strip()
    if not name:
        raise InputError("--as: say who you are (no login name is known here)")
    return access.actor(name)


def cmd_workspace_trash(args: argparse.Namespace) -> int:
    ws = _store(args)
    ws.purge_expired()
    days, gone = workspace.trash_days(), ws.trash()
    if args.json:
        print(json.dumps([{"id": e.id, "name": e.name, "owner": e.owner, "deleted_by": e.deleted_by,
                           "deleted_at": e.deleted_at.isoformat(), "purged_at": e.purged_at(days).isoformat()}
                          for e in gone], indent=2))
        return 0
    if not gone:
        print("the trash is empty")
    for e in gone:
        print(f"{e.id} {_t(e.name)}: deleted by {_t(e.deleted_by or '')} at {e.deleted_at:%Y-%m-%d %H:%M} UTC, owner "
              f"{_t(e.owner or 'nobody')}, restorable until {e.purged_at(days):%Y-%m-%d %H:%M} UTC")
    return 0


def cmd_workspace_delete(args: argparse.Namespace) -> int:
    entry = _store(args).delete_dataset(args.dataset, _actor(args))
    print(f"moved {_t(entry.name)} ({entry.id}) to the trash: restorable until "
          f"{entry.purged_at(workspace.trash_days()):%Y-%m-%d %H:%M} UTC (workspace restore {entry.id})")
    return 0


def cmd_workspace_restore(args: argparse.Namespace) -> int:
    entry = _store(args).restore_dataset(args.dataset, _actor(args))
    print(f"restored {_t(entry.name)} ({entry.id}) with its runs, grades and experiments")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point: exit status 0, or 2 with one line on stderr for bad input."""
    _kernels.serve_small_from_python()  # a small corpus needs no compiler: served at once even on a fresh clone
    _kernels.serve_uncompiled()  # nor, in one run, a medium one: the twins rather than numba's ~45 s compile
    for w in repair_compiled_cache():  # a damaged compiled cache: cleared and compiled again, said, never a traceback
        print(f"warning: {_t(w)}", file=sys.stderr)
    try:
        args = build_parser().parse_args(argv)
        if not getattr(args, "quiet", False):  # a compile numba cannot skip is said at once, with its progress
            named = compiled_dispatchers()
            total = sum(not _kernels.dispatch.on_disk(d) for d in named.values()) if args.func is cmd_warmup else None
            _kernels.dispatch.announce_compiling(named, lambda line: print(line, file=sys.stderr, flush=True), total)
        return args.func(args)
    except InputError as e:
        print(f"retrieval: error: {_t(e)}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
