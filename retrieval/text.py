"""The article's tokeniser and the document-term count matrix every retriever is built on."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from itertools import chain, count

import numpy as np
import scipy.sparse as sp

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


_BATCH = 20_000  # documents tokenised at most in one batch (a progress report after each)
_BATCH_CHARS = 4_000_000  # characters at most in one batch (one document may exceed it alone): a batch's tokens are
# Python strings (~60 bytes each) while it is counted, so this bounds the tokeniser's memory whatever the corpus; in
# one batch of 20,000 documents, 100 documents of 1 MB peaked at 128 bytes a token (2 GB), see _batches


def _tokens(texts) -> list[list[str]]:
    """Every text's `[a-z0-9]+` tokens after lower-casing, stop words still in (C-speed map, no Python loop)."""
    return list(map(_TOKEN_RE.findall, map(str.lower, texts)))


_SPACES = bytes(c if c in b"abcdefghijklmnopqrstuvwxyz0123456789" else 32 for c in range(256))  # else a space
_STOP_BYTES = frozenset(w.encode("ascii") for w in STOP_WORDS)


def _separated(lowered: str) -> bytes:
    """A lower-cased text as ASCII bytes with every character outside [a-z0-9] a space: a character beyond ASCII
    becomes '?' when encoded, then every byte outside [a-z0-9] a space (two C-level passes)."""
    return lowered.encode("ascii", "replace").translate(_SPACES)


def _byte_tokens(texts) -> list[list[bytes]]:
    """`_tokens` as ASCII bytes, two to three times faster than the regex: the maximal runs of [a-z0-9] of the
    lower-cased text are the words `_separated` leaves between spaces, so a split finds exactly the regex's
    tokens (tests/test_text.py compares them on Unicode, digits, punctuation and empty texts)."""
    return list(map(bytes.split, map(_separated, map(str.lower, texts))))


def _batches(texts, max_docs: int = _BATCH, max_chars: int = _BATCH_CHARS):
    """(start, stop) of consecutive batches of at most max_docs documents and, unless one document alone is
    longer, at most max_chars characters."""
    start, n = 0, len(texts)
    while start < n:
        stop, chars = start, 0
        while stop < n and stop - start < max_docs and (stop == start or chars + len(texts[stop]) <= max_chars):
            chars += len(texts[stop])
            stop += 1
        yield start, stop
        start = stop


def build_index(
    texts: list[str] | tuple[str, ...], progress: Callable[[str, float], None] | None = None
) -> TermIndex:
    """Tokenise every document once into a sparse count matrix (terms in sorted order).

    Exactly what scikit-learn's CountVectorizer gives with `tokenize`'s rules, faster: tokens are mapped to
    ids by a dictionary in one C-level pass per batch (stop words map to -1 and are dropped), each batch
    becomes a CSR block, and the columns are renumbered in sorted term order at the end.
    `progress(stage, fraction)` is called after each batch of documents and at the end of each stage.
    """
    n = len(texts)
    ids: defaultdict[bytes, int] = defaultdict(count().__next__)
    ids.update(dict.fromkeys(_STOP_BYTES, -1))
    blocks_ptr, blocks_idx, blocks_val = [np.zeros(1, dtype=np.int64)], [], []
    nnz = 0
    for start, stop in _batches(texts):
        lists = _byte_tokens(texts[start:stop])
        lens = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
        flat = np.fromiter(map(ids.__getitem__, chain.from_iterable(lists)), dtype=np.int64, count=int(lens.sum()))
        rows = np.repeat(np.arange(len(lists), dtype=np.int64), lens)
        keep = flat >= 0
        block = sp.csr_matrix(
            (np.ones(int(keep.sum()), dtype=np.int32), (rows[keep], flat[keep])),
            shape=(len(lists), max(len(ids) - len(STOP_WORDS), 1)),
        )
        block.sum_duplicates()
        blocks_ptr.append(block.indptr[1:].astype(np.int64) + nnz)
        blocks_idx.append(block.indices.astype(np.int32))
        blocks_val.append(block.data.astype(np.int32))
        nnz += block.nnz
        if progress is not None:
            progress("tokenising documents", min(1.0, (start + len(lists)) / max(n, 1)))
    n_terms = len(ids) - len(STOP_WORDS)
    if n_terms == 0:  # no document holds a single token: an index with an empty vocabulary
        counts = sp.csr_matrix((n, 0), dtype=np.int32)
        return TermIndex({}, np.array([], dtype=object), counts, np.zeros(n))
    first_seen = list(ids)[len(STOP_WORDS) :]  # insertion order = id order (stop words went in first)
    order = sorted(range(n_terms), key=first_seen.__getitem__)  # ASCII bytes sort as their strings do
    renumber = np.empty(n_terms, dtype=np.int32)
    renumber[order] = np.arange(n_terms, dtype=np.int32)
    indices = renumber[np.concatenate(blocks_idx)] if blocks_idx else np.zeros(0, dtype=np.int32)
    data = np.concatenate(blocks_val) if blocks_val else np.zeros(0, dtype=np.int32)
    indptr = np.concatenate(blocks_ptr)
    idx_dtype = np.int32 if nnz < 2**31 else np.int64
    counts = sp.csr_matrix((data, indices.astype(idx_dtype, copy=False), indptr.astype(idx_dtype)), shape=(n, n_terms))
    counts.has_sorted_indices = False
    counts.sort_indices()
    terms = np.empty(n_terms, dtype=object)
    terms[:] = [first_seen[i].decode("ascii") for i in order]
    vocabulary = dict(zip(terms.tolist(), range(n_terms)))
    doc_len = np.bincount(np.repeat(np.arange(n), np.diff(indptr)), weights=data, minlength=n).astype(np.float64)
    if progress is not None:
        progress("building the term matrix", 1.0)
    return TermIndex(vocabulary, terms, counts, doc_len)


def query_counts(index: TermIndex, texts: list[str] | tuple[str, ...]) -> sp.csr_matrix:
    """Questions as a questions x terms count matrix over the index's vocabulary (unknown words dropped)."""
    if not index.vocabulary:
        return sp.csr_matrix((len(texts), 0), dtype=np.int32)
    lists = _tokens(texts)
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
