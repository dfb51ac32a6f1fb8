"""LSA: TF-IDF reduced to d dimensions with a truncated SVD, cosine between the projected question and documents.

A deterministic stand-in for a dense retriever (the article's): same words in, a low-dimensional space out.
`arpack` with `random_state=0` reproduces the article; above `RANDOMIZED_ABOVE` stored values the randomized
solver (fixed seed) is used instead, and the model says so.

On a large corpus (a TF-IDF matrix of more than `PREFIX_ABOVE` stored values) a d slider step must not cost an SVD:
there LSA at d is the first d components of one fit at the smallest of `PREFIX_BLOCKS` that holds d (`block_for`,
`truncate`): the top singular vectors of a fit at D are, up to the solver's tolerance, those of a fit at d
(arpack: each component agrees with a direct fit to a cosine above 0.99999, tests/retrievers/test_lsa.py), so one fit serves
every d up to D. Small corpora (the article's) keep one direct fit per d, bit for bit as before.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp
from scipy import linalg
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import TfidfTransformer
from sklearn.utils import check_random_state
from sklearn.utils.extmath import safe_sparse_dot, svd_flip

import retrieval.kernels as k

from ..core import params
from ..core.errors import InputError
from ..core.words import plural
from ..corpus.dataset import Dataset
from ..corpus.text import TermIndex
from ..kernels import dense_pass
from .ranking import THRESHOLD, BestLists, Csr, PassOutputs, Ranking, Selection, keep_for

DIMS_DEFAULT = params.default("dims")
RANDOMIZED_ABOVE = 5_000_000  # non-zeros of the TF-IDF matrix beyond which arpack is too slow for a slider
ALGORITHMS = ("auto", "arpack", "randomized")
KEEP_DEFAULT: int | None = None  # raw cosines a run keeps per question for the weighted fusion (None: ranking.keep_for)
PREFIX_ABOVE = 1_000_000  # TF-IDF non-zeros beyond which every d is a prefix of a block's fit (a direct fit: ~0.3 s)
PREFIX_BLOCKS = (8, 16, 32, 64, 128, params.MAX_DIMS)  # on a large corpus, each fitted once for every d up to it: the
# first (d = 6, the default, costs about as much as a fit at 6: 18 columns for the randomized solver instead of 16)
# and then at most one SVD per doubling of d, however the slider moves


@dataclass(frozen=True, eq=False)
class LsaModel:
    """A fitted LSA: the TF-IDF weighting, the SVD's components, and the L2-normalised document vectors."""

    tfidf: TfidfTransformer | None
    components: np.ndarray | None  # dims x terms: the SVD's right singular vectors (TruncatedSVD's components_)
    doc_vectors: np.ndarray  # documents x dims, unit rows (zero rows stay zero)
    vt: np.ndarray  # the same, dims x documents, contiguous (what the scoring loops stream through)
    dims: int
    requested_dims: int
    algorithm: str
    note: str  # empty, or why the dimensions or the solver differ from what was asked
    raw: np.ndarray | None = None  # a block's fit only: the projected documents (U x Sigma), documents x its dims


def max_dims(index: TermIndex) -> int:
    """The largest d a truncated SVD allows on this corpus: min(documents, terms) - 1."""
    return max(0, min(index.n_docs, len(index.vocabulary)) - 1)


def _unit_rows(z: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length; rows of norm 0 stay 0 (the article's 1e-12 floor)."""
    return z / np.maximum(np.linalg.norm(z, axis=1, keepdims=True), 1e-12)


def fit(
    index: TermIndex,
    dims: int = DIMS_DEFAULT,
    algorithm: str = "auto",
    seed: int = 0,
    block: bool = False,
    by_term: sp.csc_matrix | None = None,
) -> LsaModel:
    """Fit TF-IDF and a d-dimensional truncated SVD; a d beyond what the corpus allows is lowered, and `note` says so.

    With `block`, the fit is kept raw for `truncate` (its projected documents, not yet unit rows). `by_term`: the
    same counts by column with sorted rows (bm25.prepare's), when at hand: the randomized solver's TF-IDF by column
    is then made from it (`Tfidf.of_counts`) instead of transposed."""
    if algorithm not in ALGORITHMS:
        raise InputError(f"algorithm must be one of {', '.join(ALGORITHMS)}, got {algorithm!r}")
    dims = params.check("dims", dims)
    limit = max_dims(index)
    notes = []
    if limit < 1:
        note = f"LSA needs at least 2 documents and 2 terms; this corpus has {index.n_docs} and {len(index.vocabulary)}: LSA returns nothing"
        return LsaModel(None, None, np.zeros((index.n_docs, 0)), np.zeros((0, index.n_docs)), 0, dims, algorithm, note)
    used = dims
    if dims > limit:
        used = limit
        notes.append(
            f"{plural(dims, 'dimension')} asked, {limit} used: the most this corpus allows (min(documents, terms) - 1)"
        )
    tfidf = TfidfTransformer()
    nnz = index.counts.nnz  # the TF-IDF matrix's too: every stored count is weighted, none dropped
    solver = algorithm
    if algorithm == "auto":
        solver = "randomized" if nnz > RANDOMIZED_ABOVE else "arpack"
        if solver == "randomized":
            notes.append(
                f"randomized SVD (seed {seed}): the TF-IDF matrix has {nnz:,} non-zeros, above {RANDOMIZED_ABOVE:,}"
            )
    if solver == "randomized":
        tfidf.fit(index.counts)
        components, z = randomized(Tfidf.of_counts(index.counts, tfidf.idf_, by_term), used, seed)
    else:
        x = tfidf.fit_transform(index.counts)
        svd = TruncatedSVD(n_components=used, algorithm=solver, random_state=seed)
        z = svd.fit_transform(x)
        components = svd.components_
    if block:
        empty = np.zeros((0, 0))
        return LsaModel(
            tfidf, components, empty, empty, used, dims, solver, "; ".join(notes), np.asarray(z, dtype=np.float64)
        )
    vecs = np.ascontiguousarray(_unit_rows(z), dtype=np.float64)
    return LsaModel(tfidf, components, vecs, np.ascontiguousarray(vecs.T), used, dims, solver, "; ".join(notes))


class Tfidf:
    """A sparse matrix as scikit-learn's randomized SVD multiplies it (A @ Q, A.T @ Q, Q.T @ A), each product
    `_kernels.sparse_dense` over the threads: scipy's sums in scipy's order, so the same numbers to the last bit
    (tests/retrievers/test_lsa.py), in about half the time on two cores (scipy's products run on one; at 100,000
    documents they were 4 of the fit's 7 seconds). `rows`: the matrix's CSR arrays; `cols`: its transpose's."""

    __array_ufunc__ = None  # `ndarray @ Tfidf` defers to __rmatmul__

    def __init__(self, rows: Csr, cols: Csr, shape: tuple[int, int]):
        self.rows, self.cols, self.shape, self.dtype = rows, cols, shape, np.dtype(np.float64)

    @staticmethod
    def _arrays(m: sp.spmatrix, data: np.ndarray | None = None) -> Csr:
        """A compressed matrix's pointers and indices as int64, with `data` (default: its own, as float64)."""
        return Csr(
            m.indptr.astype(np.int64),
            m.indices.astype(np.int64),
            np.asarray(m.data, dtype=np.float64) if data is None else data,
        )

    @classmethod
    def of(cls, x: sp.spmatrix) -> Tfidf:
        """The operator of a scipy sparse matrix (float64; its CSR and CSC arrays)."""
        x = sp.csr_matrix(x, dtype=np.float64)
        return cls(cls._arrays(x), cls._arrays(x.tocsc()), x.shape)

    @classmethod
    def of_counts(cls, counts: sp.csr_matrix, idf: np.ndarray, by_term: sp.csc_matrix | None = None) -> Tfidf:
        """The operator of `TfidfTransformer` with this `idf` applied to `counts` (`Tfidf.of(transformer.transform(
        counts))`, the same numbers to the last bit), made by the threads from the counts in both layouts
        (`_kernels.tfidf_rows` and `tfidf_columns`; `by_term`: the counts by column with sorted rows, else transposed
        here). At 100,000 documents (5.2 million counts), five alternations in one process: 0.09-0.12 s (median 0.11),
        where scikit-learn's fit_transform and scipy's tocsc took 0.22-0.48 s (0.28) on one thread."""
        if by_term is None:
            by_term = sp.csc_matrix(counts)
            by_term.sort_indices()
        counts = sp.csr_matrix(counts)
        if not counts.has_sorted_indices:  # scikit-learn's transform sorts a row's entries before it weighs them
            counts = counts.sorted_indices()
        idf = np.ascontiguousarray(idf, dtype=np.float64)
        n_docs, n_terms = counts.shape
        rows, cols = cls._arrays(counts, np.empty(counts.nnz)), cls._arrays(by_term, np.empty(by_term.nnz))
        scale = np.empty(n_docs)
        k.parallel(k.tfidf_rows, n_docs, counts.nnz, rows._replace(score=counts.data), idf, rows.score, scale)
        k.parallel(k.tfidf_columns, n_terms, by_term.nnz, cols._replace(score=by_term.data), idf, scale, cols.score)
        return cls(rows, cols, (n_docs, n_terms))

    @property
    def T(self) -> Tfidf:
        return Tfidf(self.cols, self.rows, self.shape[::-1])

    def matmul(self, q: np.ndarray, order: str = "C") -> np.ndarray:
        """self @ q, row-major, or (order "F") column-major: what LAPACK factorises in place."""
        q = np.ascontiguousarray(q, dtype=np.float64)
        out = np.empty((self.shape[0], q.shape[1]), order=order)
        k.parallel(k.sparse_dense, self.shape[0], self.rows.doc.size * q.shape[1], self.rows, q, out)
        return out

    def __matmul__(self, q: np.ndarray) -> np.ndarray:
        return self.matmul(q)

    def __rmatmul__(self, q: np.ndarray) -> np.ndarray:
        return (self.T @ np.asarray(q).T).T  # scipy's dense @ sparse: (sparse.T @ dense.T).T


N_OVERSAMPLES = 10  # TruncatedSVD's randomized solver: columns beyond d ...
N_ITER = 5  # ... and power iterations, each normalised by an LU factorisation (scikit-learn's "auto" beyond 2)


def lu_permute_l(a: np.ndarray) -> np.ndarray:
    """scipy.linalg.lu(a, permute_l=True)[0] of a tall column-major `a` (overwritten), to the last bit: the same
    LAPACK getrf on the same column-major values (scipy copies a row-major input into that layout first), then
    the unit lower factor's rows put back in the order the pivoting moved them (`_kernels.unit_lower_rows`, over
    the threads). A fit at 100,000 documents (ten of them, on 413,728 x 18 and 100,000 x 18): 0.48 s against
    scipy's 1.01 s with its two layout copies each time (cProfile)."""
    m, n = a.shape
    if m < n or not a.flags.f_contiguous:
        return linalg.lu(a, permute_l=True, check_finite=False)[0]
    (getrf,) = linalg.get_lapack_funcs(("getrf",), (a,))
    lu, piv, info = getrf(a, overwrite_a=True)
    if info < 0:
        raise ValueError(f"getrf: illegal value in argument {-info}")
    swapped = np.arange(m)  # the row interchanges applied in turn, as scipy follows them
    for i in range(n):
        j = piv[i]
        swapped[i], swapped[j] = swapped[j], swapped[i]
    perm = np.empty(m, dtype=np.int64)
    perm[swapped] = np.arange(m)
    out = np.empty((m, n))
    k.parallel(k.unit_lower_rows, m, m * n, lu, perm, out)
    return out


def randomized(x: sp.spmatrix | Tfidf, dims: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's TruncatedSVD(dims, algorithm="randomized", random_state=seed).fit_transform(x), its
    components_ and the projected documents, to the last bit (tests/retrievers/test_lsa.py): randomized_svd's steps with
    TruncatedSVD's settings (N_OVERSAMPLES, N_ITER, LU normalisation; the smaller side of the matrix first), then
    svd_flip on V, then x @ V.T; without the explained variances, which nothing here reads. Written out so that
    the products run over the threads (`Tfidf`) and come out column-major for the LU (`lu_permute_l`), which
    then copies nothing."""
    a = x if isinstance(x, Tfidf) else Tfidf.of(x)
    rng = check_random_state(seed)
    transpose = a.shape[0] < a.shape[1]
    m = a.T if transpose else a
    q = rng.normal(size=(m.shape[1], dims + N_OVERSAMPLES))
    for _ in range(N_ITER):
        q = lu_permute_l(m.matmul(q, order="F"))
        q = lu_permute_l(m.T.matmul(q, order="F"))
    q, _ = linalg.qr(m.matmul(q, order="F"), mode="economic", check_finite=False)
    uhat, _, vt = linalg.svd(q.T @ m, full_matrices=False, lapack_driver="gesdd")
    vt = (q @ uhat)[:, :dims].T if transpose else vt[:dims, :]
    u = np.zeros((a.shape[0], dims))  # svd_flip(u_based_decision=False) flips by V alone; U is not kept
    _, vt = svd_flip(u, vt, u_based_decision=False)
    return vt, a @ vt.T


def block_for(index: TermIndex, dims: int) -> int | None:
    """The block whose fit serves d on this corpus (the smallest of PREFIX_BLOCKS holding d, at most what the corpus
    allows), or None: a small corpus (at most PREFIX_ABOVE stored values), fitted directly at every d."""
    if index.counts.nnz <= PREFIX_ABOVE or max_dims(index) < 1:
        return None
    dims = params.check("dims", dims)
    return min(next((b for b in PREFIX_BLOCKS if b >= dims), dims), max_dims(index))


def truncate(base: LsaModel, dims: int) -> LsaModel:
    """LSA at d from a block's fit (`fit(..., block=True)`): its first d components, the documents' rows made unit
    again. A d beyond the block is lowered to it, and `note` says so."""
    used = min(int(dims), base.dims)
    notes = [n for n in (base.note,) if n]
    if used < int(dims):
        notes.append(
            f"{plural(int(dims), 'dimension')} asked, {used} used: the most this corpus allows (min(documents, terms) - 1)"
        )
    notes.append(
        f"the first {plural(used, 'component')} of one {base.dims}-dimension SVD (every d up to {base.dims} from it)"
    )
    vecs = np.ascontiguousarray(_unit_rows(base.raw[:, :used]), dtype=np.float64)
    return LsaModel(
        base.tfidf,
        base.components,
        vecs,
        np.ascontiguousarray(vecs.T),
        used,
        int(dims),
        base.algorithm,
        "; ".join(notes),
    )


def project(model: LsaModel, qcounts: sp.csr_matrix) -> np.ndarray:
    """Questions (or documents: any counts over the vocabulary) in the model's SVD space, every dimension its SVD
    has (a block's: all D), not yet scaled: TruncatedSVD.transform of the TF-IDF rows, x @ components.T."""
    if model.components is None:
        return np.zeros((qcounts.shape[0], 0))
    return safe_sparse_dot(model.tfidf.transform(qcounts), model.components.T)


def query_vectors(model: LsaModel, qcounts: sp.csr_matrix, projected: np.ndarray | None = None) -> np.ndarray:
    """Questions projected and scaled to unit length; a question with no known term stays zero (scores zero everywhere).

    `projected`: `project(model, qcounts)` when it is at hand (a block's, shared by every d the block serves:
    each column of the product is its own sums, so the first d columns are the same numbers whatever D is,
    and a d step does not copy the block's components again, 20-40 ms at 100,000 documents)."""
    if model.components is None:
        return np.zeros((qcounts.shape[0], 0))
    q = (project(model, qcounts) if projected is None else projected)[:, : model.dims]  # a truncated model: its first d
    n = np.linalg.norm(q, axis=1, keepdims=True)
    return np.where(n > 1e-12, q / np.where(n > 1e-12, n, 1.0), 0.0)


def score_chunks(model: LsaModel, qvec: np.ndarray, size: int | None = None) -> Iterator[tuple[int, np.ndarray]]:
    """Dense cosine scores in blocks of questions, sized so a block stays near 64 MB.

    A cosine is q[0] * v[0] + q[1] * v[1] + ..., added left to right: the same numbers, to the last bit, as
    the rankings' compiled loop and the weighted fusion's look-ups (a BLAS product would sum in its own order).
    """
    size = size or max(1, min(512, 8_000_000 // max(model.doc_vectors.shape[0], 1)))
    vt = model.vt
    qvec = np.asarray(qvec, dtype=np.float64)
    for start in range(0, qvec.shape[0], size):
        yield start, cosines(qvec[start : start + size], vt)


def cosines(qvec: np.ndarray, vt: np.ndarray) -> np.ndarray:
    """Questions x documents dot products of unit vectors (vt: dims x documents), q[0] * v[0] + q[1] * v[1] + ...
    added left to right: the one order every path sums a cosine in (LSA's and the dense retriever's)."""
    out = np.zeros((qvec.shape[0], vt.shape[1]))
    if vt.shape[0]:
        np.multiply(qvec[:, :1], vt[0][None, :], out=out)
        for c in range(1, vt.shape[0]):
            out += qvec[:, c : c + 1] * vt[c][None, :]
    return out


@dataclass(frozen=True, eq=False)
class LsaRun(BestLists):
    """LSA for every question at one d (BestLists): the best max(depth, keep) documents by raw cosine over all
    documents (negative ones included, ties by id), results above the threshold, the lowest and highest cosine,
    and the Ranking."""

    model: LsaModel
    qvec: np.ndarray

    @property
    def vecs(self) -> np.ndarray:
        """The unit document vectors, documents x dims, contiguous (for look-ups one document at a time)."""
        return self.model.doc_vectors

    def at(self, qs: np.ndarray, ds: np.ndarray) -> np.ndarray:
        """Cosines of (question, document) pairs, bit-identical to the ranking's."""
        qs, ds = np.asarray(qs, dtype=np.int64), np.asarray(ds, dtype=np.int64)
        out = np.zeros(qs.size)
        k.parallel(k.lsa_at, qs.size, qs.size * 8, qs, ds, self.qvec, self.vecs, out)
        return out

    def at_rows(self, top_d: np.ndarray, n_top: np.ndarray) -> np.ndarray:
        """Cosines of each question's first n_top[q] documents of top_d[q] (questions x depth, 0 beyond them)."""
        out = np.zeros(top_d.shape)
        k.parallel(
            k.lsa_rows,
            top_d.shape[0],
            top_d.size * 8,
            np.ascontiguousarray(top_d, dtype=np.int64),
            np.asarray(n_top, dtype=np.int64),
            self.qvec,
            self.vecs,
            out,
        )
        return out

    def row(self, q: int) -> np.ndarray:
        """Cosines of one question with every document."""
        return next(score_chunks(self.model, self.qvec[q : q + 1]))[1][0]


PATHS = {"auto": dense_pass.AUTO, "rows": dense_pass.ROWS, "stream": dense_pass.STREAM}


def run(
    dataset: Dataset,
    model: LsaModel,
    qvec: np.ndarray,
    depth: int = 100,
    name: str = "LSA",
    keep: int | None = None,
    path: str = "auto",
) -> LsaRun:
    """Every question's cosines with every document in a compiled loop (`_kernels.lsa_rank`, threads over
    questions; 16 questions streamed over each block of document vectors): the best `depth`,
    counts, lowest and highest, judged ranks. Never a questions x documents matrix.

    The run keeps the best max(depth, keep) raw cosines per question: the weighted fusion's candidates (a deeper
    list bounds the documents outside it tighter, so fewer questions need a second look); `keep` None: KEEP_DEFAULT
    when set, else ranking.keep_for the corpus (sqrt(N) between 100 and 1000, measured there).

    `path` chooses how (the same bits on each; bench/speed.py --paths times them): "rows" (one question's row
    of cosines at a time, then selected), "stream" (16 questions streamed over each block, where a row is long
    enough to be sampled; "auto", the app's, is the same);
    `kernels.dense_pass.lsa_rank` says more."""
    if path not in PATHS:
        raise InputError(f"path {path!r}: LSA's paths are {', '.join(PATHS)}")
    vt = model.vt
    nq, n_docs = dataset.n_queries, vt.shape[1]
    qv = np.ascontiguousarray(qvec, dtype=np.float64).reshape(nq, vt.shape[0])
    m = max(int(depth), keep_for(n_docs, KEEP_DEFAULT) if keep is None else int(keep))
    o = PassOutputs.empty(dataset, m)
    k.parallel(
        k.lsa_rank,
        nq,
        nq * n_docs * (vt.shape[0] + 2),
        qv,
        vt,
        Selection(dataset.tie_key, THRESHOLD, m),
        o,
        PATHS[path],
    )
    return LsaRun(**o.lists(name, int(depth), (f"LSA: {model.note}",) if model.note else ()), model=model, qvec=qv)


def search(dataset: Dataset, model: LsaModel, qvec: np.ndarray, depth: int = 100, name: str = "LSA") -> Ranking:
    """LSA's ranking of every question: positive cosines only, ties by document id (the model's note rides along)."""
    ranking = run(dataset, model, qvec, depth).ranking
    return ranking if name == ranking.name else replace(ranking, name=name)
