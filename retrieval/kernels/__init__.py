"""The compiled inner loops (numba): score, select and rank every question in one pass, never a dense questions x
documents matrix. One file per purpose:

| file | what it holds |
|---|---|
| rules.py | the two scalar rules (BM25's weight, the ranking rule), inlined by the kernels, called by the references |
| layout.py | BM25's question layout: each question's postings regrouped by document, documents located in it |
| heap.py | a bounded heap in ranking order; a sparse row's best through it |
| select.py | candidates sorted into the best m, exact judged ranks, a dense row's sampled cut, the generic rows |
| bm25_pass.py | BM25's weights, term groups, probe sites and `bm25_rank` |
| dense_pass.py | the dense pass (LSA, dense retriever): cosines selected and ranked, read at given documents |
| lsa_fit.py | LSA's fit: TF-IDF rows and columns, sparse times dense, the randomized SVD's normaliser |
| fusion.py | the weighted fusion's exact top and RRF |
| tokenise.py | the tokeniser's pass (`_intern` over a batch's bytes) and, beside it, its plain reference |
| dispatch.py | a `Kernel`: compiled or its plain-Python twin; `parallel` over the worker threads |
| digest.py | each kernel file's SOURCE_DIGEST derived from the files it imports (`python -m retrieval.kernels.digest`) |

The worker threads themselves are `retrieval.core.workers` (the tokeniser uses them too).

Every kernel works on a set of questions and writes disjoint slices of preallocated outputs, so `parallel`
splits the questions over threads (each kernel releases the GIL). The arithmetic is spelled out operation by
operation, in the same order as the numpy formulas in bm25.py, lsa.py and fusion.py, so the numbers are the
same to the last bit (numba compiles without fast-math: no reassociation, no fused multiply-add):

* a BM25 weight is `bm25.bm25_weight`, inlined from rules.py (the same function the numpy paths call); a BM25 score
  is the sum of its question terms' weights in ascending term order, starting from the first;
* an LSA score is q[0] * v[0] + q[1] * v[1] + ... added left to right (lsa.score_chunks computes the same);
* a weighted-fusion score is w_1 * minmax(s_1) + w_2 * minmax(s_2) + ..., member by member, as fusion.fuse_rows
  writes it (the article's: alpha * minmax(bm25) + (1 - alpha) * minmax(lsa)).

Selection keeps the best `m` of a question ordered by `rules.ranks_before` (score descending, tie key
ascending; the tie key is the document's position in id order, so ties go by document id), inlined here too.
BM25 (`bm25_rank`) and every dense row (LSA's, the dense retriever's, `rank_dense`: `_dense_select`) sort only
the candidates at or above a cut: the previous run's best (BM25 after a slider step), else a value about 1.5 m
scores reach in a sample, checked (every score is a candidate when fewer than m reach it); a sparse row offers
every entry to a bounded heap (`_select`). The exact rank of each judged document is 1 + the documents that
beat it: counted among the candidates when it is one, else over the whole row, four judged documents a
vectorised pass (`_judged_ranks`).

Each kernel must equal a plain numpy reference, named in its docstring and compared in the tests
(tests/kernels/test_perf_equivalence.py, tests/kernels/test_kernels.py, tests/retrievers/test_bm25.py, tests/retrievers/test_ranking.py):

| kernel | reference |
|---|---|
| bm25_weights | bm25.term_weights |
| term_order | np.lexsort of each term's postings by (count descending, length ascending, id) (bm25.term_groups) |
| bm25_rank | ranking.rank_rows(bm25.score(...)) (`bm25.search` of the score matrix) |
| bm25_at, bm25_rows | bm25.score, read at (question, document) |
| layout, bm25_locate | bm25.QuestionPlan.docs_at (layout positions and documents, each the other undone) |
| bm25_probe_sites | the term whose postings hold a single's posting (np.searchsorted of its index), its count |
| lsa_rank | ranking.rank_rows(lsa.score_chunks(...)) |
| lsa_at, lsa_rows | lsa.score_chunks, read at (question, document) |
| tfidf_rows, tfidf_columns | TfidfTransformer().fit_transform(counts) and its tocsc() (lsa.Tfidf.of_counts) |
| sparse_dense | scipy's CSR matrix @ dense matrix (lsa.Tfidf's products in the randomized SVD) |
| unit_lower_rows | scipy.linalg.lu(a, permute_l=True) (lsa.lu_permute_l: the randomized SVD's normaliser) |
| rank_sparse, rank_dense | ranking.order_by_score over each row's results (tests/retrievers/test_ranking.py's `brute`) |
| list_ranks | the 1-based position of each judged document in its list |
| weighted_topk, weighted_scan | fusion.weighted_dense (rank_rows of the dense fused rows) |
| rrf_fuse | fusion.rrf_points summed per document, ordered by ranking.order_by_score |
| tokenise.index_compiled (`_intern`, `_rehash`, `_merge`, `_fill_fixed`) | tokenise.index_python, in the same file |

The kernels take the plan's and the pass's arrays grouped in named tuples (bm25.Postings, bm25.Layout,
ranking.Judged, ranking.Selection, ranking.PassOutputs, ...), which numba passes as structs of arrays. With
NUMBA_DISABLE_JIT=1 every kernel runs as the plain Python it is written in (slowly): a debugger can step
through it, and .ci/run runs a part of the tests that way.

Each public kernel is a `Kernel`: the compiled dispatcher (cache=True: compiled once, then loaded from numba's
cache on disk) and its plain-Python twin, the same function bodies rebuilt over Python callees
(`dispatch.python_twins`). The app and the command line call `serve_small_from_python`: until the compiled kernels are
loaded (`engine.warm_up`, then `mark_ready`), a call of at most PYTHON_MAX_WORK steps runs the twin, so the invented
corpus answers at once on a fresh clone instead of after ~25 s of compiling; the numbers are the same to the last bit
(tests/kernels/test_kernels.py compares every system's lists both ways).

The tokeniser's kernels (tokenise.py) are not `Kernel`s: a corpus is tokenised whole by the compiled pass or by its
plain reference, the same ids either way, as `corpus.text.method_for` chooses (`tokenise.KERNELS` names them,
`tokenise.dispatchers` gives their dispatchers, which `engine.warm_up` compiles with the others).

Numba keys its disk cache on a kernel's own file only (its size and time), never on the files it calls or inlines
from: so each kernel file that uses another, or the thresholds' table (`core/thresholds.py`: every constant
that chooses or sizes a path, each naming the benchmark that justifies it), carries `SOURCE_DIGEST`, the digest of
the files it imports from (each kernel file carrying its own), and an edit of any of them forces an edit of it, so
no stale compiled kernel outlives it. Nobody types it: `python -m retrieval.kernels.digest` rewrites every stale
digest (digest.py), and tests/kernels/test_kernels.py fails naming that command when one is stale.
"""

from __future__ import annotations

from . import bm25_pass, dense_pass, dispatch, fusion, heap, layout, lsa_fit, select, tokenise, vectorised
from .dispatch import (
    PARALLEL_MIN_WORK,
    PYTHON_MAX_WORK,
    Kernel,
    compiled_here,
    mark_ready,
    parallel,
    parallel_over,
    ready,
    serve_small_from_python,
)
from .layout import lowest_bit

MODULES = (layout, heap, select, bm25_pass, dense_pass, lsa_fit, fusion, tokenise)
# the kernels the library calls, by name, and the file of each
HOMES = {
    layout: ("layout", "bm25_locate"),
    bm25_pass: ("bm25_probe_sites", "bm25_weights", "term_order", "bm25_rank", "bm25_at", "bm25_rows"),
    dense_pass: ("lsa_rank", "lsa_at", "lsa_rows"),
    lsa_fit: ("tfidf_rows", "tfidf_columns", "sparse_dense", "unit_lower_rows"),
    select: ("rank_sparse", "rank_dense", "list_ranks"),
    fusion: ("weighted_topk", "weighted_scan", "rrf_fuse"),
}
KERNELS = tuple(name for names in HOMES.values() for name in names)
TWINS = dispatch.python_twins(list(MODULES))
# with NUMBA_DISABLE_JIT=1 a kernel is its plain function already: it is its own twin
_BY_NAME = {
    name: Kernel(
        getattr(module, name), TWINS.get(f"{module.__name__}.{name}", getattr(module, name)), vectorised.TWINS.get(name)
    )
    for module, names in HOMES.items()
    for name in names
}
globals().update(_BY_NAME)


def serve_uncompiled(on: bool = True) -> None:
    """`dispatch.serve_uncompiled` of every kernel: until `mark_ready`, a kernel numba's cache on disk lacks runs
    from its numpy or plain-Python twin where that pays, rather than waiting for numba to compile it (a one-shot
    command on a fresh clone)."""
    dispatch.serve_uncompiled(_BY_NAME.values(), on)


def dispatchers() -> dict:
    """Each kernel's numba dispatcher (empty with NUMBA_DISABLE_JIT=1): its signatures and cache statistics."""
    return dispatch.dispatchers(_BY_NAME)


__all__ = [
    "KERNELS",
    "MODULES",
    "PARALLEL_MIN_WORK",
    "PYTHON_MAX_WORK",
    "Kernel",
    "compiled_here",
    "dispatchers",
    "lowest_bit",
    "mark_ready",
    "parallel",
    "parallel_over",
    "ready",
    "serve_small_from_python",
    "serve_uncompiled",
    *KERNELS,
]
