"""`evaluate` (the article's tables or the JSON report), `compare` (every system on chosen metrics, the significant
differences marked: text, JSON, LaTeX, Markdown or CSV) and `tune` (a metric over a parameter grid, its tie region
and cross-validated estimate): the commands that run the engine."""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

import numpy as np

from ..analyses import grids, tuning
from ..analyses.diagnosis import RELEVANT_LISTED, THRESHOLD_DEFAULT, diagnose
from ..core.errors import InputError
from ..core.params import ANALYSIS, ARTICLE_MEMBERS, QUESTION_SIDE, SPECS, Params
from ..core.words import plural
from ..corpus import dataset as datasets
from ..corpus import embeddings
from ..corpus.runs import TIES, TIES_DEFAULT, TrecRun, read_run
from ..corpus.text import Analysis
from ..engine.engine import CLI_MAX_CHARS, check_size, evaluate, max_chars
from ..evaluation import comparison, metrics, stats
from ..evaluation.report import json_report, tie_json, ties_line
from ..retrievers import bm25, dense
from . import compiled
from .common import VERDICT, _t, print_json


def _kernels_started(command):
    """A command that runs the kernels: compiled.start before it."""

    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        compiled.start(args)
        return command(args)

    return run


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
            raise argparse.ArgumentTypeError(
                str(e) if isinstance(e, InputError) else f"not a number: {text!r}"
            ) from None

    return value


PARAM_FLAGS = ("k1", "b", "dims", "rrf_k", "alpha", "fusion_depth", *ANALYSIS, *QUESTION_SIDE)  # each command's


def _param_flags(
    parser: argparse.ArgumentParser, names: tuple[str, ...], role: str = "", flags: dict[str, str] | None = None
) -> None:
    """One flag per parameter (--rrf-k for rrf_k, unless `flags` names it otherwise, checked as it is read), its
    type, default and help from the parameter table; a parameter with choices (the fusion depth) takes only those."""
    for name in names:
        s = SPECS[name]
        renamed = (flags or {}).get(name)
        if s.options:  # a choice of names (the text analysis)
            parser.add_argument(
                renamed or "--" + name.replace("_", "-"),
                dest=name,
                choices=s.options,
                default=s.default,
                help=f"{s.help} {role + ' ' if role else ''}(default {s.default})",
            )
            continue
        choices = f"; one of {', '.join(map(str, s.choices))}" if s.choices else ""
        parser.add_argument(
            renamed or "--" + name.replace("_", "-"),
            dest=name,
            type=_checked(s) if renamed else int if s.integer else float,
            default=s.cast(s.default),
            metavar=name.upper(),
            choices=s.choices or None,
            help=f"{s.help} {role + ' ' if role else ''}(default {s.cast(s.default):g}{choices})",
        )


def _fusion_flags(parser: argparse.ArgumentParser) -> None:
    """The systems beyond the built-in retrievers (--run, --embeddings) and the fusions' members (--fuse, --weights)."""
    parser.add_argument(
        "--run",
        action="append",
        default=[],
        type=_run_arg,
        metavar="NAME=PATH",
        help="a run file as an extra system: TREC (qid Q0 docid rank score tag, plain or .gz), ranx/ir_measures "
        "JSON or Parquet (qid, docid, score); ranked by score, descending, ties by --ties; repeatable",
    )
    parser.add_argument(
        "--ties",
        default=TIES_DEFAULT,
        choices=TIES,
        help="how a run's tied scores are ranked: docid-asc (document id ascending, the article's rule and the "
        "built-in systems', default) or trec_eval (document id descending, as trec_eval and pytrec_eval rank them)",
    )
    parser.add_argument(
        "--fuse",
        default=",".join(ARTICLE_MEMBERS),
        metavar="A,B[,...]",
        help="the systems both fusions combine: built-in retrievers or --run names (default BM25,LSA)",
    )
    parser.add_argument(
        "--embeddings",
        default=None,
        metavar="PATH|e5-small",
        help="a dense retriever, the system 'dense': e5-small (the bundled multilingual-e5-small, document "
        "vectors computed once and cached on disk), an .npz (doc_ids, doc_vectors, query_ids, "
        "query_vectors), or DOCS,QUESTIONS: two .jsonl or .parquet files of id and vector",
    )
    parser.add_argument(
        "--weights",
        default=None,
        metavar="W1,W2[,...]",
        help="the weighted fusion's weight per --fuse member (default: alpha and 1 - alpha)",
    )


def _data_flag(parser: argparse.ArgumentParser) -> None:
    """--data: the built-in corpus or a BEIR folder or zip."""
    parser.add_argument(
        "--data", default="invented", help="'invented' (built in) or a BEIR folder or .zip (default: invented)"
    )


def _metrics_flag(parser: argparse.ArgumentParser) -> None:
    """--metrics: a comma-separated list of metric names."""
    parser.add_argument(
        "--metrics",
        default=",".join(metrics.DEFAULT_METRICS),
        help="comma-separated, e.g. hit@3,recall@5,mrr,ndcg@5; valid: " + metrics.VALID_FORMS,
    )


def _sources(args: argparse.Namespace, ds: datasets.Dataset) -> tuple:
    """The runs and the dense vectors the command line names, aligned with the dataset."""
    sources = [read_run(Path(path), name, args.ties) for name, path in args.run]
    if args.embeddings:
        sources.append(_embeddings(args.embeddings, ds))
    return tuple(sources)


def _fused_params(args: argparse.Namespace) -> Params:
    """The parameters of the command line, the fusions' members and weights included."""
    return Params(
        k1=args.k1,
        b=args.b,
        dims=args.dims,
        rrf_k=args.rrf_k,
        alpha=args.alpha,
        fusion_depth=args.fusion_depth,
        stemmer=args.stemmer,
        stopwords=args.stopwords,
        query_words=args.query_words,
        k3=args.k3,
        members=_members(args.fuse),
        weights=_weights(args.weights),
    )


def _evaluated(args: argparse.Namespace, params: Params, metric_names: list[str]):
    """The dataset of --data and its evaluation: every system (the built-in retrievers, --embeddings' dense one,
    the fusions, each --run) on the metrics; the dataset's and the systems' warnings on stderr."""
    ds = _load(args)
    sources = _sources(args, ds)
    ev = evaluate(ds, params, metric_names, sources)
    for w in list(ds.warnings) + list(ev.notes):
        print(f"warning: {_t(w)}", file=sys.stderr)
    return ds, ev, tuple(x for x in sources if isinstance(x, TrecRun))


def _dataset_line(ds: datasets.Dataset) -> str:
    """`dataset NAME: N documents, M questions, K with a relevant document`."""
    return (
        f"dataset {_t(ds.name)}: {plural(ds.n_docs, 'document')}, {plural(ds.n_queries, 'question')}, "
        f"{ds.evaluated.size:,} with a relevant document"
    )


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
    print(
        f"\rencoding documents: {done:,} of {total:,}, {rate:.1f} a second, {left:,.0f} s left   ",
        end=end,
        file=sys.stderr,
        flush=True,
    )


def _embeddings(value: str, ds: datasets.Dataset):
    """--embeddings: the bundled model's vectors of the dataset, or a file (pair) of them, aligned with it."""
    if value == "e5-small":
        if not dense.cache_path(ds).exists() and ds.name not in dense.BUNDLED:
            print(
                f"encoding {plural(ds.n_docs, 'document')} with the bundled model, about {dense.estimate_seconds(ds):,.0f} s; "
                f"the vectors are cached in {dense.cache_dir()}",
                file=sys.stderr,
            )
        return embeddings.align(dense.embeddings_of(ds, _progress), ds)
    paths = [x.strip() for x in value.split(",")]
    try:
        embeddings.loader_for(paths)  # the files' kinds, before reading any
    except InputError:
        raise InputError(f"--embeddings {value!r}: give e5-small, or {embeddings.FORMS} as DOCS,QUESTIONS") from None
    files = [(p, datasets.read_file(Path(p))) for p in paths]
    return embeddings.align(embeddings.load_files(files, embeddings.Limits.of(ds)), ds)


def _evaluate_arguments(e: argparse.ArgumentParser) -> None:
    """`evaluate`'s arguments."""
    _data_flag(e)
    _param_flags(e, PARAM_FLAGS)
    _fusion_flags(e)
    _metrics_flag(e)
    e.add_argument(
        "--bootstrap", default="ndcg@5", metavar="METRIC", help="metric of the paired bootstrap (default ndcg@5)"
    )
    e.add_argument(
        "--compare",
        default="BM25,LSA",
        metavar="A,B",
        help="the two systems of the bootstrap, A - B (default BM25,LSA)",
    )
    e.add_argument(
        "--threshold",
        type=int,
        default=THRESHOLD_DEFAULT,
        help="diagnose questions whose first relevant rank is beyond this (default 3)",
    )
    e.add_argument("--json", action="store_true", help="print the JSON report instead of tables")
    e.set_defaults(func=cmd_evaluate)


def _compare_arguments(c: argparse.ArgumentParser) -> None:
    """`compare`'s arguments."""
    _data_flag(c)
    _param_flags(c, PARAM_FLAGS, flags={"alpha": "--fusion-alpha"})
    _fusion_flags(c)
    _metrics_flag(c)
    c.add_argument(
        "--test",
        default=comparison.DEFAULT_TEST,
        metavar="|".join(comparison.TESTS),
        help="randomization: Fisher's (paired sign flips, exact up to 16 questions, else 10,000 seeded); "
        "t-test: paired Student's t-test; bootstrap: paired bootstrap, shifted null, 5,000 seeded "
        f"resamples (default {comparison.DEFAULT_TEST})",
    )
    c.add_argument(
        "--alpha",
        dest="level",
        type=float,
        default=comparison.ALPHA,
        metavar="LEVEL",
        help=f"the significance level, in (0, 1) (default {comparison.ALPHA:g})",
    )
    shown = c.add_mutually_exclusive_group()
    for form, named in (("json", "JSON"), ("latex", "LaTeX"), ("markdown", "Markdown"), ("csv", "CSV")):
        shown.add_argument(
            f"--{form}",
            dest="form",
            action="store_const",
            const=form,
            help=f"print the table as {named} instead of text",
        )
    c.set_defaults(func=cmd_compare, form="text")


def _tune_arguments(t: argparse.ArgumentParser) -> None:
    """`tune`'s arguments."""
    _data_flag(t)
    t.add_argument(
        "--params", default="k1,b", help=f"what to sweep (the system it scores): {tuning.PARAMS_FORMS} (default k1,b)"
    )
    t.add_argument(
        "--metric", default="ndcg@10", help="the metric to tune (default ndcg@10); valid: " + metrics.VALID_FORMS
    )
    t.add_argument("--folds", type=int, default=tuning.FOLDS, help="cross-validation folds (default 5)")
    t.add_argument("--seed", type=int, default=tuning.SEED, help="seed of the folds and of the bootstrap (default 0)")
    _param_flags(t, PARAM_FLAGS, "held fixed or marked as current")
    _fusion_flags(t)
    t.add_argument("--json", action="store_true", help="print the JSON report instead of tables")
    t.set_defaults(func=cmd_tune)


def _fmt_rank(r: int) -> str:
    """A first-relevant rank for a table ('-' = not found)."""
    return str(r) if r > 0 else "-"


@_kernels_started
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
    ds, ev, runs = _evaluated(args, params, all_metrics)
    report = tie_json(json_report(ev, params, names, boot_metric.name, (pair[0], pair[1])), runs, args.ties)
    boot = report["bootstrap"]
    if args.json:
        print_json(report)
        return 0
    print(_dataset_line(ds))
    if line := ties_line(runs, args.ties):
        print(line)
    print(f"text analysis: {analysis_text(params)}")
    print(
        f"k1={params.k1} b={params.b} dims={params.dims} rrf_k={params.rrf_k} alpha={params.alpha} "
        f"fusion_depth={params.fusion_depth}"
    )
    _meaning(ds, all_metrics)
    print()
    shown = {s: _t(s) for s in ev.systems}
    width = max(9, *(len(s) for s in shown.values()))
    print(f"{'system':{width}s} " + " ".join(f"{n:>10s}" for n in names))
    for s in ev.systems:
        print(f"{shown[s]:{width}s} " + " ".join(f"{ev.mean(s, n):10.6f}" for n in names))
    if args.embeddings is None and dense.documents_ready(ds):  # the app's rule for showing dense at once
        print(
            f"note: dense, which the app shows on {_t(ds.name)}, is left out: add --embeddings e5-small (its vectors "
            "are here, nothing to encode)"
        )
    print("\nrank of the first relevant document (- = not found):")
    qids = [_t(ds.query_ids[q]) for q in ds.evaluated]
    qw = max(4, *(len(q) for q in qids))
    print(f"  {'q':{qw}s} " + " ".join(f"{shown[s]:>{max(len(shown[s]), 4)}s}" for s in ev.systems))
    for i, qid in enumerate(qids):
        print(
            f"  {qid:{qw}s} "
            + " ".join(f"{_fmt_rank(int(ev.first_rank[s][i])):>{max(len(shown[s]), 4)}s}" for s in ev.systems)
        )
    conf = int(stats.CONFIDENCE * 100)
    print(
        f"\nmean {boot['metric']} difference ({_t(boot['a'])} - {_t(boot['b'])}) = {boot['mean_diff']:+.3f}  "
        f"{conf}% bootstrap interval = [{boot['ci_low']:+.3f}, {boot['ci_high']:+.3f}]"
        f"  ({plural(boot['resamples'], 'resample')}, seed {boot['seed']})"
    )
    cases = diagnose(
        ds, ev.rankings["BM25"], args.threshold, listed=RELEVANT_LISTED, analysis=Analysis(*params.analysis)
    )
    print(
        f"\ndiagnosis (BM25, first relevant document not in the top {args.threshold}): {plural(len(cases), 'question')}"
    )
    for c in cases:
        where = f"rank {c.rank}" if c.rank else "not found"
        first = f"first result: {_t(c.first_result)}" if c.first_result else "no result at all"
        shares = f" (shares {', '.join(repr(w) for w in c.first_result_words)})" if c.first_result_words else ""
        print(_t(f"{c.qid} {c.question!r}") + f" -> {where}, {first}{_t(shares)}: {c.kind}")
        for did, grade, words in c.relevant:
            print(f"    {_t(did)} (grade {grade}): words in common = {_t(', '.join(words)) if words else 'none'}")
        if c.more_relevant:
            print(
                f"    ... and {plural(c.more_relevant, 'more relevant document')} (the first {RELEVANT_LISTED} are listed)"
            )
    return 0


@_kernels_started
def cmd_compare(args: argparse.Namespace) -> int:
    """The `compare` subcommand: the comparison table as text, JSON, LaTeX or Markdown."""
    params = _fused_params(args)
    names = [m.name for m in metrics.parse_list(args.metrics)]
    comparison.check_options(args.test, args.level)
    ds, ev, runs = _evaluated(args, params, names)
    table = comparison.compare_table(ev, names, args.test, args.level)
    if args.form == "json":
        print_json(
            tie_json(
                {
                    "dataset": {"name": ds.name, "documents": ds.n_docs, "queries": ds.n_queries},
                    "params": params.to_json(),
                    **table.to_json(),
                },
                runs,
                args.ties,
            )
        )
    elif args.form == "latex":
        print(table.to_latex(), end="")
    elif args.form == "markdown":
        print(table.to_markdown(), end="")
    elif args.form == "csv":
        print(table.to_csv(), end="")
    else:
        print(_dataset_line(ds))
        if line := ties_line(runs, args.ties):
            print(line)
        _meaning(ds, names)
        print()
        print(table.to_text(), end="")
    return 0


def _setting(values: dict) -> str:
    """A setting as `k1=1.2 b=0.75`."""
    return " ".join(f"{k}={v}" if isinstance(v, str) else f"{k}={v:g}" for k, v in values.items())


@_kernels_started
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
    print(
        f"tune {_t(sw.system)} on {_t(ds.name)} ({plural(len(sw.qids), 'question')}): {sw.metric} over {axes} "
        f"({plural(means.size, 'setting')})"
    )
    print(
        f"* best, ~ can't be told apart from the best (paired bootstrap against the best, {conf}%, "
        f"{plural(ties.resamples, 'resample')}, seed {ties.seed})\n"
    )
    mark = np.where(ties.tied, "~", " ")
    mark[result.best] = "*"
    if sw.names[0] == "analysis":  # per analysis (stemmer/stop words): its best k1 x b and that tuning cross-validated
        rows = tuning.analysis_rows(sw, result.current_values, cv.folds, cv.seed)
        width = max(len("analysis"), *(len(r.analysis) for r in rows))
        print(f"{'analysis':{width}s}  best k1    b   {sw.metric:>9s}  cross-validated  gain over current")
        for i, r in enumerate(rows):
            best = result.best // (means.size // len(rows)) == i
            print(
                f"{r.analysis:{width}s}  {r.best['k1']:7g} {r.best['b']:4g}   {r.best_mean:9.4f}  {r.cross_validated:15.4f}"
                f"  {r.gain:+17.4f} {'*' if best else ''}".rstrip()
            )
        fine = tuning.sweep_bm25(
            ds, metric, base=base
        )  # the finer k1 x b grid at the current analysis: the page's words
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
    for e in result.edges:  # the best at an open edge of the range searched (tuning.edge_findings, the page's warning)
        print(f"edge: {_t(e.sentence)}")
    print(
        f"tie region: {ties.size} of {means.size} settings can't be told apart from the best (each alone, uncorrected)"
    )
    side = "above" if said.signals.diff > 0 else "below"
    tie = (
        "can't be told apart from the best"
        if cur["tied_with_best"]
        else f"outside the tie region: {side} the best by its own bootstrap interval, uncorrected"
    )
    between = "" if said.on_grid else "; between grid points"
    print(f"current: {_setting(cur['setting'])}  {sw.metric} = {cur['mean']:.4f} ({tie}{between})")
    print(
        f"current - best: {said.signals.diff:+.4f}; paired permutation p = {vs.p:.4g} alone, Holm-adjusted p = "
        f"{vs.p_holm:.4g} over {vs.family_text}"
    )
    print(
        f"{cv.folds}-fold cross-validation (seed {cv.seed}): in-sample best {cv.in_sample:.4f}, "
        f"cross-validated {cv.cross_validated:.4f} (over-fitting {cv.optimism:+.4f})"
    )
    for f, c in enumerate(cv.chosen):
        print(
            f"  fold {f + 1} ({plural(cv.fold_sizes[f], 'question')}): chose {_setting(sw.setting(c))}, "
            f"{cv.train_means[f]:.4f} on the other folds, {cv.test_means[f]:.4f} held out"
        )
    print(f"\n{VERDICT}{_t(said.plain)}")  # tuning.verdict's words, the Tuning page's too (without its bold)
    return 0


ARGUMENTS = {  # each command's arguments, for retrieval/cli/__init__.py's parser
    "evaluate": _evaluate_arguments,
    "compare": _compare_arguments,
    "tune": _tune_arguments,
}
