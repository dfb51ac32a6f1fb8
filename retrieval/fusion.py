"""Fusions of any member systems: weighted min-max score fusion and Reciprocal Rank Fusion.

Weighted: fused(d) = sum over members j of w_j * minmax_j(s_j(d)), every document of the corpus competing
(threshold -1), the top `depth` kept, nothing for a question no member answers. minmax_j scales member j's
scores of one question to [0, 1] by their lowest and highest over *every* document (a constant row becomes 0).
The article's fusion is two members, BM25 and LSA, with w = (alpha, 1 - alpha).

RRF: points(d) = sum over members of 1 / (k + rank of d in that member's top `depth`), ties by document id.

Worked example (two members, alpha = 0.5): BM25 scores (3, 1, 0) and LSA (0.2, 0.9, 0.2) over three documents
fuse to 0.5 * (1, 1/3, 0) + 0.5 * (0, 1, 0) = (0.5, 0.667, 0): the second document first.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

import retrieval.kernels as kernels

from .core import params as spec
from .corpus.dataset import Dataset
from .retrievers.base import Member
from .retrievers.ranking import (
    Csr,
    Judged,
    PassOutputs,
    Ranking,
    Selection,
    from_csr,
    from_padded,
    rank_rows,
)

ALPHA_DEFAULT = spec.default("alpha")
RRF_K_DEFAULT = spec.default("rrf_k")
DEPTH_DEFAULT = spec.default("fusion_depth")


def minmax(x: np.ndarray) -> np.ndarray:
    """Each row scaled to [0, 1] by its own min and max; a constant row becomes zeros."""
    lo = x.min(axis=-1, keepdims=True)
    hi = x.max(axis=-1, keepdims=True)
    span = hi - lo
    return np.where(span > 0, (x - lo) / np.where(span > 0, span, 1.0), 0.0)


def check_alpha(alpha: float) -> None:
    """Reject an alpha outside [0, 1], naming the parameter (the parameter table's rule)."""
    spec.check("alpha", alpha)


def check_rrf_k(k: float) -> None:
    """Reject a negative or non-finite RRF constant, naming the parameter (the parameter table's rule)."""
    spec.check("rrf_k", k)


def weighted_dense(
    dataset: Dataset,
    scores: Sequence[np.ndarray],
    answers: Sequence[np.ndarray],
    weights: Sequence[float],
    depth: int = DEPTH_DEFAULT,
    name: str = "weighted",
) -> Ranking:
    """The weighted fusion's plain definition, over dense score rows (questions x documents, one per member):
    sum_j w_j * minmax(S_j), added in member order; -inf for a question no member answers (`answers[j][q]`);
    every document competes (threshold -1) and the top `depth` are kept. The reference the fast path equals."""
    fused = fuse_rows(weights, scores)
    silent = ~np.any(np.vstack([np.asarray(a, dtype=bool) for a in answers]), axis=0)
    fused[silent] = -np.inf
    return rank_rows(name, dataset, [(0, fused)], depth, threshold=-1.0, truncate=True)


def fuse_rows(weights: Sequence[float], scores: Sequence[np.ndarray]) -> np.ndarray:
    """sum_j w_j * minmax(S_j), added in member order (the compiled pass adds in the same order, to the last bit)."""
    fused = weights[0] * minmax(np.asarray(scores[0], dtype=np.float64))
    for w, s in zip(weights[1:], scores[1:]):
        fused = fused + w * minmax(np.asarray(s, dtype=np.float64))
    return fused


# The members' best lists as the compiled pass reads them, with no copy of any list (M members):
FusionLists = namedtuple(
    "FusionLists",
    [
        "docs",  # M arrays, questions x width_i: member i's best list (its run's top_d)
        "scores",  # M * M arrays: scores[i * M + j], questions x width_i, is member j's score of member i's list
        "n_top",  # questions x M: how many of each member's row are filled
        "lo",  # questions x M: each member's lowest score over every document
        "span",  # questions x M: highest - lowest
        "bound",  # questions x M: the highest score of a document outside the member's list (-inf: none outside)
        "answers",  # questions x M: the member answers the question
    ],
)


def gather(members: Sequence[Member]) -> FusionLists:
    """Every member's scores of every member's listed documents (an alpha change reuses this): a member's own
    list scores are its run's, the others' are looked up (`at_rows`)."""
    docs = tuple(np.ascontiguousarray(m.run.top_d, dtype=np.int64) for m in members)
    scores = tuple(
        np.ascontiguousarray(
            owner.run.top_s if i == j else other.at_rows(owner.run.top_d, owner.run.n_top), dtype=np.float64
        )
        for i, owner in enumerate(members)
        for j, other in enumerate(members)
    )
    stack = lambda f: np.ascontiguousarray(np.stack([np.asarray(f(m), dtype=np.float64) for m in members], axis=1))  # noqa: E731
    lo, hi = stack(lambda m: m.run.lo), stack(lambda m: m.run.hi)
    return FusionLists(
        docs,
        scores,
        np.ascontiguousarray(np.stack([m.run.n_top for m in members], axis=1), dtype=np.int64),
        lo,
        hi - lo,
        stack(lambda m: m.bound),
        np.ascontiguousarray(np.stack([m.answers for m in members], axis=1), dtype=np.bool_),
    )


# The second try's inputs for a pair of a postings member and a vector member (the kernel's named arguments):
PostingsSide = namedtuple("PostingsSide", ["terms", "norm", "k1p1", "lo", "hi"])  # bm25.Postings, norms, k1 + 1, range
VectorSide = namedtuple(
    "VectorSide", ["qvec", "vecs", "top_d", "top_s", "n_top", "lo", "hi"]
)  # vectors, best lists, range
FusedTop = namedtuple("FusedTop", ["docs", "scores", "n", "fallback"])  # the fused lists, improved in place


@dataclass(frozen=True, eq=False)
class WeightedRun:
    """The weighted fusion's ranking, and how often its list bound did not settle a question."""

    ranking: Ranking
    rescans: int  # questions the list bound did not settle
    fallbacks: int  # of those, fused over every document


def weighted(
    dataset: Dataset,
    members: Sequence[Member],
    weights: Sequence[float],
    depth: int = DEPTH_DEFAULT,
    lists: FusionLists | None = None,
    name: str = "weighted",
) -> WeightedRun:
    """The weighted fusion from the members' best lists: exactly `weighted_dense`'s ranking, without a dense row.

    The fused score of every document in any member's list is computed exactly; a document in none of them
    cannot score above what the lists' bounds give, so when the `depth`-th fused score is above that bound the
    top is exact. Otherwise (ties at the bound, rare) the question is tried again: for a pair of a postings
    member (BM25: has `plan` and `norm`) and a vector member (has `qvec` and `vecs`), from the postings (every
    document with a question term scored exactly), and else over every document, as `weighted_dense` does.
    """
    w = np.asarray(weights, dtype=np.float64)
    nq, n_docs, depth = dataset.n_queries, dataset.n_docs, int(depth)
    lists = gather(members) if lists is None else lists
    out_d = np.zeros((nq, depth), dtype=np.int64)
    out_s = np.zeros((nq, depth))
    out_n = np.zeros(nq, dtype=np.int64)
    fallback = np.zeros(nq, dtype=np.bool_)
    kernels.parallel(
        kernels.weighted_topk,
        nq,
        sum(x.size for x in lists.scores) * 4,
        n_docs,
        dataset.tie_key,
        w,
        depth,
        lists,
        out_d,
        out_s,
        out_n,
        fallback,
    )
    todo = np.flatnonzero(fallback)
    n_rescans = int(todo.size)
    n_full = 0
    pair = (
        len(members) == 2
        and all(hasattr(members[0].run, a) for a in ("plan", "norm"))
        and hasattr(members[1].run, "vecs")
    )
    if pair and todo.size:
        bm, ls = members[0].run, members[1].run
        for full in (False, True):
            if todo.size == 0:
                break
            if full:
                n_full = int(todo.size)
            kernels.parallel(
                lambda items, *a: kernels.weighted_scan(todo[items], *a),  # noqa: B023 - called at once
                todo.size,
                todo.size * n_docs,
                full,
                n_docs,
                dataset.tie_key,
                float(w[0]),
                float(w[1]),
                depth,
                PostingsSide(bm.plan.by_term, bm.norm, bm.k1 + 1.0, bm.lo, bm.hi),
                VectorSide(ls.qvec, ls.vecs, ls.top_d, ls.top_s, ls.n_top, ls.lo, ls.hi),
                FusedTop(out_d, out_s, out_n, fallback),
            )
            todo = np.flatnonzero(fallback)
    elif todo.size:
        n_full = int(todo.size)
    for q in todo:  # over every document, from each member's full row (no silent question is ever flagged)
        fused = fuse_rows(w, [m.row(q)[None, :] for m in members])
        o = PassOutputs(
            Judged.none(1),
            out_d[q : q + 1],
            out_s[q : q + 1],
            np.zeros(1, dtype=np.int64),
            np.zeros(1, dtype=np.int64),
            np.zeros(1),
            np.zeros(1),
        )
        kernels.rank_dense(np.zeros(1, dtype=np.int64), fused, 0, Selection(dataset.tie_key, -1.0, depth), o)
        out_n[q] = min(o.n_top[0], o.n_res[0])
    judged = Judged.of(dataset)
    indptr = np.concatenate(([0], np.cumsum(out_n))).astype(np.int64)
    keep = np.arange(depth)[None, :] < out_n[:, None]
    kernels.list_ranks(np.arange(nq, dtype=np.int64), Csr(indptr, out_d[keep], out_s[keep]), judged)
    return WeightedRun(from_padded(name, out_d, out_s, out_n, judged.rank, out_n), n_rescans, n_full)


def rrf_points(rank: np.ndarray, k: float) -> np.ndarray:
    """Reciprocal Rank Fusion points of a position: 1 / (k + rank)."""
    return 1.0 / (k + rank)


def rrf(
    dataset: Dataset, rankings: list[Ranking], k: float = RRF_K_DEFAULT, depth: int = DEPTH_DEFAULT, name: str = "RRF"
) -> Ranking:
    """Reciprocal Rank Fusion of the top `depth` of each ranking: sum of 1 / (k + rank), ties by document id."""

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
    kernels.parallel(
        kernels.rrf_fuse, nq, nq * cap * cap, r_ptr, r_docs, depth, float(k), dataset.tie_key, out_d, out_s, out_n
    )
    keep = np.arange(cap)[None, :] < out_n[:, None]
    indptr = np.concatenate(([0], np.cumsum(out_n))).astype(np.int64)
    return from_csr(name, dataset, indptr, out_d[keep], out_s[keep])
