"""Each question's postings regrouped by document (BM25's question layout) and documents located in it."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import config, njit


def lowest_bit(b):
    """How many zero bits end b (b != 0), the index of its lowest set bit: numba's trailing_zeros intrinsic in
    plain Python."""
    x = int(b)
    return (x & -x).bit_length() - 1


if config.DISABLE_JIT:  # plain Python: the intrinsic has no Python body
    trailing_zeros = lowest_bit
else:
    from numba.cpython.unsafe.numbers import trailing_zeros


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
def layout(items, fill, terms, n_docs, sizes, entry_ptr, by_doc):
    """Each question's postings (terms: bm25.Postings) regrouped by document (by_doc: bm25.Layout): the documents
    with one question term in id order (single_posting: their posting), then those with several in id order
    (multi_start: where each one's postings start in multi_term / multi_count, its terms and their counts in
    ascending term order; multi_doc: their ids). Two passes:
    fill=False counts, per question, the single-term documents, the multi-term ones and the latter's postings
    (sizes: bm25.LayoutSizes); fill=True writes the layout at the offsets those counts give (by_doc.single_ptr,
    by_doc.multi_ptr, and entry_ptr into multi_term / multi_count).

    Reference: bm25.QuestionPlan.docs_at reads each position's document back (tests/kernels/test_kernels.py), and
    tests/retrievers/test_bm25.py spells a small layout out."""
    cnt = np.zeros(n_docs, dtype=np.int64)
    slot = np.zeros(n_docs, dtype=np.int64)
    bits = np.zeros((n_docs + 63) // 64, dtype=np.uint64)
    docs = np.empty(n_docs, dtype=np.int64)
    counts = np.empty(n_docs, dtype=np.int64)
    for q in items:
        _count_terms(q, terms, cnt, bits)
        n = _touched_in_order(bits, cnt, docs, counts)
        if not fill:
            n_singles = 0
            ne = 0
            for i in range(n):
                n_singles += counts[i] == 1
                ne += counts[i] if counts[i] > 1 else 0
            sizes.n_single[q] = n_singles
            sizes.n_multi[q] = n - n_singles
            sizes.n_entries[q] = ne
            continue
        si = by_doc.single_ptr[q]
        mj = by_doc.multi_ptr[q]
        e = entry_ptr[q]
        for i in range(n):  # a single's place, or where a multi's postings go
            d = docs[i]
            if counts[i] == 1:
                slot[d] = -1 - si
                si += 1
            else:
                by_doc.multi_start[mj] = e
                by_doc.multi_doc[mj] = d
                slot[d] = e
                e += counts[i]
                mj += 1
        for a in range(terms.question_ptr[q], terms.question_ptr[q + 1]):  # ascending terms: each multi's in term order
            u = terms.question_term[a]
            for p in range(terms.term_ptr[u], terms.term_ptr[u + 1]):
                d = terms.doc[p]
                t = slot[d]
                if t < 0:
                    by_doc.single_posting[-1 - t] = p
                else:
                    by_doc.multi_term[t] = u
                    by_doc.multi_count[t] = np.int32(terms.count[p])  # an int32 count (Bm25Index.counts): exact
                    slot[d] = t + 1


class Span(NamedTuple):
    """Where one question's documents sit in the layout (bm25.Layout): its singles (documents holding one question
    term) from first_single, then its multis (several terms) from first_multi. Position i of the question's layout
    is its i-th single for i < n_singles, else its (i - n_singles)-th multi."""

    first_single: int
    n_singles: int
    first_multi: int
    n_multis: int


@njit(inline="always")
def span_of(by_doc, q):
    """Question q's `Span` in the layout by_doc."""
    first_single, first_multi = by_doc.single_ptr[q], by_doc.multi_ptr[q]
    return Span(
        first_single, by_doc.single_ptr[q + 1] - first_single, first_multi, by_doc.multi_ptr[q + 1] - first_multi
    )


@njit(inline="always")
def _pos_doc(by_doc, span, i):
    """The document at position i of a question's layout (span: its `Span`)."""
    if i < span.n_singles:
        return by_doc.posting_doc[by_doc.single_posting[span.first_single + i]]
    return by_doc.multi_doc[span.first_multi + i - span.n_singles]


@njit
def _find(by_doc, span, d, lo_, hi_):
    """Position of document d among positions [lo_, hi_) of a question's layout, one part of it (singles or
    multis, each in id order): a binary search; -1 if it is not there."""
    end = hi_
    while lo_ < hi_:
        mid = (lo_ + hi_) >> 1
        if _pos_doc(by_doc, span, mid) < d:
            lo_ = mid + 1
        else:
            hi_ = mid
    if lo_ < end and _pos_doc(by_doc, span, lo_) == d:
        return lo_
    return -1


@njit
def _locate(by_doc, span, d):
    """Position of document d in a question's layout (binary search in each part), -1 if it has no question term."""
    i = _find(by_doc, span, d, 0, span.n_singles)
    return i if i >= 0 else _find(by_doc, span, d, span.n_singles, span.n_singles + span.n_multis)


@njit(nogil=True, cache=True)
def bm25_locate(items, ptr, docs, by_doc, n_docs, per_doc, out):
    """Positions of documents (question q's: docs[ptr[q]:ptr[q + 1]], -1 for none) in each question's layout
    (by_doc: bm25.Layout; documents 0..n_docs-1); -1 for one without a question term. A question with many documents
    to find for its layout's length (their count times per_doc at least the layout's length) has them found in one
    pass over its layout, each wanted document marked by id beforehand; the others, a binary search each (two
    dependent reads a step). Reference: bm25.QuestionPlan.docs_at undoes it."""
    mark = np.empty(0, dtype=np.int64)  # by document: -1, -2 wanted, else its position (made at the first pass)
    for q in items:
        span = span_of(by_doc, q)
        first_single, n_singles, first_multi, n_multis = span
        a, b = ptr[q], ptr[q + 1]
        if (b - a) * per_doc < n_singles + n_multis:
            for i in range(a, b):
                d = docs[i]
                out[i] = _locate(by_doc, span, d) if d >= 0 else -1
            continue
        if mark.size == 0:
            mark = np.full(n_docs, -1, dtype=np.int64)
        for i in range(a, b):
            d = docs[i]
            if 0 <= d < n_docs:
                mark[d] = -2
        for i in range(n_singles):
            d = by_doc.posting_doc[by_doc.single_posting[first_single + i]]
            if mark[d] == -2:
                mark[d] = i
        for j in range(n_multis):
            d = by_doc.multi_doc[first_multi + j]
            if mark[d] == -2:
                mark[d] = n_singles + j
        for i in range(a, b):
            d = docs[i]
            out[i] = mark[d] if 0 <= d < n_docs and mark[d] >= 0 else -1
        for i in range(a, b):
            d = docs[i]
            if 0 <= d < n_docs:
                mark[d] = -1
