"""bench/speed.py's sweep row (issue 45, 4b): the k1 x b grid through `retrieval.analyses.tuning.sweep_bm25` (what
`tune --params k1,b` and the Tuning page run), ours and the code before (`--before-commit`), each in its own
process, alternated, beside bm25s's cost per setting (re-index at the setting, retrieve the top 100 of every
question) measured in the same run.

    .venv/bin/python bench/speed.py --sweep [--sizes 100000] [--cranfield PATH] [--pairs 3] [--sweep-grid thin]

Each process builds the engine and runs one 1 x 1 sweep first (numba's kernels loaded, not timed), resets its peak
resident set, then times the sweep: `sweep_s` (wall), `sweep_cpu_s` (processor, both threads) and `sweep_peak_gib`
(the peak resident set during the sweep, the engine included). The grid is the Tuning page's 16 x 11 ("full") or
every fifth k1 and every fifth b of it ("thin": 4 x 3 = 12 settings), for corpora where the code before needs
minutes a grid; costs are compared per setting. The ratio before / ours is taken pair by pair (the machine's speed
drifts between processes), its minimum, median and maximum printed.
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import sys
import time

GRIDS = {"full": (16, 11), "thin": (4, 3)}  # k1 values x b values, evenly spaced over the Tuning page's grid
METRIC = "ndcg@10"


def axes(grid: str):
    """The k1 and b values of a grid name: the Tuning page's grid (tuning.K1_GRID, B_GRID), thinned evenly."""
    import numpy as np

    n_k1, n_b = GRIDS[grid]
    k1s, bs = np.arange(16) * 3 / 15, np.arange(11) / 10
    return k1s[np.linspace(0, 15, n_k1).round().astype(int)], bs[np.linspace(0, 10, n_b).round().astype(int)]


def child(ds, grid: str, status, reset_peak) -> dict:
    """One process: the engine built, one setting swept untimed, then the whole grid timed (wall, processor, peak)."""
    from retrieval.analyses import tuning
    from retrieval.engine.engine import Engine

    k1s, bs = axes(grid)
    engine = Engine(ds)
    tuning.sweep_bm25(ds, METRIC, k1s[:1], bs[:1], engine=engine)  # kernels loaded, layouts found
    gc.collect()
    peak_ok = reset_peak()
    t, c = time.perf_counter(), time.process_time()
    sw = tuning.sweep_bm25(ds, METRIC, k1s, bs, engine=engine)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    return {
        "settings": int(k1s.size * bs.size),
        "sweep_s": wall,
        "sweep_cpu_s": cpu,
        "sweep_peak_gib": status("VmHWM") / 2**30 if peak_ok else float("nan"),
        "best_mean": round(float(sw.means.max()), 6),
        "package": os.path.dirname(tuning.__file__),
    }


def _median(xs):
    return float(statistics.median(xs)) if xs else float("nan")


def _spread(ratios) -> str:
    """Ratios as 'min / median / max'."""
    return " / ".join(f"{x:.1f}x" for x in (min(ratios), _median(ratios), max(ratios))) if ratios else "-"


def run(args, targets, run_child, before_tree, fmt_s) -> str:
    """Ours and before alternated `args.pairs` times per target (at least 1), bm25s once per target; the table."""
    pairs = max(1, args.pairs)
    lines = [
        f"k1 x b sweep (tuning.sweep_bm25, {METRIC}), each code in its own process, {pairs} alternated pair(s) per "
        f"dataset; before = {args.before_commit}; load average at the start {os.getloadavg()[0]:.1f}",
        "",
        "| dataset | grid | ours: grid / per setting | before: grid / per setting | before / ours, pair by pair, wall "
        "(min / median / max) | ... processor | peak memory ours / before | bm25s per setting | bm25s / ours per "
        "setting |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for label, target in targets:
        grid = args.sweep_grid or ("full" if not target.isdigit() or int(target) < 50_000 else "thin")
        got: dict[str, list[dict]] = {"ours": [], "before": []}
        for i in range(pairs):
            for kind in ("ours", "before") if i % 2 == 0 else ("before", "ours"):
                env = {"BENCH_SWEEP_GRID": grid}
                if kind == "before":
                    env["BENCH_PACKAGE"] = str(before_tree)
                res = run_child("sweep", target, args, env)
                print(f"[sweep {label}] {kind}: {json.dumps(res)[:300]}", file=sys.stderr, flush=True)
                got[kind].append(res)
        bs = run_child("bm25s", target, args, {}) if not args.no_peers else {}
        print(f"[sweep {label}] bm25s: {json.dumps(bs)[:300]}", file=sys.stderr, flush=True)
        ok = {k: [r for r in v if "sweep_s" in r] for k, v in got.items()}
        n = (ok["ours"] or ok["before"] or [{"settings": 0}])[0]["settings"]
        o = _median([r["sweep_s"] for r in ok["ours"]])
        b = _median([r["sweep_s"] for r in ok["before"]])
        rat, rat_cpu = (
            _spread([rb[f] / ro[f] for ro, rb in zip(ok["ours"], ok["before"])]) for f in ("sweep_s", "sweep_cpu_s")
        )
        peak = " / ".join(
            f"{_median([r['sweep_peak_gib'] for r in ok[k]]):.2f} GiB" if ok[k] else "-" for k in ("ours", "before")
        )
        per_o, per_b = (o / n if n else float("nan")), (b / n if n else float("nan"))
        bs_t = bs.get("tick_s") if bs and "error" not in bs else None
        errors = [r["error"] for v in got.values() for r in v if "error" in r]
        lines.append(
            f"| {label} | {grid} ({n} settings) | {fmt_s(o)} / {fmt_s(per_o)} | {fmt_s(b)} / {fmt_s(per_b)} | {rat} | {rat_cpu} | "
            f"{peak} | {fmt_s(bs_t)} | {f'{bs_t / per_o:.0f}x' if bs_t and per_o == per_o else '-'} |"
            + (f" errors: {'; '.join(errors)[:200]}" if errors else "")
        )
    return "\n".join(lines)
