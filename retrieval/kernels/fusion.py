"""The fusions' compiled passes: the weighted fusion's exact top from the members' lists (with a second try over
every document where its bound is tied), and Reciprocal Rank Fusion.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .dense_pass import _lsa_at
from .heap import _heap_sort, _keep_best
from .rules import bm25_weight
from .select import order_desc

SOURCE_DIGEST = "bd50ae48249e58c3"  # of the project files imported above (kernels/__init__.py: numba's cache)


_weight = njit(inline="always")(bm25_weight)


@njit(inline="always")
def _fuse(x, lo_b, span_b, y, lo_l, span_l, alpha, beta):
    nb = (x - lo_b) / span_b if span_b > 0 else 0.0
    nl = (y - lo_l) / span_l if span_l > 0 else 0.0
    return alpha * nb + beta * nl


@njit(inline="always")
def _normed(x, lo, span):
    """minmax of one score: (x - lo) / span, 0 for a member whose scores are all equal (fusion.minmax)."""
    return (x - lo) / span if span > 0 else 0.0


@njit(inline="always")
def _fuse_list(scores, i, q, n, lo, span, w, out):
    """The fused scores of member i's first n listed documents of question q into out[:n]: w[0] * minmax_0 +
    w[1] * minmax_1 + ..., member by member as fusion.fuse_rows adds them (scores[i * M + j]: member j's
    scores of member i's list; each array is read once per question, not once per document)."""
    m = w.size
    first = scores[i * m]
    for c in range(n):
        out[c] = w[0] * _normed(first[q, c], lo[0], span[0])
    for j in range(1, m):
        other = scores[i * m + j]
        for c in range(n):
            out[c] += w[j] * _normed(other[q, c], lo[j], span[j])


@njit(inline="always")
def _fused_bound(bound, lo, span, w):
    """The fused score of the members' bounds (one value per member), as _fused adds them."""
    s = w[0] * _normed(bound[0], lo[0], span[0])
    for j in range(1, w.size):
        s += w[j] * _normed(bound[j], lo[j], span[j])
    return s


@njit(nogil=True, cache=True)
def weighted_topk(items, n_docs, key, w, fd, lists, out_d, out_s, out_n, fallback):
    """The weighted fusion's top fd from the union of its members' best lists (a threshold-algorithm check).

    `lists` is a fusion.FusionLists. A document in no list scores at most the fused bounds (each member's
    highest score outside its list). When the fd-th candidate beats that bound strictly, when a member's list
    holds every document (bound -inf), or when the lists hold every document, the top fd is exact; otherwise
    the question is flagged for a second try (`fallback`). A question no member answers gets no result.
    Reference: fusion.weighted_dense (rank_rows of the dense fused rows), tests/engine/test_engine.py.
    """
    stamp = np.full(n_docs, -1, dtype=np.int64)
    hk = np.empty(fd, dtype=np.int64)
    n_members = w.size
    width = 0
    for i in range(n_members):
        width = max(width, lists.docs[i].shape[1])
    fused = np.empty(width)
    cand_s = np.empty(width)
    cand_d = np.empty(width, dtype=np.int64)
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
            docs = lists.docs[i]
            n = lists.n_top[q, i]
            _fuse_list(lists.scores, i, q, n, lo, span, w, fused)
            nn = 0
            for c in range(n):  # the documents no earlier member listed
                d = docs[q, c]
                if stamp[d] != q:
                    stamp[d] = q
                    cand_s[nn] = fused[c]
                    cand_d[nn] = d
                    nn += 1
            nc += nn
            h = _keep_best(cand_s, cand_d, nn, key, fd, os_, hk, od_, h)
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
        if not (os_[fd - 1] > _fused_bound(lists.bound[q], lo, span, w)):
            fallback[q] = True


@njit(nogil=True, cache=True)
def weighted_scan(items, full, n_docs, key, alpha, beta, fd, bm, ls, out):
    """The weighted fusion's exact second and third tries for the questions the list bound could not settle.

    Second try (full=False): BM25 is re-accumulated from the postings, so every document with a question term
    has its exact BM25 score. Those in LSA's list are fused exactly; the others have an LSA score at most the
    list's last, so fuse(bm25, last) bounds them, and only those whose bound reaches the current fd-th fused
    score (the first try's, a lower bound of the final one) are looked up and fused. A document with no
    question term outside LSA's list scores at most fuse(0, last): when the top fd beats that strictly, the
    question is settled, else it stays flagged. Third try (full=True): every document is fused.
    bm: fusion.PostingsSide (BM25's postings by term, its length norms at the run's k1 and b, its score range);
    ls: fusion.VectorSide (the questions' and documents' unit vectors, the member's best lists and score range);
    out: fusion.FusedTop (the first try's lists, improved in place, and the questions still flagged).
    Reference: fusion.weighted_dense, as for weighted_topk.
    """
    q_ptr, q_u, u_ptr, u_docs, u_f, idf_u = bm.terms
    norm, k1p1, b_lo, b_hi = bm.norm, bm.k1p1, bm.lo, bm.hi
    qvec, vecs, l_d, l_s, l_n, l_lo, l_hi = ls
    out_d, out_s, out_n, fallback = out
    acc = np.zeros(n_docs)
    stamp = np.full(n_docs, -1, dtype=np.int64)
    listed = np.full(n_docs, -1, dtype=np.int64)
    touched = np.empty(n_docs, dtype=np.int64)
    hk = np.empty(fd, dtype=np.int64)
    ml = l_d.shape[1]
    cand_s = np.empty(max(n_docs, ml))
    cand_d = np.empty(max(n_docs, ml), dtype=np.int64)
    for q in items:
        bar = out_s[q, fd - 1] if out_n[q] == fd else -np.inf
        n_touched = 0
        for a in range(q_ptr[q], q_ptr[q + 1]):
            u = q_u[a]
            w_idf = idf_u[u]
            for p in range(u_ptr[u], u_ptr[u + 1]):
                f = u_f[p]
                d = u_docs[p]
                w = _weight(f, w_idf, norm[d], k1p1)
                if stamp[d] != q:
                    stamp[d] = q
                    acc[d] = w
                    touched[n_touched] = d
                    n_touched += 1
                else:
                    acc[d] += w
        lb, sb = b_lo[q], b_hi[q] - b_lo[q]
        ll, sl = l_lo[q], l_hi[q] - l_lo[q]
        qv = qvec[q]
        os_ = out_s[q]
        od_ = out_d[q]
        h = 0
        if full:
            for d in range(n_docs):
                x = acc[d] if stamp[d] == q else 0.0
                cand_s[d] = _fuse(x, lb, sb, _lsa_at(qv, vecs, d), ll, sl, alpha, beta)
                cand_d[d] = d
            h = _keep_best(cand_s, cand_d, n_docs, key, fd, os_, hk, od_, h)
            _heap_sort(os_, hk, od_, h)
            out_n[q] = h
            fallback[q] = False
            continue
        for i in range(l_n[q]):  # LSA's list: both scores exact
            d = l_d[q, i]
            listed[d] = q
            x = acc[d] if stamp[d] == q else 0.0
            cand_s[i] = _fuse(x, lb, sb, l_s[q, i], ll, sl, alpha, beta)
            cand_d[i] = d
        h = _keep_best(cand_s, cand_d, l_n[q], key, fd, os_, hk, od_, h)
        if l_n[q] < ml:  # the list holds every document
            _heap_sort(os_, hk, od_, h)
            out_n[q] = h
            fallback[q] = False
            continue
        l_last = l_s[q, ml - 1]
        nn = 0
        for i in range(n_touched):  # documents with a question term, outside LSA's list
            d = touched[i]
            if listed[d] == q:
                continue
            if _fuse(acc[d], lb, sb, l_last, ll, sl, alpha, beta) < bar:
                continue
            cand_s[nn] = _fuse(acc[d], lb, sb, _lsa_at(qv, vecs, d), ll, sl, alpha, beta)
            cand_d[nn] = d
            nn += 1
        h = _keep_best(cand_s, cand_d, nn, key, fd, os_, hk, od_, h)
        _heap_sort(os_, hk, od_, h)
        out_n[q] = h
        bound = _fuse(0.0, lb, sb, l_last, ll, sl, alpha, beta)
        fallback[q] = not (h == fd and os_[fd - 1] > bound)


@njit(nogil=True, cache=True)
def rrf_fuse(items, r_ptr, r_docs, depth, k, key, out_d, out_s, out_n):
    """Reciprocal Rank Fusion per question: fusion.rrf_points, 1 / (k + rank), summed over the rankings in order (r_ptr:
    rankings x (questions + 1) offsets into r_docs, each ranking's lists laid end to end after the previous ranking's),
    the union ordered by points descending, then key; out_d/out_s: questions x (rankings * depth). Reference:
    fusion.rrf_points summed per document, ordered by ranking.order_by_score."""
    nr = r_ptr.shape[0]
    cap = out_d.shape[1]
    cd = np.empty(cap, dtype=np.int64)
    tot = np.empty(cap)
    kk = np.empty(cap, dtype=np.int64)
    for q in items:
        nc = 0
        for r in range(nr):
            a = r_ptr[r, q]
            n = min(r_ptr[r, q + 1] - a, depth)
            for pos in range(n):
                d = r_docs[a + pos]
                pts = 1.0 / (k + (pos + 1.0))
                c = 0
                while c < nc and cd[c] != d:
                    c += 1
                if c == nc:
                    cd[nc] = d
                    tot[nc] = 0.0
                    nc += 1
                tot[c] += pts
        for c in range(nc):
            kk[c] = key[cd[c]]
        order = order_desc(tot, kk, nc)
        for i in range(nc):
            out_d[q, i] = cd[order[i]]
            out_s[q, i] = tot[order[i]]
        out_n[q] = nc
