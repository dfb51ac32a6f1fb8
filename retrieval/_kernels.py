"""Compiled inner loops (numba): score, select and rank every question in one pass, never a dense questions x documents matrix.

Every kernel works on a set of questions and writes disjoint slices of preallocated outputs, so `parallel`
splits the questions over threads (each kernel releases the GIL). The arithmetic is spelled out operation by
operation, in the same order as the numpy formulas in bm25.py, lsa.py and fusion.py, so the numbers are the
same to the last bit (numba compiles without fast-math: no reassociation, no fused multiply-add):

* a BM25 weight is `bm25.bm25_weight`, inlined here (the same function the numpy paths call); a BM25 score
  is the sum of its question terms' weights in ascending term order, starting from the first;
* an LSA score is q[0] * v[0] + q[1] * v[1] + ... added left to right (lsa.score_chunks computes the same);
* a weighted-fusion score is w_1 * minmax(s_1) + w_2 * minmax(s_2) + ..., member by member, as fusion.fuse_rows
  writes it (the article's: alpha * minmax(bm25) + (1 - alpha) * minmax(lsa)).

Selection keeps the best `m` of a question ordered by `ranking.ranks_before` (score descending, tie key
ascending; the tie key is the document's position in id order, so ties go by document id), inlined here too.
BM25 (`bm25_rank`) and every dense row (LSA's, the dense retriever's, `rank_dense`: `_dense_select`) sort only
the candidates at or above a cut: the previous run's best (BM25 after a slider step), else a value about 1.5 m
scores reach in a sample, checked (every score is a candidate when fewer than m reach it); a sparse row offers
every entry to a bounded heap (`_select`). The exact rank of each judged document is 1 + the documents that
beat it: counted among the candidates when it is one, else over the whole row, four judged documents a
vectorised pass (`_judged_ranks`).

Each kernel must equal a plain numpy reference, named in its docstring and compared in the tests
(tests/test_perf_equivalence.py, tests/test_kernels.py, tests/test_bm25.py, tests/test_ranking.py):

| kernel | reference |
|---|---|
| bm25_weights | bm25.term_weights |
| term_order | np.lexsort of each term's postings by (count descending, length ascending, id) (bm25.term_groups) |
| bm25_rank | ranking.rank_rows(bm25.score(...)) (`bm25.search` of the score matrix) |
| bm25_at, bm25_rows | bm25.score, read at (question, document) |
| layout, bm25_locate | bm25.QuestionPlan.docs_at (layout positions and documents, each the other undone) |
| bm25_probe_sites | the term whose postings hold a single's posting (np.searchsorted of its index), its count |
| lsa_rank | ranking.rank_rows(lsa.score_chunks(...)) |
| lsa_at, lsa_rows | lsa.score_chunks, read at (question, document) |
| tfidf_rows, tfidf_columns | TfidfTransformer().fit_transform(counts) and its tocsc() (lsa.Tfidf.of_counts) |
| sparse_dense | scipy's CSR matrix @ dense matrix (lsa.Tfidf's products in the randomized SVD) |
| unit_lower_rows | scipy.linalg.lu(a, permute_l=True) (lsa.lu_permute_l: the randomized SVD's normaliser) |
| rank_sparse, rank_dense | ranking.order_by_score over each row's results (tests/test_ranking.py's `brute`) |
| list_ranks | the 1-based position of each judged document in its list |
| weighted_topk, weighted_scan | fusion.weighted_dense (rank_rows of the dense fused rows) |
| rrf_fuse | fusion.rrf_points summed per document, ordered by ranking.order_by_score |

The kernels take the plan's and the pass's arrays grouped in named tuples (bm25.Postings, bm25.Layout,
ranking.Judged, ranking.Selection, ranking.PassOutputs, ...), which numba passes as structs of arrays. With
NUMBA_DISABLE_JIT=1 every kernel runs as the plain Python it is written in (slowly): a debugger can step
through it, and .ci/run runs a part of the tests that way.

Each public kernel is a `Kernel`: the compiled dispatcher (cache=True: compiled once, then loaded from numba's
cache on disk) and its plain-Python twin, the same function bodies rebuilt over Python callees (`_python_twin`).
The app and the command line call `serve_small_from_python`: until the compiled kernels are loaded
(`engine.warm_up`, then `mark_ready`), a call of at most PYTHON_MAX_WORK steps runs the twin, so the invented
corpus answers at once on a fresh clone instead of after ~25 s of compiling; the numbers are the same to the
last bit (tests/test_kernels.py compares every system's lists both ways).
"""

from __future__ import annotations

import os
import threading
import types
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np
from numba import config, njit

from .bm25 import bm25_weight
from .ranking import ranks_before


def lowest_bit(b):
    """How many zero bits end b (b != 0), the index of its lowest set bit: numba's trailing_zeros intrinsic in
    plain Python."""
    x = int(b)
    return (x & -x).bit_length() - 1


if config.DISABLE_JIT:  # plain Python: the intrinsic has no Python body
    trailing_zeros = lowest_bit
else:
    from numba.cpython.unsafe.numbers import trailing_zeros

_weight = njit(inline="always")(bm25_weight)
_before = njit(inline="always")(ranks_before)
# numba's disk cache (cache=True) is keyed on this file's size and mtime only, never on the functions it inlines from
# other modules: this digest of their source (sha256 of inspect.getsource of bm25_weight then ranks_before, first 16
# hex digits) makes any edit of them an edit of this file, so no stale compiled kernel outlives it.
# tests/test_kernels.py checks it and prints the new value.
INLINED_SOURCE_DIGEST = "005705b5cabecb38"

_POOL_LOCK = threading.Lock()
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
    parallel_over(kernel, np.arange(n_items, dtype=np.int64), work, *args)


def parallel_over(kernel, items: np.ndarray, work: int, *args) -> None:
    """`parallel` over the given items (int64) instead of 0..n_items-1."""
    if isinstance(kernel, Kernel):
        kernel = kernel.pick(work)
    nt = min(threads(), items.size)
    if nt <= 1 or work < PARALLEL_MIN_WORK:
        kernel(items, *args)
        return
    pool = _pool(nt, getattr(_LOCAL, "background", False))
    for f in [pool.submit(kernel, items[i::nt].copy(), *args) for i in range(nt)]:
        f.result()


def submit(fn, *args):
    """`fn(*args)` on one of the worker threads `parallel` uses (the background's inside `in_background`): a
    Future. For work that runs beside the caller's own (the tokeniser's second half of a batch)."""
    return _pool(threads(), getattr(_LOCAL, "background", False)).submit(fn, *args)


_POOLS: dict[bool, ThreadPoolExecutor] = {}


def _lowest_priority() -> None:
    """This thread at the lowest scheduling priority (Linux: nice 19 for this thread alone; elsewhere nothing)."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    except (AttributeError, OSError):  # pragma: no cover - no per-thread priority here
        pass


def _pool(nt: int, background: bool) -> ThreadPoolExecutor:
    """The worker threads (at least nt): the app's, or the background's, each of which runs at the lowest priority."""
    with _POOL_LOCK:
        pool = _POOLS.get(background)
        if pool is None or pool._max_workers < nt:
            pool = _POOLS[background] = ThreadPoolExecutor(
                max_workers=nt, thread_name_prefix="retrieval-background" if background else "retrieval",
                initializer=_lowest_priority if background else None)
        return pool


# ------------------------------------------------------------------------------------------- heap


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
        if r < n and _before(hs[c], hk[c], hs[r], hk[r]):  # the worse child
            c = r
        if _before(hs[i], hk[i], hs[c], hk[c]):
            _swap(hs, hk, hd, i, c)
            i = c
        else:
            return


@njit
def _sift_up(hs, hk, hd, i):
    while i > 0:
        p = (i - 1) // 2
        if _before(hs[p], hk[p], hs[i], hk[i]):
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
#     elif _before(s, k, hs[0], hk[0]): _replace_root(...)


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
        elif _before(s, key[d], hs[0], hk[0]):
            _replace_root(hs, hk, hd, h, s, key[d], d)
    return h


@njit
def _heap_sort(hs, hk, hd, n):
    """Heap contents in place, best first."""
    for end in range(n - 1, 0, -1):
        _swap(hs, hk, hd, 0, end)
        _sift_down(hs, hk, hd, end, 0)


# ------------------------------------------------------------------------------------------- selection


@njit
def _select(docs, vals, sel, j_s, j_k, j_act, j_out, top_d, top_s):
    """One row of rank_rows: entry i is document docs[i] with score vals[i]. The best sel.keep entries (raw,
    whatever their score) go to top_d / top_s best first, the results (above sel.threshold) are counted, and the
    judged documents' ranks among the results go to j_out (0 for the inactive ones). Judged documents: score
    j_s, tie key j_k, active (j_act) if they are results. Returns (kept, results, lowest, highest score).

    The best are kept in a heap (top_s, hk, top_d) whose root is the worst kept: an entry that does not beat
    the root costs two comparisons.
    """
    key, thr, m = sel.tie_key, sel.threshold, sel.keep
    nj = j_s.size
    order = np.empty(nj, dtype=np.int64)
    na = 0
    for j in range(nj):  # active judged documents, best first (insertion sort: a handful)
        j_out[j] = 0
        if j_act[j]:
            p = na
            while p > 0 and _before(j_s[j], j_k[j], j_s[order[p - 1]], j_k[order[p - 1]]):
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
        elif _before(v, key[d], top_s[0], hk[0]):
            _replace_root(top_s, hk, top_d, h, v, key[d], d)
        if na > 0 and _before(v, key[d], ws, wk):  # beats at least the worst judged result
            kd = key[d]
            p = na - 1  # climb from the worst: most documents beat only the deepest judged ones
            while p > 0 and _before(v, kd, j_s[order[p - 1]], j_k[order[p - 1]]):
                p -= 1
            cnt[p] += 1
    _heap_sort(top_s, hk, top_d, h)
    run = 0
    for p in range(na):
        run += cnt[p]
        j_out[order[p]] = run + 1
    return h, nres, vmin, vmax


@njit(inline="always")
def _select_into(q, docs, vals, sel, j_s, j_k, j_act, out):
    """`_select` of question q's row into its slices of out (ranking.PassOutputs)."""
    j0, j1 = out.judged.ptr[q], out.judged.ptr[q + 1]
    h, nr, vmin, vmax = _select(docs, vals, sel, j_s, j_k, j_act, out.judged.rank[j0:j1], out.top_d[q], out.top_s[q])
    out.n_top[q] = h
    out.n_res[q] = nr
    out.lo[q] = vmin
    out.hi[q] = vmax


# ------------------------------------------------------------------------------------------- question layout


@njit(inline="always")
def _count_terms(q, terms, cnt, bits):
    """How many of question q's terms each document holds (cnt), and a bitmap of the documents holding any."""
    one = np.uint64(1)
    for a in range(terms.question_ptr[q], terms.question_ptr[q + 1]):
        u = terms.question_term[a]
        for p in range(terms.term_ptr[u], terms.term_ptr[u + 1]):
            d = terms.doc[p]
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
def layout(items, fill, terms, n_docs, sizes, entry_ptr, lay):
    """Each question's postings (terms: bm25.Postings) regrouped by document (lay: bm25.Layout): the documents
    with one question term in id order (single_posting: their posting), then those with several in id order
    (multi_start: where each one's postings start in multi_term / multi_count, its terms and their counts in
    ascending term order; multi_doc: their ids). Two passes:
    fill=False counts, per question, the single-term documents, the multi-term ones and the latter's postings
    (sizes: bm25.LayoutSizes); fill=True writes the layout at the offsets those counts give (lay.single_ptr,
    lay.multi_ptr, and entry_ptr into multi_term / multi_count).

    Reference: bm25.QuestionPlan.docs_at reads each position's document back (tests/test_kernels.py), and
    tests/test_bm25.py spells a small layout out."""
    cnt = np.zeros(n_docs, dtype=np.int64)
    slot = np.zeros(n_docs, dtype=np.int64)
    bits = np.zeros((n_docs + 63) // 64, dtype=np.uint64)
    docs = np.empty(n_docs, dtype=np.int64)
    counts = np.empty(n_docs, dtype=np.int64)
    for q in items:
        _count_terms(q, terms, cnt, bits)
        n = _touched_in_order(bits, cnt, docs, counts)
        if not fill:
            ns = 0
            ne = 0
            for i in range(n):
                ns += counts[i] == 1
                ne += counts[i] if counts[i] > 1 else 0
            sizes.n_single[q] = ns
            sizes.n_multi[q] = n - ns
            sizes.n_entries[q] = ne
            continue
        si = lay.single_ptr[q]
        mj = lay.multi_ptr[q]
        e = entry_ptr[q]
        for i in range(n):  # a single's place, or where a multi's postings go
            d = docs[i]
            if counts[i] == 1:
                slot[d] = -1 - si
                si += 1
            else:
                lay.multi_start[mj] = e
                lay.multi_doc[mj] = d
                slot[d] = e
                e += counts[i]
                mj += 1
        for a in range(terms.question_ptr[q], terms.question_ptr[q + 1]):  # ascending terms: each multi's in term order
            u = terms.question_term[a]
            for p in range(terms.term_ptr[u], terms.term_ptr[u + 1]):
                d = terms.doc[p]
                t = slot[d]
                if t < 0:
                    lay.single_posting[-1 - t] = p
                else:
                    lay.multi_term[t] = u
                    lay.multi_count[t] = np.int32(terms.count[p])  # an int32 count (Bm25Index.counts): exact
                    slot[d] = t + 1


@njit(inline="always")
def _pos_doc(lay, i, s0, ns, m0):
    """The document at position i of a question's layout (singles first, then multis; s0, m0: the question's
    first single and multi, ns: its singles)."""
    if i < ns:
        return lay.posting_doc[lay.single_posting[s0 + i]]
    return lay.multi_doc[m0 + i - ns]


@njit
def _find(lay, d, lo_, hi_, s0, ns, m0):
    """Position of document d among positions [lo_, hi_) of a question's layout, one part of it (singles or
    multis, each in id order): a binary search; -1 if it is not there."""
    end = hi_
    while lo_ < hi_:
        mid = (lo_ + hi_) >> 1
        if _pos_doc(lay, mid, s0, ns, m0) < d:
            lo_ = mid + 1
        else:
            hi_ = mid
    if lo_ < end and _pos_doc(lay, lo_, s0, ns, m0) == d:
        return lo_
    return -1


@njit
def _locate(lay, d, s0, ns, m0, nm):
    """Position of document d in a question's layout (binary search in each part), -1 if it has no question term."""
    i = _find(lay, d, 0, ns, s0, ns, m0)
    return i if i >= 0 else _find(lay, d, ns, ns + nm, s0, ns, m0)


@njit(nogil=True, cache=True)
def bm25_locate(items, ptr, docs, lay, n_docs, per_doc, out):
    """Positions of documents (question q's: docs[ptr[q]:ptr[q + 1]], -1 for none) in each question's layout
    (lay: bm25.Layout; documents 0..n_docs-1); -1 for one without a question term. A question with many documents
    to find for its layout's length (their count times per_doc at least the layout's length) has them found in one
    pass over its layout, each wanted document marked by id beforehand; the others, a binary search each (two
    dependent reads a step). Reference: bm25.QuestionPlan.docs_at undoes it."""
    mark = np.empty(0, dtype=np.int64)  # by document: -1, -2 wanted, else its position (made at the first pass)
    for q in items:
        s0, m0 = lay.single_ptr[q], lay.multi_ptr[q]
        ns, nm = lay.single_ptr[q + 1] - s0, lay.multi_ptr[q + 1] - m0
        a, b = ptr[q], ptr[q + 1]
        if (b - a) * per_doc < ns + nm:
            for i in range(a, b):
                d = docs[i]
                out[i] = _locate(lay, d, s0, ns, m0, nm) if d >= 0 else -1
            continue
        if mark.size == 0:
            mark = np.full(n_docs, -1, dtype=np.int64)
        for i in range(a, b):
            d = docs[i]
            if 0 <= d < n_docs:
                mark[d] = -2
        for i in range(ns):
            d = lay.posting_doc[lay.single_posting[s0 + i]]
            if mark[d] == -2:
                mark[d] = i
        for j in range(nm):
            d = lay.multi_doc[m0 + j]
            if mark[d] == -2:
                mark[d] = ns + j
        for i in range(a, b):
            d = docs[i]
            out[i] = mark[d] if 0 <= d < n_docs and mark[d] >= 0 else -1
        for i in range(a, b):
            d = docs[i]
            if 0 <= d < n_docs:
                mark[d] = -1


# ------------------------------------------------------------------------------------------- BM25


@njit(nogil=True, cache=True)
def bm25_weights(items, terms, norm, k1p1, out):
    """Weight of every posting of the question terms (terms: bm25.Postings; items: the terms), bm25_weight at
    the posting's document's norm. Reference: bm25.term_weights."""
    for u in items:
        idf = terms.idf[u]
        for p in range(terms.term_ptr[u], terms.term_ptr[u + 1]):
            out[p] = _weight(terms.count[p], idf, norm[terms.doc[p]], k1p1)


@njit(nogil=True, cache=True)
def term_order(items, ptr, count, doc, len_rank, f_top, out):
    """Each term's postings (items: the terms; ptr: their offsets into count / doc) by count descending, then
    document length ascending (len_rank: each document's place by length, ties by id), into out (indices of the
    postings). Reference: np.lexsort((len_rank[doc], -count, term)) (bm25.term_groups, tests/test_kernels.py)."""
    n = len_rank.size
    for u in items:
        lo, hi = ptr[u], ptr[u + 1]
        key = np.empty(hi - lo, dtype=np.int64)
        for i in range(lo, hi):
            key[i - lo] = (f_top - count[i]) * n + len_rank[doc[i]]
        o = np.argsort(key)
        for i in range(hi - lo):
            out[lo + i] = lo + o[i]


@njit
def _order_desc(vals, keys, n):
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
                while b > i and _before(vals[x], keys[x], vals[o[b - 1]], keys[o[b - 1]]):
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


@njit
def _sorted_best(cand, nc, key, m, picked, vals, keys, top_s, top_d, top_p):
    """The best m of the first nc candidates (cand: Candidates) in ranking order, into top_s / top_d / top_p;
    returns how many.

    With more than m candidates, a partial sort (np.partition) finds the m-th best score t; all above t are
    kept, and of those equal to t only the smallest keys that fill m (a partial sort of the keys). The m kept
    are then sorted (`_order_desc`). Linear in the candidates, however many tie. picked, vals, keys: scratch.
    """
    ns = 0
    if nc > m:
        for c in range(nc):
            vals[c] = cand.score[c]
        t = np.partition(vals[:nc], nc - m)[nc - m]
        tied = np.empty(nc, dtype=np.int64)
        nti = 0
        for c in range(nc):  # above t kept; those tied at t set aside, their keys in keys
            if cand.score[c] > t:
                picked[ns] = c
                ns += 1
            elif cand.score[c] == t:
                tied[nti] = c
                keys[nti] = key[cand.doc[c]]
                nti += 1
        need = m - ns
        kt = np.partition(keys[:nti], need - 1)[need - 1] if nti > need else np.iinfo(np.int64).max
        for c in range(nti):
            if keys[c] <= kt:  # keys are distinct: exactly `need` of them (or all the tied)
                picked[ns] = tied[c]
                ns += 1
    else:
        for c in range(nc):
            picked[c] = c
        ns = nc
    for c in range(ns):
        vals[c] = cand.score[picked[c]]
        keys[c] = key[cand.doc[picked[c]]]
    order = _order_desc(vals, keys, ns)
    h = min(m, ns)
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


SCAN_RUN = 8  # values a scan tests at once (vectorised) before looking at them one by one


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
def _doc_at(lay, i, s0, ns, m0):
    """The document at position i of a score row: i itself for a dense row (lay None), else the position's
    document in a BM25 question layout (`_pos_doc`)."""
    if lay is None:
        return i
    return _pos_doc(lay, i, s0, ns, m0)


@njit
def _judged_ranks(vals, nt, cut, thr, cand, nc, j_s, j_doc, key, lay, s0, ns, m0, found, flags, j_rank):
    """Each judged document's rank among a question's results, 1 + the documents that beat it (0 for one scoring
    at or below thr, and for one outside the corpus: j_doc -1), into j_rank. vals[:nt]: the question's scores
    (position i: document `_doc_at(lay, i, ...)`), j_s / j_doc: the judged documents' scores and documents,
    cand[:nc]: every position scoring at or above `cut`.

    A judged document at or above the cut is beaten only by candidates: they are counted. One below it lies
    beyond them: the scores above it are counted over the whole row, four judged documents a vectorised pass,
    and the documents tied with it (rare) looked at one by one. found, flags: scratch (nt + 8)."""
    low = np.empty(j_s.size, dtype=np.int64)
    j_rank[:] = 0
    nl = _judged_below(j_s, j_doc, thr, cut, low)
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
                kj = key[j_doc[j]]
                for t in range(n_eq):  # the ties at s (the others found match another judged score)
                    i = found[t]
                    if vals[i] == s and _before(vals[i], key[_doc_at(lay, i, s0, ns, m0)], s, kj):
                        jr += 1
            j_rank[j] = jr
    _judged_among(j_s, j_doc, thr, cut, cand, nc, key, j_rank)


@njit(inline="always")
def _judged_below(j_s, j_doc, thr, cut, low):
    """The judged documents among the results (above thr, in the corpus) that score below the cut, whose ranks
    need a count over the whole row, into low; returns how many."""
    nl = 0
    for j in range(j_s.size):
        if j_doc[j] >= 0 and j_s[j] > thr and j_s[j] < cut:
            low[nl] = j
            nl += 1
    return nl


@njit(inline="always")
def _judged_among(j_s, j_doc, thr, cut, cand, nc, key, j_rank):
    """The ranks of the judged documents among the results that score at or above the cut: every document that
    beats one does too, so it is one of the nc candidates."""
    for j in range(j_s.size):
        s = j_s[j]
        if j_doc[j] >= 0 and s > thr and not s < cut:
            j_rank[j] = 1 + _beaten_among(cand, nc, key, s, key[j_doc[j]])


@njit(inline="always")
def _beaten_among(cand, nc, key, s, kj):
    """How many of the first nc candidates rank before (score s, tie key kj)."""
    beat = 0
    for c in range(nc):
        beat += _before(cand.score[c], key[cand.doc[c]], s, kj)
    return beat


MULTI = -1  # bm25_rank's tag of a document holding several question terms (-2 - its place in the hint, if there)
UNPLACED = -2  # a candidate's position not looked up yet


@njit(inline="always")
def _posting_term(q, p, terms):
    """The term of posting p, one of question q's terms (terms: bm25.Postings): found among them, a few
    comparisons."""
    u = terms.question_term[terms.question_ptr[q]]
    for a in range(terms.question_ptr[q], terms.question_ptr[q + 1]):
        v = terms.question_term[a]
        if terms.term_ptr[v] <= p < terms.term_ptr[v + 1]:
            u = v
    return u


@njit(inline="always")
def _single_weight(q, p, terms, norm, k1p1):
    """The weight of posting p (of one of question q's terms), at its document's norm: what bm25_weights writes
    at p."""
    return _weight(terms.count[p], terms.idf[_posting_term(q, p, terms)], norm[terms.doc[p]], k1p1)


@njit(nogil=True, cache=True)
def bm25_probe_sites(items, pos, lay, terms, term_out, count_out):
    """For each layout position pos[q, i] of a document holding one of question q's terms (lay: bm25.Layout,
    terms: bm25.Postings), that term and its count there into term_out / count_out (left as they are for the
    others): bm25.probe_sites."""
    for q in items:
        s0, ns = lay.single_ptr[q], lay.single_ptr[q + 1] - lay.single_ptr[q]
        for i in range(pos.shape[1]):
            pi = pos[q, i]
            if 0 <= pi < ns:
                p = lay.single_posting[s0 + pi]
                term_out[q, i] = _posting_term(q, p, terms)
                count_out[q, i] = np.int32(terms.count[p])


@njit(inline="always")
def _score_at(q, i, grouped, lay, s0, ns, terms, norm, k1p1, vals):
    """The score of position i of question q's layout: vals[i], except a single's in the grouped pass (vals holds
    only the multis' there), its weight computed."""
    if grouped and i < ns:
        return _single_weight(q, lay.single_posting[s0 + i], terms, norm, k1p1)
    return vals[i]


@njit(inline="always")
def _multi_sums(lay, m0, nm, ns, idf, norm, k1p1, vals, wm):
    """The multis' scores into vals[ns:ns + nm] (lay: bm25.Layout; each its terms' weights summed in ascending
    term order, computed from the layout's terms and counts: sequential reads and one norm a document), their
    postings' weights into wm (from 0, in the layout's order); returns how many postings."""
    e0 = lay.multi_start[m0]
    for j in range(nm):
        a, b = lay.multi_start[m0 + j], lay.multi_start[m0 + j + 1]
        nd = norm[lay.multi_doc[m0 + j]]
        x = _weight(np.float64(lay.multi_count[a]), idf[lay.multi_term[a]], nd, k1p1)
        wm[a - e0] = x
        for e in range(a + 1, b):
            y = _weight(np.float64(lay.multi_count[e]), idf[lay.multi_term[e]], nd, k1p1)
            wm[e - e0] = y
            x += y
        vals[ns + j] = x
    return lay.multi_start[m0 + nm] - e0


@njit(inline="always")
def _group_end(groups, f, idf, norm, k1p1, lo, hi, s):
    """The end of the prefix of the group at [lo, hi) (groups: bm25.TermGroups; one count f, weights
    non-increasing along it) weighing more than s: a binary search (none when the whole group does)."""
    if _weight(f, idf, norm[groups.doc[hi - 1]], k1p1) > s:
        return hi
    while lo < hi:
        mid = (lo + hi) >> 1
        if _weight(f, idf, norm[groups.doc[mid]], k1p1) > s:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit
def _postings_beating(q, groups, idf, norm, k1p1, tag, key, s, kj):
    """How many postings of question q's terms (groups: bm25.TermGroups) weigh more than s, plus the documents
    with one of its terms weighing exactly s whose tie key is below kj (rare: looked at one by one; documents
    tagged below 0 hold several terms: their sums are elsewhere)."""
    c = 0
    for a in range(groups.question_ptr[q], groups.question_ptr[q + 1]):
        u = groups.question_term[a]
        for g in range(groups.group_ptr[u], groups.group_ptr[u + 1]):
            lo, hi = groups.group_start[g], groups.group_start[g + 1]
            f = groups.count[g]
            i = _group_end(groups, f, idf[u], norm, k1p1, lo, hi, s)
            c += i - lo
            while i < hi and _weight(f, idf[u], norm[groups.doc[i]], k1p1) == s:
                d = groups.doc[i]
                c += tag[d] >= 0 and key[d] < kj
                i += 1
    return c


GROUPED_SHARE = 16  # the grouped pass takes a question touching at least 16 x m documents (fewer: the full pass)
GUESS = 8  # the grouped pass's first cut: the lowest new score among the hint's last GUESS documents


@njit
def _grouped_candidates(q, groups, idf, norm, k1p1, lay, ns, m0, nm, vals, cut, tag, hint, m, found, cand):
    """Every document of question q scoring at or above the cut, its multis' scores in vals[ns:ns + nm], its
    singles' read off the groups (groups: bm25.TermGroups): each group's prefix at or above the cut, walked (it
    is short), but the documents tagged below 0 (several terms). A document of the hint (tagged 1 + its place
    there, or -2 - it for a multi) goes to that place, its position known; the others after the first m, their
    singles' positions left unknown (UNPLACED: found for those that make the best m). Holes are left as pos -1.
    Returns how many of the hint's were found, and the end of the others."""
    for i in range(m):
        cand.pos[i] = -1
    nf = 0
    nc = m
    n_found = _scan_at_least(vals[ns:], nm, cut, found, 0)
    for f in range(n_found):
        j = found[f]
        d = lay.multi_doc[m0 + j]
        t = -2 - tag[d]  # a multi of the hint's: its place there
        c = t if t >= 0 else nc
        cand.score[c] = vals[ns + j]
        cand.doc[c] = d
        cand.pos[c] = ns + j
        nf += t >= 0
        nc += t < 0
    for a in range(groups.question_ptr[q], groups.question_ptr[q + 1]):
        u = groups.question_term[a]
        for g in range(groups.group_ptr[u], groups.group_ptr[u + 1]):
            f = groups.count[g]
            for i in range(groups.group_start[g], groups.group_start[g + 1]):
                d = groups.doc[i]
                x = _weight(f, idf[u], norm[d], k1p1)
                if x < cut:
                    break
                t = tag[d] - 1
                if t >= -1:  # not a multi (tagged below 0)
                    if t >= 0:
                        cand.score[t] = x
                        cand.doc[t] = d
                        cand.pos[t] = hint.pos[q, t]
                        nf += 1
                    else:
                        cand.score[nc] = x
                        cand.doc[nc] = d
                        cand.pos[nc] = UNPLACED
                        nc += 1
    return nf, nc


@njit
def _close_holes(cand, m, nc):
    """Move the candidates of cand[:nc] with a position (pos >= 0; all of those from m on) to the front, in
    order; returns how many."""
    k = 0
    for i in range(nc):
        if i >= m or cand.pos[i] >= 0:
            cand.score[k], cand.doc[k], cand.pos[k] = cand.score[i], cand.doc[i], cand.pos[i]
            k += 1
    return k


@njit
def _judged_ranks_grouped(q, groups, idf, norm, k1p1, vals, ns, nt, wm, ne, cut, thr, cand, nc, j_s, j_doc, key,
                          lay, s0, m0, tag, j_rank):
    """`_judged_ranks` when only the multis' scores are in vals[ns:nt] (their postings' weights in wm[:ne]): a
    judged document below the cut is beaten by the postings of the question's terms above it (binary searches in
    the groups), less the multis' postings above it, plus the multis whose sums are above it, plus the documents
    tied with it that come first (rare: looked at one by one)."""
    for j in range(j_s.size):
        j_rank[j] = 0
        s = j_s[j]
        if j_doc[j] < 0 or not s > thr:
            continue
        kj = key[j_doc[j]]
        if not s < cut:
            j_rank[j] = 1 + _beaten_among(cand, nc, key, s, kj)
            continue
        beat = _postings_beating(q, groups, idf, norm, k1p1, tag, key, s, kj)
        for e in range(ne):
            beat -= wm[e] > s
        tied = 0
        for i in range(ns, nt):
            beat += vals[i] > s
            tied += vals[i] == s
        if tied:
            for i in range(ns, nt):
                if vals[i] == s and key[_pos_doc(lay, i, s0, ns, m0)] < kj:
                    beat += 1
        j_rank[j] = 1 + beat


@njit
def _settle_order(cand, nc, key, limit, ks):
    """Insertion sort of the first nc candidates (cand: Candidates) into ranking order, for lists nearly in order
    already (the previous run's best in its order): linear plus the moves, each candidate's tie key read once
    (ks: scratch). Gives up (False) past `limit` moves, the candidates still all there."""
    for c in range(nc):
        ks[c] = key[cand.doc[c]]
    moves = 0
    for a in range(1, nc):
        vx, dx, px, kx = cand.score[a], cand.doc[a], cand.pos[a], ks[a]
        b = a
        while b > 0:
            vy = cand.score[b - 1]
            if _before(vy, ks[b - 1], vx, kx):
                break
            cand.score[b], cand.doc[b], cand.pos[b], ks[b] = vy, cand.doc[b - 1], cand.pos[b - 1], ks[b - 1]
            b -= 1
        moves += a - b
        cand.score[b], cand.doc[b], cand.pos[b], ks[b] = vx, dx, px, kx
        if moves > limit:
            return False
    return True


@njit
def _tag_question(tag, lay, m0, nm, hint, q, m, clear):
    """Tag question q's multis MULTI and its hint's documents 1 + their place there (-2 - it for a multi), or
    (clear) untag them all: the grouped pass's `tag`, all zeros between questions."""
    for j in range(nm):
        tag[lay.multi_doc[m0 + j]] = 0 if clear else MULTI
    for i in range(m):
        d = hint.doc[q, i]
        tag[d] = 0 if clear else i + 1 if tag[d] == 0 else -2 - i


@njit(nogil=True, cache=True)
def bm25_rank(items, lay, terms, groups, wt, sel, judged_pos, out, top_p, probe, hint, sort_budget, pending):
    """Score each question from its postings regrouped by document, keep the best m, count, rank the judged.

    Reference: bm25.search(dataset, bm25.score(...)), i.e. ranking.rank_rows of the score matrix (and the
    raw best lists: ranking.order_by_score of each dense row, tests/test_perf_equivalence.py).

    Arguments: lay (bm25.Layout), terms (bm25.Postings), groups (bm25.TermGroups), wt (bm25.Weights: the norms,
    k1 + 1 and, for the full pass, the postings' weights from bm25_weights), sel (ranking.Selection: tie keys,
    threshold, m), judged_pos (the judged documents' layout positions, bm25.locate, -1 for none: found once per
    dataset), out (ranking.PassOutputs, the judged documents included), top_p (questions x m: the best m's
    positions, a later run's hint), probe (bm25.Probe, questions x P with maybe P = 0: documents whose scores
    are also wanted, LSA's best for the weighted fusion, with their sites), hint (bm25.Hint), sort_budget,
    pending (one flag per question for the grouped pass, empty for the full one).

    The layout lists the documents holding a question term, those with one term first (a score is one weight),
    then those with several, each with its terms and counts in ascending term order (their weights summed in
    that order: the reference's; `_multi_sums`). Two passes share this kernel:

    * **the full pass** (pending empty): every single's score gathered from w into a contiguous array after the
      multis', with no accumulator to scatter into or clear. Selection looks only at the scores at or above a
      cut checked not to exceed the m-th best score: with a hint (questions x m, the positions and documents of
      a run's best m, e.g. at the previous k1 or b), the lowest of those m distinct documents' scores, the
      candidates the hint's m in its order, then the few others at or above the cut (a scan that skips blocks
      below it); else a cut about 1.5 m scores reach, from a sample (`_sample_cut`; every score when fewer
      reach it), the candidates then sorted (`_sorted_best`). A judged document is ranked by counting the
      documents that beat it: among the candidates when it scores at or above the cut, else over all scores
      (vectorised, four judged documents a pass).
    * **the grouped pass** (pending: a flag per question), for a question with a full hint, documents without
      any of its terms and at least GROUPED_SHARE x m with one (below that the full pass costs less: on
      Cranfield, 7.8 m a question, a k1 tick took 7.0 ms grouped against 5.3 ms full): its singles are not
      scored one by one (at 100k documents, 17.4 million of them a tick against 2.73 million postings of the
      question terms). The multis are summed, and the singles at or above a guessed cut (the lowest new score
      among the hint's last GUESS) read off each term's groups of one count, whose weights do not rise along
      each (bm25.term_groups): a prefix each, about 210 postings a question, each weight computed where it is
      read (no weights array: bm25.run skips bm25_weights for these questions). When fewer than m documents
      reach the guess (4% of questions at 100k documents, 18% at 1M), the cut is the lowest new score of all
      the hint's m, which m documents reach. The best m are then among the candidates; the results are counted,
      and a judged document below the cut ranked, by binary searches in the groups (the postings above a score,
      less the multis' postings above it, plus the multis whose sums are). A document's tag (`tag`, cleared
      after each question) says whether it holds several terms, or where the hint has it. Any other question is
      flagged in `pending`, its outputs left to the full pass. LSA's probed documents holding one term are
      weighed from their sites (bm25.probe_sites: term and count found once per list, then one read far away,
      the norm).

    After a small parameter change the candidates, the hint's first, are nearly in order: an insertion sort
    settles them (`_settle_order`; past sort_budget moves per candidate, the general sort takes over). The
    outputs never depend on the hint.
    """
    key, thr, m = sel.tie_key, sel.threshold, sel.keep
    grouped_pass = pending.size > 0
    norm, k1p1, w, idf = wt.norm, wt.k1p1, wt.w, terms.idf
    n_docs = key.size
    vals = np.empty(n_docs)
    ws = scratch(n_docs, m)
    found, cand, flags = ws.found, ws.cand, ws.flags
    tag = np.zeros(n_docs if grouped_pass else 0, dtype=np.int32)  # 0 between questions (`_tag_question`)
    most = 0
    for q in items:
        most = max(most, lay.multi_start[lay.multi_ptr[q + 1]] - lay.multi_start[lay.multi_ptr[q]])
    wm = np.empty(most)  # a question's multis' postings' weights, in their order
    for q in items:
        s0, m0 = lay.single_ptr[q], lay.multi_ptr[q]
        ns, nm = lay.single_ptr[q + 1] - s0, lay.multi_ptr[q + 1] - m0
        nt = ns + nm
        nh = 0
        if hint.pos.shape[1] >= m:
            for i in range(m):
                nh += hint.pos[q, i] >= 0
        hinted = nh == m and m > 0
        if grouped_pass and not (hinted and nt < n_docs and nt >= GROUPED_SHARE * m):
            pending[q] = 1
            continue
        ne = _multi_sums(lay, m0, nm, ns, idf, norm, k1p1, vals, wm)
        nr = 0
        for j in range(nm):
            nr += vals[ns + j] > thr
        if grouped_pass:
            _tag_question(tag, lay, m0, nm, hint, q, m, False)
            cut = np.inf
            for i in range(max(0, m - GUESS), m):
                cut = min(cut, _score_at(q, hint.pos[q, i], True, lay, s0, ns, terms, norm, k1p1, vals))
            nf, nc = _grouped_candidates(q, groups, idf, norm, k1p1, lay, ns, m0, nm, vals, cut, tag, hint, m, found,
                                         cand)
            if nf + nc - m < m:  # fewer than m reach the guess: the lowest of all the hint's m, which m reach
                for i in range(m - GUESS):
                    cut = min(cut, _score_at(q, hint.pos[q, i], True, lay, s0, ns, terms, norm, k1p1, vals))
                nf, nc = _grouped_candidates(q, groups, idf, norm, k1p1, lay, ns, m0, nm, vals, cut, tag, hint, m,
                                             found, cand)
            if nf + nc - m < m:  # a guard (the hint's m documents reach their lowest score): the full pass
                _tag_question(tag, lay, m0, nm, hint, q, m, True)
                pending[q] = 1
                continue
            nc = _close_holes(cand, m, nc)
            nr += _postings_beating(q, groups, idf, norm, k1p1, tag, key, thr, -1)  # no tie key is below -1
            for e in range(ne):
                nr -= wm[e] > thr
        else:
            for i in range(ns):  # one weight each: a gather, no branch
                x = w[lay.single_posting[s0 + i]]
                vals[i] = x
                nr += x > thr
            nc = 0
            if hinted:  # the hint's m in its order, then the others at or above the cut (the lowest of the m)
                cut = np.inf
                for i in range(m):
                    pi = hint.pos[q, i]
                    cut = min(cut, vals[pi])
                    cand.score[i] = vals[pi]
                    cand.doc[i] = hint.doc[q, i]
                    cand.pos[i] = pi
                    vals[pi] = -np.inf  # hidden from the scan (put back below)
                nc = m
            else:  # a cut about 1.5 m scores reach, from a sample (none on a short row)
                cut = _sample_cut(vals, nt, m, ws.heap)
            n_found = _scan_at_least(vals, nt, cut, found, 0)
            if not hinted and n_found < m and n_found < nt:  # fewer than m reach it (rare): every score is a candidate
                cut = -np.inf
                n_found = _scan_at_least(vals, nt, cut, found, 0)
            for f in range(n_found):
                i = found[f]
                cand.score[nc] = vals[i]
                cand.doc[nc] = _pos_doc(lay, i, s0, ns, m0)
                cand.pos[nc] = i
                nc += 1
            if hinted:
                for i in range(m):
                    vals[cand.pos[i]] = cand.score[i]
        at = probe.at
        for i in range(at.pos.shape[1]):
            pi = at.pos[q, i]
            u = at.term[q, i]
            if grouped_pass and u >= 0:  # a single, weighed from its sites (one read far away: its norm)
                x = _weight(np.float64(at.count[q, i]), idf[u], norm[probe.doc[q, i]], k1p1)
            else:
                x = 0.0 if pi < 0 else vals[pi]
            probe.score[q, i] = x
        j0, j1 = out.judged.ptr[q], out.judged.ptr[q + 1]
        nj = j1 - j0
        j_s = np.zeros(nj)
        for j in range(nj):
            pj = judged_pos[j0 + j]
            if pj >= 0:  # else 0: no question term (or not a document of the corpus)
                j_s[j] = _score_at(q, pj, grouped_pass, lay, s0, ns, terms, norm, k1p1, vals)
        if grouped_pass:
            _judged_ranks_grouped(q, groups, idf, norm, k1p1, vals, ns, nt, wm, ne, cut, thr, cand, nc, j_s,
                                  out.judged.doc[j0:j1], key, lay, s0, m0, tag, out.judged.rank[j0:j1])
            _tag_question(tag, lay, m0, nm, hint, q, m, True)
        else:
            _judged_ranks(vals, nt, cut, thr, cand, nc, j_s, out.judged.doc[j0:j1], key, lay, s0, ns, m0, found, flags,
                          out.judged.rank[j0:j1])
        ts = out.top_s[q]
        td = out.top_d[q]
        tp = top_p[q]
        if hinted and _settle_order(cand, nc, key, sort_budget * nc, ws.keys):
            h = min(m, nc)
            for r in range(h):
                ts[r] = cand.score[r]
                td[r] = cand.doc[r]
                tp[r] = cand.pos[r]
        else:
            h = _sorted_best(cand, nc, key, m, ws.picked, ws.vals, ws.keys, ts, td, tp)
        if grouped_pass:
            for r in range(h):
                if tp[r] == UNPLACED:
                    tp[r] = _find(lay, td[r], 0, ns, s0, ns, m0)
        out.n_top[q] = h
        out.n_res[q] = nr
        if nt < n_docs:  # the documents without a question term score 0
            out.lo[q] = 0.0
            out.hi[q] = ts[0] if h > 0 else 0.0
        else:
            vmin = np.inf
            for i in range(nt):
                vmin = min(vmin, vals[i])
            out.lo[q] = vmin
            out.hi[q] = ts[0]


@njit(inline="always")
def _bm25_at(q, d, terms, norm, k1p1):
    """BM25 score of one document for one question (terms: bm25.Postings), summed as bm25_rank sums it."""
    s = 0.0
    for a in range(terms.question_ptr[q], terms.question_ptr[q + 1]):
        u = terms.question_term[a]
        lo_, hi_ = terms.term_ptr[u], terms.term_ptr[u + 1]
        while lo_ < hi_:  # binary search of d in the term's sorted postings
            mid = (lo_ + hi_) // 2
            if terms.doc[mid] < d:
                lo_ = mid + 1
            else:
                hi_ = mid
        if lo_ < terms.term_ptr[u + 1] and terms.doc[lo_] == d:
            s += _weight(terms.count[lo_], terms.idf[u], norm[d], k1p1)
    return s



@njit(nogil=True, cache=True)
def bm25_rows(items, top_d, n_top, terms, norm, k1p1, out):
    """BM25 scores of each question's first n_top[q] documents of top_d[q] (questions x depth; 0 beyond; terms:
    bm25.Postings). Reference: bm25.score at those cells (and `_bm25_at`: the same sums in the same order).

    The documents are visited in id order and each question term's postings searched from where the last
    document was found (galloping: 1, 2, 4, ... ahead, then halving), so a list of 1,000 documents costs about
    1,000 x log2(postings / 1,000) steps a term instead of 1,000 binary searches from the start (bench: the
    weighted fusion's look-ups of LSA's lists at 100k documents 5x faster). Each score is 0.0 plus its terms'
    weights in ascending term order, as `_bm25_at` adds them."""
    width = top_d.shape[1]
    for q in items:
        n = n_top[q]
        order = np.argsort(top_d[q, :n])
        for i in range(width):
            out[q, i] = 0.0
        for a in range(terms.question_ptr[q], terms.question_ptr[q + 1]):
            u = terms.question_term[a]
            lo_, end = terms.term_ptr[u], terms.term_ptr[u + 1]
            idf = terms.idf[u]
            for t in range(n):
                i = order[t]
                d = top_d[q, i]
                if d < 0 or lo_ >= end:
                    continue
                step = 1  # gallop: the first posting at or after d lies in (lo_ + step / 2, lo_ + step]
                while lo_ + step < end and terms.doc[lo_ + step] < d:
                    step *= 2
                hi_ = min(lo_ + step, end)
                lo_ = lo_ + step // 2 if step > 1 else lo_
                while lo_ < hi_:  # binary search in the bracket
                    mid = (lo_ + hi_) // 2
                    if terms.doc[mid] < d:
                        lo_ = mid + 1
                    else:
                        hi_ = mid
                if lo_ < end and terms.doc[lo_] == d:
                    out[q, i] += _weight(terms.count[lo_], idf, norm[d], k1p1)


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
def bm25_at(items, qs, ds, terms, norm, k1p1, out):
    """BM25 scores of (question, document) pairs (terms: bm25.Postings). Reference: bm25.score at those cells."""
    for i in items:
        out[i] = _bm25_at(qs[i], ds[i], terms, norm, k1p1)


# ------------------------------------------------------------------------------------------- dense rows


class Scratch(NamedTuple):
    """The work arrays of a selection over rows of up to n entries keeping m (`scratch`): one set per thread."""

    found: np.ndarray  # positions a scan found (it writes one past its count)
    cand: Candidates
    picked: np.ndarray  # _sorted_best's scratch
    vals: np.ndarray
    keys: np.ndarray
    flags: np.ndarray  # _scan_equal's scratch
    heap: np.ndarray  # the sample's best (_sample_cut)
    top_p: np.ndarray  # positions of the best m (a dense row's are its documents)
    bits: np.ndarray  # one int64, read as a float64 (_dense_pass's lowest and highest)


@njit
def scratch(n, m):
    """Scratch for rows of up to n entries keeping the best m."""
    return Scratch(np.empty(n + 1, dtype=np.int64), Candidates(np.empty(n + m), np.empty(n + m, dtype=np.int64),
                   np.empty(n + m, dtype=np.int64)), np.empty(n + m, dtype=np.int64), np.empty(n + m),
                   np.empty(n + m, dtype=np.int64), np.zeros(n + 8, dtype=np.uint8), np.empty(n + 1),
                   np.empty(m, dtype=np.int64), np.zeros(1, dtype=np.int64))


SAMPLE_SHARE = 4  # a dense row of n entries keeping m is sampled at one entry in min(64, n // (4 m)),
SAMPLE_RUN = 8  # ... in runs of 8 adjacent entries (a cache line each: one entry a line cost a miss each)
SAMPLE_MARGIN = 8  # the cut is the sample's (1.5 m / stride + 8)-th best: about 1.5 m candidates, rarely fewer than m


@njit(inline="always")
def _sample_plan(n, m):
    """How a row of n entries keeping m is sampled: (stride, entries sampled, c); stride < 2: not sampled (a short
    row, or nothing kept)."""
    stride = min(64, n // (SAMPLE_SHARE * max(m, 1))) if m >= 1 else 0
    if stride < 2:
        return stride, 0, 0
    ns = 0
    for start in range(0, n, SAMPLE_RUN * stride):
        ns += min(SAMPLE_RUN, n - start)
    return stride, ns, min(ns, (3 * m) // (2 * stride) + SAMPLE_MARGIN)


@njit(inline="always")
def _sampled_at(t, stride):
    """The position of a row's t-th sampled entry (runs of SAMPLE_RUN adjacent ones, one run in `stride`)."""
    return (t // SAMPLE_RUN) * SAMPLE_RUN * stride + t % SAMPLE_RUN


@njit
def _sample_cut(row, n, m, heap):
    """A cut for the best m of row[:n] that leaves about 1.5 m entries at or above it: the c-th best of one entry
    in `stride` (runs of SAMPLE_RUN adjacent ones), with c = 1.5 m / stride + SAMPLE_MARGIN (`_sample_plan`);
    -inf when the row is short. Not a bound: the caller checks that m entries reach it. heap: scratch."""
    stride, ns, c = _sample_plan(n, m)
    if stride < 2:
        return -np.inf
    return _cth_best(row, ns, c, stride, heap)


@njit(inline="always")
def _cth_best(row, ns, c, stride, heap):
    """The c-th best of the ns entries of row sampled one run in `stride` (`_sampled_at`; stride 1: row[:ns]),
    by a min-heap of the c best (heap: scratch of c entries at least): its root."""
    h = 0
    for t in range(ns):
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
    lowest, highest score). The same outputs as `_select` over every entry (tests/test_kernels.py).

    A sample gives a cut that about 1.5 m entries reach (`_sample_cut`); one pass counts, finds the entries at or
    above it (`_dense_pass`) and only those are sorted (`_sorted_best`); when fewer than m reach it (rare),
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
    h = _sorted_best(cand, nf, key, m, ws.picked, ws.vals, ws.keys, top_s, top_d, ws.top_p) if m > 0 else 0
    nj = j_doc.size
    j_s = np.zeros(nj)
    for j in range(nj):
        if j_doc[j] >= 0:
            j_s[j] = row[j_doc[j]]
    _judged_ranks(row, n, cut, thr, cand, nf, j_s, j_doc, key, None, 0, 0, 0, ws.found, ws.flags, j_rank)
    return h, nres, lo, hi


@njit(inline="always")
def _dense_select_into(q, row, sel, out, ws):
    """`_dense_select` of question q's dense row into its slices of out (ranking.PassOutputs)."""
    j0, j1 = out.judged.ptr[q], out.judged.ptr[q + 1]
    h, nr, vmin, vmax = _dense_select(row, sel.tie_key, sel.threshold, sel.keep, out.judged.doc[j0:j1],
                                      out.top_d[q], out.top_s[q], out.judged.rank[j0:j1], ws)
    out.n_top[q] = h
    out.n_res[q] = nr
    out.lo[q] = vmin
    out.hi[q] = vmax


# ------------------------------------------------------------------------------------------- LSA


COSINE_BLOCK = 2048  # documents whose vectors are read once for a whole group of questions
COSINE_BUFFER = 2_000_000  # cosines a thread holds at once (16 MB): questions per group = this / documents, 1..8
COSINE_GROUP_DIMS = 16  # at most this many dimensions, one question at a time: its row is selected while in cache


@njit(inline="always")
def _cosine_rows(qvec, items, start, g, vt, buf):
    """Cosines of the questions items[start:start + g] with every document into buf[:g], a block of COSINE_BLOCK
    documents at a time (`_cosine_block`), so each block of the document vectors is read once for the group (at
    384 dimensions the vectors, not the arithmetic, bound the time)."""
    for b0 in range(0, vt.shape[1], COSINE_BLOCK):
        _cosine_block(qvec, items, start, g, vt, b0, min(b0 + COSINE_BLOCK, vt.shape[1]), buf, b0)


@njit(inline="always")
def _cosine_block(qvec, items, start, g, vt, b0, b1, buf, o0):
    """Cosines of the questions items[start:start + g] with the documents b0..b1-1 into buf[r, o0:o0 + b1 - b0]:
    q[0] * v[0] + q[1] * v[1] + ..., added left to right. Four dimensions are added per pass over a row,
    ((s + q[c] v[c]) + q[c+1] v[c+1]) + ...: the same additions in the same order as one at a time (no
    reassociation), with a quarter of the loads and stores (bench: 384-d 1.7x, 40-d 1.4x faster)."""
    k = vt.shape[0]
    nb = b1 - b0
    if k == 0:
        for r in range(g):
            buf[r, o0 : o0 + nb] = 0.0
        return
    v = vt[0, b0:b1]  # 1-D slices: the inner loops compile to vector instructions (3x measured)
    for r in range(g):
        c = qvec[items[start + r], 0]
        part = buf[r, o0 : o0 + nb]
        for d in range(nb):
            part[d] = c * v[d]
    cc = 1
    while cc + 4 <= k:
        v0, v1, v2, v3 = vt[cc, b0:b1], vt[cc + 1, b0:b1], vt[cc + 2, b0:b1], vt[cc + 3, b0:b1]
        for r in range(g):
            q = items[start + r]
            c0, c1, c2, c3 = qvec[q, cc], qvec[q, cc + 1], qvec[q, cc + 2], qvec[q, cc + 3]
            part = buf[r, o0 : o0 + nb]
            for d in range(nb):
                part[d] = (((part[d] + c0 * v0[d]) + c1 * v1[d]) + c2 * v2[d]) + c3 * v3[d]
        cc += 4
    while cc < k:
        v = vt[cc, b0:b1]
        for r in range(g):
            c = qvec[items[start + r], cc]
            part = buf[r, o0 : o0 + nb]
            for d in range(nb):
                part[d] += c * v[d]
        cc += 1


STREAM_BLOCK = 1024  # documents whose cosines a streamed question holds at once (8 KB)
STREAM_GROUP = 16  # questions streamed together: each block of the document vectors is read once for them
STREAM_ROOM = 4  # candidates a streamed question may hold, in units of those expected to reach the sample's cut


class Stream(NamedTuple):
    """A streamed group's state (`stream_state`), one row per question of the group."""

    blk: np.ndarray  # 1 x STREAM_BLOCK: one question's cosines with the current block
    hits: np.ndarray  # STREAM_BLOCK + 1: a block's positions at or above a cut
    samp: np.ndarray  # group x sampled: each question's sample (`_sample_plan`)
    cut: np.ndarray  # per question: its sample's cut
    n_res: np.ndarray  # ... how many cosines so far above the threshold
    lo: np.ndarray  # ... the lowest and highest cosine so far
    hi: np.ndarray
    nc: np.ndarray  # ... its candidates so far; -1: too many (its row is then selected whole)
    c_s: np.ndarray  # group x `_stream_room`: the candidates' cosines
    c_d: np.ndarray  # ... and documents, in document order
    j_s: np.ndarray  # group x judged: the judged documents' cosines
    low: np.ndarray  # ... those below the cut among the results (`_judged_below`), then padding
    n_low: np.ndarray  # per question: how many
    s4: np.ndarray  # group x judged (a multiple of 4): their cosines, inf beyond n_low
    above: np.ndarray  # ... the documents scoring above each
    tied: np.ndarray  # ... and equal to each (itself included)


@njit
def stream_state(n, m, nj):
    """The state of a streamed group of STREAM_GROUP questions over n documents keeping m, with up to nj judged
    documents each."""
    group = STREAM_GROUP
    w = ((nj + 3) // 4) * 4
    room = _stream_room(n, m)
    i64 = np.int64
    return Stream(blk=np.zeros((1, STREAM_BLOCK)), hits=np.zeros(STREAM_BLOCK + 1, dtype=i64),
                  samp=np.zeros((group, _sample_plan(n, m)[1])), cut=np.zeros(group),
                  n_res=np.zeros(group, dtype=i64), lo=np.zeros(group), hi=np.zeros(group),
                  nc=np.zeros(group, dtype=i64), c_s=np.zeros((group, room)), c_d=np.zeros((group, room), dtype=i64),
                  j_s=np.zeros((group, nj)), low=np.zeros((group, nj), dtype=i64), n_low=np.zeros(group, dtype=i64),
                  s4=np.full((group, w), np.inf), above=np.zeros((group, w), dtype=i64),
                  tied=np.zeros((group, w), dtype=i64))


@njit(inline="always")
def _stream_room(n, m):
    """The candidates a streamed question may hold: STREAM_ROOM x those expected to reach the sample's cut (the
    c-th best of one entry in `stride`: about c x stride), at least m."""
    stride, ns, c = _sample_plan(n, m)
    return max(m, STREAM_ROOM * c * stride)


@njit
def _lsa_streamed(items, start, g, qvec, vt, sel, out, ws, st, done):
    """LSA's selection for the questions items[start:start + g] (at most STREAM_GROUP), their cosines computed
    STREAM_BLOCK documents at a time and used at once, never a row of them: the group's questions take each block
    of the document vectors in turn while it is in the second-level cache, so the vectors are read from memory
    once per group, not once per question (at 1M documents x 6 dimensions they are 48 MB, beyond the last-level
    cache). The outputs of `_dense_select_into` on each question's whole row, for each question marked in
    done[:g].

    Before the pass, each question's cut comes from the same sample as `_sample_cut`'s, and its judged documents'
    cosines are computed, so that each block is counted against those below the cut as it is made. A question is
    left unmarked, with nothing written, when its whole row is needed after all: fewer than m documents reach its
    cut, more than `_stream_room` do, or a judged document below the cut ties with another (all rare); the caller
    then selects it from its row. ws: `scratch`; st: `stream_state`."""
    n, m, thr, key = vt.shape[1], sel.keep, sel.threshold, sel.tie_key
    stride, ns, c = _sample_plan(n, m)
    for t in range(0, ns, SAMPLE_RUN):  # the samples: runs of SAMPLE_RUN adjacent documents
        p = _sampled_at(t, stride)
        _cosine_block(qvec, items, start, g, vt, p, p + min(SAMPLE_RUN, ns - t), st.samp, t)
    for r in range(g):
        q = items[start + r]
        cut = _cth_best(st.samp[r], ns, c, 1, ws.heap)
        st.cut[r] = cut
        st.n_res[r], st.lo[r], st.hi[r], st.nc[r] = 0, np.inf, -np.inf, 0
        j0, j1 = out.judged.ptr[q], out.judged.ptr[q + 1]
        for j in range(j1 - j0):
            d = out.judged.doc[j0 + j]
            if d >= 0:
                _cosine_block(qvec, items, start + r, 1, vt, d, d + 1, st.blk, 0)
            st.j_s[r, j] = st.blk[0, 0] if d >= 0 else 0.0
        nl = _judged_below(st.j_s[r, : j1 - j0], out.judged.doc[j0:j1], thr, cut, st.low[r])
        st.n_low[r] = nl
        for u in range(st.s4.shape[1]):
            st.s4[r, u] = st.j_s[r, st.low[r, u]] if u < nl else np.inf
            st.above[r, u] = 0
            st.tied[r, u] = 0
    room = st.c_s.shape[1]
    for b0 in range(0, n, STREAM_BLOCK):
        nb = min(STREAM_BLOCK, n - b0)
        for r in range(g):
            _cosine_block(qvec, items, start + r, 1, vt, b0, b0 + nb, st.blk, 0)
            row = st.blk[0]
            r_res, r_lo, r_hi = _count_range(row, nb, thr, ws.bits)
            st.n_res[r] += r_res
            if r_lo < st.lo[r]:  # strictly: the first of equal values met, as over the whole row
                st.lo[r] = r_lo
            if r_hi > st.hi[r]:
                st.hi[r] = r_hi
            nc = st.nc[r]
            if nc >= 0:
                nh = _scan_at_least(row, nb, st.cut[r], st.hits, 0)
                if nc + nh > room:
                    nc = -1
                else:
                    for h in range(nh):
                        st.c_s[r, nc] = row[st.hits[h]]
                        st.c_d[r, nc] = b0 + st.hits[h]
                        nc += 1
                st.nc[r] = nc
            for u in range(0, 4 * ((st.n_low[r] + 3) // 4), 4):
                ct = _count_above(row, nb, st.s4[r, u], st.s4[r, u + 1], st.s4[r, u + 2], st.s4[r, u + 3])
                for v in range(4):
                    st.above[r, u + v] += ct[v]
                    st.tied[r, u + v] += ct[4 + v]
    for r in range(g):
        q = items[start + r]
        nc = st.nc[r]
        done[r] = nc >= m
        for u in range(st.n_low[r]):
            done[r] = done[r] and st.tied[r, u] <= 1
        if not done[r]:
            continue
        cand = Candidates(st.c_s[r], st.c_d[r], st.c_d[r])  # a dense row's positions are its documents
        h = _sorted_best(cand, nc, key, m, ws.picked, ws.vals, ws.keys, out.top_s[q], out.top_d[q], ws.top_p)
        j0, j1 = out.judged.ptr[q], out.judged.ptr[q + 1]
        j_s, j_doc, j_rank = st.j_s[r, : j1 - j0], out.judged.doc[j0:j1], out.judged.rank[j0:j1]
        j_rank[:] = 0
        for u in range(st.n_low[r]):
            j_rank[st.low[r, u]] = 1 + st.above[r, u]
        _judged_among(j_s, j_doc, thr, st.cut[r], cand, nc, key, j_rank)
        out.n_top[q] = h
        out.n_res[q] = st.n_res[r]
        out.lo[q] = st.lo[r]
        out.hi[q] = st.hi[r]


@njit(nogil=True, cache=True)
def lsa_rank(items, qvec, vt, sel, out):
    """Cosines of each question with every document, the best sel.keep, counts, judged ranks, lowest and highest
    cosine, into out (ranking.PassOutputs). Reference: ranking.rank_rows of lsa.score_chunks (the same cosines,
    summed in the same order: q[0] * v[0] + q[1] * v[1] + ..., left to right, for every document).

    Up to COSINE_GROUP_DIMS dimensions, where the arithmetic is light, questions whose rows are long enough to be
    sampled are streamed, STREAM_GROUP at a time (`_lsa_streamed`); a question a stream gives back has its row of
    cosines computed and then selected by `_dense_select`. Otherwise questions are scored in groups
    (`_cosine_rows`; one at a time up to COSINE_GROUP_DIMS dimensions), so each block of the document vectors
    is read once for the group, and each row is then selected."""
    n_docs = vt.shape[1]
    k = vt.shape[0]
    ws = scratch(n_docs, sel.keep)
    if k <= COSINE_GROUP_DIMS and _sample_plan(n_docs, sel.keep)[0] >= 2:
        nj = 0
        for q in items:
            nj = max(nj, out.judged.ptr[q + 1] - out.judged.ptr[q])
        st = stream_state(n_docs, sel.keep, nj)
        done = np.zeros(STREAM_GROUP, dtype=np.bool_)
        row = np.zeros((0, n_docs))
        for start in range(0, items.size, STREAM_GROUP):
            g = min(STREAM_GROUP, items.size - start)
            _lsa_streamed(items, start, g, qvec, vt, sel, out, ws, st, done)
            for r in range(g):
                if not done[r]:
                    if row.shape[0] == 0:
                        row = np.zeros((1, n_docs))
                    _cosine_rows(qvec, items, start + r, 1, vt, row)
                    _dense_select_into(items[start + r], row[0], sel, out, ws)
        return
    group = 1 if k <= COSINE_GROUP_DIMS else max(1, min(8, COSINE_BUFFER // max(n_docs, 1)))
    buf = np.zeros((group, n_docs))
    for start in range(0, items.size, group):
        g = min(group, items.size - start)
        _cosine_rows(qvec, items, start, g, vt, buf)
        for r in range(g):
            _dense_select_into(items[start + r], buf[r], sel, out, ws)


@njit(nogil=True, cache=True)
def lsa_at(items, qs, ds, qvec, vecs, out):
    """LSA cosines of (question, document) pairs (vecs: documents x dims). Reference: lsa.score_chunks."""
    for i in items:
        out[i] = _lsa_at(qvec[qs[i]], vecs, ds[i])


@njit(nogil=True, cache=True)
def lsa_rows(items, top_d, n_top, qvec, vecs, out):
    """LSA cosines of each question's first n_top[q] documents of top_d[q] (questions x depth; 0 beyond).
    Reference: lsa.score_chunks."""
    for q in items:
        for i in range(top_d.shape[1]):
            out[q, i] = _lsa_at(qvec[q], vecs, top_d[q, i]) if i < n_top[q] else 0.0


# ------------------------------------------------------------------------------------------- generic rows


@njit(nogil=True, cache=True)
def tfidf_rows(items, counts, idf, data, scale):
    """TF-IDF of a count matrix's rows (counts: ranking.Csr, a row's terms in `doc`, its counts in `score`) as
    scikit-learn's TfidfTransformer(norm="l2") makes them: each entry count * idf[term]; the row's sum of their
    squares, added in stored order; each entry divided by its square root (scale[r]; a row whose sum is 0 is left
    as it is: scale 1). Reference: TfidfTransformer().fit_transform (its data *= idf[indices], then
    sparsefuncs_fast._inplace_csr_row_normalize_l2), to the last bit."""
    for r in items:
        a, b = counts.ptr[r], counts.ptr[r + 1]
        s = 0.0
        for j in range(a, b):
            v = counts.score[j] * idf[counts.doc[j]]
            data[j] = v
            s += v * v
        if s == 0.0:
            scale[r] = 1.0
            continue
        s = np.sqrt(s)
        scale[r] = s
        for j in range(a, b):
            data[j] = data[j] / s


@njit(nogil=True, cache=True)
def tfidf_columns(items, counts, idf, scale, data):
    """The same TF-IDF values by column (counts: ranking.Csr of the transposed count matrix, a term's documents in
    `doc` ascending, its counts in `score`): (count * idf[term]) / scale[document], the operations `tfidf_rows`
    makes on the same numbers, so each value is its row twin's to the last bit (scipy's tocsc of those rows)."""
    for c in items:
        w = idf[c]
        for j in range(counts.ptr[c], counts.ptr[c + 1]):
            data[j] = (counts.score[j] * w) / scale[counts.doc[j]]


@njit(nogil=True, cache=True)
def sparse_dense(items, a, x, out):
    """out[r] = a's row r times the dense x (a: ranking.Csr, entries' columns in `doc`, values in `score`): each
    entry's value times x's row at its column, added entry by entry in stored order to a row that starts at 0.0.
    Reference: scipy's CSR @ dense (csr_matvecs: y[r] += value * x[column], the same order), to the last bit; a
    CSC matrix times x is its transpose's CSR rows (the entries of a column in ascending row order, as scipy's
    csc_matvecs adds them). `out` may be column-major (order "F": what LAPACK's getrf factorises in place, see
    lsa.lu_permute_l); each row is added up in a buffer of its own, then stored.

    Eight entries are added per pass over the buffer, o[c] = (((o[c] + v0 x0[c]) + v1 x1[c]) + ...) + v7 x7[c]:
    the same additions in the same order as one entry at a time (no reassociation), with the eight rows of x
    read together. The product waits on those reads (x's rows are 18 values, three cache lines, at scattered
    columns), so more of them in flight is faster: at 100,000 documents, one thread, 0.38-0.40 -> 0.27-0.29 s for
    the documents' side and 0.60-0.63 -> 0.36-0.43 s for the terms' (four at a time: 0.33-0.35 and 0.42-0.46 s)."""
    nv = x.shape[1]
    o = np.empty(nv)
    for r in items:
        for c in range(nv):
            o[c] = 0.0
        e, end = a.ptr[r], a.ptr[r + 1]
        while e + 8 <= end:
            x0, x1, x2, x3 = x[a.doc[e]], x[a.doc[e + 1]], x[a.doc[e + 2]], x[a.doc[e + 3]]
            x4, x5, x6, x7 = x[a.doc[e + 4]], x[a.doc[e + 5]], x[a.doc[e + 6]], x[a.doc[e + 7]]
            v = a.score[e : e + 8]
            for c in range(nv):
                o[c] = (((((((o[c] + v[0] * x0[c]) + v[1] * x1[c]) + v[2] * x2[c]) + v[3] * x3[c]) + v[4] * x4[c])
                         + v[5] * x5[c]) + v[6] * x6[c]) + v[7] * x7[c]
            e += 8
        while e < end:
            v1 = a.score[e]
            xr = x[a.doc[e]]
            for c in range(nv):
                o[c] += v1 * xr[c]
            e += 1
        for c in range(nv):
            out[r, c] = o[c]


@njit(nogil=True, cache=True)
def unit_lower_rows(items, lu, perm, out):
    """out[i] = row perm[i] of the unit lower trapezoid of a tall LU factorisation (lu: LAPACK's getrf output,
    m x n, m >= n, any layout): its entries left of the diagonal, 1 on it, 0 right of it. Reference:
    scipy.linalg.lu(a, permute_l=True)'s first output (the same values moved, no arithmetic: tests/test_lsa.py)."""
    n = lu.shape[1]
    for i in items:
        s = perm[i]
        for c in range(n):
            out[i, c] = lu[s, c] if c < s else (1.0 if c == s else 0.0)


@njit(nogil=True, cache=True)
def rank_sparse(items, rows, row0, sel, out):
    """ranking.rank_rows for a CSR block of score rows (rows: ranking.Csr; row r is question row0 + r): stored
    entries only (absent = not a result; lo / hi: over the stored entries), into out (ranking.PassOutputs).
    Reference: ranking.order_by_score of each row's results (tests/test_ranking.py)."""
    key, thr = sel.tie_key, sel.threshold
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
        j_s = np.zeros(nj)
        j_k = np.zeros(nj, dtype=np.int64)
        j_act = np.zeros(nj, dtype=np.bool_)
        for j in range(nj):
            jd = j_doc[j]
            if jd >= 0 and mark[jd] >= a and mark[jd] < b and rows.score[mark[jd]] > thr:
                j_s[j] = rows.score[mark[jd]]
                j_k[j] = key[jd]
                j_act[j] = True
        _select_into(q, rows.doc[a:b], rows.score[a:b], sel, j_s, j_k, j_act, out)
        for i in range(a, b):
            mark[rows.doc[i]] = -1


@njit(nogil=True, cache=True)
def rank_dense(items, rows, row0, sel, out):
    """ranking.rank_rows for a dense block of score rows (row r is question row0 + r), into out
    (ranking.PassOutputs). Reference: ranking.order_by_score of each row's results (tests/test_ranking.py)."""
    ws = scratch(rows.shape[1], sel.keep)
    for r in items:
        _dense_select_into(row0 + r, rows[r], sel, out, ws)


@njit(nogil=True, cache=True)
def list_ranks(items, lists, judged):
    """Rank of each judged document (judged: ranking.Judged, its `rank` written) in its question's ordered list
    (lists: ranking.Csr), 1-based, 0 when absent. Reference: the 1-based position in the list
    (tests/test_kernels.py)."""
    for q in items:
        a, b = lists.ptr[q], lists.ptr[q + 1]
        for j in range(judged.ptr[q], judged.ptr[q + 1]):
            jd = judged.doc[j]
            judged.rank[j] = 0
            for i in range(a, b):
                if lists.doc[i] == jd:
                    judged.rank[j] = i - a + 1
                    break


# ------------------------------------------------------------------------------------------- weighted fusion


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
    Reference: fusion.weighted_dense (rank_rows of the dense fused rows), tests/test_engine.py.
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
        nt = 0
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
        for i in range(nt):  # documents with a question term, outside LSA's list
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


# ------------------------------------------------------------------------------------------- RRF


@njit(nogil=True, cache=True)
def rrf_fuse(items, r_ptr, r_docs, depth, k, key, out_d, out_s, out_n):
    """Reciprocal Rank Fusion per question: fusion.rrf_points, 1 / (k + rank), summed over the rankings in order (r_ptr: rankings x
    (questions + 1) offsets into r_docs, each ranking's lists laid end to end after the previous ranking's),
    the union ordered by points descending, then key; out_d/out_s: questions x (rankings * depth).
    Reference: fusion.rrf_points summed per document, ordered by ranking.order_by_score."""
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
        order = _order_desc(tot, kk, nc)
        for i in range(nc):
            out_d[q, i] = cd[order[i]]
            out_s[q, i] = tot[order[i]]
        out_n[q] = nc


# ------------------------------------------------------------------------------------------- compiled, or plain Python

KERNELS = ("layout", "bm25_locate", "bm25_probe_sites", "bm25_weights", "term_order", "bm25_rank", "bm25_at",
           "bm25_rows", "lsa_rank", "lsa_at", "lsa_rows", "tfidf_rows", "tfidf_columns", "sparse_dense",
           "unit_lower_rows", "rank_sparse", "rank_dense", "list_ranks", "weighted_topk", "weighted_scan", "rrf_fuse")
PYTHON_MAX_WORK = 200_000  # elementary steps (as `parallel` counts them) the plain-Python twin takes on while the
# compiled kernels are not loaded yet: the invented corpus's largest call is about 3,000, Cranfield's 2.5 million
# (the twin runs ~1 us a step: 0.2 s at most, against ~25 s for numba to compile every kernel on a fresh clone)

_MODE = {"auto": False}  # True: small calls run the twin until `mark_ready` (the app and the command line set it)
_READY = threading.Event()  # the compiled kernels are loaded in this process (warmed up: engine.warm_up)
_LOCAL = threading.local()  # .compiled: this thread always runs the compiled kernels (the warm-up's thread)


def _python_twin(module_globals: dict) -> dict:
    """The module's kernels as the plain Python they are written in (what NUMBA_DISABLE_JIT=1 runs): every
    compiled function of this module rebuilt over a copy of its globals in which each compiled callee is its own
    Python function too (the inlined BM25 weight and order are their modules' plain functions)."""
    from numba.core.dispatcher import Dispatcher

    g = dict(module_globals)
    g["trailing_zeros"] = lowest_bit
    for name, value in module_globals.items():
        if isinstance(value, Dispatcher):
            f = value.py_func
            if f.__module__ == __name__:
                g[name] = types.FunctionType(f.__code__, g, f.__name__, f.__defaults__, f.__closure__)
            else:
                g[name] = f
    return g


def _size_of(args) -> int:
    """A call's work in elementary steps when its caller gives none: the elements of its arrays (one level into
    the named tuples)."""
    n = 0
    for a in args:
        if isinstance(a, np.ndarray):
            n += a.size
        elif isinstance(a, tuple):
            n += sum(x.size for x in a if isinstance(x, np.ndarray))
    return n


def _serve_python(work: int) -> bool:
    return (_MODE["auto"] and not _READY.is_set() and not getattr(_LOCAL, "compiled", False)
            and work <= PYTHON_MAX_WORK)


class Kernel:
    """One kernel, compiled (numba, cached on disk: cache=True) and as plain Python; a call runs the compiled
    one, except in `serve_small_from_python` mode, before the compiled kernels are loaded, for a small call:
    the twin then gives the same numbers to the last bit (tests/test_kernels.py) without waiting for numba."""

    def __init__(self, compiled, python):
        self.compiled = compiled
        self.python = python
        self.__name__ = self.__qualname__ = python.__name__
        self.__doc__ = python.__doc__

    def pick(self, work: int):
        """The function that runs a call of `work` elementary steps."""
        return self.python if _serve_python(work) else self.compiled

    def __call__(self, *args):
        return self.pick(_size_of(args))(*args)

    def __repr__(self) -> str:
        return f"Kernel({self.__name__})"


def serve_small_from_python(on: bool = True) -> None:
    """Until `mark_ready`, run calls of at most PYTHON_MAX_WORK steps as plain Python (the app, the command line):
    a small corpus is then served at once on a fresh clone, while numba has not compiled (or loaded) anything."""
    _MODE["auto"] = bool(on)


def mark_ready() -> None:
    """The compiled kernels are loaded in this process: every call runs them from now on."""
    _READY.set()


def ready() -> bool:
    """Whether `mark_ready` was called (the compiled kernels are loaded)."""
    return _READY.is_set()


class in_background:
    """Within it, this thread and the worker threads its kernel calls use (a pool of their own) run at the lowest
    scheduling priority the system gives a thread (Linux: nice 19 for each thread alone; this one keeps it after,
    as raising it back needs a privilege: for a thread of its own): work done ahead (`Engine.prefetch`) takes the
    cores only when nothing a person waits for needs them."""

    def __enter__(self):
        self._was = getattr(_LOCAL, "background", False)
        _LOCAL.background = True
        _lowest_priority()
        return self

    def __exit__(self, *exc):
        _LOCAL.background = self._was
        return False


class compiled_here:
    """Within it, this thread runs only the compiled kernels (a warm-up compiles what it calls)."""

    def __enter__(self):
        self._was = getattr(_LOCAL, "compiled", False)
        _LOCAL.compiled = True
        return self

    def __exit__(self, *exc):
        _LOCAL.compiled = self._was
        return False


def dispatchers() -> dict:
    """Each kernel's numba dispatcher (empty with NUMBA_DISABLE_JIT=1): its signatures and cache statistics."""
    from numba.core.dispatcher import Dispatcher

    return {n: k.compiled for n, k in ((n, globals()[n]) for n in KERNELS) if isinstance(k.compiled, Dispatcher)}


_TWIN = _python_twin(globals())
for _name in KERNELS:
    globals()[_name] = Kernel(globals()[_name], _TWIN[_name])
del _name
