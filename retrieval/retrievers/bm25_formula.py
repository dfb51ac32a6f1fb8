"""BM25 with Lucene's idf, as sparse-matrix algebra over the count matrix: a k1 or b change re-weights, never re-tokenises.

score(q, d) = sum over distinct question terms t of idf(t) * f * (k1 + 1) / (f + k1 * (1 - b + b * len(d) / avglen)),
with idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5)) (Lucene's BM25Similarity) and f the count of t in d.

One term's weight is written once, `bm25_weight`; every path (the reference algebra, a run's dense row, the
compiled kernels, the tuning grid) computes it there, so every path gives the same bits.

Here the formula and its reference algebra: the index BM25 reads (counts by term, lengths, idf), a term's weight
and its parts, a question word's weight by the repeated words' rule, every question's scores as a sparse matrix
(`score`, what the compiled passes of `bm25.run` equal to the last bit) and one document's explanation.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..core import params
from ..corpus.text import TermIndex
from ..kernels.rules import bm25_weight

K1_DEFAULT = params.default("k1")
B_DEFAULT = params.default("b")


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
