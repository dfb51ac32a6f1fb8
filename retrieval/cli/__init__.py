"""The command line: ``python -m retrieval evaluate`` prints the article's tables or the JSON report;
``compare`` prints the table of every system on chosen metrics with the significant differences marked (text,
JSON, LaTeX or Markdown); ``tune`` maps a metric over a parameter grid with its tie region and cross-validated
estimate; ``gate`` fails (exit 1) when a system got worse beyond noise between two ``evaluate --json`` reports;
``holes`` lists the judging pool (unjudged documents in some system's top k); ``fusion`` says what each fusion gains
over its members;
``experiments`` and ``workspace`` read and write the app's workspace store; ``warmup`` compiles the kernels.

Bad input exits with status 2 and one line on stderr naming the file and line, or the parameter.

A command pays only for the modules it uses: each command's arguments and work live in one module of this package
(COMMANDS below), and `main` loads the module of the command argv names and no other, with
`importlib.import_module` here, the one place the project loads a module by name. `gate`, `experiments`,
`workspace` and `--help` thus never import the engine, numba or scikit-learn (tests/cli/test_cli_startup.py), and
`python -m retrieval` does not import the package's public API either (retrieval/__init__.py).
"""

from __future__ import annotations

import importlib
import sys

from ..core.errors import InputError
from .common import VERDICT, _Parser, _t, print_json

__all__ = ["COMMANDS", "VERDICT", "build_parser", "main", "print_json"]

COMMANDS = {  # command: (its module in this package, its line in --help, its own --help's description)
    "evaluate": ("evaluate", "evaluate BM25, LSA, the two fusions and any run files", None),
    "compare": (
        "evaluate",
        "the table of every system on chosen metrics, the significant differences marked",
        (
            "The table the IR field publishes: every system's mean on each metric (the systems `evaluate` "
            "measures: BM25, LSA, dense with --embeddings, the two fusions, each --run), the best of each "
            "column marked, and on each value the letters of the systems it beats significantly: a higher "
            "mean and a p-value below --alpha after Holm's correction over all pairs of systems (each "
            "metric separately). Tests are paired and two-sided over the questions with a relevant "
            "document. Here --alpha is the significance level; the weighted fusion's alpha is "
            "--fusion-alpha."
        ),
    ),
    "tune": (
        "evaluate",
        "a metric over a parameter grid: best setting, tie region, cross-validated estimate",
        (
            "Evaluate one metric at every setting of a grid (k1,b: BM25 over k1 0..3 x b 0..1; dims: LSA over "
            "1..200 dimensions; rrf_k: RRF over 1..200; alpha: the weighted fusion over 0..1), then print the best "
            "setting, the settings that can't be told apart from it (paired bootstrap against the best), and "
            "the best in-sample mean beside its k-fold cross-validated estimate (questions split by a seeded "
            "permutation; each fold measured with the setting chosen on the others)."
        ),
    ),
    "holes": (
        "holes",
        "the judging pool: unjudged documents in some system's top k, question by question",
        (
            "The holes in the dataset's judgements: every document of the corpus that some system (the systems "
            "`evaluate` measures) ranks in a question's top --k and that no judgement of the question grades, "
            "the questions with the most first, each document with the systems that rank it and where; and per "
            "system, how many of its top k are unjudged and its judged@k. An unjudged document counts as not "
            "relevant, so these are the documents to grade (the app's Judge page) before trusting the means."
        ),
    ),
    "fusion": (
        "fusion",
        "what each fusion gains over its members, question by question, and where two members part",
        (
            "Each fusion (weighted, RRF) against its --fuse members on --metric: where its mean stands against "
            "theirs, on the questions where the members' first relevant ranks differ how often it takes the "
            "better one's, beats both or falls behind, and the questions it scores above every member on (those "
            "won by later relevant documents named); for two members, which questions each finds alone in its "
            "top --k, which neither, and the smallest cutoff at which they part."
        ),
    ),
    "gate": (
        "gate",
        "exit 1 when a system got worse beyond noise between two `evaluate --json` reports",
        (
            "Compare one system question by question across two `evaluate --json` reports of the same dataset "
            "(same name and question ids). Exit status 1 when the paired bootstrap interval of current - "
            "baseline lies entirely below zero (the questions that got worse are named), 0 otherwise, "
            "2 on bad input."
        ),
    ),
    "experiments": (
        "experiments",
        "the workspace's saved experiments: list them, show one, compare two",
        (
            "The experiments saved on the app's Experiments page, read from the workspace store "
            "($RETRIEVAL_LAB_DATABASE_URL, else SQLite under $RETRIEVAL_LAB_HOME, or --store)."
        ),
    ),
    "workspace": (
        "workspace",
        "the whole workspace as one zip: export it, or import one into an empty store",
        (
            "Every dataset (as a BEIR folder and as uploaded), run, embeddings file, grade "
            "(qrels per rater and combined by each rule) and saved experiment, in one zip; "
            "an import reads one back into an empty store, every dataset checked against "
            "its id and every record against what the export writes: all of it, or nothing."
        ),
    ),
    "warmup": (
        "warmup",
        "compile the kernels once (numba's cache on disk), so that no first run or first visit waits",
        (
            "Compile every compiled kernel with the types the app and the command line use, or load it from "
            "numba's cache (beside the package, or $NUMBA_CACHE_DIR). Run it once after installing: the first "
            "evaluation of a corpus beyond the small ones then starts at once instead of after ~25 s."
        ),
    ),
}


JUDGED = {"evaluate": "judged", "compare": "judged_compare"}  # with --qrels: run files on judgements alone


def _module(command: str, argv: list[str] = ()):
    """The module of a command (its ARGUMENTS and its work), loaded now: `evaluate` and `compare` with --qrels
    score run files on judgements alone, in a module that loads no engine (cli/judged.py)."""
    judged = command in JUDGED and any(a == "--qrels" or a.startswith("--qrels=") for a in argv)
    return importlib.import_module(f"{__name__}.{JUDGED[command] if judged else COMMANDS[command][0]}")


def build_parser(command: str | None = None, argv: list[str] = ()) -> _Parser:
    """The argument parser with its subcommands, each with its arguments (only `command`'s when it is named: the
    others are then listed by `--help` without loading their modules)."""
    p = _Parser(prog="python -m retrieval", description="Measure a RAG system's retriever on its own.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, (_, help_line, description) in COMMANDS.items():
        parser = sub.add_parser(name, help=help_line, description=description)
        if command is None or command == name:
            _module(name, argv).ARGUMENTS[name](parser)
    return p


def _command(argv: list[str]) -> str | None:
    """The command argv names: its first word that is not an option (the top level has only --help), if known."""
    word = next((a for a in argv if not a.startswith("-")), None)
    return word if word in COMMANDS else None


def main(argv: list[str] | None = None) -> int:
    """Entry point: exit status 0, or 2 with one line on stderr for bad input."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = build_parser(_command(argv) or "", argv).parse_args(argv)
        return args.func(args)
    except InputError as e:
        print(f"retrieval: error: {_t(e)}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
