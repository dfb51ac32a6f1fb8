"""BM25's question plan: the postings of the terms the questions use, sliced once per dataset, by term, by
document (each question's layout) and by weight (each term's groups of one count), as the compiled passes read
them; where given documents lie in each question's layout (`locate`, `probe_sites`), found once for every (k1, b).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import ClassVar, NamedTuple

import numpy as np
import scipy.sparse as sp

import retrieval.kernels as k

from ..core.errors import InputError
from .bm25_formula import K3_DEFAULT, Bm25Index, question_terms, question_weight

LOCATE_PER_DOC = 256  # `locate` finds a question's documents in one pass over its layout when their count times this
# reaches the layout's length, else by a binary search each (2 log2(length) dependent reads). LSA's best 1,000 of
# each of 1,000 questions at 100,000 documents (layouts 13,000 long at the median): 222-243 ms by binary search,
# 41-45 ms by passes (what the first k1 step after a d step waits for); a question's few judged documents: searches


class Postings(NamedTuple):
    """The question terms' postings by term, as the compiled passes read them (QuestionPlan's q_*, u_*, idf_u)."""

    question_ptr: np.ndarray  # n_queries + 1 offsets into question_term
    question_term: np.ndarray  # each question's distinct terms (positions in QuestionPlan.terms), ascending
    term_ptr: np.ndarray  # n_terms + 1 offsets into doc / count
    doc: np.ndarray  # the documents holding each term, ascending
    count: np.ndarray  # the term's count in that document (float64)
    idf: np.ndarray  # per term


class Layout(NamedTuple):
    """Each question's postings regrouped by document (QuestionPlan's s_*, m_*), as the compiled passes read them."""

    single_ptr: np.ndarray  # n_queries + 1 offsets into single_posting
    single_posting: np.ndarray  # per question, its documents with one question term (id order): their posting
    multi_ptr: np.ndarray  # n_queries + 1 offsets into multi_start
    multi_start: np.ndarray  # per question, its documents with several terms (id order): offsets into multi_term
    multi_term: np.ndarray  # those documents' terms (positions in QuestionPlan.terms), each document's ascending
    multi_count: np.ndarray  # each of those terms' count in its document (int32)
    multi_doc: np.ndarray  # those documents (int32)
    posting_doc: np.ndarray  # the document of each posting (Postings.doc)


class TermGroups(NamedTuple):
    """Each question term's postings by weight, whatever (k1, b) (QuestionPlan's q_*, g_*), as bm25_rank reads them."""

    question_ptr: np.ndarray  # n_queries + 1 offsets into question_term
    question_term: np.ndarray  # each question's distinct terms (positions in QuestionPlan.terms)
    group_ptr: np.ndarray  # n_terms + 1 offsets into group_start: each term's groups
    group_start: np.ndarray  # where each group starts in `doc`, + the end
    count: np.ndarray  # each group's count (float64: the count the weight formula takes)
    doc: np.ndarray  # each term's postings' documents by count descending, length ascending, id (int32)


class LayoutSizes(NamedTuple):
    """Per question, what its layout holds (the first of the layout's two passes writes them)."""

    n_single: np.ndarray  # documents with one question term
    n_multi: np.ndarray  # documents with several
    n_entries: np.ndarray  # the latter's postings


class ProbeSites(NamedTuple):
    """Where documents whose scores a BM25 pass reads off besides (questions x P) lie in each question's layout,
    found once per list (`probe_sites`): what a (k1, b) change leaves alone."""

    pos: np.ndarray  # layout positions (-1 for none)
    term: np.ndarray  # a document holding one question term: that term (a position in QuestionPlan.terms), else -1
    count: np.ndarray  # its count there (int32; 0 for the others)

    @classmethod
    def none(cls, n_queries: int) -> ProbeSites:
        """No documents to read off (P = 0)."""
        return cls(
            np.zeros((n_queries, 0), dtype=np.int64),
            np.zeros((n_queries, 0), dtype=np.int32),
            np.zeros((n_queries, 0), dtype=np.int32),
        )


@dataclass(frozen=True, eq=False)
class QuestionPlan:
    """The postings of the terms the questions use, sliced once per dataset: all a (k1, b) change re-weights.

    Besides the postings by term (u_*), each question's postings regrouped by document (its "layout"): the
    documents holding one question term, in id order (s_up: the index of that posting in u_docs), then those
    holding several, in id order (m_start: where each one's terms and counts start in m_term / m_count, in
    ascending term order).
    A document's position is its place in that list (singles first); a score is then one weight or a short
    sum read in sequence, never scattered into an accumulator.
    """

    q_ptr: np.ndarray  # n_queries + 1 offsets into q_u
    q_u: np.ndarray  # each question's distinct terms, as positions in `terms`, ascending
    terms: np.ndarray  # the union of the questions' terms (column ids, ascending)
    u_ptr: np.ndarray  # len(terms) + 1 offsets into u_docs / u_f
    u_docs: np.ndarray  # documents holding each term, ascending
    u_f: np.ndarray  # the term's count in that document (float64)
    idf_u: np.ndarray  # idf of each term in `terms`
    n_docs: int
    s_ptr: np.ndarray  # n_queries + 1 offsets into s_up
    s_up: np.ndarray  # per question, its documents with one question term (id order): their posting (int32)
    m_ptr: np.ndarray  # n_queries + 1 offsets into m_start
    m_start: np.ndarray  # per question, its documents with several terms (id order): offsets into m_term, + the end
    m_term: np.ndarray  # those documents' terms (positions in `terms`), each document's ascending (int32)
    m_count: np.ndarray  # each of those terms' count in its document (int32): the multis' scores read in sequence
    m_doc: np.ndarray  # those documents (int32)
    g_ptr: np.ndarray  # len(terms) + 1 offsets into g_start: each term's groups of one count (`term_groups`)
    g_start: np.ndarray  # where each group starts in g_doc, + the end
    g_f: np.ndarray  # each group's count (float64)
    g_doc: np.ndarray  # each term's postings' documents by count descending, length ascending, id (int32)
    qtf: np.ndarray | None = None  # counting repeated words: each term's count in the questions using it (else None)
    spare_weights: list = field(default_factory=list, repr=False)  # `take_weights_buffer`'s arrays between runs

    SPARE_KEPT: ClassVar[int] = 2  # weights arrays kept between runs (two runs at once, e.g. two sessions, one each)

    def take_weights_buffer(self) -> np.ndarray:
        """An array for the weights of every posting of the terms (8 bytes a posting: 22 MB at 100k documents),
        kept from run to run (`give_back`): a fresh one each time had its pages faulted in and zeroed by the system
        at each tick (at 1M documents, 9 to 171 ms of the full pass's weights; bench/RESULTS.md, eleventh round)."""
        try:
            return self.spare_weights.pop()
        except IndexError:
            return np.empty(self.u_docs.size)

    def give_back(self, w: np.ndarray) -> None:
        """Keep a weights array for a later run (at most SPARE_KEPT)."""
        if len(self.spare_weights) < self.SPARE_KEPT:
            self.spare_weights.append(w)

    @property
    def postings(self) -> int:
        """Postings that one re-weighting touches."""
        return int(self.u_docs.size)

    @property
    def entries(self) -> int:
        """Postings that one scoring of every question reads (a term shared by questions is read by each)."""
        return int(self.s_up.size + self.m_term.size)

    @property
    def by_term(self) -> Postings:
        """The postings by term, grouped for the compiled passes."""
        return Postings(self.q_ptr, self.q_u, self.u_ptr, self.u_docs, self.u_f, self.idf_u)

    @property
    def by_weight(self) -> TermGroups:
        """The postings by term in groups of one count, lengths ascending (`term_groups`), for the compiled pass."""
        return TermGroups(self.q_ptr, self.q_u, self.g_ptr, self.g_start, self.g_f, self.g_doc)

    @property
    def by_doc(self) -> Layout:
        """The layout (postings by document), grouped for the compiled passes."""
        return Layout(
            self.s_ptr, self.s_up, self.m_ptr, self.m_start, self.m_term, self.m_count, self.m_doc, self.u_docs
        )

    def n_touched(self) -> np.ndarray:
        """Per question, the documents holding one of its terms (the positions 0..n-1 of its layout)."""
        return np.diff(self.s_ptr) + np.diff(self.m_ptr)

    def docs_at(self, positions: np.ndarray) -> np.ndarray:
        """The documents at layout positions (questions x P, -1 for none): `locate` undone."""
        pos = np.asarray(positions, dtype=np.int64)
        ns = np.diff(self.s_ptr)[:, None]
        single = (pos >= 0) & (pos < ns)
        multi = pos >= ns
        out = np.full(pos.shape, -1, dtype=np.int64)
        out[single] = self.u_docs[self.s_up[(self.s_ptr[:-1, None] + pos)[single]]]
        out[multi] = self.m_doc[(self.m_ptr[:-1, None] + pos - ns)[multi]]
        return out


def layout(
    q_ptr: np.ndarray, q_u: np.ndarray, u_ptr: np.ndarray, u_docs: np.ndarray, u_f: np.ndarray, n_docs: int
) -> dict:
    """Each question's postings regrouped by document (see QuestionPlan), in two compiled passes: sizes, fill."""
    if u_docs.size >= np.iinfo(np.int32).max:
        raise InputError(f"{u_docs.size} postings of question terms: more than this build handles (2**31 - 1)")
    nq = q_ptr.size - 1
    terms = Postings(q_ptr, q_u, u_ptr, u_docs, np.asarray(u_f, dtype=np.float64), np.zeros(0))  # no idf in it
    sizes = LayoutSizes(*(np.zeros(nq, dtype=np.int64) for _ in range(3)))
    work = int(np.diff(u_ptr)[q_u].sum()) if q_u.size else 0
    none32, none64 = np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int64)
    k.parallel(
        k.layout,
        nq,
        work,
        False,
        terms,
        n_docs,
        sizes,
        none64,
        Layout(none64, none32, none64, none64, none32, none32, none32, u_docs),
    )
    s_ptr, m_ptr, e_ptr = (np.concatenate(([0], np.cumsum(x))).astype(np.int64) for x in sizes)
    lay = Layout(
        s_ptr,
        np.empty(s_ptr[-1], dtype=np.int32),
        m_ptr,
        np.empty(m_ptr[-1] + 1, dtype=np.int64),
        np.empty(e_ptr[-1], dtype=np.int32),
        np.empty(e_ptr[-1], dtype=np.int32),
        np.empty(m_ptr[-1], dtype=np.int32),
        u_docs,
    )
    lay.multi_start[-1] = e_ptr[-1]
    k.parallel(k.layout, nq, 2 * work, True, terms, n_docs, sizes, e_ptr, lay)
    return dict(
        s_ptr=s_ptr,
        s_up=lay.single_posting,
        m_ptr=m_ptr,
        m_start=lay.multi_start,
        m_term=lay.multi_term,
        m_count=lay.multi_count,
        m_doc=lay.multi_doc,
    )


def term_groups(u_ptr: np.ndarray, u_f: np.ndarray, u_docs: np.ndarray, doc_len: np.ndarray) -> dict:
    """Each term's postings (in id order: u_docs, counts u_f) in groups of one count (descending), each group by
    document length ascending, then id: one compiled sort per term. Returns g_doc (the postings' documents in
    that order), g_ptr (each term's groups), g_start (where each group starts in g_doc, + the end) and g_f (each
    group's count).

    Within a group a weight only falls along it, at any k1 >= 0 and b in [0, 1] and in floating point too
    (`length_norm` and `bm25_weight` are chains of operations that rounding keeps monotone: a longer document's
    norm is not smaller, its weight not larger), so the postings weighing more than a score are a prefix of
    each group, found by a binary search that computes the weights it looks at (`_kernels.bm25_rank`).

    Worked example: a term in documents 0 1 2 3 with counts 1 2 1 1 and lengths 9 5 3 9 gives the documents
    1 2 0 3, groups [1] (count 2) and [2, 0, 3] (count 1: lengths 3, 9, 9; ties by id)."""
    n_docs = int(doc_len.size)
    len_rank = np.empty(n_docs, dtype=np.int64)
    len_rank[np.argsort(doc_len, kind="stable")] = np.arange(n_docs)
    f = np.asarray(u_f).astype(np.int64)
    f_top = int(f.max()) if f.size else 0
    order = np.empty(u_docs.size, dtype=np.int32)
    k.parallel(k.term_order, u_ptr.size - 1, u_docs.size * 8, u_ptr, f, u_docs, len_rank, f_top, order)
    term_of = np.repeat(np.arange(u_ptr.size - 1), np.diff(u_ptr))
    s_f = f[order]
    starts = (
        np.flatnonzero(np.r_[True, (term_of[1:] != term_of[:-1]) | (s_f[1:] != s_f[:-1])])
        if order.size
        else np.zeros(0, dtype=np.int64)
    )
    g_ptr = np.searchsorted(term_of[starts], np.arange(u_ptr.size)).astype(np.int64)
    return dict(
        g_ptr=g_ptr,
        g_start=np.r_[starts, order.size].astype(np.int64),
        g_f=s_f[starts].astype(np.float64),
        g_doc=np.asarray(u_docs[order], dtype=np.int32),
    )


def plan(bm: Bm25Index, qcounts: sp.csr_matrix, counted: bool = False) -> QuestionPlan:
    """Slice the question terms' columns out of the count matrix and regroup each question's by document (once per
    dataset). `counted`: a term per (word, count in the question) (`question_terms`), its idf weighed by
    `weighed` for the repeated words' rule; each question's documents lie at the same layout positions as in the
    plan of words counted once (the same documents hold one or several of its words)."""
    q = sp.csr_matrix(qcounts)
    q.sum_duplicates()
    q.sort_indices()
    terms, qtf, q_u = question_terms(q, counted)
    sub = bm.counts[:, terms] if terms.size else sp.csc_matrix((bm.counts.shape[0], 0))
    sub = sp.csc_matrix(sub)
    sub.sort_indices()
    q_ptr = q.indptr.astype(np.int64)
    u_ptr = sub.indptr.astype(np.int64)
    n_docs = int(bm.counts.shape[0])
    return QuestionPlan(
        q_ptr,
        q_u,
        terms,
        u_ptr,
        sub.indices,
        np.asarray(sub.data, dtype=np.float64),
        bm.idf[terms],
        n_docs,
        **layout(q_ptr, q_u, u_ptr, sub.indices, sub.data, n_docs),
        **term_groups(u_ptr, sub.data, sub.indices, bm.doc_len),
        qtf=qtf if counted else None,
    )


def weighed(counted: QuestionPlan, query_words: str, k3: float = K3_DEFAULT) -> QuestionPlan:
    """A plan of counted words (`plan(..., counted=True)`) with each term's idf weighed by `question_weight` for the
    rule: the same postings and layout (shared, not copied), only idf_u new. A k3 change is this, not a new plan."""
    if counted.qtf is None:
        raise ValueError("weighed: give a plan of counted question words (plan(..., counted=True))")
    return replace(counted, idf_u=counted.idf_u * question_weight(counted.qtf, query_words, k3), spare_weights=[])


def locate(
    qplan: QuestionPlan, docs: np.ndarray, ptr: np.ndarray | None = None, per_doc: int | None = None
) -> np.ndarray:
    """Positions of documents in each question's layout (-1 for a document with no question term, or -1 given).

    docs: questions x P, row q for question q; or, with `ptr`, flat, question q's being docs[ptr[q]:ptr[q + 1]]
    (the judgements' layout). Positions change with neither k1 nor b: find them once, pass them to every `run`.
    """
    docs = np.asarray(docs, dtype=np.int64)
    flat = np.ascontiguousarray(docs.reshape(-1))
    if ptr is None:
        if docs.ndim != 2:
            raise ValueError(f"locate: docs of shape {docs.shape} need `ptr` (or one row per question)")
        ptr = np.arange(docs.shape[0] + 1, dtype=np.int64) * docs.shape[1]
    out = np.full(flat.size, -1, dtype=np.int64)
    per_doc = LOCATE_PER_DOC if per_doc is None else per_doc
    k.parallel(
        k.bm25_locate,
        ptr.size - 1,
        flat.size * 32,
        np.asarray(ptr, dtype=np.int64),
        flat,
        qplan.by_doc,
        qplan.n_docs,
        per_doc,
        out,
    )
    return out.reshape(docs.shape)


def locate_lists(qplan: QuestionPlan, top_d: np.ndarray, n_top: np.ndarray | None = None) -> np.ndarray:
    """`locate` for best lists (questions x P), -1 beyond each row's first n_top[q]."""
    pos = locate(qplan, top_d)
    if n_top is not None:
        pos[np.arange(pos.shape[1])[None, :] >= np.asarray(n_top)[:, None]] = -1
    return pos


def probe_sites(qplan: QuestionPlan, top_d: np.ndarray, n_top: np.ndarray | None = None) -> ProbeSites:
    """`locate_lists`, and for each document found holding one question term, that term and its count: what a
    pass takes to weigh it at any (k1, b) with one read far away (its norm). Found once per list."""
    pos = locate_lists(qplan, top_d, n_top)
    term = np.full(pos.shape, -1, dtype=np.int32)
    count = np.zeros(pos.shape, dtype=np.int32)
    k.parallel(k.bm25_probe_sites, pos.shape[0], pos.size * 8, pos, qplan.by_doc, qplan.by_term, term, count)
    return ProbeSites(pos, term, count)
