"""Compiled inner loops (numba): score, select and rank every question in one pass, never a dense questions x documents matrix.

Every kernel works on a set of questions and writes disjoint slices of preallocated outputs, so `parallel`
splits the questions over threads (each kernel releases the GIL). The arithmetic is spelled out operation by
operation, in the same order as the numpy formulas in bm25.py, lsa.py and fusion.py, so the numbers are the
same to the last bit (numba compiles without fast-math: no reassociation, no fused multiply-add):

* a BM25 score is the sum of its question terms' weights in ascending term order, starting from the first;
* an LSA score is q[0] * v[0] + q[1] * v[1] + ... added left to right (lsa.score_chunks computes the same);
* a weighted-fusion score is alpha * minmax(bm25) + (1 - alpha) * minmax(lsa), as fusion.minmax writes it.

Selection keeps the best `m` of a question ordered by (score descending, tie key ascending): the tie key is
the document's position in id order, so ties go by document id. LSA and the generic rows offer every document
to a bounded heap; BM25 sorts only the candidates at or above a cut (`bm25_rank`). The exact rank of each
judged document is counted in the same pass: 1 + the documents that beat it.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

_POOL: ThreadPoolExecutor | None = None
PARALLEL_MIN_WORK = 1_000_000  # below this many elementary steps one thread is faster than two


_CORES: int | None = None


def threads() -> int:
    """Worker threads: RETRIEVAL_THREADS, else the cores this process may use."""
    global _CORES
    env = os.environ.get("RETRIEVAL_THREADS")
    if env:
        return max(1, int(env))
    if _CORES is None:
        try:
            _CORES = max(1, len(os.sched_getaffinity(0)))
        except AttributeError:  # pragma: no cover - not Linux
            _CORES = max(1, os.cpu_count() or 1)
    return _CORES


def parallel(kernel, n_items: int, work: int, *args) -> None:
    """Run `kernel(items, *args)` over 0..n_items-1 split across threads (interleaved, so costs even out).

    `work` estimates the total cost in elementary steps; below PARALLEL_MIN_WORK one thread is faster.
    """
    global _POOL
    nt = min(threads(), n_items)
    if nt <= 1 or work < PARALLEL_MIN_WORK:
        kernel(np.arange(n_items, dtype=np.int64), *args)
        return
    if _POOL is None or _POOL._max_workers < nt:
        _POOL = ThreadPoolExecutor(max_workers=nt, thread_name_prefix="retrieval")
    parts = [np.arange(i, n_items, nt, dtype=np.int64) for i in range(nt)]
    for f in [_POOL.submit(kernel, p, *args) for p in parts]:
        f.result()


# ------------------------------------------------------------------------------------------- heap


@njit(inline="always")
def _worse(s1, k1, s2, k2):
    """(s1, k1) ranks after (s2, k2): a lower score, or the same score and a later id."""
    return s1 < s2 or (s1 == s2 and k1 > k2)


@njit(inline="always")
def _swap(hs, hk, hd, i, j):
    hs[i], hs[j] = hs[j], hs[i]
    hk[i], hk[j] = hk[j], hk[i]
    hd[i], hd[j] = hd[j], hd[i]


@njit
def _sift_down(hs, hk, hd, n, i):
    while True:
        c = 2 * i + 1
        if c >= n:
            return
        r = c + 1
        if r < n and _worse(hs[r], hk[r], hs[c], hk[c]):
            c = r
        if _worse(hs[c], hk[c], hs[i], hk[i]):
            _swap(hs, hk, hd, i, c)
            i = c
        else:
            return


@njit
def _sift_up(hs, hk, hd, i):
    while i > 0:
        p = (i - 1) // 2
        if _worse(hs[i], hk[i], hs[p], hk[p]):
            _swap(hs, hk, hd, i, p)
            i = p
        else:
            return


@njit
def _insert(hs, hk, hd, n, s, k, d):
    """Add (s, k, d) to a heap holding n < capacity entries (worst entry at the root)."""
    hs[n] = s
    hk[n] = k
    hd[n] = d
    _sift_up(hs, hk, hd, n)


@njit
def _replace_root(hs, hk, hd, n, s, k, d):
    """Put (s, k, d) in place of the root (the worst entry) and restore the heap."""
    hs[0] = s
    hk[0] = k
    hd[0] = d
    _sift_down(hs, hk, hd, n, 0)


# Offering (s, k, d) to a heap of capacity m holding h entries is written out where it is used, so that the
# common case (worse than the root: nothing to do) costs two comparisons and no call (an inline="always" helper
# returning the new h was tried: bench/speed.py measured the 100k k1 tick 3x slower, 676 ms against 222 ms):
#     if h < m: _insert(...); h += 1
#     elif hs[0] < s or (hs[0] == s and hk[0] > k): _replace_root(...)


@njit
def _heap_sort(hs, hk, hd, n):
    """Heap contents in place, best first."""
    for end in range(n - 1, 0, -1):
        _swap(hs, hk, hd, 0, end)
        _sift_down(hs, hk, hd, end, 0)


# ------------------------------------------------------------------------------------------- selection


@njit
def _select(docs, vals, n, by_doc, key, thr, m, j_s, j_k, j_act, j_out, top_d, top_s):
    """The best m entries (raw, whatever their score), results counted above thr, judged ranks among results.

    Entries are docs[i] with score vals[docs[i]] (by_doc) or vals[i]. Judged documents: score j_s, key j_k,
    active if they are results; their ranks go to j_out (0 for inactive ones). Returns (kept, results, min, max).
    The best m are kept in a heap (top_s, hk, top_d) whose root is the worst kept: an entry that does not beat
    the root costs two comparisons.
    """
    nj = j_s.size
    order = np.empty(nj, dtype=np.int64)
    na = 0
    for j in range(nj):  # active judged documents, best first (insertion sort: a handful)
        j_out[j] = 0
        if j_act[j]:
            p = na
            while p > 0 and _worse(j_s[order[p - 1]], j_k[order[p - 1]], j_s[j], j_k[j]):
                order[p] = order[p - 1]
                p -= 1
            order[p] = j
            na += 1
    cnt = np.zeros(nj + 1, dtype=np.int64)
    ws = -np.inf
    wk = 0
    if na > 0:
        ws = j_s[order[na - 1]]
        wk = j_k[order[na - 1]]
    hk = np.empty(m, dtype=np.int64)
    h = 0
    nres = 0
    vmin = np.inf
    vmax = -np.inf
    for i in range(n):
        d = docs[i]
        v = vals[d] if by_doc else vals[i]
        if v < vmin:
            vmin = v
        if v > vmax:
            vmax = v
        if v > thr:
            nres += 1
        if h < m:
            _insert(top_s, hk, top_d, h, v, key[d], d)
            h += 1
        elif top_s[0] < v or (top_s[0] == v and hk[0] > key[d]):
            _replace_root(top_s, hk, top_d, h, v, key[d], d)
        if na > 0 and (v > ws or (v == ws and key[d] < wk)):  # beats at least the worst judged result
            kd = key[d]
            p = na - 1  # climb from the worst: most documents beat only the deepest judged ones
            while p > 0 and _worse(j_s[order[p - 1]], j_k[order[p - 1]], v, kd):
                p -= 1
            cnt[p] += 1
    _heap_sort(top_s, hk, top_d, h)
    run = 0
    for p in range(na):
        run += cnt[p]
        j_out[order[p]] = run + 1
    return h, nres, vmin, vmax


# ------------------------------------------------------------------------------------------- question layout


@njit(inline="always")
def _count_terms(q, q_ptr, q_u, u_ptr, u_docs, cnt, bits):
    """How many of question q's terms each document holds (cnt), and a bitmap of the documents holding any."""
    one = np.uint64(1)
    for a in range(q_ptr[q], q_ptr[q + 1]):
        u = q_u[a]
        for p in range(u_ptr[u], u_ptr[u + 1]):
            d = u_docs[p]
            cnt[d] += 1
            bits[d >> 6] |= one << np.uint64(d & 63)


@njit(inline="always")
def _touched_in_order(bits, cnt, docs, counts):
    """The documents marked in bits, in id order, into docs, with their counts; clears bits and cnt. Returns
    how many."""
    one = np.uint64(1)
    n = 0
    for wi in range(bits.size):
        b = bits[wi]
        if b != 0:
            bits[wi] = 0
            while b != 0:
                d = (wi << 6) + trailing_zeros(b)
                b &= b - one
                docs[n] = d
                counts[n] = cnt[d]
                cnt[d] = 0
                n += 1
    return n


@njit(nogil=True, cache=True)
def layout(items, fill, q_ptr, q_u, u_ptr, u_docs, n_docs, n_single, n_multi, n_entries,
           s_ptr, s_up, m_ptr, e_ptr, m_start, m_up):
    """Each question's postings regrouped by document (bm25.QuestionPlan): the documents with one question term
    in id order (s_up: their posting), then those with several in id order (m_start: where each one's postings
    start in m_up, in ascending term order). Two passes: fill=False counts, per question, the single-term
    documents, the multi-term ones and the latter's postings (n_*); fill=True writes the layout at the offsets
    (s_ptr, m_ptr, e_ptr) those counts give."""
    cnt = np.zeros(n_docs, dtype=np.int64)
    slot = np.zeros(n_docs, dtype=np.int64)
    bits = np.zeros((n_docs + 63) // 64, dtype=np.uint64)
    docs = np.empty(n_docs, dtype=np.int64)
    counts = np.empty(n_docs, dtype=np.int64)
    for q in items:
        _count_terms(q, q_ptr, q_u, u_ptr, u_docs, cnt, bits)
        n = _touched_in_order(bits, cnt, docs, counts)
        if not fill:
            ns = 0
            ne = 0
            for i in range(n):
                ns += counts[i] == 1
                ne += counts[i] if counts[i] > 1 else 0
            n_single[q] = ns
            n_multi[q] = n - ns
            n_entries[q] = ne
            continue
        si = s_ptr[q]
        mj = m_ptr[q]
        e = e_ptr[q]
        for i in range(n):  # a single's place, or where a multi's postings go
            d = docs[i]
            c = counts[i]
            if c == 1:
                slot[d] = -1 - si
                si += 1
            else:
                m_start[mj] = e
                slot[d] = e
                e += c
                mj += 1
        for a in range(q_ptr[q], q_ptr[q + 1]):  # terms in ascending order: each multi's postings in term order
            u = q_u[a]
            for p in range(u_ptr[u], u_ptr[u + 1]):
                d = u_docs[p]
                t = slot[d]
                if t < 0:
                    s_up[-1 - t] = p
                else:
                    m_up[t] = p
                    slot[d] = t + 1


@njit(inline="always")
def _pos_doc(i, s0, ns, m0, s_up, m_up, m_start, u_docs):
    """The document at position i of a question's layout (singles first, then multis)."""
    if i < ns:
        return u_docs[s_up[s0 + i]]
    return u_docs[m_up[m_start[m0 + i - ns]]]


@njit(inline="always")
def _pos_score(i, s0, ns, m0, s_up, m_up, m_start, w):
    """The BM25 score at position i of a question's layout: its weights summed in ascending term order."""
    if i < ns:
        return w[s_up[s0 + i]]
    j = m0 + i - ns
    a = m_start[j]
    x = w[m_up[a]]
    for e in range(a + 1, m_start[j + 1]):
        x += w[m_up[e]]
    return x


@njit
def _locate(d, s0, ns, m0, nm, s_up, m_up, m_start, u_docs):
    """Position of document d in a question's layout (binary search in each part), -1 if it has no question term."""
    lo_, hi_ = 0, ns
    while lo_ < hi_:
        mid = (lo_ + hi_) >> 1
        if u_docs[s_up[s0 + mid]] < d:
            lo_ = mid + 1
        else:
            hi_ = mid
    if lo_ < ns and u_docs[s_up[s0 + lo_]] == d:
        return lo_
    lo_, hi_ = 0, nm
    while lo_ < hi_:
        mid = (lo_ + hi_) >> 1
        if u_docs[m_up[m_start[m0 + mid]]] < d:
            lo_ = mid + 1
        else:
            hi_ = mid
    if lo_ < nm and u_docs[m_up[m_start[m0 + lo_]]] == d:
        return ns + lo_
    return -1


@njit(nogil=True, cache=True)
def bm25_locate(items, ptr, docs, s_ptr, s_up, m_ptr, m_start, m_up, u_docs, out):
    """Positions of documents (question q's: docs[ptr[q]:ptr[q + 1]], -1 for none) in each question's layout;
    -1 for one without a question term."""
    for q in items:
        s0, m0 = s_ptr[q], m_ptr[q]
        ns, nm = s_ptr[q + 1] - s0, m_ptr[q + 1] - m0
        for i in range(ptr[q], ptr[q + 1]):
            d = docs[i]
            out[i] = _locate(d, s0, ns, m0, nm, s_up, m_up, m_start, u_docs) if d >= 0 else -1


# ------------------------------------------------------------------------------------------- BM25


@njit(inline="always")
def _judged_in_row(row, j_doc, j0, j1, key, thr):
    """Scores and tie keys of a question's judged documents read off a dense score row; active = scored above thr."""
    nj = j1 - j0
    j_s = np.zeros(nj)
    j_k = np.zeros(nj, dtype=np.int64)
    j_act = np.zeros(nj, dtype=np.bool_)
    for j in range(nj):
        jd = j_doc[j0 + j]
        if jd >= 0 and row[jd] > thr:
            j_s[j] = row[jd]
            j_k[j] = key[jd]
            j_act[j] = True
    return j_s, j_k, j_act


@njit(nogil=True, cache=True)
def bm25_weights(items, u_ptr, u_docs, u_f, idf_u, norm, k1p1, out):
    """Weight of every posting of the question terms: idf * (f * (k1 + 1)) / (f + norm[doc]) (bm25.term_weights)."""
    for u in items:
        w_idf = idf_u[u]
        for p in range(u_ptr[u], u_ptr[u + 1]):
            f = u_f[p]
            out[p] = w_idf * ((f * k1p1) / (f + norm[u_docs[p]]))


@njit
def _order_desc(neg, kk, n):
    """Positions 0..n-1 ordered by (neg ascending, kk ascending): argsort on the value, then each run of equal
    values put in key order (insertion sort for short runs, an argsort of the keys for long ones)."""
    o = np.argsort(neg[:n])
    i = 0
    while i < n:
        j = i + 1
        while j < n and neg[o[j]] == neg[o[i]]:
            j += 1
        if j - i > 32:
            run = o[i:j].copy()
            o[i:j] = run[np.argsort(kk[run])]
        else:
            for a in range(i + 1, j):
                x = o[a]
                b = a
                while b > i and kk[o[b - 1]] > kk[x]:
                    o[b] = o[b - 1]
                    b -= 1
                o[b] = x
        i = j
    return o


@njit
def _sorted_best(cv, cd, cp, nc, key, m, sel, neg, kk, top_s, top_d, top_p):
    """The best m of the candidates (values cv, documents cd, positions cp) by (value descending, key
    ascending), best first, into top_s / top_d / top_p; returns how many.

    With more than m candidates, a partial sort (np.partition) finds the m-th best value t; all above t are
    kept, and of those equal to t only the smallest keys that fill m (a partial sort of the keys). The m kept
    are then sorted (`_order_desc`). Linear in the candidates, however many tie. sel, neg, kk: scratch.
    """
    ns = 0
    if nc > m:
        for c in range(nc):
            neg[c] = cv[c]
        t = np.partition(neg[:nc], nc - m)[nc - m]
        tied = np.empty(nc, dtype=np.int64)
        nti = 0
        for c in range(nc):  # above t kept; those tied at t set aside, their keys in kk
            if cv[c] > t:
                sel[ns] = c
                ns += 1
            elif cv[c] == t:
                tied[nti] = c
                kk[nti] = key[cd[c]]
                nti += 1
        need = m - ns
        kt = np.partition(kk[:nti], need - 1)[need - 1] if nti > need else np.iinfo(np.int64).max
        for c in range(nti):
            if kk[c] <= kt:  # keys are distinct: exactly `need` of them (or all the tied)
                sel[ns] = tied[c]
                ns += 1
    else:
        for c in range(nc):
            sel[c] = c
        ns = nc
    for c in range(ns):
        neg[c] = -cv[sel[c]]
        kk[c] = key[cd[sel[c]]]
    order = _order_desc(neg, kk, ns)
    h = min(m, ns)
    for r in range(h):
        c = sel[order[r]]
        top_s[r] = cv[c]
        top_d[r] = cd[c]
        top_p[r] = cp[c]
    return h


@njit(inline="always")
def _count_above(vals, n, s0, s1, s2, s3):
    """How many of vals[:n] are above, and equal to, each of four values (one vectorised pass)."""
    g0 = g1 = g2 = g3 = 0
    e0 = e1 = e2 = e3 = 0
    for i in range(n):
        x = vals[i]
        g0 += x > s0
        g1 += x > s1
        g2 += x > s2
        g3 += x > s3
        e0 += x == s0
        e1 += x == s1
        e2 += x == s2
        e3 += x == s3
    return g0, g1, g2, g3, e0, e1, e2, e3


SCAN_BLOCK = 16  # values a scan checks at once (one vectorised test) before looking at them one by one


@njit(inline="always")
def _scan_at_least(vals, n, cut, out, nc):
    """Append to out[nc:] the indices i < n with vals[i] >= cut; returns the new count. Blocks whose largest
    value is below the cut (nearly all of them when the cut is high) are skipped after one vectorised test."""
    base = 0
    while base + SCAN_BLOCK <= n:
        mx = vals[base]
        for t in range(1, SCAN_BLOCK):
            x = vals[base + t]
            mx = x if x > mx else mx
        if not mx < cut:
            for t in range(SCAN_BLOCK):
                out[nc] = base + t
                nc += vals[base + t] >= cut
        base += SCAN_BLOCK
    for i in range(base, n):
        out[nc] = i
        nc += vals[i] >= cut
    return nc


@njit(inline="always")
def _scan_equal(vals, n, s0, s1, s2, s3, out, flags):
    """The indices i < n with vals[i] equal to one of four values (NaN for none), in out; returns how many.
    One vectorised pass writes a flag per value (flags: n + 8 bytes of scratch), then the flags are read eight at
    a time and only the words holding one are looked at."""
    nw = (n + 7) // 8
    for i in range(n):
        x = vals[i]
        flags[i] = np.uint8((x == s0) | (x == s1) | (x == s2) | (x == s3))
    for i in range(n, nw * 8):
        flags[i] = 0
    words = flags[: nw * 8].view(np.uint64)
    nc = 0
    for wi in range(nw):
        if words[wi] != 0:
            for i in range(wi * 8, wi * 8 + 8):
                out[nc] = i
                nc += flags[i]
    return nc


@njit
def _settle_order(cv, cd, cp, nc, key, limit):
    """Insertion sort of the candidates (values cv, documents cd, positions cp) by (value descending, key
    ascending), for lists nearly in order already (the previous run's best in its order): linear plus the
    moves, keys read only to break a tie. Gives up (False) past `limit` moves, the candidates still all there."""
    moves = 0
    for a in range(1, nc):
        vx, dx, px = cv[a], cd[a], cp[a]
        b = a
        while b > 0:
            vy = cv[b - 1]
            if vy > vx or (vy == vx and key[cd[b - 1]] < key[dx]):
                break
            cv[b], cd[b], cp[b] = vy, cd[b - 1], cp[b - 1]
            b -= 1
        moves += a - b
        cv[b], cd[b], cp[b] = vx, dx, px
        if moves > limit:
            return False
    return True


@njit(nogil=True, cache=True)
def bm25_rank(items, n_docs, s_ptr, s_up, m_ptr, m_start, m_up, u_docs, w, key, thr, m, j_ptr, j_doc,
              j_pos, j_rank, top_d, top_s, top_p, n_top, n_res, lo, hi, probe_p, probe_s, hint_p, hint_d, sort_budget):
    """Score each question from its postings regrouped by document, keep the best m, count, rank the judged.

    The layout (bm25.QuestionPlan) lists the documents holding a question term, those with one term first (a
    score is one weight, w[s_up]), then those with several (their weights summed in ascending term order: the
    reference's order). So the scores come out one after the other into a contiguous array, with no
    accumulator to scatter into or clear. Selection looks only at the scores at or above a cut that cannot
    exceed the m-th best score:
    * with a hint (hint_p, hint_d: questions x m, the positions and documents of a run's best m, e.g. at the
      previous k1 or b), the lowest of those m distinct documents' scores. The candidates are the hint's m in
      its order, then the few others at or above the cut (a scan that skips blocks below it); after a small
      parameter change that list is nearly sorted, and an insertion sort settles it (`_settle_order`; past
      sort_budget moves per candidate, the general sort takes over);
    * else the m-th best of a strided sample of the scores, and the candidates are sorted (`_sorted_best`).
    A judged document is ranked by counting the documents that beat it: among the candidates when it scores at
    or above the cut, else over all scores (vectorised, four judged documents a pass). The outputs never
    depend on the hint. j_pos: the judged documents' positions (bm25.locate, -1 for none), found once per
    dataset. top_p receives the positions of the best m (a later run's hint); probe_p (questions x P, may be
    P = 0): positions whose scores are also wanted (LSA's best, for the weighted fusion), into probe_s.
    """
    vals = np.empty(n_docs)
    found = np.empty(n_docs + 1, dtype=np.int64)  # positions a scan found (it writes one past its count)
    cv = np.empty(n_docs + m)  # the candidates: values, documents, positions
    cd = np.empty(n_docs + m, dtype=np.int64)
    cp = np.empty(n_docs + m, dtype=np.int64)
    sel = np.empty(n_docs + m, dtype=np.int64)  # scratch for _sorted_best
    neg = np.empty(n_docs + m)
    kk = np.empty(n_docs + m, dtype=np.int64)
    flags = np.zeros(n_docs + 8, dtype=np.uint8)
    for q in items:
        s0, m0 = s_ptr[q], m_ptr[q]
        ns, nm = s_ptr[q + 1] - s0, m_ptr[q + 1] - m0
        nt = ns + nm
        nr = 0
        for i in range(ns):  # one weight each: a gather, no branch
            x = w[s_up[s0 + i]]
            vals[i] = x
            nr += x > thr
        for j in range(nm):
            a, b = m_start[m0 + j], m_start[m0 + j + 1]
            x = w[m_up[a]]
            for e in range(a + 1, b):
                x += w[m_up[e]]
            vals[ns + j] = x
            nr += x > thr
        cut = -np.inf
        nh = 0
        lowest = np.inf
        if hint_p.shape[1] >= m:
            for i in range(m):
                pi = hint_p[q, i]
                if pi >= 0:
                    nh += 1
                    lowest = min(lowest, vals[pi])
        hinted = nh == m and m > 0
        nc = 0
        if hinted:  # the hint's m in its order, then the others at or above the cut
            cut = lowest
            for i in range(m):
                pi = hint_p[q, i]
                cv[i] = vals[pi]
                cd[i] = hint_d[q, i]
                cp[i] = pi
                vals[pi] = -np.inf  # hidden from the scan (put back below)
            nc = m
        elif nt > 2 * m:  # the m-th best of a strided sample
            stride = int(np.sqrt(nt / m))  # balances the sample's cost against the candidates'
            n_s = (nt + stride - 1) // stride
            if stride >= 2 and n_s >= m:
                sample = vals[:nt:stride].copy()
                cut = np.partition(sample, n_s - m)[n_s - m]
        n_found = _scan_at_least(vals, nt, cut, found, 0)
        for f in range(n_found):
            i = found[f]
            cv[nc] = vals[i]
            cd[nc] = _pos_doc(i, s0, ns, m0, s_up, m_up, m_start, u_docs)
            cp[nc] = i
            nc += 1
        if hinted:
            for i in range(m):
                vals[cp[i]] = cv[i]
        for i in range(probe_p.shape[1]):
            pi = probe_p[q, i]
            probe_s[q, i] = vals[pi] if pi >= 0 else 0.0
        j0, j1 = j_ptr[q], j_ptr[q + 1]
        nj = j1 - j0
        j_s = np.zeros(nj)
        for j in range(nj):
            pj = j_pos[j0 + j]
            if pj >= 0:
                j_s[j] = vals[pj]  # else 0: no question term (or not a document of the corpus)
        # judged documents below the cut lie beyond the candidates: count the scores above them (four a pass)
        low = np.empty(nj, dtype=np.int64)
        nl = 0
        for j in range(nj):
            j_rank[j0 + j] = 0
            if j_s[j] > thr and j_s[j] < cut:
                low[nl] = j
                nl += 1
        for g in range(0, nl, 4):
            s4 = np.full(4, np.inf)
            for r in range(min(4, nl - g)):
                s4[r] = j_s[low[g + r]]
            c = _count_above(vals, nt, s4[0], s4[1], s4[2], s4[3])
            e4 = np.full(4, np.nan)  # the values tied by other documents: those with a smaller key beat it
            for r in range(min(4, nl - g)):
                if c[4 + r] > 1:
                    e4[r] = s4[r]
            n_eq = 0 if np.isnan(e4).all() else _scan_equal(vals, nt, e4[0], e4[1], e4[2], e4[3], found, flags)
            for r in range(min(4, nl - g)):
                j = low[g + r]
                jr = 1 + c[r]
                if c[4 + r] > 1:
                    s = s4[r]
                    kj = key[j_doc[j0 + j]]
                    for t in range(n_eq):
                        i = found[t]
                        if vals[i] == s and key[_pos_doc(i, s0, ns, m0, s_up, m_up, m_start, u_docs)] < kj:
                            jr += 1
                j_rank[j0 + j] = jr
        # the others: every document that beats one scores at or above the cut, so it is a candidate
        for j in range(nj):
            s = j_s[j]
            if s > thr and not s < cut:
                kj = key[j_doc[j0 + j]]
                beat = 0
                for c in range(nc):
                    x = cv[c]
                    if x > s or (x == s and key[cd[c]] < kj):
                        beat += 1
                j_rank[j0 + j] = 1 + beat
        ts = top_s[q]
        td = top_d[q]
        tp = top_p[q]
        if hinted and _settle_order(cv, cd, cp, nc, key, sort_budget * nc):
            h = min(m, nc)
            for r in range(h):
                ts[r] = cv[r]
                td[r] = cd[r]
                tp[r] = cp[r]
        else:
            h = _sorted_best(cv, cd, cp, nc, key, m, sel, neg, kk, ts, td, tp)
        n_top[q] = h
        n_res[q] = nr
        if nt < n_docs:  # the documents without a question term score 0
            lo[q] = 0.0
            hi[q] = ts[0] if h > 0 else 0.0
        else:
            vmin = np.inf
            for i in range(nt):
                vmin = min(vmin, vals[i])
            lo[q] = vmin
            hi[q] = ts[0]


@njit(inline="always")
def _bm25_at(q, d, q_ptr, q_u, u_ptr, u_docs, u_f, idf_u, norm, k1p1):
    """BM25 score of one document for one question, summed as bm25_rank sums it."""
    s = 0.0
    for a in range(q_ptr[q], q_ptr[q + 1]):
        u = q_u[a]
        lo_, hi_ = u_ptr[u], u_ptr[u + 1]
        while lo_ < hi_:  # binary search of d in the term's sorted postings
            mid = (lo_ + hi_) // 2
            if u_docs[mid] < d:
                lo_ = mid + 1
            else:
                hi_ = mid
        if lo_ < u_ptr[u + 1] and u_docs[lo_] == d:
            f = u_f[lo_]
            s += idf_u[u] * ((f * k1p1) / (f + norm[d]))
    return s


@njit(inline="always")
def _lsa_at(qv, vecs, d):
    """LSA cosine of one document (vecs: documents x dims): q[0] * v[0] + q[1] * v[1] + ..., left to right."""
    k = qv.size
    if k == 0:
        return 0.0
    s = qv[0] * vecs[d, 0]
    for c in range(1, k):
        s += qv[c] * vecs[d, c]
    return s


@njit(nogil=True, cache=True)
def bm25_at(items, qs, ds, q_ptr, q_u, u_ptr, u_docs, u_f, idf_u, norm, k1p1, out):
    """BM25 scores of (question, document) pairs."""
    for i in items:
        out[i] = _bm25_at(qs[i], ds[i], q_ptr, q_u, u_ptr, u_docs, u_f, idf_u, norm, k1p1)


# ------------------------------------------------------------------------------------------- LSA


@njit(nogil=True, cache=True)
def lsa_rank(items, qvec, vt, key, thr, m, j_ptr, j_doc, j_rank, top_d, top_s, n_top, n_res, lo, hi):
    """Cosines of each question with every document (in a buffer of one row), the best m, counts, judged ranks."""
    n_docs = vt.shape[1]
    k = vt.shape[0]
    buf = np.zeros(n_docs)
    docs = np.arange(n_docs)
    for q in items:
        if k == 0:
            buf[:] = 0.0
        else:
            c = qvec[q, 0]
            for d in range(n_docs):
                buf[d] = c * vt[0, d]
            for cc in range(1, k):
                c = qvec[q, cc]
                for d in range(n_docs):
                    buf[d] += c * vt[cc, d]
        j0, j1 = j_ptr[q], j_ptr[q + 1]
        j_s, j_k, j_act = _judged_in_row(buf, j_doc, j0, j1, key, thr)
        h, nr, vmin, vmax = _select(docs, buf, n_docs, False, key, thr, m, j_s, j_k, j_act,
                                    j_rank[j0:j1], top_d[q], top_s[q])
        n_top[q] = h
        n_res[q] = nr
        lo[q] = vmin
        hi[q] = vmax


@njit(nogil=True, cache=True)
def lsa_at(items, qs, ds, qvec, vecs, out):
    """LSA cosines of (question, document) pairs (vecs: documents x dims)."""
    for i in items:
        out[i] = _lsa_at(qvec[qs[i]], vecs, ds[i])


@njit(nogil=True, cache=True)
def lsa_rows(items, top_d, n_top, qvec, vecs, out):
    """LSA cosines of each question's first n_top[q] documents of top_d[q] (questions x depth; 0 beyond)."""
    for q in items:
        for i in range(top_d.shape[1]):
            out[q, i] = _lsa_at(qvec[q], vecs, top_d[q, i]) if i < n_top[q] else 0.0


# ------------------------------------------------------------------------------------------- generic rows


@njit(nogil=True, cache=True)
def rank_sparse(items, indptr, cols, vals, row0, n_docs, key, thr, m, j_ptr, j_doc,
                j_rank, top_d, top_s, n_top, n_res):
    """rank_rows for a CSR block of score rows: stored entries only (absent = not a result)."""
    mark = np.full(n_docs, -1, dtype=np.int64)
    for r in items:
        q = row0 + r
        a, b = indptr[r], indptr[r + 1]
        j0, j1 = j_ptr[q], j_ptr[q + 1]
        nj = j1 - j0
        for j in range(nj):
            jd = j_doc[j0 + j]
            if jd >= 0:
                mark[jd] = -1
        for i in range(a, b):
            mark[cols[i]] = i
        j_s = np.empty(nj)
        j_k = np.empty(nj, dtype=np.int64)
        j_act = np.zeros(nj, dtype=np.bool_)
        for j in range(nj):
            jd = j_doc[j0 + j]
            j_s[j] = 0.0
            j_k[j] = 0
            if jd >= 0 and mark[jd] >= a and mark[jd] < b and vals[mark[jd]] > thr:
                j_s[j] = vals[mark[jd]]
                j_k[j] = key[jd]
                j_act[j] = True
        h, nr, _, _ = _select(cols[a:b], vals[a:b], b - a, False, key, thr, m, j_s, j_k, j_act,
                              j_rank[j0:j1], top_d[q], top_s[q])
        for i in range(a, b):
            mark[cols[i]] = -1
        n_top[q] = h
        n_res[q] = nr


@njit(nogil=True, cache=True)
def rank_dense(items, rows, row0, key, thr, m, j_ptr, j_doc, j_rank, top_d, top_s, n_top, n_res):
    """rank_rows for a dense block of score rows."""
    n_docs = rows.shape[1]
    docs = np.arange(n_docs)
    for r in items:
        q = row0 + r
        row = rows[r]
        j0, j1 = j_ptr[q], j_ptr[q + 1]
        j_s, j_k, j_act = _judged_in_row(row, j_doc, j0, j1, key, thr)
        h, nr, _, _ = _select(docs, row, n_docs, False, key, thr, m, j_s, j_k, j_act,
                              j_rank[j0:j1], top_d[q], top_s[q])
        n_top[q] = h
        n_res[q] = nr


@njit(nogil=True, cache=True)
def list_ranks(items, l_ptr, l_docs, j_ptr, j_doc, out):
    """Rank of each judged document in its question's ordered list (1-based), 0 when absent."""
    for q in items:
        a, b = l_ptr[q], l_ptr[q + 1]
        for j in range(j_ptr[q], j_ptr[q + 1]):
            jd = j_doc[j]
            out[j] = 0
            for i in range(a, b):
                if l_docs[i] == jd:
                    out[j] = i - a + 1
                    break


# ------------------------------------------------------------------------------------------- weighted fusion


@njit(inline="always")
def _fuse(x, lo_b, span_b, y, lo_l, span_l, alpha, beta):
    nb = (x - lo_b) / span_b if span_b > 0 else 0.0
    nl = (y - lo_l) / span_l if span_l > 0 else 0.0
    return alpha * nb + beta * nl


@njit(nogil=True, cache=True)
def weighted_topk(items, n_docs, key, alpha, beta, fd,
                  b_d, b_s, b_n, b_lo, b_hi, l_of_b,
                  l_d, l_s, l_n, l_lo, l_hi, b_of_l,
                  out_d, out_s, out_n, fallback):
    """Weighted fusion's top fd from the union of both retrievers' best lists (a threshold-algorithm check).

    A document in neither list scores at most fuse(b-bound, l-bound), the two lists' last scores (0 for BM25
    when its list holds every matching document). When the fd-th candidate beats that bound strictly, or the
    lists hold every document, the top fd is exact; otherwise the question is flagged for the full scan.
    """
    stamp = np.full(n_docs, -1, dtype=np.int64)
    hk = np.empty(fd, dtype=np.int64)
    mb = b_d.shape[1]
    ml = l_d.shape[1]
    for q in items:
        fallback[q] = False
        if b_hi[q] == 0 and l_hi[q] <= 0:  # neither retriever scores: no result at all
            out_n[q] = 0
            continue
        lb, sb = b_lo[q], b_hi[q] - b_lo[q]
        ll, sl = l_lo[q], l_hi[q] - l_lo[q]
        os_ = out_s[q]
        od_ = out_d[q]
        h = 0
        nc = 0
        for i in range(b_n[q]):
            d = b_d[q, i]
            stamp[d] = q
            nc += 1
            f = _fuse(b_s[q, i], lb, sb, l_of_b[q, i], ll, sl, alpha, beta)
            kd = key[d]
            if h < fd:
                _insert(os_, hk, od_, h, f, kd, d)
                h += 1
            elif os_[0] < f or (os_[0] == f and hk[0] > kd):
                _replace_root(os_, hk, od_, h, f, kd, d)
        for i in range(l_n[q]):
            d = l_d[q, i]
            if stamp[d] == q:
                continue
            stamp[d] = q
            nc += 1
            f = _fuse(b_of_l[q, i], lb, sb, l_s[q, i], ll, sl, alpha, beta)
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
        b_bound = b_s[q, mb - 1] if b_n[q] == mb else 0.0
        l_bound = l_s[q, ml - 1] if l_n[q] == ml else -np.inf
        if l_n[q] < ml:  # the LSA list holds every document: nothing lies outside it
            continue
        bound = _fuse(b_bound, lb, sb, l_bound, ll, sl, alpha, beta)
        if not (out_s[q, fd - 1] > bound):
            fallback[q] = True


@njit(nogil=True, cache=True)
def weighted_scan(items, full, n_docs, key, alpha, beta, fd, q_ptr, q_u, u_ptr, u_docs, u_f, idf_u, norm, k1p1,
                  qvec, vecs, b_lo, b_hi, l_d, l_s, l_n, l_lo, l_hi, out_d, out_s, out_n, fallback):
    """The weighted fusion's exact second and third tries for the questions the list bound could not settle.

    Second try (full=False): BM25 is re-accumulated from the postings, so every document with a question term
    has its exact BM25 score. Those in LSA's list are fused exactly; the others have an LSA score at most the
    list's last, so fuse(bm25, last) bounds them, and only those whose bound reaches the current fd-th fused
    score (the first try's, a lower bound of the final one) are looked up and fused. A document with no
    question term outside LSA's list scores at most fuse(0, last): when the top fd beats that strictly, the
    question is settled, else it stays flagged. Third try (full=True): every document is fused.
    """
    acc = np.zeros(n_docs)
    stamp = np.full(n_docs, -1, dtype=np.int64)
    listed = np.full(n_docs, -1, dtype=np.int64)
    touched = np.empty(n_docs, dtype=np.int64)
    hk = np.empty(fd, dtype=np.int64)
    ml = l_d.shape[1]
    for q in items:
        bar = out_s[q, fd - 1] if out_n[q] == fd else -np.inf
        nt = 0
        for a in range(q_ptr[q], q_ptr[q + 1]):
            u = q_u[a]
            w_idf = idf_u[u]
            for p in range(u_ptr[u], u_ptr[u + 1]):
                f = u_f[p]
                d = u_docs[p]
                w = w_idf * ((f * k1p1) / (f + norm[d]))
                if stamp[d] != q:
                    stamp[d] = q
                    acc[d] = w
                    touched[nt] = d
                    nt += 1
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
                f = _fuse(x, lb, sb, _lsa_at(qv, vecs, d), ll, sl, alpha, beta)
                kd = key[d]
                if h < fd:
                    _insert(os_, hk, od_, h, f, kd, d)
                    h += 1
                elif os_[0] < f or (os_[0] == f and hk[0] > kd):
                    _replace_root(os_, hk, od_, h, f, kd, d)
            _heap_sort(os_, hk, od_, h)
            out_n[q] = h
            fallback[q] = False
            continue
        for i in range(l_n[q]):  # LSA's list: both scores exact
            d = l_d[q, i]
            listed[d] = q
            x = acc[d] if stamp[d] == q else 0.0
            f = _fuse(x, lb, sb, l_s[q, i], ll, sl, alpha, beta)
            kd = key[d]
            if h < fd:
                _insert(os_, hk, od_, h, f, kd, d)
                h += 1
            elif os_[0] < f or (os_[0] == f and hk[0] > kd):
                _replace_root(os_, hk, od_, h, f, kd, d)
        if l_n[q] < ml:  # the list holds every document
            _heap_sort(os_, hk, od_, h)
            out_n[q] = h
            fallback[q] = False
            continue
        l_last = l_s[q, ml - 1]
        for i in range(nt):  # documents with a question term, outside LSA's list
            d = touched[i]
            if listed[d] == q:
                continue
            if _fuse(acc[d], lb, sb, l_last, ll, sl, alpha, beta) < bar:
                continue
            f = _fuse(acc[d], lb, sb, _lsa_at(qv, vecs, d), ll, sl, alpha, beta)
            kd = key[d]
            if h < fd:
                _insert(os_, hk, od_, h, f, kd, d)
                h += 1
            elif os_[0] < f or (os_[0] == f and hk[0] > kd):
                _replace_root(os_, hk, od_, h, f, kd, d)
        _heap_sort(os_, hk, od_, h)
        out_n[q] = h
        bound = _fuse(0.0, lb, sb, l_last, ll, sl, alpha, beta)
        fallback[q] = not (h == fd and os_[fd - 1] > bound)


# ------------------------------------------------------------------------------------------- RRF


@njit(nogil=True, cache=True)
def rrf_fuse(items, r_ptr, r_docs, depth, k, key, out_d, out_s, out_n):
    """Reciprocal Rank Fusion per question: fusion.rrf_points, 1 / (k + rank), summed over the rankings in order (r_ptr: rankings x
    (questions + 1) offsets into r_docs, each ranking's lists laid end to end after the previous ranking's),
    the union ordered by points descending, then key; out_d/out_s: questions x (rankings * depth)."""
    nr = r_ptr.shape[0]
    cap = out_d.shape[1]
    cd = np.empty(cap, dtype=np.int64)
    tot = np.empty(cap)
    kk = np.empty(cap, dtype=np.int64)
    neg = np.empty(cap)
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
            neg[c] = -tot[c]
            kk[c] = key[cd[c]]
        order = _order_desc(neg, kk, nc)
        for i in range(nc):
            out_d[q, i] = cd[order[i]]
            out_s[q, i] = tot[order[i]]
        out_n[q] = nc
