"""BM25 with Lucene's idf, as sparse-matrix algebra over the count matrix: a k1 or b change re-weights, never re-tokenises.

score(q, d) = sum over distinct question terms t of idf(t) * f * (k1 + 1) / (f + k1 * (1 - b + b * len(d) / avglen)),
with idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5)) (Lucene's BM25Similarity) and f the count of t in d.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .dataset import Dataset
from .errors import InputError
from .ranking import Ranking, rank_rows
from .text import TermIndex

K1_DEFAULT = 1.2
B_DEFAULT = 0.75


def check_params(k1: float, b: float) -> None:
    """Reject a k1 below zero or a b outside [0, 1], naming the parameter."""
    if not np.isfinite(k1) or k1 < 0:
        raise InputError(f"k1 must be a number >= 0, got {k1}")
    if not np.isfinite(b) or not 0 <= b <= 1:
        raise InputError(f"b must be in [0, 1], got {b}")


def idf(doc_freq: np.ndarray, n_docs: int) -> np.ndarray:
    """Lucene's idf, ln(1 + (N - df + 0.5) / (df + 0.5)): always positive, so every matching term adds."""
    df = np.asarray(doc_freq, dtype=np.float64)
    return np.log1p((n_docs - df + 0.5) / (df + 0.5))


def length_norm(doc_len: np.ndarray, avg_len: float, k1: float, b: float) -> np.ndarray:
    """The saturation constant per document, k1 * (1 - b + b * len / avglen): longer documents saturate later."""
    rel = doc_len / avg_len if avg_len > 0 else np.ones_like(doc_len)
    return k1 * (1.0 - b + b * rel)


def saturation(tf: np.ndarray, norm: np.ndarray, k1: float) -> np.ndarray:
    """Term-frequency saturation, f * (k1 + 1) / (f + norm): tends to k1 + 1 however often the term repeats."""
    return tf * (k1 + 1.0) / (tf + norm)


@dataclass(frozen=True, eq=False)
class Bm25Index:
    """What BM25 needs from the corpus, computed once: counts by term (CSC), lengths, idf."""

    counts: sp.csc_matrix  # documents x terms, float64 counts
    doc_len: np.ndarray
    avg_len: float
    idf: np.ndarray


def prepare(index: TermIndex) -> Bm25Index:
    """Column-oriented counts and idf, so a parameter change re-weights only the question terms' columns."""
    counts = sp.csc_matrix(index.counts, dtype=np.float64)
    counts.sort_indices()
    return Bm25Index(counts, index.doc_len, index.avg_len, idf(index.doc_freq, index.n_docs))


def term_weights(bm: Bm25Index, terms: np.ndarray, k1: float, b: float) -> sp.csc_matrix:
    """BM25 weight of each (document, term) for the given term columns: documents x len(terms)."""
    sub = bm.counts[:, terms]
    norm = length_norm(bm.doc_len, bm.avg_len, k1, b)
    col = np.repeat(np.arange(sub.shape[1]), np.diff(sub.indptr))
    data = bm.idf[terms][col] * saturation(sub.data, norm[sub.indices], k1)
    return sp.csc_matrix((data, sub.indices, sub.indptr), shape=sub.shape)


def score(bm: Bm25Index, qcounts: sp.csr_matrix, k1: float = K1_DEFAULT, b: float = B_DEFAULT) -> sp.csr_matrix:
    """Scores of every question against every document, questions x documents, sparse (a question's distinct terms count once)."""
    check_params(k1, b)
    n_docs = bm.counts.shape[0]
    terms = np.unique(qcounts.indices)
    if terms.size == 0:
        return sp.csr_matrix((qcounts.shape[0], n_docs))
    qbin = qcounts[:, terms]
    qbin = sp.csr_matrix((np.ones_like(qbin.data, dtype=np.float64), qbin.indices, qbin.indptr), shape=qbin.shape)
    weights = term_weights(bm, terms, k1, b)
    scores = (qbin @ weights.T).tocsr()
    scores.sort_indices()
    return scores


def chunks(scores: sp.csr_matrix, size: int = 256) -> Iterator[tuple[int, sp.csr_matrix]]:
    """The score matrix in row blocks, the shape `rank_rows` consumes."""
    for start in range(0, scores.shape[0], size):
        yield start, scores[start : start + size]


def search(dataset: Dataset, scores: sp.csr_matrix, depth: int = 100, name: str = "BM25") -> Ranking:
    """BM25's ranking of every question from its score matrix: positive scores only, ties by document id."""
    return rank_rows(name, dataset, chunks(scores), depth)


def explain(bm: Bm25Index, index: TermIndex, question_terms: list[str], doc: int, k1: float, b: float) -> list[dict]:
    """Per-term contributions of one document for one question: idf, count, saturation, length norm and the product."""
    check_params(k1, b)
    norm = float(length_norm(bm.doc_len[doc : doc + 1], bm.avg_len, k1, b)[0])
    out = []
    for t in dict.fromkeys(question_terms):
        j = index.vocabulary.get(t)
        f = float(bm.counts[doc, j]) if j is not None else 0.0
        w_idf = float(bm.idf[j]) if j is not None else 0.0
        sat = float(saturation(np.float64(f), np.float64(norm), k1)) if f else 0.0
        out.append({"term": t, "in_vocabulary": j is not None, "df": int(index.doc_freq[j]) if j is not None else 0,
                    "idf": w_idf, "tf": f, "length_norm": norm, "saturation": sat, "score": w_idf * sat})
    return out
