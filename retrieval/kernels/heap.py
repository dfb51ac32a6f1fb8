"""A bounded heap of (score, tie key, document) in ranking order, and selection of a sparse row's best through it."""

from __future__ import annotations

import numpy as np
from numba import njit

from .rules import ranks_before

SOURCE_DIGEST = "7375aa710c6a071f"  # of the project files imported above (kernels/__init__.py: numba's cache)


before = njit(inline="always")(ranks_before)


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
        if r < n and before(hs[c], hk[c], hs[r], hk[r]):  # the worse child
            c = r
        if before(hs[i], hk[i], hs[c], hk[c]):
            _swap(hs, hk, hd, i, c)
            i = c
        else:
            return


@njit
def _sift_up(hs, hk, hd, i):
    while i > 0:
        p = (i - 1) // 2
        if before(hs[p], hk[p], hs[i], hk[i]):
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
# returning the new h was tried: bench/speed.py measured the 100k k1 tick 3x slower, 676 ms against 222 ms; and
# again for the weighted fusion's passes: the 100k alpha fusion 5.3-6.1 ms written out, 28 ms through the helper).
# The fusions gather their candidates and offer them in one call per batch (`_keep_best`): alternated with the
# written-out offers under the same load, the 100k alpha fusion measured the same (7.2-9.0 ms at best, both).
# In a sparse row's pass (`_select`) the offer stays written out:
#     if h < m: _insert(...); h += 1
#     elif before(s, k, hs[0], hk[0]): _replace_root(...)
@njit
def _keep_best(vals, docs, n, key, m, hs, hk, hd, h):
    """Offer the n candidates (vals[i], docs[i]) to a heap of capacity m holding h entries (worst at the root);
    returns the new h. One call per batch of candidates: the offer is written out inside the loop."""
    for i in range(n):
        s = vals[i]
        d = docs[i]
        if h < m:
            _insert(hs, hk, hd, h, s, key[d], d)
            h += 1
        elif before(s, key[d], hs[0], hk[0]):
            _replace_root(hs, hk, hd, h, s, key[d], d)
    return h


@njit
def _heap_sort(hs, hk, hd, n):
    """Heap contents in place, best first."""
    for end in range(n - 1, 0, -1):
        _swap(hs, hk, hd, 0, end)
        _sift_down(hs, hk, hd, end, 0)


@njit
def _select(docs, vals, selection, judged_scores, j_k, j_act, j_out, top_d, top_s):
    """One row of rank_rows: entry i is document docs[i] with score vals[i]. The best selection.keep entries (raw,
    whatever their score) go to top_d / top_s best first, the results (above selection.threshold) are counted, and the
    judged documents' ranks among the results go to j_out (0 for the inactive ones). Judged documents: score
    judged_scores, tie key j_k, active (j_act) if they are results. Returns (kept, results, lowest, highest score).

    The best are kept in a heap (top_s, hk, top_d) whose root is the worst kept: an entry that does not beat
    the root costs two comparisons.
    """
    key, thr, m = selection.tie_key, selection.threshold, selection.keep
    nj = judged_scores.size
    order = np.empty(nj, dtype=np.int64)
    na = 0
    for j in range(nj):  # active judged documents, best first (insertion sort: a handful)
        j_out[j] = 0
        if j_act[j]:
            p = na
            while p > 0 and before(judged_scores[j], j_k[j], judged_scores[order[p - 1]], j_k[order[p - 1]]):
                order[p] = order[p - 1]
                p -= 1
            order[p] = j
            na += 1
    cnt = np.zeros(nj + 1, dtype=np.int64)
    ws = -np.inf
    wk = 0
    if na > 0:
        ws = judged_scores[order[na - 1]]
        wk = j_k[order[na - 1]]
    hk = np.empty(m, dtype=np.int64)
    h = 0
    nres = 0
    vmin = np.inf
    vmax = -np.inf
    for i in range(vals.size):
        d = docs[i]
        v = vals[i]
        if v < vmin:
            vmin = v
        if v > vmax:
            vmax = v
        if v > thr:
            nres += 1
        if h < m:
            _insert(top_s, hk, top_d, h, v, key[d], d)
            h += 1
        elif before(v, key[d], top_s[0], hk[0]):
            _replace_root(top_s, hk, top_d, h, v, key[d], d)
        if na > 0 and before(v, key[d], ws, wk):  # beats at least the worst judged result
            kd = key[d]
            p = na - 1  # climb from the worst: most documents beat only the deepest judged ones
            while p > 0 and before(v, kd, judged_scores[order[p - 1]], j_k[order[p - 1]]):
                p -= 1
            cnt[p] += 1
    _heap_sort(top_s, hk, top_d, h)
    run = 0
    for p in range(na):
        run += cnt[p]
        j_out[order[p]] = run + 1
    return h, nres, vmin, vmax


@njit(inline="always")
def _select_into(q, docs, vals, selection, judged_scores, j_k, j_act, out):
    """`_select` of question q's row into its slices of out (ranking.PassOutputs)."""
    j0, j1 = out.judged.ptr[q], out.judged.ptr[q + 1]
    h, nr, vmin, vmax = _select(
        docs, vals, selection, judged_scores, j_k, j_act, out.judged.rank[j0:j1], out.top_d[q], out.top_s[q]
    )
    out.n_top[q] = h
    out.n_res[q] = nr
    out.lo[q] = vmin
    out.hi[q] = vmax
