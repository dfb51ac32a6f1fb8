"""Two ways of fusing BM25 and LSA: weighted min-max score fusion and Reciprocal Rank Fusion."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import scipy.sparse as sp

from .dataset import Dataset
from .errors import InputError
from .ranking import Csr, Judged, PassOutputs, Ranking, Selection, from_csr, rank_rows

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


class CsrSide:
    """A retriever given as a sparse score matrix (absent = 0), in the shape `weighted_lists` reads."""

    def __init__(self, dataset: Dataset, scores: sp.csr_matrix, depth: int):
        from . import _kernels as k

        s = sp.csr_matrix(scores, dtype=np.float64)
        s.sort_indices()
        self.scores = s
        nq, n_docs = s.shape
        o = PassOutputs.empty(dataset, depth, Judged.none(nq))
        self.top_d, self.top_s, self.n_top = o.top_d, o.top_s, o.n_top
        k.rank_sparse(np.arange(nq, dtype=np.int64), Csr(s.indptr.astype(np.int64), s.indices.astype(np.int64), s.data), 0,
                      Selection(dataset.tie_key, -np.inf, depth), o)
        stored = np.diff(s.indptr)
        full = stored == n_docs
        rows = np.repeat(np.arange(nq), stored)
        hi = np.full(nq, -np.inf)
        lo = np.full(nq, np.inf)
        np.maximum.at(hi, rows, s.data)
        np.minimum.at(lo, rows, s.data)
        self.hi = np.where(full, hi, np.maximum(hi, 0.0))
        self.lo = np.where(full, lo, np.minimum(lo, 0.0))

    def at(self, qs: np.ndarray, ds: np.ndarray) -> np.ndarray:
        """Scores of (question, document) pairs."""
        if len(qs) == 0:
            return np.zeros(0)
        return np.asarray(self.scores[np.asarray(qs), np.asarray(ds)], dtype=np.float64).ravel()

    def row(self, q: int) -> np.ndarray:
        """One question's scores over every document."""
        return self.scores[q].toarray()[0]


def csr_side(dataset: Dataset, scores: sp.csr_matrix, depth: int) -> CsrSide:
    """A CsrSide, kept on the matrix itself (an alpha change then reuses its best lists)."""
    cache = scores.__dict__.setdefault("_retrieval_sides", {})
    key = (id(dataset), int(depth))
    hit = cache.get(key)
    if hit is not None and hit[0] is dataset:
        return hit[1]
    side = CsrSide(dataset, scores, depth)
    cache[key] = (dataset, side)
    return side


def cross_scores(bm, ls) -> tuple[np.ndarray, np.ndarray]:
    """Each retriever's scores for the other's best documents: (LSA at BM25's best, BM25 at LSA's best).

    A BM25 run that was given LSA's best lists as its `probe` already holds the second.
    """
    out = []
    for side, other in ((bm, ls), (ls, bm)):
        if other is bm and getattr(bm, "probe", None) is side.top_d:
            if bm.probe_n is side.n_top:  # scored up to each list's length only: the rest already 0
                out.append(bm.probe_scores)
                continue
            keep = np.arange(side.top_d.shape[1])[None, :] < side.n_top[:, None]
            out.append(np.where(keep, bm.probe_scores, 0.0))
            continue
        if hasattr(other, "at_rows"):
            out.append(other.at_rows(side.top_d, side.n_top))
            continue
        keep = np.arange(side.top_d.shape[1])[None, :] < side.n_top[:, None]
        qs = np.nonzero(keep)[0]
        vals = np.zeros(side.top_d.shape)
        vals[keep] = other.at(qs, side.top_d[keep])
        out.append(vals)
    return out[0], out[1]


def weighted_lists(
    dataset: Dataset, bm, ls, alpha: float = ALPHA_DEFAULT, depth: int = DEPTH_DEFAULT, name: str = "weighted",
    cross: tuple[np.ndarray, np.ndarray] | None = None,
) -> Ranking:
    """The weighted fusion from the two retrievers' best lists: exactly `weighted`'s ranking, without a dense row.

    `bm` and `ls` give, per question, their best documents by raw score (`top_d`, `top_s`, `n_top`), the lowest
    and highest score over all documents (`lo`, `hi`), and `at(questions, documents)` and `row(question)` for any
    other score (bm25.Bm25Run, lsa.LsaRun or CsrSide). The fused score of every document in either list is
    computed exactly; a document in neither cannot score above what the two lists' last entries give, so when
    the `depth`-th fused score is above that bound the top is exact. Otherwise (ties at the bound, rare) that
    question is fused over every document, as `weighted` does.
    """
    from . import _kernels as k
    from .ranking import from_padded

    check_alpha(alpha)
    alpha = float(alpha)
    nq, n_docs = dataset.n_queries, dataset.n_docs
    l_of_b, b_of_l = cross if cross is not None else cross_scores(bm, ls)
    out_d = np.zeros((nq, depth), dtype=np.int64)
    out_s = np.zeros((nq, depth))
    out_n = np.zeros(nq, dtype=np.int64)
    fallback = np.zeros(nq, dtype=np.bool_)
    work = nq * (bm.top_d.shape[1] + ls.top_d.shape[1]) * 8
    k.parallel(k.weighted_topk, nq, work, n_docs, dataset.tie_key, alpha, 1.0 - alpha, int(depth),
               bm.top_d, bm.top_s, bm.n_top, bm.lo, bm.hi, l_of_b, ls.top_d, ls.top_s, ls.n_top, ls.lo, ls.hi, b_of_l,
               out_d, out_s, out_n, fallback)
    todo = np.flatnonzero(fallback)
    n_rescans = int(todo.size)
    runs = hasattr(bm, "plan") and hasattr(bm, "norm") and hasattr(ls, "vecs")
    n_full = 0 if runs else n_rescans
    for full in (False, True):
        if not runs or todo.size == 0:
            break
        if full:
            n_full = int(todo.size)
        p = bm.plan
        k.parallel(lambda items, *a: k.weighted_scan(todo[items], *a), todo.size, todo.size * n_docs, full, n_docs,
                   dataset.tie_key, alpha, 1.0 - alpha, int(depth), p.q_ptr, p.q_u, p.u_ptr, p.u_docs, p.u_f, p.idf_u,
                   bm.norm, bm.k1 + 1.0, ls.qvec, ls.vecs, bm.lo, bm.hi, ls.top_d, ls.top_s, ls.n_top, ls.lo, ls.hi,
                   out_d, out_s, out_n, fallback)
        todo = np.flatnonzero(fallback)
    for q in todo:
        fused = alpha * minmax(bm.row(q)[None, :]) + (1.0 - alpha) * minmax(ls.row(q)[None, :])
        o = PassOutputs(Judged.none(1), out_d[q : q + 1], out_s[q : q + 1], np.zeros(1, dtype=np.int64),
                        np.zeros(1, dtype=np.int64), np.zeros(1), np.zeros(1))
        k.rank_dense(np.zeros(1, dtype=np.int64), fused, 0, Selection(dataset.tie_key, -1.0, int(depth)), o)
        out_n[q] = min(o.n_top[0], o.n_res[0])
    judged = Judged.of(dataset)
    indptr = np.concatenate(([0], np.cumsum(out_n))).astype(np.int64)
    keep = np.arange(depth)[None, :] < out_n[:, None]
    k.list_ranks(np.arange(nq, dtype=np.int64), Csr(indptr, out_d[keep], out_s[keep]), judged)
    ranking = from_padded(name, out_d, out_s, out_n, judged.rank, out_n)
    object.__setattr__(ranking, "rescans", n_rescans)  # questions the list bound did not settle
    object.__setattr__(ranking, "fallbacks", n_full)  # of those, fused over every document
    return ranking


def rrf_points(rank: np.ndarray, k: float) -> np.ndarray:
    """Reciprocal Rank Fusion points of a position: 1 / (k + rank)."""
    return 1.0 / (k + rank)


def rrf(
    dataset: Dataset, rankings: list[Ranking], k: float = RRF_K_DEFAULT, depth: int = DEPTH_DEFAULT, name: str = "RRF"
) -> Ranking:
    """Reciprocal Rank Fusion of the top `depth` of each ranking: sum of 1 / (k + rank), ties by document id."""
    from . import _kernels as kern

    check_rrf_k(k)
    nq, depth = dataset.n_queries, int(depth)
    if not rankings:
        return from_csr(name, dataset, np.zeros(nq + 1, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0))
    base = np.cumsum([0] + [r.docs.size for r in rankings[:-1]])
    r_ptr = np.stack([r.indptr.astype(np.int64) + b for r, b in zip(rankings, base)])
    r_docs = np.concatenate([r.docs for r in rankings]).astype(np.int64)
    cap = max(1, len(rankings) * depth)
    out_d = np.zeros((nq, cap), dtype=np.int64)
    out_s = np.zeros((nq, cap))
    out_n = np.zeros(nq, dtype=np.int64)
    kern.parallel(kern.rrf_fuse, nq, nq * cap * cap, r_ptr, r_docs, depth, float(k), dataset.tie_key, out_d, out_s, out_n)
    keep = np.arange(cap)[None, :] < out_n[:, None]
    indptr = np.concatenate(([0], np.cumsum(out_n))).astype(np.int64)
    return from_csr(name, dataset, indptr, out_d[keep], out_s[keep])
