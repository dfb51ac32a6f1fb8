"""BM25 with Lucene's idf, as sparse-matrix algebra over the count matrix: a k1 or b change re-weights, never re-tokenises.

score(q, d) = sum over distinct question terms t of idf(t) * f * (k1 + 1) / (f + k1 * (1 - b + b * len(d) / avglen)),
with idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5)) (Lucene's BM25Similarity) and f the count of t in d.

One term's weight is written once, `bm25_weight`; every path (the reference algebra, a run's dense row, the
compiled kernels, the tuning grid) computes it there, so every path gives the same bits.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import ClassVar, NamedTuple

import numpy as np
import scipy.sparse as sp

import retrieval.kernels as k

from ..core import params
from ..core.errors import InputError
from ..core.thresholds import GROUPED_SHARE, SORT_BUDGET
from ..core.words import plural
from ..corpus.dataset import Dataset
from ..corpus.text import TermIndex
from ..kernels.bm25_pass import PENDING, SETTLED_BY
from ..kernels.rules import bm25_weight
from .ranking import THRESHOLD, BestLists, PassOutputs, Ranking, Selection, from_padded, rank_rows
from .ranking import keep_for as ranking_keep_for

K1_DEFAULT = params.default("k1")
B_DEFAULT = params.default("b")
KEEP_DEFAULT: int | None = None  # raw scores a run keeps per question beyond `depth` (None: `keep_for` the corpus)
LOCATE_PER_DOC = 256  # `locate` finds a question's documents in one pass over its layout when their count times this
# reaches the layout's length, else by a binary search each (2 log2(length) dependent reads). LSA's best 1,000 of
# each of 1,000 questions at 100,000 documents (layouts 13,000 long at the median): 222-243 ms by binary search,
# 41-45 ms by passes (what the first k1 step after a d step waits for); a question's few judged documents: searches


def keep_for(n_docs: int) -> int:
    """How many raw scores a BM25 run keeps per question: KEEP_DEFAULT when set, else ranking.keep_for (sqrt(N)
    between 100 and 1000)."""
    return ranking_keep_for(n_docs, KEEP_DEFAULT)


def check_params(k1: float, b: float) -> None:
    """Reject a k1 below zero or a b outside [0, 1], naming the parameter."""
    params.check("k1", k1)
    params.check("b", b)


def idf(doc_freq: np.ndarray, n_docs: int) -> np.ndarray:
    """Lucene's idf, ln(1 + (N - df + 0.5) / (df + 0.5)): always positive, so every matching term adds."""
    df = np.asarray(doc_freq, dtype=np.float64)
    return np.log1p((n_docs - df + 0.5) / (df + 0.5))


def length_norm(doc_len: np.ndarray, avg_len: float, k1: float, b: float) -> np.ndarray:
    """The saturation constant per document, k1 * (1 - b + b * len / avglen): longer documents saturate later."""
    rel = doc_len / avg_len if avg_len > 0 else np.ones_like(doc_len)
    return k1 * (1.0 - b + b * rel)


def saturation(tf: np.ndarray, norm: np.ndarray, k1: float) -> np.ndarray:
    """Term-frequency saturation, f * (k1 + 1) / (f + norm): tends to k1 + 1 however often the term repeats (the
    weight of a term whose idf is 1, exactly)."""
    return bm25_weight(tf, 1.0, norm, k1 + 1.0)


@dataclass(frozen=True, eq=False)
class Bm25Index:
    """What BM25 needs from the corpus, computed once: counts by term (CSC), lengths, idf."""

    counts: sp.csc_matrix  # documents x terms, int32 counts (exact in every float64 formula they enter)
    doc_len: np.ndarray
    avg_len: float
    idf: np.ndarray


def prepare(index: TermIndex) -> Bm25Index:
    """Column-oriented counts and idf, so a parameter change re-weights only the question terms' columns."""
    counts = sp.csc_matrix(index.counts, dtype=np.int32)
    counts.sort_indices()
    return Bm25Index(counts, index.doc_len, index.avg_len, idf(index.doc_freq, index.n_docs))


def term_weights(
    bm: Bm25Index, terms: np.ndarray, k1: float, b: float, idf_of: np.ndarray | None = None
) -> sp.csc_matrix:
    """BM25 weight of each (document, term) for the given term columns: documents x len(terms); `idf_of`, one
    per column, in place of the columns' idf (a question word's weight folded in: `question_weight`)."""
    sub = bm.counts[:, terms]
    norm = length_norm(bm.doc_len, bm.avg_len, k1, b)
    col = np.repeat(np.arange(sub.shape[1]), np.diff(sub.indptr))
    data = bm25_weight(sub.data, (bm.idf[terms] if idf_of is None else idf_of)[col], norm[sub.indices], k1 + 1.0)
    return sp.csc_matrix((data, sub.indices, sub.indptr), shape=sub.shape)


QUESTION_WORDS = params.SPECS["query_words"].options  # once, each, k3
K3_DEFAULT = params.default("k3")


def question_weight(qtf: np.ndarray, query_words: str = "once", k3: float = K3_DEFAULT) -> np.ndarray:
    """How much a question word counts, given how often the question holds it (qtf):

    * "once" (the article): 1, however often it is repeated;
    * "each": qtf, each repeat adding the word's weight again (Lucene's query parser, bm25s);
    * "k3": Robertson's saturation (k3 + 1) qtf / (k3 + qtf): 1 for a word said once, tending to k3 + 1.

    The weight multiplies the word's idf, so a word's BM25 weight in a document is
    `bm25_weight(f, idf * question_weight(qtf), norm, k1 + 1)` on every path.

    >>> question_weight(np.array([1, 2, 3]), "k3", 1.0).tolist()  # 2 qtf / (1 + qtf)
    [1.0, 1.3333333333333333, 1.5]
    """
    params.check("query_words", query_words)
    params.check("k3", k3)
    qtf = np.asarray(qtf, dtype=np.float64)
    if query_words == "once":
        return np.ones_like(qtf)
    if query_words == "each":
        return qtf
    return (k3 + 1.0) * qtf / (k3 + qtf)


def question_words_text(query_words: str, k3: float = K3_DEFAULT) -> str:
    """The rule for reading: 'each question word counted once', 'repeated question words saturated by k3 = 8'."""
    return {
        "once": "each question word counted once",
        "each": "a repeated question word counted each time",
        "k3": f"repeated question words saturated by k3 = {k3:g}",
    }[query_words]


def question_terms(qcounts: sp.csr_matrix, counted: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The questions' term columns as BM25 scores them: (columns, each column's question count, each question
    entry's position among the columns). Counting repeats, a word said once in one question and twice in another
    is two columns (its postings twice, its idf weighed apart: `question_weight`); else one column per word (qtf 1).
    Either way each question holds a column at most once, in ascending order."""
    if not counted:
        cols = np.unique(qcounts.indices).astype(np.int64)
        return cols, np.ones(cols.size), np.searchsorted(cols, qcounts.indices).astype(np.int64)
    span = int(qcounts.data.max()) + 1 if qcounts.nnz else 1
    pairs = qcounts.indices.astype(np.int64) * span + qcounts.data
    unique, at = np.unique(pairs, return_inverse=True)
    return unique // span, (unique % span).astype(np.float64), at.astype(np.int64)


def score(
    bm: Bm25Index,
    qcounts: sp.csr_matrix,
    k1: float = K1_DEFAULT,
    b: float = B_DEFAULT,
    query_words: str = "once",
    k3: float = K3_DEFAULT,
) -> sp.csr_matrix:
    """Scores of every question against every document, questions x documents, sparse.

    The reference algebra (and what the sliders' fast path, `run`, reproduces to the last bit): each score is
    the sum of the question terms' weights in ascending term order, a repeated word's idf weighed by
    `question_weight` (by default each distinct term counts once).
    """
    check_params(k1, b)
    n_docs = bm.counts.shape[0]
    q = sp.csr_matrix(qcounts)
    q.sum_duplicates()
    q.sort_indices()
    cols, qtf, at = question_terms(q, query_words != "once")
    if cols.size == 0:
        return sp.csr_matrix((q.shape[0], n_docs))
    qbin = sp.csr_matrix((np.ones(at.size), at, q.indptr), shape=(q.shape[0], cols.size))
    weights = term_weights(bm, cols, k1, b, bm.idf[cols] * question_weight(qtf, query_words, k3))
    scores = (qbin @ weights.T).tocsr()
    scores.sort_indices()
    return scores


def chunks(scores: sp.csr_matrix, size: int = 256) -> Iterator[tuple[int, sp.csr_matrix]]:
    """The score matrix in row blocks, the shape `rank_rows` consumes."""
    for start in range(0, scores.shape[0], size):
        yield start, scores[start : start + size]


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


class Weights(NamedTuple):
    """What a BM25 weight at (k1, b) takes besides a posting's count and idf: each document's `length_norm`,
    k1 + 1, and the postings' weights where bm25.run computed them (bm25_weights; else empty)."""

    norm: np.ndarray
    k1p1: float
    w: np.ndarray


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


class Probe(NamedTuple):
    """Documents whose scores a BM25 pass reads off besides (questions x P): their sites, the documents themselves
    (-1 for none) and, written by the pass, their scores (0 for none). The grouped pass computes a single's weight
    from its term, count and document's norm: sequential reads but the norm, where the posting itself lies far
    away in the postings (three reads far apart)."""

    at: ProbeSites
    doc: np.ndarray
    score: np.ndarray


class Hint(NamedTuple):
    """A previous run's best m per question (questions x m, or x 0 for no hint): layout positions and documents."""

    pos: np.ndarray
    doc: np.ndarray


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


@dataclass(frozen=True, eq=False)
class Bm25Run(BestLists):
    """BM25 at one (k1, b) for every question, straight from the postings (no score matrix).

    Per question (BestLists): the best max(depth, keep) documents by raw score (any positive score, ties by id),
    how many score above the result threshold, the lowest and highest score over all documents (0 for those
    without a question term), and the Ranking (results only, exact ranks of the judged documents).
    """

    k1: float
    b: float
    depth: int  # the ranking's depth (the raw lists may be deeper)
    plan: QuestionPlan
    norm: np.ndarray  # length_norm per document at (k1, b)
    top_p: np.ndarray  # the best lists' positions in each question's layout (a later run's hint)
    probe: np.ndarray | None = None  # the documents `run` was asked to score besides (questions x P)
    probe_n: np.ndarray | None = None  # how many of each probe row were scored (None: all)
    probe_scores: np.ndarray | None = None  # their scores, 0 beyond probe_n
    settled: np.ndarray | None = None  # per question, the pass that settled it: SETTLED_BY[code]

    def settled_by(self) -> dict[str, int]:
        """How many questions each pass settled, by name (kernels.bm25_pass.SETTLED_BY): "sampled" and "hinted"
        (the full pass, its cut from a sample or from the hint), "grouped" and "grouped, second try"."""
        if self.settled is None:
            return {}
        return {SETTLED_BY[c]: int(n) for c, n in enumerate(np.bincount(self.settled, minlength=len(SETTLED_BY))) if n}

    def at(self, qs: np.ndarray, ds: np.ndarray) -> np.ndarray:
        """Scores of (question, document) pairs, bit-identical to the ranking's."""
        qs, ds = np.asarray(qs, dtype=np.int64), np.asarray(ds, dtype=np.int64)
        out = np.zeros(qs.size)
        k.parallel(k.bm25_at, qs.size, qs.size * 64, qs, ds, self.plan.by_term, self.norm, self.k1 + 1.0, out)
        return out

    def at_rows(self, top_d: np.ndarray, n_top: np.ndarray) -> np.ndarray:
        """Scores of each question's first n_top[q] documents of top_d[q] (questions x depth, 0 beyond them),
        bit-identical to the ranking's: another member's lists, for the weighted fusion."""
        out = np.zeros(top_d.shape)
        k.parallel(
            k.bm25_rows,
            top_d.shape[0],
            top_d.size * 16,
            np.ascontiguousarray(top_d, dtype=np.int64),
            np.asarray(n_top, dtype=np.int64),
            self.plan.by_term,
            self.norm,
            self.k1 + 1.0,
            out,
        )
        return out

    def row(self, q: int) -> np.ndarray:
        """Scores of one question over every document (dense), bit-identical to the ranking's."""
        p = self.plan
        acc = np.zeros(p.n_docs)
        for u in p.q_u[p.q_ptr[q] : p.q_ptr[q + 1]]:
            lo, hi = p.u_ptr[u], p.u_ptr[u + 1]
            f, d = p.u_f[lo:hi], p.u_docs[lo:hi]
            acc[d] += bm25_weight(f, p.idf_u[u], self.norm[d], self.k1 + 1.0)
        return acc


def _hint_rows(hint: Bm25Run | None, qplan: QuestionPlan, m: int) -> Hint:
    """A hint run's best m positions and documents per question (-1 where it kept fewer), or empty blocks
    without a usable hint (none, another plan's, or fewer than m kept)."""
    nq = qplan.q_ptr.size - 1
    if hint is None or hint.plan is not qplan or hint.top_p.shape[1] < m:
        return Hint(np.full((nq, 0), -1, dtype=np.int64), np.full((nq, 0), -1, dtype=np.int64))
    if hint.top_p.shape[1] == m:  # positions are -1 beyond each question's n_top (run fills them so)
        return Hint(hint.top_p, hint.top_d)  # the documents are read only where every position is set
    return Hint(np.ascontiguousarray(hint.top_p[:, :m]), np.ascontiguousarray(hint.top_d[:, :m]))


PATHS = ("auto", "full", "hinted", "grouped")  # bm25.run's paths, each giving the same bits (tests/test_kernels.py)


def run(
    bm: Bm25Index,
    qplan: QuestionPlan,
    dataset: Dataset,
    k1: float = K1_DEFAULT,
    b: float = B_DEFAULT,
    depth: int = 100,
    name: str = "BM25",
    keep: int | None = None,
    probe: np.ndarray | None = None,
    probe_n: np.ndarray | None = None,
    hint: Bm25Run | None = None,
    probe_at: ProbeSites | None = None,
    judged_at: np.ndarray | None = None,
    path: str = "auto",
) -> Bm25Run:
    """BM25 for every question at (k1, b): re-weight the question terms' postings, then score, select and rank
    each question in one compiled pass (threads over questions). Same numbers and ranking as `search(score(...))`.

    The ranking lists the best `depth` results; the run keeps the best max(depth, keep) raw scores, which the
    weighted fusion reads (a deeper list settles more questions without a full scan). `probe` (questions x P
    document indices, -1 for none; only the first probe_n[q] of row q when given) asks for those documents'
    scores too, read off in the same pass (`probe_scores`, 0 for the others): the weighted fusion's BM25 scores
    of LSA's best documents. `probe_at` and `judged_at`, the probe's sites and the judged documents' positions
    (`probe_sites(qplan, probe, probe_n)`, `locate(qplan, j_doc, j_ptr)`), spare finding them again at every
    tick; they are found here when not given. `hint`, a run at other
    parameters on the same questions, only speeds the selection up (its best documents bound the cut); the
    results are the same with or without it.

    `path` chooses how (the results are the same on every path; bench/speed.py --paths times them):

    * "full": every question's postings scored, the cut from a sample of the scores (the hint is not read);
    * "hinted": the same pass, the cut the lowest score of the hint's best m, those m the first candidates;
    * "grouped": every question the grouped pass can take (a full hint, some document without any of its terms)
      without scoring its singles one by one (`kernels.bm25_pass.bm25_rank`), the others by the hinted pass;
    * "auto" (the app's): "grouped" for the questions touching at least GROUPED_SHARE x m documents, the
      hinted pass for the others, "full" without a hint.
    """
    check_params(k1, b)
    if path not in PATHS:
        raise InputError(f"path {path!r}: BM25's paths are {', '.join(PATHS)}")
    k1, b = float(k1), float(b)
    p = qplan
    nq = p.q_ptr.size - 1
    norm = length_norm(bm.doc_len, bm.avg_len, k1, b)
    m = max(int(depth), keep_for(p.n_docs) if keep is None else int(keep))
    o = PassOutputs.empty(dataset, m)
    if probe is None:
        probes = Probe(ProbeSites.none(nq), np.zeros((nq, 0), dtype=np.int64), np.zeros((nq, 0)))
    else:
        at = probe_sites(p, probe, probe_n) if probe_at is None else probe_at
        probes = Probe(at, np.ascontiguousarray(probe, dtype=np.int64), np.zeros(at.pos.shape))
    j_pos = locate(p, o.judged.doc, o.judged.ptr) if judged_at is None else judged_at
    top_p = np.full(o.top_d.shape, -1, dtype=np.int64)  # -1 beyond n_top: a later run's hint as it is (_hint_rows)
    hints = _hint_rows(None if path == "full" else hint, p, m)
    sel = Selection(dataset.tie_key, THRESHOLD, m)
    args = (p.by_doc, p.by_term, p.by_weight)
    share = GROUPED_SHARE if path == "auto" else 0  # "grouped": every question it can take
    settled = np.zeros(nq, dtype=np.uint8)  # PENDING until a pass settles the question
    if hints.pos.shape[1] and m and path in ("auto", "grouped"):  # the grouped pass first, the rest left pending
        k.parallel(
            k.bm25_rank,
            nq,
            p.entries,
            *args,
            Weights(norm, k1 + 1.0, np.zeros(0)),
            sel,
            j_pos,
            o,
            top_p,
            probes,
            hints,
            SORT_BUDGET,
            share,
            True,
            settled,
        )
        rest = np.flatnonzero(settled == PENDING)
    else:
        rest = np.arange(nq)
    if rest.size:  # the full pass, its weights computed for the pending questions' terms only
        if rest.size < nq:
            us = np.unique(p.q_u[np.repeat(settled == PENDING, np.diff(p.q_ptr))])
        else:
            us = np.arange(p.terms.size)
        w = p.take_weights_buffer()
        try:
            k.parallel_over(k.bm25_weights, us, int(np.diff(p.u_ptr)[us].sum()), p.by_term, norm, k1 + 1.0, w)
            k.parallel_over(
                k.bm25_rank,
                rest.astype(np.int64),
                p.entries * rest.size // max(nq, 1),
                *args,
                Weights(norm, k1 + 1.0, w),
                sel,
                j_pos,
                o,
                top_p,
                probes,
                hints,
                SORT_BUDGET,
                share,
                False,
                settled,
            )
        finally:
            p.give_back(w)
    return Bm25Run(
        **o.lists(name, int(depth)),
        k1=k1,
        b=b,
        depth=int(depth),
        plan=p,
        norm=norm,
        top_p=top_p,
        probe=probe,
        probe_n=probe_n,
        probe_scores=probes.score if probe is not None else None,
        settled=settled,
    )


def search(dataset: Dataset, scores: sp.csr_matrix | Bm25Run, depth: int = 100, name: str = "BM25") -> Ranking:
    """BM25's ranking of every question from its score matrix (or a `run`): positive scores only, ties by document id."""
    if isinstance(scores, Bm25Run):
        r = scores.ranking
        if r.name == name and scores.depth == depth:
            return r
        if depth > scores.top_d.shape[1]:
            raise InputError(
                f"depth {depth} is beyond the {plural(scores.top_d.shape[1], 'document')} this BM25 run kept"
            )
        n_list = np.minimum(np.minimum(scores.n_top, scores.n_res), depth)
        return from_padded(name, scores.top_d[:, :depth], scores.top_s[:, :depth], n_list, r.judged_rank, scores.n_res)
    return rank_rows(name, dataset, chunks(scores), depth)


def explain(
    bm: Bm25Index,
    index: TermIndex,
    question_terms: list[str],
    doc: int,
    k1: float,
    b: float,
    query_words: str = "once",
    k3: float = K3_DEFAULT,
) -> list[dict]:
    """Per-term contributions of one document for one question (its terms as the index analyses them, repeats
    included): idf, the question's count of the term (qtf) and its weight by the repeated words' rule, the
    document's count, saturation, length norm and the product, and the corpus's words the term stands for (a
    stem's words)."""
    check_params(k1, b)
    norm = float(length_norm(bm.doc_len[doc : doc + 1], bm.avg_len, k1, b)[0])
    qtf = Counter(question_terms)
    out = []
    for t in qtf:
        j = index.vocabulary.get(t)
        f = float(bm.counts[doc, j]) if j is not None else 0.0
        w_idf = float(bm.idf[j]) if j is not None else 0.0
        q_w = float(question_weight(np.array([qtf[t]]), query_words, k3)[0])
        sat = float(saturation(np.float64(f), np.float64(norm), k1)) if f else 0.0
        weight = float(bm25_weight(np.float64(f), np.float64(w_idf * q_w), np.float64(norm), k1 + 1.0)) if f else 0.0
        out.append(
            {
                "term": t,
                "words": index.words_of(t) if j is not None else (t,),
                "in_vocabulary": j is not None,
                "df": int(index.doc_freq[j]) if j is not None else 0,
                "idf": w_idf,
                "qtf": qtf[t],
                "question_weight": q_w,
                "tf": f,
                "length_norm": norm,
                "saturation": sat,
                "score": weight,
            }
        )
    return out
