"""BM25's compiled pass: the postings' weights, the term groups, the probe sites, and `bm25_rank`, which scores,
selects and ranks every question (the full pass over the question's postings, or the grouped pass bounded by a
hint's cut, with a second try and a hand-off to the full pass).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ..core.thresholds import GUESS
from .layout import _find, _pos_doc, span_of
from .rules import bm25_weight, ranks_before
from .select import JudgedRow, _beaten_among, _judged_ranks, _sample_cut, _scan_at_least, scratch, sorted_best

SOURCE_DIGEST = "0d8926cabc4a2ea3"  # of the project files imported above (kernels/__init__.py: numba's cache)


_weight = njit(inline="always")(bm25_weight)
before = njit(inline="always")(ranks_before)


class Scoring(NamedTuple):
    """What a posting's BM25 weight needs besides its count: the terms' idf, the documents' length norms, k1 + 1."""

    idf: np.ndarray
    norm: np.ndarray
    k1p1: float


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
    postings). Reference: np.lexsort((len_rank[doc], -count, term)) (bm25.term_groups, tests/kernels/test_kernels.py)."""
    n = len_rank.size
    for u in items:
        lo, hi = ptr[u], ptr[u + 1]
        key = np.empty(hi - lo, dtype=np.int64)
        for i in range(lo, hi):
            key[i - lo] = (f_top - count[i]) * n + len_rank[doc[i]]
        o = np.argsort(key)
        for i in range(hi - lo):
            out[lo + i] = lo + o[i]


PENDING, SAMPLED, HINTED, GROUPED, GROUPED_SECOND_TRY = 0, 1, 2, 3, 4  # how bm25_rank settled a question (`settled`)
SETTLED_BY = ("pending", "sampled", "hinted", "grouped", "grouped, second try")  # those codes' names
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
def bm25_probe_sites(items, pos, by_doc, terms, term_out, count_out):
    """For each layout position pos[q, i] of a document holding one of question q's terms (by_doc: bm25.Layout,
    terms: bm25.Postings), that term and its count there into term_out / count_out (left as they are for the
    others): bm25.probe_sites."""
    for q in items:
        first_single, n_singles = by_doc.single_ptr[q], by_doc.single_ptr[q + 1] - by_doc.single_ptr[q]
        for i in range(pos.shape[1]):
            pi = pos[q, i]
            if 0 <= pi < n_singles:
                p = by_doc.single_posting[first_single + pi]
                term_out[q, i] = _posting_term(q, p, terms)
                count_out[q, i] = np.int32(terms.count[p])


@njit(inline="always")
def _score_at(q, span, i, grouped, by_doc, terms, sc, vals):
    """The score of position i of question q's layout (span: its `Span`): vals[i], except a single's in the grouped
    pass (vals holds only the multis' there), its weight computed."""
    if grouped and i < span.n_singles:
        return _single_weight(q, by_doc.single_posting[span.first_single + i], terms, sc.norm, sc.k1p1)
    return vals[i]


@njit(inline="always")
def _multi_sums(by_doc, span, sc, vals, multi_weights):
    """The multis' scores into vals[n_singles:n_singles + n_multis] (by_doc: bm25.Layout, span: the question's `Span`;
    each its terms' weights summed in ascending term order, computed from the layout's terms and counts: sequential
    reads and one norm a document), their postings' weights into multi_weights (from 0, in the layout's order); returns
    how many postings."""
    _, n_singles, first_multi, n_multis = span
    idf, norm, k1p1 = sc
    e0 = by_doc.multi_start[first_multi]
    for j in range(n_multis):
        a, b = by_doc.multi_start[first_multi + j], by_doc.multi_start[first_multi + j + 1]
        nd = norm[by_doc.multi_doc[first_multi + j]]
        x = _weight(np.float64(by_doc.multi_count[a]), idf[by_doc.multi_term[a]], nd, k1p1)
        multi_weights[a - e0] = x
        for e in range(a + 1, b):
            y = _weight(np.float64(by_doc.multi_count[e]), idf[by_doc.multi_term[e]], nd, k1p1)
            multi_weights[e - e0] = y
            x += y
        vals[n_singles + j] = x
    return by_doc.multi_start[first_multi + n_multis] - e0


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
def _postings_beating(q, groups, sc, tag, key, s, kj):
    """How many postings of question q's terms (groups: bm25.TermGroups) weigh more than s, plus the documents
    with one of its terms weighing exactly s whose tie key is below kj (rare: looked at one by one; documents
    tagged below 0 hold several terms: their sums are elsewhere)."""
    idf, norm, k1p1 = sc
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


@njit
def _grouped_candidates(q, span, by_doc, groups, sc, vals, cut, tag, hint, m, ws):
    """Every document of question q scoring at or above the cut, its multis' scores in vals[n_singles:n_singles +
    n_multis], its singles' read off the groups (groups: bm25.TermGroups): each group's prefix at or above the cut,
    walked (it is short), but the documents tagged below 0 (several terms). A document of the hint (tagged 1 + its place
    there, or -2 - it for a multi) goes to that place, its position known; the others after the first m, their singles'
    positions left unknown (UNPLACED: found for those that make the best m). Holes are left as pos -1. Returns how many
    of the hint's were found, and the end of the others. ws (select.Scratch): its found and cand."""
    _, n_singles, first_multi, n_multis = span
    idf, norm, k1p1 = sc
    found, cand = ws.found, ws.cand
    for i in range(m):
        cand.pos[i] = -1
    nf = 0
    nc = m
    n_found = _scan_at_least(vals[n_singles:], n_multis, cut, found, 0)
    for f in range(n_found):
        j = found[f]
        d = by_doc.multi_doc[first_multi + j]
        t = -2 - tag[d]  # a multi of the hint's: its place there
        c = t if t >= 0 else nc
        cand.score[c] = vals[n_singles + j]
        cand.doc[c] = d
        cand.pos[c] = n_singles + j
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
def _judged_ranks_grouped(q, span, by_doc, groups, sc, vals, multi_weights, cut, thr, cand, nc, judged, key, tag):
    """`_judged_ranks` when only the multis' scores are in vals[n_singles:n_touched] (their postings' weights in
    multi_weights): a judged document below the cut is beaten by the postings of the question's terms above it
    (binary searches in the groups), less the multis' postings above it, plus the multis whose sums are above it, plus
    the documents tied with it that come first (rare: looked at one by one). judged: select.JudgedRow."""
    judged_scores, j_doc, j_rank = judged.score, judged.doc, judged.rank
    n_singles, n_touched = span.n_singles, span.n_singles + span.n_multis
    for j in range(judged_scores.size):
        j_rank[j] = 0
        s = judged_scores[j]
        if j_doc[j] < 0 or not s > thr:
            continue
        kj = key[j_doc[j]]
        if not s < cut:
            j_rank[j] = 1 + _beaten_among(cand, nc, key, s, kj)
            continue
        beat = _postings_beating(q, groups, sc, tag, key, s, kj)
        for e in range(multi_weights.size):
            beat -= multi_weights[e] > s
        tied = 0
        for i in range(n_singles, n_touched):
            beat += vals[i] > s
            tied += vals[i] == s
        if tied:
            for i in range(n_singles, n_touched):
                if vals[i] == s and key[_pos_doc(by_doc, span, i)] < kj:
                    beat += 1
        j_rank[j] = 1 + beat


@njit
def settle_order(cand, nc, key, limit, ks):
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
            if before(vy, ks[b - 1], vx, kx):
                break
            cand.score[b], cand.doc[b], cand.pos[b], ks[b] = vy, cand.doc[b - 1], cand.pos[b - 1], ks[b - 1]
            b -= 1
        moves += a - b
        cand.score[b], cand.doc[b], cand.pos[b], ks[b] = vx, dx, px, kx
        if moves > limit:
            return False
    return True


@njit
def _tag_question(tag, by_doc, span, hint, q, m, clear):
    """Tag question q's multis MULTI and its hint's documents 1 + their place there (-2 - it for a multi), or
    (clear) untag them all: the grouped pass's `tag`, all zeros between questions."""
    for j in range(span.n_multis):
        tag[by_doc.multi_doc[span.first_multi + j]] = 0 if clear else MULTI
    for i in range(m):
        d = hint.doc[q, i]
        tag[d] = 0 if clear else i + 1 if tag[d] == 0 else -2 - i


@njit(nogil=True, cache=True)
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
    """Score each question from its postings regrouped by document, keep the best m, count, rank the judged.

    Reference: bm25.search(dataset, bm25.score(...)), i.e. ranking.rank_rows of the score matrix (and the
    raw best lists: ranking.order_by_score of each dense row, tests/kernels/test_perf_equivalence.py).

    Arguments: by_doc (bm25.Layout), terms (bm25.Postings), groups (bm25.TermGroups), weights (bm25.Weights: the norms,
    k1 + 1 and, for the full pass, the postings' weights from bm25_weights), selection (ranking.Selection: tie keys,
    threshold, m), judged_pos (the judged documents' layout positions, bm25.locate, -1 for none: found once per
    dataset), out (ranking.PassOutputs, the judged documents included), top_p (questions x m: the best m's
    positions, a later run's hint), probe (bm25.Probe, questions x P with maybe P = 0: documents whose scores
    are also wanted, LSA's best for the weighted fusion, with their sites), hint (bm25.Hint), sort_budget,
    share (the grouped pass takes a question touching at least share x m documents: bm25.GROUPED_SHARE for
    the app's choice, 0 for every question it can take), grouped_pass (which of the two passes), settled (one code per
    question, out: SAMPLED or HINTED by the full pass, GROUPED or GROUPED_SECOND_TRY by the grouped pass, which leaves
    PENDING the questions it hands to the full pass).

    The layout lists the documents holding a question term, those with one term first (a score is one weight),
    then those with several, each with its terms and counts in ascending term order (their weights summed in
    that order: the reference's; `_multi_sums`). Two passes share this kernel:

    * **the full pass**: every single's score gathered from w into a contiguous array after the
      multis', with no accumulator to scatter into or clear. Selection looks only at the scores at or above a
      cut checked not to exceed the m-th best score: with a hint (questions x m, the positions and documents of
      a run's best m, e.g. at the previous k1 or b), the lowest of those m distinct documents' scores, the
      candidates the hint's m in its order, then the few others at or above the cut (a scan that skips blocks
      below it); else a cut about 1.5 m scores reach, from a sample (`_sample_cut`; every score when fewer
      reach it), the candidates then sorted (`sorted_best`). A judged document is ranked by counting the
      documents that beat it: among the candidates when it scores at or above the cut, else over all scores
      (vectorised, four judged documents a pass).
    * **the grouped pass**, for a question with a full hint, documents without
      any of its terms and at least share x m with one (below that the full pass costs less: on
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
      left PENDING in `settled`, its outputs left to the full pass. LSA's probed documents holding one term are
      weighed from their sites (bm25.probe_sites: term and count found once per list, then one read far away,
      the norm).

    After a small parameter change the candidates, the hint's first, are nearly in order: an insertion sort
    settles them (`settle_order`; past sort_budget moves per candidate, the general sort takes over). The
    outputs never depend on the hint.
    """
    key, thr, m = selection.tie_key, selection.threshold, selection.keep
    norm, k1p1, w, idf = weights.norm, weights.k1p1, weights.w, terms.idf
    sc = Scoring(idf, norm, k1p1)
    n_docs = key.size
    vals = np.empty(n_docs)
    ws = scratch(n_docs, m)
    found, cand = ws.found, ws.cand
    tag = np.zeros(n_docs if grouped_pass else 0, dtype=np.int32)  # 0 between questions (`_tag_question`)
    most = 0
    for q in items:
        most = max(most, by_doc.multi_start[by_doc.multi_ptr[q + 1]] - by_doc.multi_start[by_doc.multi_ptr[q]])
    multi_weights = np.empty(most)  # a question's multis' postings' weights, in their order
    for q in items:
        span = span_of(by_doc, q)
        first_single, n_singles, _, n_multis = span
        n_touched = n_singles + n_multis
        nh = 0
        if hint.pos.shape[1] >= m:
            for i in range(m):
                nh += hint.pos[q, i] >= 0
        hinted = nh == m and m > 0
        if grouped_pass and not (hinted and n_touched < n_docs and n_touched >= share * m):
            continue
        ne = _multi_sums(by_doc, span, sc, vals, multi_weights)
        nr = 0
        for j in range(n_multis):
            nr += vals[n_singles + j] > thr
        if grouped_pass:
            _tag_question(tag, by_doc, span, hint, q, m, False)
            cut = np.inf
            for i in range(max(0, m - GUESS), m):
                s = _score_at(q, span, hint.pos[q, i], True, by_doc, terms, sc, vals)
                cut = min(cut, s)
            nf, nc = _grouped_candidates(q, span, by_doc, groups, sc, vals, cut, tag, hint, m, ws)
            settled[q] = GROUPED
            if nf + nc - m < m:  # fewer than m reach the guess: the lowest of all the hint's m, which m reach
                for i in range(m - GUESS):
                    s = _score_at(q, span, hint.pos[q, i], True, by_doc, terms, sc, vals)
                    cut = min(cut, s)
                nf, nc = _grouped_candidates(q, span, by_doc, groups, sc, vals, cut, tag, hint, m, ws)
                settled[q] = GROUPED_SECOND_TRY
            if nf + nc - m < m:  # a guard (the hint's m documents reach their lowest score): the full pass
                _tag_question(tag, by_doc, span, hint, q, m, True)
                settled[q] = PENDING
                continue
            nc = _close_holes(cand, m, nc)
            nr += _postings_beating(q, groups, sc, tag, key, thr, -1)  # no tie key is below -1
            for e in range(ne):
                nr -= multi_weights[e] > thr
        else:
            settled[q] = HINTED if hinted else SAMPLED
            for i in range(n_singles):  # one weight each: a gather, no branch
                x = w[by_doc.single_posting[first_single + i]]
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
                cut = _sample_cut(vals, n_touched, m, ws.heap)
            n_found = _scan_at_least(vals, n_touched, cut, found, 0)
            if not hinted and n_found < m and n_found < n_touched:  # fewer than m reach it (rare): every score counts
                cut = -np.inf
                n_found = _scan_at_least(vals, n_touched, cut, found, 0)
            for f in range(n_found):
                i = found[f]
                cand.score[nc] = vals[i]
                cand.doc[nc] = _pos_doc(by_doc, span, i)
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
        judged_scores = np.zeros(nj)
        for j in range(nj):
            pj = judged_pos[j0 + j]
            if pj >= 0:  # else 0: no question term (or not a document of the corpus)
                judged_scores[j] = _score_at(q, span, pj, grouped_pass, by_doc, terms, sc, vals)
        judged = JudgedRow(judged_scores, out.judged.doc[j0:j1], out.judged.rank[j0:j1])
        if grouped_pass:
            _judged_ranks_grouped(
                q, span, by_doc, groups, sc, vals, multi_weights[:ne], cut, thr, cand, nc, judged, key, tag
            )
            _tag_question(tag, by_doc, span, hint, q, m, True)
        else:
            _judged_ranks(vals, n_touched, cut, thr, cand, nc, judged, key, by_doc, span, ws)
        ts = out.top_s[q]
        td = out.top_d[q]
        tp = top_p[q]
        if hinted and settle_order(cand, nc, key, sort_budget * nc, ws.keys):
            h = min(m, nc)
            for r in range(h):
                ts[r] = cand.score[r]
                td[r] = cand.doc[r]
                tp[r] = cand.pos[r]
        else:
            h = sorted_best(cand, nc, key, m, ws.picked, ws.vals, ws.keys, ts, td, tp)
        if grouped_pass:
            for r in range(h):
                if tp[r] == UNPLACED:
                    tp[r] = _find(by_doc, span, td[r], 0, n_singles)
        out.n_top[q] = h
        out.n_res[q] = nr
        if n_touched < n_docs:  # the documents without a question term score 0
            out.lo[q] = 0.0
            out.hi[q] = ts[0] if h > 0 else 0.0
        else:
            vmin = np.inf
            for i in range(n_touched):
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


@njit(nogil=True, cache=True)
def bm25_at(items, qs, ds, terms, norm, k1p1, out):
    """BM25 scores of (question, document) pairs (terms: bm25.Postings). Reference: bm25.score at those cells."""
    for i in items:
        out[i] = _bm25_at(qs[i], ds[i], terms, norm, k1p1)
