"""Numpy twins of the kernels a first run spends its time in (BM25's layout and pass, the dense pass): whole-array
numpy with the kernel's own arguments and outputs, the same numbers to the last bit (tests/kernels/test_kernels.py).

A one-shot command on a fresh clone (numba's cache on disk empty) would otherwise wait for numba to compile them:
about 45 s for Cranfield's first `evaluate` against 3 s warm, compiling lsa_rank alone two thirds of it. As plain
Python (`Kernel.python`) they take seconds on such a corpus; whole-array numpy, hundredths. The command line serves
from them until the compiled kernels are on disk (`dispatch.serve_uncompiled`; `python -m retrieval warmup`
compiles them all once); bench/first_run.py measures the first run both ways.

Each twin does what its kernel's docstring says, arithmetic in the same order: a BM25 score is its terms'
weights (`rules.bm25_weight`, elementwise) added in ascending term order from the first, a cosine
q[0] * v[0] + q[1] * v[1] + ... left to right, a selection ordered by `rules.ranks_before` (score descending, tie
key ascending). The work a call is given is bounded by its caller (`dispatch.VECTORISED_MAX_WORK`); the dense
pass's rows are computed a block at a time (`ROWS_AT_ONCE` scores), never a whole questions x documents matrix.
"""

from __future__ import annotations

import numpy as np

from .bm25_pass import HINTED, SAMPLED
from .rules import bm25_weight

ROWS_AT_ONCE = 1 << 20  # scores of a block of dense rows held at once (8 MB)


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The indices starts[i], starts[i] + 1, ..., starts[i] + lengths[i] - 1, for every i, end to end."""
    lengths = np.asarray(lengths, dtype=np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.cumsum(lengths) - lengths
    return np.repeat(np.asarray(starts, dtype=np.int64) - offsets, lengths) + np.arange(total, dtype=np.int64)


def best_order(scores: np.ndarray, keys: np.ndarray, m: int) -> np.ndarray:
    """Positions of the best m of `scores` in ranking order (score descending, then key ascending)."""
    n = scores.size
    if m <= 0 or n == 0:
        return np.zeros(0, dtype=np.int64)
    if n > m:
        kth = np.partition(scores, n - m)[n - m]  # the m-th best score: every one of the best m reaches it
        cand = np.flatnonzero(scores >= kth)
    else:
        cand = np.arange(n)
    return cand[np.lexsort((keys[cand], -scores[cand]))][:m]


def judged_ranks(
    scores: np.ndarray, keys: np.ndarray, j_scores: np.ndarray, j_keys: np.ndarray, results: np.ndarray
) -> np.ndarray:
    """Each judged entry's rank, 1 + the entries of `scores` that beat it (score above, or equal with a smaller
    key), where `results` (else 0)."""
    out = np.zeros(j_scores.size, dtype=np.int64)
    if not results.any():
        return out
    s, kj = j_scores[results], j_keys[results]
    ordered = np.sort(scores)
    right = np.searchsorted(ordered, s, side="right")
    rank = 1 + scores.size - right
    for i in np.flatnonzero(right - np.searchsorted(ordered, s, side="left") > 1):  # tied (rare): by key
        rank[i] += int(np.count_nonzero((scores == s[i]) & (keys < kj[i])))
    out[results] = rank
    return out


def _select_dense_row(q: int, row: np.ndarray, selection, out) -> None:
    """One dense row of scores (entry i: document i) into question q's outputs (ranking.PassOutputs), as
    select._dense_select_into: the best keep, results above the threshold, lowest and highest, judged ranks."""
    key, thr, m = selection.tie_key, selection.threshold, selection.keep
    order = best_order(row, key, m)
    h = order.size
    out.top_d[q, :h] = order
    out.top_s[q, :h] = row[order]
    out.n_top[q] = h
    out.n_res[q] = np.count_nonzero(row > thr)
    if row.size:  # the first of equal extremes, as a loop keeps it (+0.0 and -0.0)
        out.lo[q], out.hi[q] = row[np.argmin(row)], row[np.argmax(row)]
    else:
        out.lo[q], out.hi[q] = np.inf, -np.inf
    j0, j1 = out.judged.ptr[q], out.judged.ptr[q + 1]
    j_doc = out.judged.doc[j0:j1]
    inside = j_doc >= 0
    j_scores = np.where(inside, row[np.where(inside, j_doc, 0)], 0.0)
    out.judged.rank[j0:j1] = judged_ranks(
        row, key, j_scores, key[np.where(inside, j_doc, 0)], inside & (j_scores > thr)
    )


def cosines(qvec: np.ndarray, vt: np.ndarray) -> np.ndarray:
    """Rows of cosines, q[0] * v[0] + q[1] * v[1] + ... added left to right (vt: dims x documents)."""
    out = np.zeros((qvec.shape[0], vt.shape[1]))
    if vt.shape[0]:
        np.multiply(qvec[:, :1], vt[0][None, :], out=out)
        for c in range(1, vt.shape[0]):
            out += qvec[:, c : c + 1] * vt[c][None, :]
    return out


def lsa_rank(items, qvec, vt, selection, out, path):
    """dense_pass.lsa_rank: each question's cosines with every document, selected (every path gives these)."""
    items = np.asarray(items, dtype=np.int64)
    step = max(1, ROWS_AT_ONCE // max(vt.shape[1], 1))
    for a in range(0, items.size, step):
        qs = items[a : a + step]
        rows = cosines(qvec[qs], vt)
        for r, q in enumerate(qs):
            _select_dense_row(int(q), rows[r], selection, out)


def rank_dense(items, rows, row0, selection, out):
    """select.rank_dense: each dense row of scores (row r is question row0 + r) selected."""
    for r in np.asarray(items, dtype=np.int64):
        _select_dense_row(int(row0 + r), rows[r], selection, out)


def _question_postings(items, terms):
    """The postings of the items' question terms, question by question, each question's in ascending term order
    then document order: their question, term, posting and document."""
    a_lo, a_hi = terms.question_ptr[items], terms.question_ptr[items + 1]
    a = _ranges(a_lo, a_hi - a_lo)
    u = np.asarray(terms.question_term[a], dtype=np.int64)
    q_of_a = np.repeat(items, a_hi - a_lo)
    p_lo = terms.term_ptr[u]
    lens = terms.term_ptr[u + 1] - p_lo
    p = _ranges(p_lo, lens)
    return np.repeat(q_of_a, lens), np.repeat(u, lens), p, np.asarray(terms.doc[p], dtype=np.int64)


POSTINGS_AT_ONCE = 1 << 21  # layout: the postings of a block of questions regrouped at once


def layout(items, fill, terms, n_docs, sizes, entry_ptr, by_doc):
    """layout.layout: each question's postings regrouped by document (its two passes: sizes, then fill), a block
    of questions at a time (POSTINGS_AT_ONCE postings)."""
    items = np.asarray(items, dtype=np.int64)
    a_lo, a_hi = terms.question_ptr[items], terms.question_ptr[items + 1]
    u = terms.question_term[_ranges(a_lo, a_hi - a_lo)]
    per_term = terms.term_ptr[u + 1] - terms.term_ptr[u]
    per_question = np.bincount(np.repeat(np.arange(items.size), a_hi - a_lo), weights=per_term, minlength=items.size)
    block = np.cumsum(per_question) // POSTINGS_AT_ONCE
    for b in np.unique(block):
        _layout_block(items[block == b], fill, terms, sizes, entry_ptr, by_doc)


def _layout_block(items, fill, terms, sizes, entry_ptr, by_doc):
    """`layout` of some questions."""
    q, u, p, d = _question_postings(items, terms)
    order = np.lexsort((d, q))  # stable: within a (question, document), the terms stay in ascending order
    q, u, p, d = q[order], u[order], p[order], d[order]
    if q.size:
        first = np.flatnonzero(np.r_[True, (q[1:] != q[:-1]) | (d[1:] != d[:-1])])
    else:
        first = np.zeros(0, dtype=np.int64)
    count = np.diff(np.r_[first, q.size])  # per (question, document): its question terms
    gq = q[first]
    single = count == 1
    if not fill:
        sizes.n_single[items] = 0
        sizes.n_multi[items] = 0
        sizes.n_entries[items] = 0
        np.add.at(sizes.n_single, gq[single], 1)
        np.add.at(sizes.n_multi, gq[~single], 1)
        np.add.at(sizes.n_entries, gq[~single], count[~single])
        return
    # singles: their posting at the question's next single place, in document order
    sq = gq[single]
    s_rank = np.arange(sq.size) - np.searchsorted(sq, sq)  # place among the question's singles (gq is sorted)
    by_doc.single_posting[by_doc.single_ptr[sq] + s_rank] = p[first[single]]
    # multis: where each one's postings start, its document, then its terms and counts in ascending term order
    mq, m_first, m_count = gq[~single], first[~single], count[~single]
    if mq.size:
        m_rank = np.arange(mq.size) - np.searchsorted(mq, mq)
        before = np.cumsum(m_count) - m_count  # postings of the multis before it, all questions
        q_start = np.searchsorted(mq, mq)
        e = entry_ptr[mq] + before - before[q_start]
        slot = by_doc.multi_ptr[mq] + m_rank
        by_doc.multi_start[slot] = e
        by_doc.multi_doc[slot] = d[m_first]
        src = _ranges(m_first, m_count)
        dst = _ranges(e, m_count)
        by_doc.multi_term[dst] = u[src]
        by_doc.multi_count[dst] = np.asarray(terms.count[p[src]]).astype(np.int32)


def bm25_rank(
    items,
    by_doc,
    terms,
    groups,
    weights,
    selection,
    judged_pos,
    out,
    top_p,
    probe,
    hint,
    sort_budget,
    share,
    grouped_pass,
    settled,
):
    """bm25_pass.bm25_rank's full pass (the grouped pass leaves every question to it: `settled` PENDING): each
    question's scores over its layout (singles' weights from weights.w, multis' summed in ascending term order),
    its best m with their layout positions, results, lowest and highest, probed documents' scores, judged ranks."""
    if grouped_pass:
        return
    items = np.asarray(items, dtype=np.int64)
    key, thr, m = selection.tie_key, selection.threshold, selection.keep
    norm, k1p1, w = weights.norm, weights.k1p1, weights.w
    n_docs = key.size
    for q in items:
        fs, ns = by_doc.single_ptr[q], by_doc.single_ptr[q + 1] - by_doc.single_ptr[q]
        fm, nm = by_doc.multi_ptr[q], by_doc.multi_ptr[q + 1] - by_doc.multi_ptr[q]
        sp_ = by_doc.single_posting[fs : fs + ns]
        m_doc = np.asarray(by_doc.multi_doc[fm : fm + nm], dtype=np.int64)
        starts = by_doc.multi_start[fm : fm + nm + 1]
        lens = np.diff(starts)
        multis = np.zeros(nm)
        if nm:
            nd = norm[m_doc]
            for k in range(int(lens.max())):  # the k-th term of each multi holding more than k: left to right
                on = lens > k
                e = starts[:-1][on] + k
                x = bm25_weight(by_doc.multi_count[e].astype(np.float64), terms.idf[by_doc.multi_term[e]], nd[on], k1p1)
                if k == 0:
                    multis[on] = x
                else:
                    multis[on] += x
        vals = np.concatenate((w[sp_], multis))
        docs = np.concatenate((np.asarray(by_doc.posting_doc[sp_], dtype=np.int64), m_doc))
        n_touched = vals.size
        hinted = m > 0 and hint.pos.shape[1] >= m and bool((hint.pos[q, :m] >= 0).all())
        settled[q] = HINTED if hinted else SAMPLED
        order = best_order(vals, key[docs], m)
        h = order.size
        out.top_s[q, :h] = vals[order]
        out.top_d[q, :h] = docs[order]
        top_p[q, :h] = order
        pos = probe.at.pos[q]
        probe.score[q, :] = np.where(pos >= 0, vals[np.where(pos >= 0, pos, 0)] if n_touched else 0.0, 0.0)
        j0, j1 = out.judged.ptr[q], out.judged.ptr[q + 1]
        jp = judged_pos[j0:j1]
        j_doc = out.judged.doc[j0:j1]
        placed = jp >= 0
        j_scores = np.where(placed, vals[np.where(placed, jp, 0)] if n_touched else 0.0, 0.0)
        out.judged.rank[j0:j1] = judged_ranks(
            vals, key[docs], j_scores, key[np.where(j_doc >= 0, j_doc, 0)], (j_doc >= 0) & (j_scores > thr)
        )
        out.n_top[q] = h
        out.n_res[q] = np.count_nonzero(vals > thr)
        if n_touched < n_docs:  # the documents without a question term score 0
            out.lo[q] = 0.0
            out.hi[q] = out.top_s[q, 0] if h > 0 else 0.0
        else:
            out.lo[q] = vals.min()
            out.hi[q] = out.top_s[q, 0]


TWINS = {"layout": layout, "bm25_rank": bm25_rank, "lsa_rank": lsa_rank, "rank_dense": rank_dense}
