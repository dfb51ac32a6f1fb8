"""The article's tokeniser and the document-term count matrix every retriever is built on."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer

TOKEN_PATTERN = r"[a-z0-9]+"

STOP_WORDS: frozenset[str] = frozenset(
    "the a an of to in on for and or but that this is are was be can i my me you your do does did how what "
    "where when which much many it its with at by from as if there not no s".split()
)

_TOKEN_RE = re.compile(TOKEN_PATTERN)


def tokenize(text: str) -> list[str]:
    """Lower-case `[a-z0-9]+` tokens minus the stop words, in text order (the article's `token`)."""
    return [t for t in _TOKEN_RE.findall(text.lower()) if t not in STOP_WORDS]


@dataclass(frozen=True, eq=False)
class TermIndex:
    """Documents as a sparse document x term count matrix, built once so parameter changes never re-tokenise."""

    vocabulary: dict[str, int]
    terms: np.ndarray  # term strings, column order (sorted)
    counts: sp.csr_matrix  # documents x terms, int32 counts
    doc_len: np.ndarray  # tokens per document (after stop words), float64

    @property
    def n_docs(self) -> int:
        """Number of documents."""
        return self.counts.shape[0]

    @property
    def avg_len(self) -> float:
        """Mean document length in tokens (0 for an empty corpus)."""
        return float(self.doc_len.mean()) if self.doc_len.size else 0.0

    @property
    def doc_freq(self) -> np.ndarray:
        """Number of documents that hold each term."""
        return np.bincount(self.counts.indices, minlength=self.counts.shape[1]).astype(np.int64)


def _vectorizer(vocabulary: dict[str, int] | None = None) -> CountVectorizer:
    """A CountVectorizer that tokenises exactly like `tokenize` (C-speed regex, same stop words)."""
    return CountVectorizer(
        lowercase=True,
        token_pattern=TOKEN_PATTERN,
        stop_words=sorted(STOP_WORDS),
        vocabulary=vocabulary,
        dtype=np.int32,
    )


def build_index(texts: list[str] | tuple[str, ...]) -> TermIndex:
    """Tokenise every document once into a sparse count matrix (terms in sorted order)."""
    vec = _vectorizer()
    try:
        counts = vec.fit_transform(texts)
    except ValueError:  # no document holds a single token: an index with an empty vocabulary
        counts = sp.csr_matrix((len(texts), 0), dtype=np.int32)
        return TermIndex({}, np.array([], dtype=object), counts, np.zeros(len(texts)))
    counts = sp.csr_matrix(counts, dtype=np.int32)
    counts.sort_indices()
    vocabulary = {t: int(i) for t, i in vec.vocabulary_.items()}
    terms = np.empty(len(vocabulary), dtype=object)
    for t, i in vocabulary.items():
        terms[i] = t
    doc_len = np.asarray(counts.sum(axis=1), dtype=np.float64).ravel()
    return TermIndex(vocabulary, terms, counts, doc_len)


def query_counts(index: TermIndex, texts: list[str] | tuple[str, ...]) -> sp.csr_matrix:
    """Questions as a questions x terms count matrix over the index's vocabulary (unknown words dropped)."""
    if not index.vocabulary:
        return sp.csr_matrix((len(texts), 0), dtype=np.int32)
    counts = _vectorizer(index.vocabulary).transform(texts)
    counts = sp.csr_matrix(counts, dtype=np.int32)
    counts.sort_indices()
    return counts
