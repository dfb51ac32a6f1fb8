"""The dense pass (LSA's and the dense retriever's): each question's cosines with every document, selected and
ranked (a row per question, or up to 16 dimensions streamed: 16 questions take each block of documents' vectors
in turn), and the scores read at given documents.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ..core.thresholds import SAMPLE_RUN, STREAM_BLOCK, STREAM_GROUP, STREAM_ROOM
from .select import (
    Candidates,
    _count_above,
    _count_range,
    _cth_best,
    _dense_select_into,
    _judged_among,
    _judged_below,
    _sample_plan,
    _sampled_at,
    _scan_at_least,
    scratch,
    sorted_best,
)

SOURCE_DIGEST = "cb787609a7b9229e"  # of the project files imported above (kernels/__init__.py: numba's cache)


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


@njit(inline="always")
def _cosine_row(qvec, q, vt, row):
    """Cosines of question q with every document into row (`_cosine_block` over all of them)."""
    one = np.full(1, q, dtype=np.int64)
    _cosine_block(qvec, one, 0, 1, vt, 0, vt.shape[1], row, 0)


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
    return Stream(
        blk=np.zeros((1, STREAM_BLOCK)),
        hits=np.zeros(STREAM_BLOCK + 1, dtype=i64),
        samp=np.zeros((group, _sample_plan(n, m)[1])),
        cut=np.zeros(group),
        n_res=np.zeros(group, dtype=i64),
        lo=np.zeros(group),
        hi=np.zeros(group),
        nc=np.zeros(group, dtype=i64),
        c_s=np.zeros((group, room)),
        c_d=np.zeros((group, room), dtype=i64),
        j_s=np.zeros((group, nj)),
        low=np.zeros((group, nj), dtype=i64),
        n_low=np.zeros(group, dtype=i64),
        s4=np.full((group, w), np.inf),
        above=np.zeros((group, w), dtype=i64),
        tied=np.zeros((group, w), dtype=i64),
    )


@njit(inline="always")
def _stream_room(n, m):
    """The candidates a streamed question may hold: STREAM_ROOM x those expected to reach the sample's cut (the
    c-th best of one entry in `stride`: about c x stride), at least m."""
    stride, n_sampled, c = _sample_plan(n, m)
    return max(m, STREAM_ROOM * c * stride)


@njit
def lsa_streamed(items, start, g, qvec, vt, selection, out, ws, st, done):
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
    n, m, thr, key = vt.shape[1], selection.keep, selection.threshold, selection.tie_key
    stride, n_sampled, c = _sample_plan(n, m)
    for t in range(0, n_sampled, SAMPLE_RUN):  # the samples: runs of SAMPLE_RUN adjacent documents
        p = _sampled_at(t, stride)
        _cosine_block(qvec, items, start, g, vt, p, p + min(SAMPLE_RUN, n_sampled - t), st.samp, t)
    for r in range(g):
        q = items[start + r]
        cut = _cth_best(st.samp[r], n_sampled, c, 1, ws.heap)
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
        h = sorted_best(cand, nc, key, m, ws.picked, ws.vals, ws.keys, out.top_s[q], out.top_d[q], ws.top_p)
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


AUTO, ROWS, STREAM = 0, 1, 2  # lsa_rank's paths (lsa.PATHS names them)


@njit(nogil=True, cache=True)
def lsa_rank(items, qvec, vt, selection, out, path):
    """Cosines of each question with every document, the best selection.keep, counts, judged ranks, lowest and highest
    cosine, into out (ranking.PassOutputs). Reference: ranking.rank_rows of lsa.score_chunks (the same cosines,
    summed in the same order: q[0] * v[0] + q[1] * v[1] + ..., left to right, for every document).

    The paths (`path`; the same bits on each):

    * STREAM (and AUTO): where rows are long enough to be sampled, questions are streamed, STREAM_GROUP at a time
      (`lsa_streamed`); a question a stream gives back, or every question of rows too short to sample, has its row
      of cosines computed and then selected by `_dense_select`;
    * ROWS: one question's row of cosines at a time, then selected (the plainest).

    A third path, questions in groups reading each block of document vectors once, was deleted: it was at best
    1.2x the stream (Cranfield, d = 48) and 0.9x and 0.45x of it at 100k and 1M (bench/RESULTS.md, --paths).
    """
    n_docs = vt.shape[1]
    ws = scratch(n_docs, selection.keep)
    row = np.zeros((1, n_docs))
    if path != ROWS and _sample_plan(n_docs, selection.keep)[0] >= 2:
        nj = 0
        for q in items:
            nj = max(nj, out.judged.ptr[q + 1] - out.judged.ptr[q])
        st = stream_state(n_docs, selection.keep, nj)
        done = np.zeros(STREAM_GROUP, dtype=np.bool_)
        for start in range(0, items.size, STREAM_GROUP):
            g = min(STREAM_GROUP, items.size - start)
            lsa_streamed(items, start, g, qvec, vt, selection, out, ws, st, done)
            for r in range(g):
                if not done[r]:
                    _cosine_row(qvec, items[start + r], vt, row)
                    _dense_select_into(items[start + r], row[0], selection, out, ws)
        return
    for q in items:
        _cosine_row(qvec, q, vt, row)
        _dense_select_into(q, row[0], selection, out, ws)


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
