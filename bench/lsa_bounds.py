"""How much of LSA's d step a block-bounded scan could skip (issue 15, thirteenth round).

A d step computes every question's cosine with every document (`_kernels.lsa_rank`). A scan could skip a block
of documents whose cosines provably cannot matter: put the unit document vectors in blocks of one direction
(k-means), keep each block's centre c and angular radius r; for a unit question q at angle t from c, every cosine
in the block lies in [cos(min(pi, t + r)), cos(max(0, t - r))]. A block must still be scored when that interval
holds a value the outputs depend on. This script counts, for sampled questions, the documents in such blocks:

* **exact ranks** (what the lab computes: `ranking`'s "a ranking keeps the judged documents' ranks exactly,
  however deep"): the best m (blocks reaching the m-th best cosine), the lowest and highest cosine, the count
  above the result threshold, and every judged document scoring between the threshold and the m-th best: its
  rank counts the documents above it, so every block straddling its cosine must be scored;
* **a run cut at depth m** (trec_eval's convention for a run of m documents: a judged document below it is not
  retrieved): the same without the judged documents.

Only the share of documents is measured, not a kernel's time; a real scan would also need a rounding margin on
each bound. Usage: `python bench/lsa_bounds.py [--size 100000] [--dims 6] [--blocks 400,2000] [--questions 200]`
(`--beir PATH` for a BEIR folder instead of the synthetic corpus).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.cluster import MiniBatchKMeans

sys.path[:0] = [str(Path(__file__).resolve().parent.parent), str(Path(__file__).resolve().parent)]

from retrieval.corpus import dataset as data  # noqa: E402
from retrieval.engine.engine import Engine  # noqa: E402
from retrieval.retrievers import lsa  # noqa: E402
from retrieval.retrievers.ranking import THRESHOLD  # noqa: E402


def blocks_of(vecs: np.ndarray, n_blocks: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each document's block (k-means on the unit vectors), each block's unit centre and angular radius."""
    km = MiniBatchKMeans(n_blocks, random_state=seed, n_init=1, batch_size=4096).fit(vecs)
    label = km.labels_
    centre = km.cluster_centers_ / np.maximum(np.linalg.norm(km.cluster_centers_, axis=1, keepdims=True), 1e-300)
    angle = np.arccos(np.clip(np.sum(vecs * centre[label], axis=1), -1.0, 1.0))
    radius = np.zeros(n_blocks)
    np.maximum.at(radius, label, angle)
    return label, centre, radius


def shares(cos: np.ndarray, lo: np.ndarray, hi: np.ndarray, size: np.ndarray, m: int, judged: np.ndarray) -> tuple:
    """The share of documents in blocks that must be scored for a run cut at depth m, and for exact ranks."""

    def straddles(s: float) -> np.ndarray:
        return (lo < s) & (hi > s)

    cut = np.partition(cos, cos.size - m)[cos.size - m] if m < cos.size else -np.inf
    need = (hi >= cut) | (lo <= cos.min()) | (hi >= cos.max()) | straddles(THRESHOLD)
    cut_only = size[need].sum() / cos.size
    for s in cos[judged]:
        if THRESHOLD < s < cut:
            need |= straddles(s)
    return cut_only, size[need].sum() / cos.size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=100_000, help="synthetic corpus size")
    ap.add_argument("--beir", default="", help="a BEIR folder instead of the synthetic corpus")
    ap.add_argument("--dims", type=int, default=6)
    ap.add_argument("--blocks", default="400,2000", help="block counts, comma-separated")
    ap.add_argument("--questions", type=int, default=200, help="questions sampled")
    args = ap.parse_args()
    if args.beir:
        ds = data.load(args.beir)
    else:
        import synthetic

        ds = synthetic.load(args.size)
    engine = Engine(ds)
    fit = engine.lsa_fit(args.dims)
    run = lsa.run(ds, fit.model, fit.qvec, 100)
    m = run.top_d.shape[1]
    vecs = fit.model.doc_vectors
    rng = np.random.default_rng(0)
    qs = rng.choice(ds.n_queries, min(args.questions, ds.n_queries), replace=False)
    qr = ds.qrels
    print(
        f"{ds.name}: {ds.n_docs:,} documents, d = {fit.model.dims}, best m = {m} kept, {qs.size} questions sampled,"
        f" {np.mean([np.sum((qr.query == q) & (qr.doc >= 0)) for q in qs]):.1f} judged documents a question"
    )
    for n_blocks in (int(x) for x in args.blocks.split(",")):
        t = time.perf_counter()
        label, centre, radius = blocks_of(vecs, n_blocks)
        size = np.bincount(label, minlength=n_blocks)
        cut_only, exact = [], []
        for q in qs:
            qv = fit.qvec[q]
            qn = np.linalg.norm(qv)
            if qn == 0:
                continue
            cos = vecs @ qv
            t_angle = np.arccos(np.clip(centre @ qv / qn, -1.0, 1.0))
            hi = qn * np.cos(np.maximum(0.0, t_angle - radius))
            lo = qn * np.cos(np.minimum(np.pi, t_angle + radius))
            judged = qr.doc[(qr.query == q) & (qr.doc >= 0)]
            a, b = shares(cos, lo, hi, size, m, judged)
            cut_only.append(a)
            exact.append(b)
        print(
            f"{n_blocks:5d} blocks of {ds.n_docs / n_blocks:,.0f} documents (median angular radius "
            f"{np.median(radius):.3f}): documents to score, median over questions: a run cut at depth {m} "
            f"{100 * np.median(cut_only):.1f}%, exact ranks {100 * np.median(exact):.1f}% "
            f"({time.perf_counter() - t:.1f} s)"
        )


if __name__ == "__main__":
    main()
