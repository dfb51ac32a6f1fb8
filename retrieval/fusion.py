"""Two ways of fusing BM25 and LSA: weighted min-max score fusion and Reciprocal Rank Fusion."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import scipy.sparse as sp

from .dataset import Dataset
from .errors import InputError
from .ranking import Ranking, from_lists, rank_rows

ALPHA_DEFAULT = 0.5
RRF_K_DEFAULT = 60.0
DEPTH_DEFAULT = 10


def minmax(x: np.ndarray) -> np.ndarray:
    """Each row scaled to [0, 1] by its own min and max; a constant row becomes zeros."""
    lo = x.min(axis=-1, keepdims=True)
    hi = x.max(axis=-1, keepdims=True)
    span = hi - lo
    return np.where(span > 0, (x - lo) / np.where(span > 0, span, 1.0), 0.0)


def check_alpha(alpha: float) -> None:
    """Reject an alpha outside [0, 1], naming the parameter."""
    if not np.isfinite(alpha) or not 0 <= alpha <= 1:
        raise InputError(f"alpha must be in [0, 1], got {alpha}")


def check_rrf_k(k: float) -> None:
    """Reject a negative or non-finite RRF constant, naming the parameter."""
    if not np.isfinite(k) or k < 0:
        raise InputError(f"rrf_k must be a number >= 0, got {k}")


def weighted_chunks(
    bm25_scores: sp.csr_matrix, lsa_chunks: Iterator[tuple[int, np.ndarray]], alpha: float
) -> Iterator[tuple[int, np.ndarray]]:
    """alpha * minmax(BM25) + (1 - alpha) * minmax(LSA) over every document, in blocks; -inf where neither retriever scores."""
    check_alpha(alpha)
    for start, lsa in lsa_chunks:
        bm = bm25_scores[start : start + lsa.shape[0]].toarray()
        if lsa.shape[1] == 0:
            lsa = np.zeros_like(bm)
        fused = alpha * minmax(bm) + (1.0 - alpha) * minmax(lsa)
        silent = (bm.max(axis=1) == 0) & (lsa.max(axis=1) <= 0)
        fused[silent] = -np.inf
        yield start, fused


def weighted(
    dataset: Dataset,
    bm25_scores: sp.csr_matrix,
    lsa_chunks: Iterator[tuple[int, np.ndarray]],
    alpha: float = ALPHA_DEFAULT,
    depth: int = DEPTH_DEFAULT,
    name: str = "weighted",
) -> Ranking:
    """Weighted score fusion: every document competes (threshold -1), the top `depth` are kept; nothing when neither scores."""
    return rank_rows(name, dataset, weighted_chunks(bm25_scores, lsa_chunks, alpha), depth, threshold=-1.0, truncate=True)


def rrf_points(rank: np.ndarray, k: float) -> np.ndarray:
    """Reciprocal Rank Fusion points of a position: 1 / (k + rank)."""
    return 1.0 / (k + rank)


def rrf(
    dataset: Dataset, rankings: list[Ranking], k: float = RRF_K_DEFAULT, depth: int = DEPTH_DEFAULT, name: str = "RRF"
) -> Ranking:
    """Reciprocal Rank Fusion of the top `depth` of each ranking: sum of 1 / (k + rank), ties by document id."""
    check_rrf_k(k)
    n_docs, nq = dataset.n_docs, dataset.n_queries
    qs, ds, pts = [], [], []
    for r in rankings:
        starts = r.indptr[:-1]
        lens = np.minimum(np.diff(r.indptr), depth)
        q = np.repeat(np.arange(nq), lens)
        pos = np.arange(lens.sum()) - np.repeat(np.cumsum(lens) - lens, lens)  # 0-based position in its list
        idx = np.repeat(starts, lens) + pos
        qs.append(q)
        ds.append(r.docs[idx])
        pts.append(rrf_points(pos + 1.0, k))
    q, d, p = np.concatenate(qs), np.concatenate(ds), np.concatenate(pts)
    keys, inverse = np.unique(q * n_docs + d, return_inverse=True)
    total = np.bincount(inverse, weights=p)  # summed in list order: BM25's points first, as the article adds them
    kq, kd = keys // n_docs, keys % n_docs
    order = np.lexsort((dataset.tie_key[kd], -total, kq))
    kq, kd, total = kq[order], kd[order], total[order]
    bounds = np.searchsorted(kq, np.arange(nq + 1))
    docs = [kd[bounds[i] : bounds[i + 1]] for i in range(nq)]
    scores = [total[bounds[i] : bounds[i + 1]] for i in range(nq)]
    return from_lists(name, dataset, docs, scores)
