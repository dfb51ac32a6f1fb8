"""Benchmark of the tuning grids: BM25 over the 16 x 11 k1 x b grid, then the joint sweeps of a fusion with LSA's
d (alpha x d, RRF k x d, k1 x d), on the invented corpus and on a corpus path.

For each corpus: the time of the whole k1 x b grid (per-question nDCG@5 at all 176 settings, from a prepared
index, as the app's tuning page computes it; best of --repeat runs, wall clock and CPU), then the best in-sample
nDCG@5 over the grid beside its 5-fold cross-validated estimate (seed 0). With --joint, each joint sweep once
from a fresh engine (its LSA fits included: what the page's first visit costs), and the permutation test against
the best with the sign vectors the page draws for that many settings.

    .venv/bin/python bench/tuning.py /work/shared/datasets/cranfield --joint
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from retrieval.analyses import tuning  # noqa: E402
from retrieval.corpus import dataset
from retrieval.engine.engine import Engine  # noqa: E402

TARGET_S = 2.0


def bench(name: str, repeat: int, metric: str, folds: int, seed: int) -> dict:
    """Time the k1 x b grid on one corpus and cross-validate the best setting."""
    ds = dataset.load(name)
    t0 = time.perf_counter()
    prep = Engine(ds)
    t_prep = time.perf_counter() - t0
    tuning.sweep_bm25(ds, metric, engine=prep)  # warm-up (first-call costs)
    walls, cpus = [], []
    sweep = None
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        sweep = tuning.sweep_bm25(ds, metric, engine=prep)
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    cv = tuning.cross_validate(sweep.values, folds, seed)
    ties = tuning.tie_region(sweep.values, cv.in_sample_best)
    return {
        "name": ds.name,
        "docs": ds.n_docs,
        "questions": int(ds.evaluated.size),
        "settings": sweep.values.shape[0],
        "prepare": t_prep,
        "wall": min(walls),
        "wall_median": sorted(walls)[len(walls) // 2],
        "cpu": min(cpus),
        "best": sweep.setting(cv.in_sample_best),
        "in_sample": cv.in_sample,
        "cv": cv.cross_validated,
        "ties": ties.size,
        "notes": sweep.notes,
    }


def bench_joint(name: str, metric: str) -> list[dict]:
    """Each joint sweep once from a fresh engine (LSA fits included), then its permutation test against the best."""
    ds = dataset.load(name)
    out = []
    for key in tuning.JOINT:
        engine = Engine(ds)
        w0, c0 = time.perf_counter(), time.process_time()
        sw = tuning.sweep_joint(ds, key, metric, engine=engine)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        best = tuning.best_setting(sw.values)
        resamples = tuning.sign_vectors_for(sw.means.size)
        w1 = time.perf_counter()
        tuning.versus_best(sw.values, best, resamples)
        perm = time.perf_counter() - w1
        out.append(
            {
                "key": key,
                "shape": sw.shape,
                "settings": sw.means.size,
                "wall": wall,
                "cpu": cpu,
                "perm": perm,
                "resamples": resamples,
                "best": sw.setting(best),
                "mean": float(sw.means[best]),
            }
        )
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark on the invented corpus and on each path given."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("paths", nargs="*", help="BEIR folders or .zip files (e.g. ../shared/datasets/cranfield)")
    p.add_argument("--repeat", type=int, default=5, help="timed runs per corpus; the best is reported (default 5)")
    p.add_argument("--metric", default="ndcg@5")
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--joint", action="store_true", help="also time the joint sweeps with LSA's d, once each")
    args = p.parse_args(argv)
    print(
        f"{args.metric} over k1 x b = {len(tuning.K1_GRID)} x {len(tuning.B_GRID)}; "
        f"{args.folds}-fold cross-validation, seed {args.seed}; best of {args.repeat} timed runs"
    )
    ok = True
    for name in ["invented", *args.paths]:
        r = bench(name, args.repeat, args.metric, args.folds, args.seed)
        best = " ".join(f"{k}={v:g}" for k, v in r["best"].items())
        print(f"\n{r['name']}: {r['docs']} documents, {r['questions']} questions, {r['settings']} settings")
        print(f"  prepare (tokenise once)       {r['prepare'] * 1000:8.1f} ms")
        print(
            f"  grid, wall (best / median)    {r['wall'] * 1000:8.1f} ms / {r['wall_median'] * 1000:.1f} ms"
            f"   ({r['wall'] / r['settings'] * 1000:.2f} ms per setting)"
        )
        print(f"  grid, CPU                     {r['cpu'] * 1000:8.1f} ms")
        print(f"  best in-sample {args.metric}       {r['in_sample']:.6f}  at {best}")
        print(f"  {args.folds}-fold cross-validated      {r['cv']:.6f}  (over-fitting {r['in_sample'] - r['cv']:+.6f})")
        print(
            f"  tie region                    {r['ties']} of {r['settings']} settings can't be told apart from the best"
        )
        for n in r["notes"]:
            print(f"  note: {n}")
        if name != "invented" and r["wall"] > TARGET_S:
            ok = False
            print(f"  over the {TARGET_S:g} s target")
        if args.joint:
            for j in bench_joint(name, args.metric):
                best = " ".join(f"{k}={v:g}" for k, v in j["best"].items())
                print(
                    f"  joint {j['key']:<11} {' x '.join(map(str, j['shape']))} = {j['settings']} settings: sweep "
                    f"{j['wall']:.1f} s wall ({j['cpu']:.1f} s CPU), permutation test {j['perm']:.1f} s "
                    f"({j['resamples']:,} sign vectors); best {j['mean']:.6f} at {best}"
                )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
