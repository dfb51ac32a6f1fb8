"""Selection and judged ranks: a row's candidates at or above a cut sorted into its best m, the exact rank of
every judged document (1 + the documents that beat it), a dense row's sampled cut, and the generic rows' passes
(`rank_sparse`, `rank_dense`, `list_ranks`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ..core.thresholds import SAMPLE_MARGIN, SAMPLE_RUN, SAMPLE_SHARE, SCAN_RUN
from .heap import _select_into
from .layout import Span, _pos_doc
from .rules import ranks_before

SOURCE_DIGEST = "6761915855525b64"  # of the project files imported above (kernels/__init__.py: numba's cache)


before = njit(inline="always")(ranks_before)


@njit
def order_desc(vals, keys, n):
    """Positions 0..n-1 in ranking order (ranks_before; ranking.order_by_score is the reference): argsort of the
    negated values, then each run of equal values put in key order (insertion sort for short runs, an argsort of
    the keys for long ones)."""
    o = np.argsort(-vals[:n])
    i = 0
    while i < n:
        j = i + 1
        while j < n and vals[o[j]] == vals[o[i]]:
            j += 1
        if j - i > 32:
            run = o[i:j].copy()
            o[i:j] = run[np.argsort(keys[run])]
        else:
            for a in range(i + 1, j):
                x = o[a]
                b = a
                while b > i and before(vals[x], keys[x], vals[o[b - 1]], keys[o[b - 1]]):
                    o[b] = o[b - 1]
                    b -= 1
                o[b] = x
        i = j
    return o


class Candidates(NamedTuple):
    """A BM25 question's candidates for its best m: scores, documents, layout positions."""

    score: np.ndarray
    doc: np.ndarray
    pos: np.ndarray


class JudgedRow(NamedTuple):
    """One question's judged documents: their scores and documents (-1 for one outside the corpus) in, their ranks
    out (a slice of ranking.Judged)."""

    score: np.ndarray
    doc: np.ndarray
    rank: np.ndarray


NO_SPAN = Span(0, 0, 0, 0)  # a dense row's: its positions are its documents


@njit
def sorted_best(cand, nc, key, m, picked, vals, keys, top_s, top_d, top_p):
    """The best m of the first nc candidates (cand: Candidates) in ranking order, into top_s / top_d / top_p;
    returns how many.

    With more than m candidates, a partial sort (np.partition) finds the m-th best score t; all above t are
    kept, and of those equal to t only the smallest keys that fill m (a partial sort of the keys). The m kept
    are then sorted (`order_desc`). Linear in the candidates, however many tie. picked, vals, keys: scratch.
    """
    n_picked = 0
    if nc > m:
        for c in range(nc):
            vals[c] = cand.score[c]
        t = np.partition(vals[:nc], nc - m)[nc - m]
        tied = np.empty(nc, dtype=np.int64)
        nti = 0
        for c in range(nc):  # above t kept; those tied at t set aside, their keys in keys
            if cand.score[c] > t:
                picked[n_picked] = c
                n_picked += 1
            elif cand.score[c] == t:
                tied[nti] = c
                keys[nti] = key[cand.doc[c]]
                nti += 1
        need = m - n_picked
        kt = np.partition(keys[:nti], need - 1)[need - 1] if nti > need else np.iinfo(np.int64).max
        for c in range(nti):
            if keys[c] <= kt:  # keys are distinct: exactly `need` of them (or all the tied)
                picked[n_picked] = tied[c]
                n_picked += 1
    else:
        for c in range(nc):
            picked[c] = c
        n_picked = nc
    for c in range(n_picked):
        vals[c] = cand.score[picked[c]]
        keys[c] = key[cand.doc[picked[c]]]
    order = order_desc(vals, keys, n_picked)
    h = min(m, n_picked)
    for r in range(h):
        c = picked[order[r]]
        top_s[r] = cand.score[c]
        top_d[r] = cand.doc[c]
        top_p[r] = cand.pos[c]
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


@njit(inline="always")
def _scan_at_least(vals, n, cut, out, nc):
    """Append to out[nc:] the indices i < n with vals[i] >= cut, in order; returns the new count. Each run of
    SCAN_RUN values is counted in vector instructions and looked at one by one only when one reaches the cut
    (a run's maximum does not vectorise without fast-math: counting measured 60 against 90-100 us a 100k row)."""
    base = 0
    while base + SCAN_RUN <= n:
        hot = 0
        for t in range(SCAN_RUN):
            hot += vals[base + t] >= cut
        if hot:
            for t in range(SCAN_RUN):
                if vals[base + t] >= cut:
                    out[nc] = base + t
                    nc += 1
        base += SCAN_RUN
    for i in range(base, n):
        if vals[i] >= cut:
            out[nc] = i
            nc += 1
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
                nc += flags[i] != 0
    return nc


@njit(inline="always")
def _doc_at(by_doc, span, i):
    """The document at position i of a score row: i itself for a dense row (by_doc None), else the position's
    document in a BM25 question layout (`_pos_doc`)."""
    if by_doc is None:
        return i
    return _pos_doc(by_doc, span, i)


@njit
def _judged_ranks(vals, n_touched, cut, thr, cand, nc, judged, key, by_doc, span, ws):
    """Each judged document's rank among a question's results, 1 + the documents that beat it (0 for one scoring
    at or below thr, and for one outside the corpus: doc -1), into judged.rank. vals[:n_touched]: the question's scores
    (position i: document `_doc_at(by_doc, span, i)`), judged (`JudgedRow`): the judged documents' scores and
    documents, cand[:nc]: every position scoring at or above `cut`.

    A judged document at or above the cut is beaten only by candidates: they are counted. One below it lies
    beyond them: the scores above it are counted over the whole row, four judged documents a vectorised pass,
    and the documents tied with it (rare) looked at one by one. ws (`Scratch`): its found and flags (n_touched + 8)."""
    judged_scores, j_doc, j_rank, found, flags = judged.score, judged.doc, judged.rank, ws.found, ws.flags
    low = np.empty(judged_scores.size, dtype=np.int64)
    j_rank[:] = 0
    nl = _judged_below(judged_scores, j_doc, thr, cut, low)
    for g in range(0, nl, 4):
        s4 = np.full(4, np.inf)
        for r in range(min(4, nl - g)):
            s4[r] = judged_scores[low[g + r]]
        c = _count_above(vals, n_touched, s4[0], s4[1], s4[2], s4[3])
        e4 = np.full(4, np.nan)  # the values tied by other documents: those with a smaller key beat it
        for r in range(min(4, nl - g)):
            if c[4 + r] > 1:
                e4[r] = s4[r]
        n_eq = 0 if np.isnan(e4).all() else _scan_equal(vals, n_touched, e4[0], e4[1], e4[2], e4[3], found, flags)
        for r in range(min(4, nl - g)):
            j = low[g + r]
            jr = 1 + c[r]
            if c[4 + r] > 1:
                s = s4[r]
                kj = key[j_doc[j]]
                for t in range(n_eq):  # the ties at s (the others found match another judged score)
                    i = found[t]
                    d = _doc_at(by_doc, span, i)
                    if vals[i] == s and before(vals[i], key[d], s, kj):
                        jr += 1
            j_rank[j] = jr
    _judged_among(judged_scores, j_doc, thr, cut, cand, nc, key, j_rank)


@njit(inline="always")
def _judged_below(judged_scores, j_doc, thr, cut, low):
    """The judged documents among the results (above thr, in the corpus) that score below the cut, whose ranks
    need a count over the whole row, into low; returns how many."""
    nl = 0
    for j in range(judged_scores.size):
        if j_doc[j] >= 0 and judged_scores[j] > thr and judged_scores[j] < cut:
            low[nl] = j
            nl += 1
    return nl


@njit(inline="always")
def _judged_among(judged_scores, j_doc, thr, cut, cand, nc, key, j_rank):
    """The ranks of the judged documents among the results that score at or above the cut: every document that
    beats one does too, so it is one of the nc candidates."""
    for j in range(judged_scores.size):
        s = judged_scores[j]
        if j_doc[j] >= 0 and s > thr and not s < cut:
            j_rank[j] = 1 + _beaten_among(cand, nc, key, s, key[j_doc[j]])


@njit(inline="always")
def _beaten_among(cand, nc, key, s, kj):
    """How many of the first nc candidates rank before (score s, tie key kj)."""
    beat = 0
    for c in range(nc):
        beat += before(cand.score[c], key[cand.doc[c]], s, kj)
    return beat


class Scratch(NamedTuple):
    """The work arrays of a selection over rows of up to n entries keeping m (`scratch`): one set per thread."""

    found: np.ndarray  # positions a scan found (it writes one past its count)
    cand: Candidates
    picked: np.ndarray  # sorted_best's scratch
    vals: np.ndarray
    keys: np.ndarray
    flags: np.ndarray  # _scan_equal's scratch
    heap: np.ndarray  # the sample's best (_sample_cut)
    top_p: np.ndarray  # positions of the best m (a dense row's are its documents)
    bits: np.ndarray  # one int64, read as a float64 (_dense_pass's lowest and highest)


@njit
def scratch(n, m):
    """Scratch for rows of up to n entries keeping the best m."""
    return Scratch(
        np.empty(n + 1, dtype=np.int64),
        Candidates(np.empty(n + m), np.empty(n + m, dtype=np.int64), np.empty(n + m, dtype=np.int64)),
        np.empty(n + m, dtype=np.int64),
        np.empty(n + m),
        np.empty(n + m, dtype=np.int64),
        np.zeros(n + 8, dtype=np.uint8),
        np.empty(n + 1),
        np.empty(m, dtype=np.int64),
        np.zeros(1, dtype=np.int64),
    )


@njit(inline="always")
def _sample_plan(n, m):
    """How a row of n entries keeping m is sampled: (stride, entries sampled, c); stride < 2: not sampled (a short
    row, or nothing kept)."""
    stride = min(64, n // (SAMPLE_SHARE * max(m, 1))) if m >= 1 else 0
    if stride < 2:
        return stride, 0, 0
    n_sampled = 0
    for start in range(0, n, SAMPLE_RUN * stride):
        n_sampled += min(SAMPLE_RUN, n - start)
    return stride, n_sampled, min(n_sampled, (3 * m) // (2 * stride) + SAMPLE_MARGIN)


@njit(inline="always")
def _sampled_at(t, stride):
    """The position of a row's t-th sampled entry (runs of SAMPLE_RUN adjacent ones, one run in `stride`)."""
    return (t // SAMPLE_RUN) * SAMPLE_RUN * stride + t % SAMPLE_RUN


@njit
def _sample_cut(row, n, m, heap):
    """A cut for the best m of row[:n] that leaves about 1.5 m entries at or above it: the c-th best of one entry
    in `stride` (runs of SAMPLE_RUN adjacent ones), with c = 1.5 m / stride + SAMPLE_MARGIN (`_sample_plan`);
    -inf when the row is short. Not a bound: the caller checks that m entries reach it. heap: scratch."""
    stride, n_sampled, c = _sample_plan(n, m)
    if stride < 2:
        return -np.inf
    return _cth_best(row, n_sampled, c, stride, heap)


@njit(inline="always")
def _cth_best(row, n_sampled, c, stride, heap):
    """The c-th best of the n_sampled entries of row sampled one run in `stride` (`_sampled_at`; stride 1:
    row[:n_sampled]), by a min-heap of the c best (heap: scratch of c entries at least): its root."""
    h = 0
    for t in range(n_sampled):
        x = row[_sampled_at(t, stride)]
        if h < c:
            p = h
            h += 1
            while p > 0 and heap[(p - 1) // 2] > x:
                heap[p] = heap[(p - 1) // 2]
                p = (p - 1) // 2
            heap[p] = x
        elif x > heap[0]:
            p = 0
            while True:
                a = 2 * p + 1
                if a >= h:
                    break
                if a + 1 < h and heap[a + 1] < heap[a]:
                    a += 1
                if heap[a] >= x:
                    break
                heap[p] = heap[a]
                p = a
            heap[p] = x
    return heap[0]


_SIGN_OFF = np.int64(0x7FFFFFFFFFFFFFFF)


@njit(inline="always")
def _ordered(b):
    """A float64's bits (as int64) turned into an int64 of the same order (-0.0 just below +0.0); its own inverse."""
    return b ^ ((b >> 63) & _SIGN_OFF)


@njit
def _dense_pass(row, n, thr, cut, found, bits):
    """How many of row[:n] score above thr, the lowest and highest score (`_count_range`), and the positions of
    the entries at or above `cut` into found (`_scan_at_least`; returns their count too). bits: one int64 of
    scratch."""
    nres, lo, hi = _count_range(row, n, thr, bits)
    return nres, lo, hi, _scan_at_least(row, n, cut, found, 0)


@njit(inline="always")
def _count_range(row, n, thr, bits):
    """How many of row[:n] score above thr, and the lowest and highest score (inf, -inf for none), in vector
    instructions: the range is compared as ordered integers (`_ordered`: a float minimum does not vectorise
    without fast-math). Of +0.0 and -0.0, the same score, the first met is kept, as a plain loop does.
    bits: one int64 of scratch."""
    nres = 0
    for i in range(n):
        nres += row[i] > thr
    iv = row.view(np.int64)
    kmin = _SIGN_OFF
    kmax = -_SIGN_OFF - 1
    for i in range(n):
        k = _ordered(iv[i])
        kmin = min(kmin, k)
        kmax = max(kmax, k)
    bits[0] = _ordered(kmin)
    lo = bits.view(np.float64)[0]
    bits[0] = _ordered(kmax)
    hi = bits.view(np.float64)[0]
    if lo == 0.0 or hi == 0.0:
        lo, hi = np.inf, -np.inf
        for i in range(n):
            if row[i] < lo:
                lo = row[i]
            if row[i] > hi:
                hi = row[i]
    if n == 0:
        lo, hi = np.inf, -np.inf
    return nres, lo, hi


@njit
def _dense_select(row, key, thr, m, j_doc, top_d, top_s, j_rank, ws):
    """One dense score row (entry i: document i): its best m in ranking order into top_d / top_s, the judged
    documents' (j_doc, -1 for none) ranks among the results (above thr) into j_rank; returns (kept, results,
    lowest, highest score). The same outputs as `_select` over every entry (tests/kernels/test_kernels.py).

    A sample gives a cut that about 1.5 m entries reach (`_sample_cut`); one pass counts, finds the entries at or
    above it (`_dense_pass`) and only those are sorted (`sorted_best`); when fewer than m reach it (rare),
    every entry is a candidate. The judged documents are ranked as BM25's pass ranks them (`_judged_ranks`).
    ws: `scratch`."""
    n = row.size
    cut = _sample_cut(row, n, m, ws.heap)
    nres, lo, hi, nf = _dense_pass(row, n, thr, cut, ws.found, ws.bits)
    if nf < m and nf < n:
        cut = -np.inf
        for i in range(n):
            ws.found[i] = i
        nf = n
    cand = ws.cand
    for f in range(nf):
        i = ws.found[f]
        cand.score[f] = row[i]
        cand.doc[f] = i
        cand.pos[f] = i
    h = sorted_best(cand, nf, key, m, ws.picked, ws.vals, ws.keys, top_s, top_d, ws.top_p) if m > 0 else 0
    nj = j_doc.size
    judged_scores = np.zeros(nj)
    for j in range(nj):
        if j_doc[j] >= 0:
            judged_scores[j] = row[j_doc[j]]
    _judged_ranks(row, n, cut, thr, cand, nf, JudgedRow(judged_scores, j_doc, j_rank), key, None, NO_SPAN, ws)
    return h, nres, lo, hi


@njit(inline="always")
def _dense_select_into(q, row, selection, out, ws):
    """`_dense_select` of question q's dense row into its slices of out (ranking.PassOutputs)."""
    j0, j1 = out.judged.ptr[q], out.judged.ptr[q + 1]
    h, nr, vmin, vmax = _dense_select(
        row,
        selection.tie_key,
        selection.threshold,
        selection.keep,
        out.judged.doc[j0:j1],
        out.top_d[q],
        out.top_s[q],
        out.judged.rank[j0:j1],
        ws,
    )
    out.n_top[q] = h
    out.n_res[q] = nr
    out.lo[q] = vmin
    out.hi[q] = vmax


@njit(nogil=True, cache=True)
def rank_sparse(items, rows, row0, selection, out):
    """ranking.rank_rows for a CSR block of score rows (rows: ranking.Csr; row r is question row0 + r): stored
    entries only (absent = not a result; lo / hi: over the stored entries), into out (ranking.PassOutputs).
    Reference: ranking.order_by_score of each row's results (tests/retrievers/test_ranking.py)."""
    key, thr = selection.tie_key, selection.threshold
    mark = np.full(key.size, -1, dtype=np.int64)
    for r in items:
        q = row0 + r
        a, b = rows.ptr[r], rows.ptr[r + 1]
        j_doc = out.judged.doc[out.judged.ptr[q] : out.judged.ptr[q + 1]]
        nj = j_doc.size
        for j in range(nj):
            if j_doc[j] >= 0:
                mark[j_doc[j]] = -1
        for i in range(a, b):
            mark[rows.doc[i]] = i
        judged_scores = np.zeros(nj)
        j_k = np.zeros(nj, dtype=np.int64)
        j_act = np.zeros(nj, dtype=np.bool_)
        for j in range(nj):
            jd = j_doc[j]
            if jd >= 0 and mark[jd] >= a and mark[jd] < b and rows.score[mark[jd]] > thr:
                judged_scores[j] = rows.score[mark[jd]]
                j_k[j] = key[jd]
                j_act[j] = True
        _select_into(q, rows.doc[a:b], rows.score[a:b], selection, judged_scores, j_k, j_act, out)
        for i in range(a, b):
            mark[rows.doc[i]] = -1


@njit(nogil=True, cache=True)
def rank_dense(items, rows, row0, selection, out):
    """ranking.rank_rows for a dense block of score rows (row r is question row0 + r), into out
    (ranking.PassOutputs). Reference: ranking.order_by_score of each row's results (tests/retrievers/test_ranking.py)."""
    ws = scratch(rows.shape[1], selection.keep)
    for r in items:
        _dense_select_into(row0 + r, rows[r], selection, out, ws)


@njit(nogil=True, cache=True)
def list_ranks(items, lists, judged):
    """Rank of each judged document (judged: ranking.Judged, its `rank` written) in its question's ordered list
    (lists: ranking.Csr), 1-based, 0 when absent. Reference: the 1-based position in the list
    (tests/kernels/test_kernels.py)."""
    for q in items:
        a, b = lists.ptr[q], lists.ptr[q + 1]
        for j in range(judged.ptr[q], judged.ptr[q + 1]):
            jd = judged.doc[j]
            judged.rank[j] = 0
            for i in range(a, b):
                if lists.doc[i] == jd:
                    judged.rank[j] = i - a + 1
                    break
