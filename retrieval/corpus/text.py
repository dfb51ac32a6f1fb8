"""The document-term count matrix every retriever is built on (`TermIndex`, `build_index`), its columns merged by
stem (`stemmed`), and questions counted over its vocabulary (`query_counts`).

The tokens come from the tokeniser's compiled pass or its plain reference (`retrieval.kernels.tokenise`), analysed
as `retrieval.corpus.analysis` says; both modules' public names are re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import chain
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ..kernels.tokenise import (
    BATCHING,
    KERNELS,
    MAX_TERM_TABLE_BYTES,
    Batching,
    batches,
    byte_tokens,
    compiled_state,
    dispatchers,
    index_compiled,
    index_python,
)
from .analysis import (
    _TOKEN_RE,
    ARTICLE_ANALYSIS,
    LUCENE_STOP_WORDS,
    STEMMERS,
    STOP_LISTS,
    STOP_WORDS,
    TOKEN_PATTERN,
    Analysis,
    tokenize,
)

__all__ = [
    "ARTICLE_ANALYSIS",
    "BATCHING",
    "COMPILED_ABOVE",
    "KERNELS",
    "LOAD_PAYS_ABOVE",
    "LUCENE_STOP_WORDS",
    "MAX_TERM_TABLE_BYTES",
    "METHODS",
    "STEMMERS",
    "STOP_LISTS",
    "STOP_WORDS",
    "TOKEN_PATTERN",
    "Analysis",
    "Batching",
    "StemWords",
    "TermIndex",
    "batches",
    "build_index",
    "byte_tokens",
    "dispatchers",
    "method_for",
    "query_counts",
    "stemmed",
    "tokenize",
]


class StemWords(NamedTuple):
    """With a stemmer, the corpus's words before stemming (sorted) and, per stem column j, its words:
    words[order[ptr[j]:ptr[j + 1]]]."""

    words: np.ndarray
    order: np.ndarray
    ptr: np.ndarray


@dataclass(frozen=True, eq=False)
class TermIndex:
    """Documents as a sparse document x term count matrix, built once so parameter changes never re-tokenise."""

    vocabulary: dict[str, int]
    terms: np.ndarray  # term strings, column order (sorted)
    counts: sp.csr_matrix  # documents x terms, int32 counts
    doc_len: np.ndarray  # tokens per document (after stop words), float64
    analysis: Analysis = ARTICLE_ANALYSIS  # how its terms came from the texts (and how a question's words must)
    sources: StemWords | None = None  # with a stemmer: each stem's words in the corpus

    def analyse(self, text: str) -> list[str]:
        """A text's terms as this index counts them (its analysis), in text order; unknown terms included."""
        return tokenize(text, self.analysis)

    def words_of(self, term: str) -> tuple[str, ...]:
        """The corpus's words a term stands for, sorted: the words a stem came from ((term,) without a stemmer, or
        for a term the corpus lacks)."""
        j = self.vocabulary.get(term)
        if self.sources is None or j is None:
            return (term,)
        s = self.sources
        return tuple(s.words[s.order[s.ptr[j] : s.ptr[j + 1]]].tolist())

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


def _tokens(texts) -> list[list[str]]:
    """Every text's `[a-z0-9]+` tokens after lower-casing, stop words still in (C-speed map, no Python loop)."""
    return list(map(_TOKEN_RE.findall, map(str.lower, texts)))


COMPILED_ABOVE = 1_000_000  # characters beyond which build_index tokenises in the compiled kernel once it is loaded
# in this process (below it the dictionary path costs milliseconds; a fresh clone compiles nothing for the invented
# corpus); Cranfield's 1.5 million characters: 40 ms against 130 ms

LOAD_PAYS_ABOVE = 8_000_000  # characters beyond which loading the kernels from numba's cache (about 0.4 s, once per
# process) pays for itself: the dictionary path takes about 85 ns a character

METHODS = ("auto", "python", "compiled")


def method_for(texts: list[str] | tuple[str, ...], state: str | None = None) -> str:
    """The way `build_index(texts)` ("auto") tokenises: "compiled" where it pays, else "python" (the same ids).

    The compiled kernel pays above COMPILED_ABOVE characters once it is loaded in this process, and above
    LOAD_PAYS_ABOVE while it is not (loading it from numba's cache costs about 0.4 s); with the JIT off it would
    run as plain Python, so it is never chosen. `state`: "loaded", "on disk" or "" (the JIT off); None: this
    process's.

    >>> method_for(["a b c"] * 10, "loaded"), method_for(["a b c"] * 2_000_000, "on disk"), method_for(["a"] * 10**7, "")
    ('python', 'compiled', 'python')
    """
    state = compiled_state() if state is None else state
    chars = sum(map(len, texts))
    pays = chars > LOAD_PAYS_ABOVE or (state == "loaded" and chars > COMPILED_ABOVE)
    return "compiled" if state and pays else "python"


def build_index(
    texts: list[str] | tuple[str, ...],
    progress: Callable[[str, float], None] | None = None,
    method: str = "auto",
    batching: Batching = BATCHING,
    analysis: Analysis = ARTICLE_ANALYSIS,
) -> TermIndex:
    """Tokenise every document once into a sparse count matrix (terms in sorted order).

    Exactly what scikit-learn's CountVectorizer gives with `tokenize`'s rules, faster: each token gets an id
    (stop words none) in the order terms are first seen, then the columns are renumbered in sorted term order
    and each document's ids counted (scipy sums the duplicates of each row in place, as fast as a compiled loop:
    0.2-0.28 s at 100,000 documents). Two ways to the same ids (tests/corpus/test_text.py): "python", a dictionary over
    each batch's `byte_tokens`, ~1 us a token; "compiled", `_intern` over each batch's bytes (no Python object
    per token), ~0.15 us a token, a batch's two halves at once above batching.split_above bytes, used by
    "auto" above COMPILED_ABOVE characters once loaded in this process (the warm-up loads it), else above
    LOAD_PAYS_ABOVE.
    `batching` (`Batching`) cuts the corpus into batches (the same index however it is cut).
    `analysis` (`Analysis`): the stop words both ways drop as they tokenise (the article's by default); with a
    stemmer, the words' columns are then merged by stem (`stemmed`).
    `progress(stage, fraction)` is called after each batch of documents and at the end of each stage.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    n = len(texts)
    if method == "auto":
        method = method_for(texts)
    first_seen, per_doc, ids = (index_compiled if method == "compiled" else index_python)(
        texts, progress, batching, analysis.stop_words
    )
    n_terms = len(first_seen)
    if n_terms == 0:  # no document holds a single token: an index with an empty vocabulary
        counts = sp.csr_matrix((n, 0), dtype=np.int32)
        return TermIndex({}, np.array([], dtype=object), counts, np.zeros(n), analysis)
    order = np.argsort(first_seen, kind="stable")  # ASCII sorts as its code points: as CountVectorizer's sorted()
    renumber = np.empty(n_terms, dtype=np.int32)
    renumber[order] = np.arange(n_terms, dtype=np.int32)
    idx_dtype = np.int32 if ids.size < 2**31 else np.int64
    indptr = np.zeros(n + 1, dtype=idx_dtype)
    np.cumsum(per_doc, out=indptr[1:])
    counts = sp.csr_matrix(
        (np.ones(ids.size, dtype=np.int32), renumber[ids].astype(idx_dtype, copy=False), indptr), shape=(n, n_terms)
    )
    counts.sum_duplicates()  # each row's columns sorted and their repeats counted, in place
    terms = first_seen[order].astype(object)
    vocabulary = dict(zip(terms.tolist(), range(n_terms)))
    index = TermIndex(vocabulary, terms, counts, per_doc.astype(np.float64), analysis)
    if analysis.stemmer != "none":
        index = stemmed(index, analysis)
    if progress is not None:
        progress("building the term matrix", 1.0)
    return index


def stemmed(index: TermIndex, analysis: Analysis) -> TermIndex:
    """The index with the columns of the words that share a stem added into one column per stem (in sorted
    order, as every index's terms), each stem's words kept (`TermIndex.words_of`).

    The stemmer runs once per distinct word, not per token (Snowball's C stemmer: about 1.7 us a word); the counts
    are then one sparse renumbering whose duplicates scipy adds in place. Document lengths do not change: a stemmer
    maps each word to one stem.

    >>> ix = stemmed(build_index(["refunds refund", "refunded"]), Analysis("snowball"))
    >>> ix.terms.tolist(), ix.counts.toarray().tolist(), ix.words_of("refund")
    (['refund'], [[2], [1]], ('refund', 'refunded', 'refunds'))
    """
    words = index.terms
    stems = analysis.stems(words.tolist())
    width = max(map(len, stems), default=1)
    fixed = len(stems) * width * 4 <= MAX_TERM_TABLE_BYTES  # a fixed-width array sorts in C, about 3x faster
    unique, column = np.unique(np.array(stems, dtype=f"U{width}" if fixed else object), return_inverse=True)
    c = index.counts
    counts = sp.csr_matrix(
        (c.data, column.astype(c.indices.dtype, copy=False)[c.indices], c.indptr), shape=(index.n_docs, unique.size)
    )
    counts.sum_duplicates()
    terms = unique.astype(object)
    order = np.argsort(column, kind="stable")  # each stem's words, in the words' (sorted) order
    ptr = np.searchsorted(column[order], np.arange(unique.size + 1))
    return TermIndex(
        dict(zip(terms.tolist(), range(terms.size))),
        terms,
        counts,
        index.doc_len,
        analysis,
        StemWords(words, order, ptr),
    )


def query_counts(index: TermIndex, texts: list[str] | tuple[str, ...]) -> sp.csr_matrix:
    """Questions as a questions x terms count matrix over the index's vocabulary (unknown words dropped), each
    question's words analysed as the index's (`TermIndex.analysis`): its stop words dropped, then stemmed."""
    if not index.vocabulary:
        return sp.csr_matrix((len(texts), 0), dtype=np.int32)
    lists = _tokens(texts) if index.analysis.is_article else list(map(index.analyse, texts))
    lens = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    get = index.vocabulary.get
    flat = np.array([get(t, -1) for t in chain.from_iterable(lists)], dtype=np.int64)
    rows = np.repeat(np.arange(len(lists), dtype=np.int64), lens)
    keep = flat >= 0
    counts = sp.csr_matrix(
        (np.ones(int(keep.sum()), dtype=np.int32), (rows[keep], flat[keep])),
        shape=(len(texts), len(index.vocabulary)),
        dtype=np.int32,
    )
    counts.sum_duplicates()
    counts.sort_indices()
    return counts
