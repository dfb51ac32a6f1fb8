"""LSA: TF-IDF reduced to d dimensions with a truncated SVD, cosine between the projected question and documents.

A deterministic stand-in for a dense retriever (the article's): same words in, a low-dimensional space out.
`arpack` with `random_state=0` reproduces the article; above `RANDOMIZED_ABOVE` stored values the randomized
solver (fixed seed) is used instead, and the model says so.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import TfidfTransformer

from .dataset import Dataset
from .errors import InputError
from .ranking import Ranking, rank_rows
from .text import TermIndex

DIMS_DEFAULT = 6
RANDOMIZED_ABOVE = 5_000_000  # non-zeros of the TF-IDF matrix beyond which arpack is too slow for a slider
ALGORITHMS = ("auto", "arpack", "randomized")


@dataclass(frozen=True, eq=False)
class LsaModel:
    """A fitted LSA: the TF-IDF weighting, the SVD, and the L2-normalised document vectors."""

    tfidf: TfidfTransformer | None
    svd: TruncatedSVD | None
    doc_vectors: np.ndarray  # documents x dims, unit rows (zero rows stay zero)
    dims: int
    requested_dims: int
    algorithm: str
    note: str  # empty, or why the dimensions or the solver differ from what was asked


def max_dims(index: TermIndex) -> int:
    """The largest d a truncated SVD allows on this corpus: min(documents, terms) - 1."""
    return max(0, min(index.n_docs, len(index.vocabulary)) - 1)


def _unit_rows(z: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length; rows of norm 0 stay 0 (the article's 1e-12 floor)."""
    return z / np.maximum(np.linalg.norm(z, axis=1, keepdims=True), 1e-12)


def fit(index: TermIndex, dims: int = DIMS_DEFAULT, algorithm: str = "auto", seed: int = 0) -> LsaModel:
    """Fit TF-IDF and a d-dimensional truncated SVD; a d beyond what the corpus allows is lowered, and `note` says so."""
    if algorithm not in ALGORITHMS:
        raise InputError(f"algorithm must be one of {', '.join(ALGORITHMS)}, got {algorithm!r}")
    if isinstance(dims, bool) or int(dims) != dims or dims < 1:
        raise InputError(f"dims must be a whole number >= 1, got {dims}")
    dims = int(dims)
    limit = max_dims(index)
    notes = []
    if limit < 1:
        note = f"LSA needs at least 2 documents and 2 terms; this corpus has {index.n_docs} and {len(index.vocabulary)}: LSA returns nothing"
        return LsaModel(None, None, np.zeros((index.n_docs, 0)), 0, dims, algorithm, note)
    used = dims
    if dims > limit:
        used = limit
        notes.append(f"{dims} dimensions asked, {limit} used: the most this corpus allows (min(documents, terms) - 1)")
    tfidf = TfidfTransformer()
    x = tfidf.fit_transform(index.counts)
    solver = algorithm
    if algorithm == "auto":
        solver = "randomized" if x.nnz > RANDOMIZED_ABOVE else "arpack"
        if solver == "randomized":
            notes.append(f"randomized SVD (seed {seed}): the TF-IDF matrix has {x.nnz:,} non-zeros, above {RANDOMIZED_ABOVE:,}")
    svd = TruncatedSVD(n_components=used, algorithm=solver, random_state=seed)
    z = svd.fit_transform(x)
    return LsaModel(tfidf, svd, _unit_rows(z), used, dims, solver, "; ".join(notes))


def query_vectors(model: LsaModel, qcounts: sp.csr_matrix) -> np.ndarray:
    """Questions projected and scaled to unit length; a question with no known term stays zero (scores zero everywhere)."""
    if model.svd is None:
        return np.zeros((qcounts.shape[0], 0))
    q = model.svd.transform(model.tfidf.transform(qcounts))
    n = np.linalg.norm(q, axis=1, keepdims=True)
    return np.where(n > 1e-12, q / np.where(n > 1e-12, n, 1.0), 0.0)


def score_chunks(model: LsaModel, qvec: np.ndarray, size: int | None = None) -> Iterator[tuple[int, np.ndarray]]:
    """Dense cosine scores in blocks of questions, sized so a block stays near 64 MB."""
    n_docs = model.doc_vectors.shape[0]
    size = size or max(1, min(512, 8_000_000 // max(n_docs, 1)))
    for start in range(0, qvec.shape[0], size):
        yield start, qvec[start : start + size] @ model.doc_vectors.T


def search(dataset: Dataset, model: LsaModel, qvec: np.ndarray, depth: int = 100, name: str = "LSA") -> Ranking:
    """LSA's ranking of every question: positive cosines only, ties by document id (the model's note rides along)."""
    ranking = rank_rows(name, dataset, score_chunks(model, qvec), depth)
    return replace(ranking, warnings=(f"LSA: {model.note}",)) if model.note else ranking
