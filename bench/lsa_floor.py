"""The least an exact LSA d step must compute, measured beside the pass that does it (issue 15, fourteenth round).

A d step runs LSA's exact pass (`kernels.lsa_rank`) for every question: every cosine, the best m, the count above
the result threshold, the lowest and highest cosine, and each judged document's exact rank. However it is
organised, two parts cannot be skipped while ranks stay exact (`bench/lsa_bounds.py`: nearly every block of
documents straddles some judged document's cosine):

* **the cosines**: one per question and document, in the order the lab sums them (`kernels.dense_pass._cosine_block`,
  the pass's own arithmetic, 16 questions a block of vectors), here only counted above the threshold;
* **the judged counts**: for each judged document below the m-th best (found beforehand, outside the timing),
  the documents scoring above it and equal to it (`kernels.select._count_above`, the pass's own vectorised count),
  counted while each block of cosines is at hand.

Timed on one thread and on all (`kernels.parallel`, as the engine calls the pass), best of `--repeats`, beside
the exact pass itself and the peer, a plain numpy top-m (float64 BLAS product in blocks of 100 questions,
argpartition, no judged ranks, no tie order). Selection, sorting and the rest of the step (the fusions, the
metrics) come on top of the floor. Usage: `python bench/lsa_floor.py [--size 100000] [--dims 6] [--repeats 3]`.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

sys.path[:0] = [str(Path(__file__).resolve().parent.parent), str(Path(__file__).resolve().parent)]

from retrieval import kernels as K  # noqa: E402
from retrieval.core.workers import threads  # noqa: E402
from retrieval.engine.engine import Engine  # noqa: E402
from retrieval.kernels import dense_pass, select  # noqa: E402
from retrieval.retrievers import lsa  # noqa: E402
from retrieval.retrievers.ranking import THRESHOLD, PassOutputs, Selection, keep_for  # noqa: E402

GROUP, BLOCK = 16, 1024  # as the streamed pass reads the vectors: a block for 16 questions in turn


@njit(nogil=True)
def floor_pass(items, qvec, vt, thr, low_ptr, low_s, out):
    """Every cosine of the questions `items` (the pass's arithmetic), counted above thr, and, for each question,
    the documents above and equal to each of its values low_s[low_ptr[q]:low_ptr[q + 1]] (padded to fours with
    inf; none: the cosines alone), all added into out (so that nothing is skipped)."""
    n = vt.shape[1]
    blk = np.zeros((1, BLOCK))
    for start in range(0, items.size, GROUP):
        for b0 in range(0, n, BLOCK):
            nb = min(BLOCK, n - b0)
            for r in range(min(GROUP, items.size - start)):
                q = items[start + r]
                dense_pass._cosine_block(qvec, items, start + r, 1, vt, b0, b0 + nb, blk, 0)
                row = blk[0]
                c = 0
                for i in range(nb):
                    c += row[i] > thr
                for u in range(low_ptr[q], low_ptr[q + 1], 4):
                    ct = select._count_above(row, nb, low_s[u], low_s[u + 1], low_s[u + 2], low_s[u + 3])
                    for v in range(8):
                        c += ct[v]
                out[q] += c


def best_of(repeats: int, fn) -> float:
    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return min(ts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=100_000, help="synthetic documents (bench/synthetic.py)")
    ap.add_argument("--dims", type=int, default=6)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    import synthetic

    K.mark_ready()
    ds = synthetic.load(a.size)
    fit = Engine(ds).lsa_fit(a.dims)
    vt, qv = fit.model.vt, np.ascontiguousarray(fit.qvec, dtype=np.float64)
    nq, m = ds.n_queries, keep_for(ds.n_docs)
    sel = Selection(ds.tie_key, THRESHOLD, m)

    def exact() -> PassOutputs:
        o = PassOutputs.empty(ds, m)
        K.parallel(K.lsa_rank, nq, 10**9, qv, vt, sel, o, 0)
        return o

    o = exact()  # the judged documents below the m-th best, from the pass's own outputs (not timed)
    low: list[np.ndarray] = []
    for q in range(nq):
        docs = o.judged.doc[o.judged.ptr[q] : o.judged.ptr[q + 1]]
        s = lsa.cosines(qv[q : q + 1], vt[:, docs[docs >= 0]])[0]  # the pass's own bits
        s = s[(s > THRESHOLD) & (s < o.top_s[q, o.n_top[q] - 1])] if o.n_top[q] else s[:0]
        low.append(np.concatenate((s, np.full(-len(s) % 4, np.inf))))
    low_ptr = np.concatenate(([0], np.cumsum([len(x) for x in low]))).astype(np.int64)
    low_s = np.concatenate(low) if low else np.zeros(0)
    items = np.arange(nq, dtype=np.int64)
    sink = np.zeros(nq, dtype=np.int64)
    none = np.zeros(nq + 1, dtype=np.int64)  # no judged values: the cosines alone
    floor_pass(items[:2], qv, vt, THRESHOLD, none, low_s, sink)  # compiled outside the timing

    def one(kernel, *args):
        return lambda: kernel(items, *args)

    def both(kernel, *args):
        return lambda: K.parallel(kernel, nq, 10**9, *args)

    rows = [
        ("the cosines alone", floor_pass, (qv, vt, THRESHOLD, none, low_s, sink)),
        ("the cosines and the judged counts", floor_pass, (qv, vt, THRESHOLD, low_ptr, low_s, sink)),
    ]
    print(
        f"synthetic {ds.n_docs:,} documents x {nq:,} questions, d = {a.dims}, m = {m}; "
        f"{int((np.isfinite(low_s)).sum()) / nq:.1f} judged documents a question below the m-th best; "
        f"best of {a.repeats}, {threads()} threads"
    )
    print()
    print("| part | one thread | all threads |")
    print("|---|---|---|")
    for label, kernel, args in rows:
        print(
            f"| {label} | {best_of(a.repeats, one(kernel, *args)) * 1e3:.1f} ms | "
            f"{best_of(a.repeats, both(kernel, *args)) * 1e3:.1f} ms |"
        )
    lsa_one = best_of(a.repeats, lambda: K.lsa_rank(items, qv, vt, sel, PassOutputs.empty(ds, m), 0))
    print(f"| the exact pass (`lsa_rank`) | {lsa_one * 1e3:.1f} ms | {best_of(a.repeats, exact) * 1e3:.1f} ms |")
    docs = np.ascontiguousarray(vt.T)

    def numpy_topm() -> None:
        for start in range(0, nq, 100):
            sc = qv[start : start + 100] @ docs.T
            np.argpartition(-sc, m - 1, axis=1)[:, :m]

    print(
        f"| numpy float64 top-{m}, no judged ranks (the peer, BLAS threads) | | "
        f"{best_of(a.repeats, numpy_topm) * 1e3:.1f} ms |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
