"""One system's answers in one shape for every retriever and run file: the top of each list and the exact rank of every judged document.

Metrics need only the ranks of the judged documents, so a ranking keeps those exactly (however deep) and
the top `depth` documents for display and for fusion, never the whole ordered corpus.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

import retrieval.kernels as k

from ..corpus.dataset import Dataset
from .listed import Ranking, from_run  # noqa: F401 - Ranking and from_run are read from here too

THRESHOLD = 1e-9  # a score at or below this is not a result: zero is not an answer
KEEP_RANGE = (100, 1000)


def keep_for(n_docs: int, override: int | None = None) -> int:
    """How many raw scores a retriever's run keeps per question on a corpus of n_docs (BM25's and LSA's; `override`,
    a module's KEEP_DEFAULT when set, wins): the
    weighted fusion's candidates, whose last score bounds every other document. The 100th score of a large corpus
    sits closer to its best than that of a small one, so the list grows with sqrt(N) between 100 and 1000.
    Measured (bench/speed.py's corpus): BM25 at 100k documents, alpha 0.5: 100 left 180 of 1,000 questions to
    rescan and 316 left 6; at 1M, 300 left 84 and 1,000 left 1. LSA at 100k, 11 evaluations (k1, alpha, d moves):
    1,000 kept left 124 rescans and took 450-520 ms a d tick and 26-28 ms an alpha tick; 300 left 1,097, 276-349 ms
    and 41-48 ms; 100 left 1,505, 238-319 ms and 64-67 ms (the k1 tick, 94-115 ms, moved with none): the d tick
    is what a person waits for, so LSA keeps sqrt(N) too."""
    if override is not None:
        return int(override)
    return int(np.clip(np.sqrt(max(n_docs, 0)), *KEEP_RANGE))


def order_by_score(scores: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Positions of `scores` in ranking order (`ranks_before`): score descending, then tie key ascending."""
    return np.lexsort((keys, -scores))


def _top_order(cols: np.ndarray, vals: np.ndarray, key: np.ndarray, depth: int) -> np.ndarray:
    """Positions of the best `depth` candidates, by score descending then tie key ascending (exact at ties)."""
    n = vals.size
    if n > depth > 0:
        kth = np.partition(vals, n - depth)[n - depth]  # the depth-th largest score
        cand = np.flatnonzero(vals >= kth)
    else:
        cand = np.arange(n)
    order = cand[order_by_score(vals[cand], key[cols[cand]])]
    return order[:depth]


def judged_layout(dataset: Dataset) -> tuple[np.ndarray, np.ndarray]:
    """Where each question's judgements start in the qrels (n_queries + 1 offsets) and their document indices."""
    qrels = dataset.qrels
    return np.searchsorted(qrels.query, np.arange(dataset.n_queries + 1)).astype(np.int64), qrels.doc.astype(np.int64)


class Judged(NamedTuple):
    """A dataset's judgements as a compiled pass reads them, and the ranks it writes for them."""

    ptr: np.ndarray  # n_queries + 1 offsets: question q's judgements are doc[ptr[q]:ptr[q + 1]]
    doc: np.ndarray  # the judged documents (-1 for one outside the corpus), in the qrels' order
    rank: np.ndarray  # written by the pass: each judged document's rank among the results, 0 = not retrieved

    @classmethod
    def of(cls, dataset: Dataset) -> Judged:
        """The dataset's judgements, their ranks zeroed."""
        ptr, doc = judged_layout(dataset)
        return cls(ptr, doc, np.zeros(doc.size, dtype=np.int64))

    @classmethod
    def none(cls, n_queries: int) -> Judged:
        """No judgement for any of n_queries questions (a pass that only selects)."""
        empty = np.zeros(0, dtype=np.int64)
        return cls(np.zeros(n_queries + 1, dtype=np.int64), empty, empty)


class Selection(NamedTuple):
    """What a compiled pass keeps of each question: the best `keep` entries by `ranks_before` (ties by tie_key,
    one per document), counting as results the scores above `threshold`."""

    tie_key: np.ndarray  # per document: its position in id order (Dataset.tie_key)
    threshold: float
    keep: int


class PassOutputs(NamedTuple):
    """The arrays a compiled ranking pass fills for every question: the best m, counts, score range, judged ranks."""

    judged: Judged
    top_d: np.ndarray  # questions x m: the best entries' documents, best first
    top_s: np.ndarray  # ... and their scores
    n_top: np.ndarray  # per question: how many of its row are filled
    n_res: np.ndarray  # per question: how many score above the threshold
    lo: np.ndarray  # per question: the lowest score over the entries offered
    hi: np.ndarray  # ... and the highest

    @classmethod
    def empty(cls, dataset: Dataset, m: int, judged: Judged | None = None) -> PassOutputs:
        """Zeroed outputs for every question of `dataset`, keeping the best `m` per question (its judgements'
        ranks, unless `judged` is given, e.g. `Judged.none`)."""
        nq = dataset.n_queries
        return cls(
            Judged.of(dataset) if judged is None else judged,
            np.zeros((nq, m), dtype=np.int64),
            np.zeros((nq, m)),
            np.zeros(nq, dtype=np.int64),
            np.zeros(nq, dtype=np.int64),
            np.zeros(nq),
            np.zeros(nq),
        )

    @property
    def judged_rank(self) -> np.ndarray:
        """The judged documents' ranks."""
        return self.judged.rank

    def ranking(self, name: str, depth: int, warnings: tuple[str, ...] = ()) -> Ranking:
        """The filled outputs as a Ranking cut at `depth`."""
        n_list = np.minimum(np.minimum(self.n_top, self.n_res), depth)
        return from_padded(
            name, self.top_d[:, :depth], self.top_s[:, :depth], n_list, self.judged_rank, self.n_res, warnings
        )

    def lists(self, name: str, depth: int, warnings: tuple[str, ...] = ()) -> dict:
        """The fields of a BestLists: the raw lists, counts and score range, and the Ranking cut at `depth`."""
        return dict(
            top_d=self.top_d,
            top_s=self.top_s,
            n_top=self.n_top,
            n_res=self.n_res,
            lo=self.lo,
            hi=self.hi,
            ranking=self.ranking(name, depth, warnings),
        )


class Csr(NamedTuple):
    """Rows laid end to end: row r's entries are doc[ptr[r]:ptr[r + 1]] with score[...] (a sparse score block, or
    ordered lists)."""

    ptr: np.ndarray
    doc: np.ndarray
    score: np.ndarray


@dataclass(frozen=True, eq=False)
class BestLists:
    """A retriever's run as the weighted fusion reads it: per question the best raw scores (ties by id, any score),
    how many score above the result threshold, the lowest and highest score over all documents, and the Ranking."""

    top_d: np.ndarray  # questions x kept: the best raw scores' documents, best first
    top_s: np.ndarray
    n_top: np.ndarray
    n_res: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    ranking: Ranking


def from_padded(
    name: str,
    top_d: np.ndarray,
    top_s: np.ndarray,
    n_top: np.ndarray,
    judged_rank: np.ndarray,
    n_results: np.ndarray,
    warnings: tuple[str, ...] = (),
) -> Ranking:
    """A Ranking from per-question rows of a questions x depth block, the first n_top[q] of row q in rank order."""
    n_top = np.asarray(n_top, dtype=np.int64)
    keep = np.arange(top_d.shape[1])[None, :] < n_top[:, None]
    indptr = np.concatenate(([0], np.cumsum(n_top))).astype(np.int64)
    return Ranking(
        name,
        indptr,
        top_d[keep].astype(np.int64),
        top_s[keep].astype(np.float64),
        np.asarray(judged_rank, dtype=np.int64),
        np.asarray(n_results, dtype=np.int64),
        None,
        tuple(warnings),
    )


def rank_rows(
    name: str,
    dataset: Dataset,
    rows: Iterable[tuple[int, np.ndarray | sp.csr_matrix]],
    depth: int,
    threshold: float = THRESHOLD,
    truncate: bool = False,
) -> Ranking:
    """A Ranking from score rows given in chunks `(first question, scores chunk)`, dense or sparse.

    Only scores above `threshold` are results (in a sparse chunk, only stored entries can be). With
    `truncate`, the list is cut at `depth` (a judged document beyond it is not retrieved, as in the fusions);
    otherwise judged ranks are exact over all results. Each row is selected in one compiled pass.
    """
    o = PassOutputs.empty(dataset, int(depth))
    sel = Selection(dataset.tie_key, float(threshold), int(depth))
    for start, chunk in rows:
        n = chunk.shape[0]
        if n == 0:
            continue
        if sp.issparse(chunk):
            c = sp.csr_matrix(chunk)
            block = Csr(c.indptr.astype(np.int64), c.indices.astype(np.int64), np.asarray(c.data, dtype=np.float64))
            k.parallel(k.rank_sparse, n, c.nnz + n * 32, block, int(start), sel, o)
        else:
            dense = np.ascontiguousarray(chunk, dtype=np.float64)
            k.parallel(k.rank_dense, n, dense.size, dense, int(start), sel, o)
    # the top list holds results only: the prefix of the raw best above the threshold
    n_list = np.minimum(o.n_top, o.n_res)
    judged_rank, n_res = o.judged_rank, o.n_res
    if truncate:
        judged_rank = np.where(judged_rank <= np.repeat(n_list, np.diff(o.judged.ptr)), judged_rank, 0)
        n_res = n_list
    return from_padded(name, o.top_d, o.top_s, n_list, judged_rank, n_res)


def from_csr(name: str, dataset: Dataset, indptr: np.ndarray, docs: np.ndarray, scores: np.ndarray) -> Ranking:
    """A Ranking from ordered lists laid end to end (`indptr` offsets per question): the whole list is the result."""
    judged = Judged.of(dataset)
    lists = Csr(
        np.asarray(indptr, dtype=np.int64), np.asarray(docs, dtype=np.int64), np.asarray(scores, dtype=np.float64)
    )
    k.parallel(k.list_ranks, dataset.n_queries, lists.doc.size * 4, lists, judged)
    return Ranking(name, lists.ptr, lists.doc, lists.score, judged.rank, np.diff(lists.ptr))


def from_lists(name: str, dataset: Dataset, docs: list[np.ndarray], scores: list[np.ndarray]) -> Ranking:
    """A Ranking from already ordered per-question lists of document indices (the whole list is the result)."""
    lens = np.array([len(x) for x in docs], dtype=np.int64)
    indptr = np.concatenate(([0], np.cumsum(lens))).astype(np.int64)
    flat_d = np.concatenate([np.asarray(x, dtype=np.int64) for x in docs]) if len(docs) else np.zeros(0, dtype=np.int64)
    flat_s = np.concatenate([np.asarray(x, dtype=np.float64) for x in scores]) if len(scores) else np.zeros(0)
    return from_csr(name, dataset, indptr, flat_d, flat_s)
