"""`holes`: the judging pool, the documents some system ranks in a question's top k that the dataset's judgements
do not grade (analyses/holes.py; the Judge page grades them), as text or JSON. Runs the engine for the rankings,
through `evaluate`'s flags (the systems, their parameters, --run and --embeddings)."""

from __future__ import annotations

import argparse

from ..analyses import holes
from ..core.errors import InputError
from ..core.params import SPECS
from ..core.words import plural
from .common import _t, print_json
from .evaluate import (
    PARAM_FLAGS,
    _checked,
    _data_flag,
    _dataset_line,
    _evaluated,
    _fused_params,
    _fusion_flags,
    _kernels_started,
    _param_flags,
)


def _holes_arguments(h: argparse.ArgumentParser) -> None:
    """`holes`' arguments."""
    _data_flag(h)
    k = SPECS["k"]
    h.add_argument(
        "--k",
        type=_checked(k),
        default=k.cast(k.default),
        metavar="K",
        help=f"the cutoff: a hole is an unjudged document in some system's top K (default {k.cast(k.default)})",
    )
    h.add_argument(
        "--questions",
        type=int,
        default=None,
        metavar="N",
        help="list only the N questions with the most holes (default: every question with one)",
    )
    _param_flags(h, PARAM_FLAGS)
    _fusion_flags(h)
    h.add_argument("--json", action="store_true", help="print the pool as JSON")
    h.set_defaults(func=cmd_holes)


@_kernels_started
def cmd_holes(args: argparse.Namespace) -> int:
    """The `holes` subcommand: the pool's size, each system's share with its judged@k, then question by question."""
    if args.questions is not None and args.questions < 0:
        raise InputError(f"--questions must be >= 0, got {args.questions}")
    judged = f"judged@{args.k}"
    ds, ev, _runs = _evaluated(args, _fused_params(args), [judged])
    pool = holes.judging_pool(ds, ev.rankings, args.k)
    means = {s: ev.mean(s, judged) for s in ev.systems}
    if args.json:
        report = holes.to_json(pool, ds, means)
        if args.questions is not None:
            report["holes"] = report["holes"][: args.questions]
        print_json(report)
        return 0
    print(_dataset_line(ds))
    print(_t(pool.sentence))
    if not pool.pairs:
        return 0
    print(_t(holes.most_unjudged_sentence(pool.per_system())))
    width = max(6, *(len(_t(s)) for s in ev.systems))
    print(f"\n{'system':{width}s} {'unjudged in the top ' + str(args.k):>24s} {judged:>10s}")
    for s in pool.per_system():
        print(f"{_t(s.system):{width}s} {s.unjudged:24,d} {means[s.system]:10.3f}")
    print("(summed over every question: a document ranked by two systems counts once for each)")
    order = pool.question_order()
    shown = order if args.questions is None else order[: args.questions]
    print(
        f"\nquestion by question, the most unjudged first ({plural(len(shown), 'question')} of {len(order):,}); "
        "each document with the systems that rank it and where:"
    )
    for line in holes.questions_text(pool, ds, args.questions):
        print(f"  {_t(line)}")
    return 0


ARGUMENTS = {  # each command's arguments, for retrieval/cli/__init__.py's parser
    "holes": _holes_arguments,
}
