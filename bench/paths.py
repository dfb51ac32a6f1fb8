"""Every path of the compiled passes that can be chosen by name, timed beside the plainest compiled path.

    .venv/bin/python bench/speed.py --paths [--sizes 100000,1000000] [--cranfield PATH] [--ticks 5]

Each dataset is measured in a process of its own (Cranfield when its folder is given or found, then each
synthetic size: bench/synthetic.py, 1,000 questions), with the compiled kernels loaded first:

* **BM25** (`bm25.run(..., path=...)`): a k1 tick as the app makes it, every question at a new k1 with the run at
  k1 = 1.2 as its hint (depth 100, the run's own keep m), for each path: `full` (no hint: the cut from a sample
  of the scores, the plainest), `hinted` (the full pass, the hint's best as the cut), `grouped` (the grouped pass
  for every question it can take, the others by the hinted full pass) and `auto` (the app's choice).
* **LSA** (`lsa.run(..., path=...)`): the exact pass over every document at d = 6 and d = 48, for each path:
  `rows` (one question's row of cosines at a time, then selected: the plainest), `stream` (16 questions streamed
  over each block of document vectors) and `auto`.

Reported: the median of `--ticks` calls (after one call outside the timing) and its ratio to the plainest path
of the same system, dataset and d. A path is kept only where it is at least 1.3x faster than the best other path
somewhere in this table (docs/performance.md lists the decisions).
"""

from __future__ import annotations

import statistics
import time

BM25_PATHS = ("full", "hinted", "grouped", "auto")
LSA_PATHS = ("rows", "stream", "auto")
LSA_DIMS = (6, 48)


def _median_time(fn, ticks: int) -> float:
    fn()  # compiled or loaded, and every cache warm, outside the timing
    times = []
    for _ in range(ticks):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(statistics.median(times))


def child(ds, ticks: int) -> dict:
    """The paths' medians on one dataset (seconds), keyed 'bm25 PATH' and 'lsa d=D PATH'."""
    from retrieval import kernels
    from retrieval.engine.engine import Engine
    from retrieval.retrievers import bm25, lsa

    kernels.mark_ready()
    e = Engine(ds)
    judged = e.judged_positions()
    hint = bm25.run(e.bm25, e.plan, ds, 1.2, 0.75, 100, judged_at=judged)
    out: dict = {"docs": ds.n_docs, "questions": ds.n_queries, "keep": int(hint.top_d.shape[1])}
    for path in BM25_PATHS:
        k1 = iter(1.25 + 0.01 * i for i in range(10_000))
        out[f"bm25 {path}"] = _median_time(
            lambda: bm25.run(e.bm25, e.plan, ds, next(k1), 0.75, 100, hint=hint, judged_at=judged, path=path), ticks
        )
    for d in LSA_DIMS:
        if d > e.max_dims():
            continue
        fit = e.lsa_fit(d)
        for path in LSA_PATHS:
            out[f"lsa d={d} {path}"] = _median_time(lambda: lsa.run(ds, fit.model, fit.qvec, 100, path=path), ticks)
    return out


def table(results: list[tuple[str, dict]]) -> str:
    """The children's results as one Markdown table, each path beside its system's plainest and beside the best
    other path of the same system, dataset and d ("auto", the choice among them, is no path of its own)."""
    lines = [
        "| dataset | system | path | median | vs the plainest | vs the best other path |",
        "|---|---|---|---|---|---|",
    ]
    for label, res in results:
        if "error" in res:
            lines.append(f"| {label} | | | {res['error']} | | |")
            continue
        for key in [k for k in res if k.startswith(("bm25 ", "lsa "))]:
            system, path = key.rsplit(" ", 1)
            plain = res[f"{system} {'full' if system == 'bm25' else 'rows'}"]
            others = {
                k.rsplit(" ", 1)[1]: v
                for k, v in res.items()
                if k.rsplit(" ", 1)[0] == system and k != key and not k.endswith(" auto")
            }
            best = min(others, key=others.get) if others and path != "auto" else None
            vs_best = f"{others[best] / res[key]:.2f}x ({best})" if best else ""
            lines.append(
                f"| {label} | {system.upper() if system == 'bm25' else system.replace('lsa', 'LSA')} | "
                f"{path} | {res[key] * 1e3:.1f} ms | {plain / res[key]:.2f}x | {vs_best} |"
            )
    return "\n".join(lines)
