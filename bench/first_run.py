"""A newcomer's first `python -m retrieval evaluate` on a real collection, from a clean numba cache, against the same
command warm (every kernel compiled and on disk), each a whole process as a user runs it.

    .venv/bin/python bench/first_run.py                                  # Cranfield at ../shared/datasets/cranfield
    .venv/bin/python bench/first_run.py --data PATH --runs 5             # a BEIR folder or zip
    .venv/bin/python bench/first_run.py --variants first,warm            # leave out the slow compile-first variant
    .venv/bin/python bench/first_run.py --warm-cache DIR                 # a cache `warmup` filled already

The variants, run in turns (one of each, then again) so that a machine's drift touches each alike:

* first: a fresh numba cache (a new empty NUMBA_CACHE_DIR, as after a clone or `pip install .`), the command as it
  ships: the kernels numba has not cached run from their numpy or plain-Python twins (`kernels.serve_uncompiled`);
* compile-first: the same fresh cache, the twins switched off: numba compiles what the run calls (the command
  before the twins, ~16 x its warm time on Cranfield);
* warm: the cache filled once by `python -m retrieval warmup` (timed too), then the command.

Each row gives the wall-clock and the processor seconds (the child's user + system) as min / median / max, and the
ratio of the medians to warm's; the last column counts the kernels the run compiled (its stderr's notices).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CRANFIELD = ROOT.parent / "shared" / "datasets" / "cranfield"
VARIANTS = ("first", "compile-first", "warm")
# the command line with the twins switched off: what a first run did before them
COMPILE_FIRST = (
    "import sys, retrieval.kernels as k; k.serve_uncompiled = lambda on=True: None; "
    "from retrieval.cli import main; sys.exit(main(sys.argv[1:]))"
)


def timed(cmd: list[str], env: dict) -> tuple[float, float, str]:
    """Run cmd; its wall-clock seconds, processor seconds (user + system) and stderr."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    done = subprocess.run(
        cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False
    )
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stderr


def spread(xs: list[float]) -> str:
    return f"{min(xs):.2f} / {statistics.median(xs):.2f} / {max(xs):.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(CRANFIELD), help="a BEIR folder or zip (default: Cranfield beside the repo)")
    ap.add_argument("--runs", type=int, default=3, help="runs of each variant (default 3)")
    ap.add_argument("--variants", default=",".join(VARIANTS), help=f"some of {', '.join(VARIANTS)}")
    ap.add_argument("--warm-cache", metavar="DIR", help="a numba cache `warmup` filled already (kept; not timed)")
    args = ap.parse_args()
    variants = [v for v in args.variants.split(",") if v]
    if not set(variants) <= set(VARIANTS) or not variants:
        sys.exit(f"--variants: some of {', '.join(VARIANTS)}")
    if not Path(args.data).exists():
        sys.exit(f"{args.data}: no such dataset (give --data)")
    command = ["-m", "retrieval", "evaluate", "--data", args.data]
    base = {**os.environ, "PYTHONPATH": str(ROOT)}
    warm_dir = args.warm_cache or tempfile.mkdtemp(prefix="numba-warm-")
    results: dict[str, list[tuple[float, float, int]]] = {v: [] for v in variants}
    warmup = None
    try:
        if "warm" in variants and not args.warm_cache:
            w, c, _ = timed(
                [sys.executable, "-m", "retrieval", "warmup", "--quiet"], {**base, "NUMBA_CACHE_DIR": warm_dir}
            )
            warmup = (w, c)
        for _ in range(args.runs):
            for v in variants:
                cold = tempfile.mkdtemp(prefix="numba-cold-") if v != "warm" else None
                env = {**base, "NUMBA_CACHE_DIR": cold or warm_dir}
                cmd = (
                    [sys.executable, "-c", COMPILE_FIRST, *command[2:]]
                    if v == "compile-first"
                    else [sys.executable, *command]
                )
                try:
                    wall, cpu, err = timed(cmd, env)
                finally:
                    if cold:
                        shutil.rmtree(cold, ignore_errors=True)
                results[v].append((wall, cpu, err.count(" compiled in ")))
    finally:
        if not args.warm_cache:
            shutil.rmtree(warm_dir, ignore_errors=True)
    load = os.getloadavg()
    print(
        f"dataset {args.data}; {args.runs} runs of each; {os.cpu_count()} cores; Python "
        f"{sys.version.split()[0]}; load average at the end {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}"
    )
    if warmup:
        print(f"`python -m retrieval warmup` into an empty cache: {warmup[0]:.2f} s wall, {warmup[1]:.2f} s processor")
    print()
    print(
        "| variant | wall s (min / median / max) | processor s (min / median / max) | x warm (wall, median) | kernels compiled |"
    )
    print("|---|---|---|---|---|")
    warm_median = statistics.median(r[0] for r in results["warm"]) if "warm" in results else None
    for v in variants:
        walls, cpus = [r[0] for r in results[v]], [r[1] for r in results[v]]
        ratio = f"{statistics.median(walls) / warm_median:.2f}" if warm_median else "-"
        print(f"| {v} | {spread(walls)} | {spread(cpus)} | {ratio} | {max(r[2] for r in results[v])} |")


if __name__ == "__main__":
    main()
