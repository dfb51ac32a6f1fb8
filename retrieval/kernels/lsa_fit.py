"""The kernels of LSA's fit: TF-IDF rows and columns, a sparse matrix times a dense one, and the randomized SVD's
normaliser.
"""

from __future__ import annotations

import numpy as np
from numba import njit


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
                o[c] = (
                    (
                        (((((o[c] + v[0] * x0[c]) + v[1] * x1[c]) + v[2] * x2[c]) + v[3] * x3[c]) + v[4] * x4[c])
                        + v[5] * x5[c]
                    )
                    + v[6] * x6[c]
                ) + v[7] * x7[c]
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
    scipy.linalg.lu(a, permute_l=True)'s first output (the same values moved, no arithmetic: tests/retrievers/test_lsa.py)."""
    n = lu.shape[1]
    for i in items:
        s = perm[i]
        for c in range(n):
            out[i, c] = lu[s, c] if c < s else (1.0 if c == s else 0.0)
