"""The weighted fusion's compiled pass over any number of members (numba), beside its plain reference,
`fusion.weighted_dense`, which it equals to the last bit (tests/test_fusion_members.py).

A fused score is sum_j w_j * (s_j - lo_j) / span_j (0 for a member whose span is 0), added in member order,
the same operations in the same order as `fusion.fuse_rows`, so the numbers are identical (numba compiles
without fast-math).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._kernels import _heap_sort, _insert, _replace_root


@njit(inline="always")
def _fused(x, lo, span, w):
    """sum_j w[j] * minmax_j(x[j]), member by member (x, lo, span: one value per member)."""
    s = w[0] * ((x[0] - lo[0]) / span[0] if span[0] > 0 else 0.0)
    for j in range(1, w.size):
        s += w[j] * ((x[j] - lo[j]) / span[j] if span[j] > 0 else 0.0)
    return s


@njit(nogil=True, cache=True)
def weighted_topk(items, n_docs, key, w, fd, lists, out_d, out_s, out_n, fallback):
    """The weighted fusion's top fd from the union of the members' best lists (a threshold-algorithm check).

    `lists` is a fusion.FusionLists. A document in no list scores at most the fused bounds (each member's
    highest score outside its list). When the fd-th candidate beats that bound strictly, when a member's list
    holds every document (bound -inf), or when the lists hold every document, the top fd is exact; otherwise
    the question is flagged for a second try (`fallback`). A question no member answers gets no result.
    """
    stamp = np.full(n_docs, -1, dtype=np.int64)
    hk = np.empty(fd, dtype=np.int64)
    n_members = w.size
    for q in items:
        fallback[q] = False
        answered = False
        for j in range(n_members):
            answered = answered or lists.answers[q, j]
        if not answered:
            out_n[q] = 0
            continue
        lo, span = lists.lo[q], lists.span[q]
        os_ = out_s[q]
        od_ = out_d[q]
        h = 0
        nc = 0
        for i in range(n_members):
            c0 = lists.col[i]
            for c in range(c0, c0 + lists.n_top[q, i]):
                d = lists.docs[q, c]
                if stamp[d] == q:
                    continue
                stamp[d] = q
                nc += 1
                f = _fused(lists.scores[q, c], lo, span, w)
                kd = key[d]
                if h < fd:
                    _insert(os_, hk, od_, h, f, kd, d)
                    h += 1
                elif os_[0] < f or (os_[0] == f and hk[0] > kd):
                    _replace_root(os_, hk, od_, h, f, kd, d)
        _heap_sort(os_, hk, od_, h)
        out_n[q] = h
        if nc >= n_docs:
            continue
        if h < fd:
            fallback[q] = True
            continue
        nothing_outside = False
        for j in range(n_members):
            nothing_outside = nothing_outside or lists.bound[q, j] == -np.inf
        if nothing_outside:
            continue
        if not (os_[fd - 1] > _fused(lists.bound[q], lo, span, w)):
            fallback[q] = True
