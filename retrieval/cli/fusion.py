"""`fusion`: what each fusion gains over its members on one metric (analyses/fusion_gains.py; the Tour's step 6)
and, for two members, where they part (step 4), as text or JSON. Runs the engine, through `evaluate`'s flags."""

from __future__ import annotations

import argparse

from ..analyses import fusion_gains, noise
from ..core.params import SPECS
from ..evaluation import metrics
from ..retrievers.systems import FUSIONS
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


def _fusion_arguments(f: argparse.ArgumentParser) -> None:
    """`fusion`'s arguments."""
    _data_flag(f)
    f.add_argument("--metric", default="ndcg@5", help="the metric (default ndcg@5); valid: " + metrics.VALID_FORMS)
    k = SPECS["k"]
    f.add_argument(
        "--k",
        type=_checked(k),
        default=k.cast(k.default),
        metavar="K",
        help="the cutoff at which two members' failures are compared: which questions each finds alone in its "
        f"top K (default {k.cast(k.default)})",
    )
    _param_flags(f, PARAM_FLAGS)
    _fusion_flags(f)
    f.add_argument("--json", action="store_true", help="print the findings as JSON")
    f.set_defaults(func=cmd_fusion)


@_kernels_started
def cmd_fusion(args: argparse.Namespace) -> int:
    """The `fusion` subcommand: each fusion against its members, then where the two members part."""
    metric = metrics.parse(args.metric).name
    params = _fused_params(args)
    ds, ev, _runs = _evaluated(args, params, [metric])
    qids = [ds.query_ids[q] for q in ds.evaluated]
    members = [m for m in params.members if m in ev.values]
    fusions = [f for f in FUSIONS if f in ev.values] if members else []
    found = [fusion_gains.explain_fusion(ev, f, metric, metric, members, qids) for f in fusions]
    parted = (
        fusion_gains.split(*members, ev.first_rank[members[0]], ev.first_rank[members[1]], qids, args.k)
        if len(members) == 2
        else None
    )
    versus = noise.best_against_best(ev, fusions, members, metric, metric)[0] if found else None
    if args.json:
        print_json(
            {
                "dataset": {"name": ds.name, "documents": ds.n_docs, "queries": ds.n_queries},
                "params": params.to_json(),
                "metric": metric,
                "members": members,
                "fusions": [x.to_json() for x in found],
                "noise": None
                if versus is None
                else {
                    "fusion": versus.fusion,
                    "member": versus.member,
                    "mean_difference": versus.interval.mean,
                    "ci_low": versus.interval.low,
                    "ci_high": versus.interval.high,
                    "beyond_noise": versus.beyond_noise,
                    "sentence": versus.sentence,
                },
                "split": None
                if parted is None
                else {
                    "a": parted.a,
                    "b": parted.b,
                    "k": parted.k,
                    "only_a": list(parted.only_a),
                    "only_b": list(parted.only_b),
                    "neither": list(parted.neither),
                    "parts_at": parted.parts_at,
                    "k_max": parted.k_max,
                    "sentence": parted.sentence,
                },
            }
        )
        return 0
    print(_dataset_line(ds))
    print(f"members: {', '.join(_t(m) for m in members)}; {metric} over the questions with a relevant document")
    for x in found:
        print(f"\n{_t(x.standing.fusion)}: {_t(x.sentence)}")
    if versus is not None:
        iv = versus.interval
        print(
            f"\nthe better fusion against the better member, {_t(versus.fusion)} - {_t(versus.member)}: "
            f"{iv.mean:+.3f}, 95% bootstrap interval [{iv.low:+.3f}, {iv.high:+.3f}]. {_t(versus.sentence)}"
        )
    if parted is not None:
        print(f"\nwhere {_t(parted.a)} and {_t(parted.b)} fail: {_t(parted.sentence)}")
    return 0


ARGUMENTS = {  # each command's arguments, for retrieval/cli/__init__.py's parser
    "fusion": _fusion_arguments,
}
