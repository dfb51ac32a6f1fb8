"""The built-in retrievers registered under the `base.Retriever` interface, TREC runs and dense vectors as
systems, and the fusions' names.

Adding a retriever: a module with its scoring and a class like `Lsa` below, then `register(TheClass())`.
No page changes: the systems appear in every view, the fusions can take them as members.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.params import Params
from ..corpus.dataset import Dataset, TrecRun
from ..corpus.embeddings import Aligned
from . import bm25, lsa
from .base import Context, Member, Retriever, outside, rows_at
from .dense import Dense
from .ranking import BestLists, from_run


class Bm25:
    """BM25 with Lucene's idf (bm25.py): k1, b, and how repeated question words count (query_words, k3). A
    document without a question term scores 0."""

    name = "BM25"
    params = ("k1", "b", "query_words", "k3")

    def run(self, context: Context, params: Params, depth: int) -> bm25.Bm25Run:
        probe = context.probe_for(self.name, params)
        probe_d, probe_n, probe_at = probe if probe is not None else (None, None, None)
        return bm25.run(
            context.bm25,
            context.plan_for(params),
            context.dataset,
            params.k1,
            params.b,
            depth,
            probe=probe_d,
            probe_n=probe_n,
            hint=context.latest_run(self.name),
            probe_at=probe_at,
            judged_at=context.judged_positions(),
        )

    def member(self, run: bm25.Bm25Run) -> Member:
        def at_rows(top_d: np.ndarray, n_top: np.ndarray) -> np.ndarray:
            if run.probe is top_d:  # scored in the run's own pass, up to each list's length (0 beyond)
                return run.probe_scores
            return run.at_rows(top_d, n_top)

        return Member(self.name, run, outside(run, 0.0), run.hi > 0, at_rows, run.row)


class Lsa:
    """LSA (lsa.py): TF-IDF and a d-dimensional truncated SVD, cosine. Its lists rank every document."""

    name = "LSA"
    params = ("dims",)

    def run(self, context: Context, params: Params, depth: int) -> lsa.LsaRun:
        model, qvec = context.lsa_fit(params.dims)
        return lsa.run(context.dataset, model, qvec, depth)

    def member(self, run: lsa.LsaRun) -> Member:
        return Member(self.name, run, outside(run, -np.inf), run.hi > 0, run.at_rows, run.row)


REGISTRY: dict[str, Retriever] = {}


def register(retriever: Retriever) -> Retriever:
    """Make a retriever a built-in system (its name must be new)."""
    if retriever.name in REGISTRY:
        raise ValueError(f"a retriever named {retriever.name!r} is already registered")
    REGISTRY[retriever.name] = retriever
    return retriever


register(Bm25())
register(Lsa())


# ------------------------------------------------------------------------------------------- TREC runs


@dataclass(frozen=True, eq=False)
class RunLists(BestLists):
    """A TREC run as best lists: its in-corpus documents in its order; a document it does not list takes the
    question's lowest listed score (so it adds nothing to a weighted fusion after min-max)."""

    keys: np.ndarray  # question * n_docs + document of every listed in-corpus pair, ascending
    vals: np.ndarray  # their scores
    n_docs: int

    def at(self, qs: np.ndarray, ds: np.ndarray) -> np.ndarray:
        """Scores of (question, document) pairs; the question's lowest listed score for a document not listed."""
        qs, ds = np.asarray(qs, dtype=np.int64), np.asarray(ds, dtype=np.int64)
        want = qs * self.n_docs + ds
        pos = np.minimum(np.searchsorted(self.keys, want), max(self.keys.size - 1, 0))
        listed = (self.keys[pos] == want) if self.keys.size else np.zeros(want.size, dtype=bool)
        return np.where(listed, self.vals[pos] if self.keys.size else 0.0, self.lo[qs])

    def row(self, q: int) -> np.ndarray:
        """One question's scores over every document (the lowest listed where not listed)."""
        out = np.full(self.n_docs, self.lo[q])
        n = int(self.n_top[q])
        out[self.top_d[q, :n]] = self.top_s[q, :n]
        return out


def run_lists(dataset: Dataset, trec: TrecRun, name: str) -> RunLists:
    """A parsed TREC run aligned with the dataset, as best lists (its documents outside the corpus are left out
    of the lists, not of the ranking: they keep their rank there, as trec_eval does)."""
    ranking = from_run(trec, dataset, name)
    nq, n_docs = dataset.n_queries, dataset.n_docs
    q_of = np.repeat(np.arange(nq), np.diff(ranking.indptr))
    inside = ranking.docs >= 0
    counts = np.bincount(q_of[inside], minlength=nq).astype(np.int64)
    width = int(counts.max()) if counts.size else 0
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    slot = np.arange(int(inside.sum())) - np.repeat(starts, counts)
    top_d = np.zeros((nq, width), dtype=np.int64)
    top_s = np.zeros((nq, width))
    top_d[q_of[inside], slot] = ranking.docs[inside]
    top_s[q_of[inside], slot] = ranking.scores[inside]
    rows = np.flatnonzero(counts > 0)
    lo, hi = np.zeros(nq), np.zeros(nq)
    if rows.size:
        lo[rows] = top_s[rows, counts[rows] - 1]  # each list is in score order: its last is its lowest
        hi[rows] = top_s[rows, 0]
    keys = q_of[inside] * n_docs + ranking.docs[inside]
    order = np.argsort(keys, kind="stable")
    return RunLists(
        top_d, top_s, counts, counts.copy(), lo, hi, ranking, keys[order], ranking.scores[inside][order], n_docs
    )


class Run:
    """An external system's TREC run as a system: it reads no parameter."""

    params: tuple[str, ...] = ()

    def __init__(self, trec: TrecRun):  # its name is checked against the others' by Engine.rankings
        self.trec = trec
        self.name = trec.name

    def run(self, context: Context, params: Params, depth: int) -> RunLists:  # its lists are as long as the file's
        return run_lists(context.dataset, self.trec, self.name)

    def member(self, run: RunLists) -> Member:
        return Member(
            self.name,
            run,
            outside(run, run.lo),
            run.n_res > 0,
            lambda top_d, n_top: rows_at(run.at, top_d, n_top),
            run.row,
        )


def system_of(source) -> Retriever:
    """The system an uploaded source stands for: a TREC run's `Run`, aligned embeddings' dense retriever."""
    if isinstance(source, TrecRun):
        return Run(source)
    if isinstance(source, Aligned):
        return Dense(source)
    raise TypeError(f"no system for a {type(source).__name__}: a TREC run or aligned embeddings")


Source = TrecRun | Aligned  # an uploaded system: a TREC run, or vectors aligned with the dataset (the dense retriever)
Sources = tuple[Source, ...]  # the uploaded systems ranked beside the registered retrievers, in this order; named
# by their `name`, made into retrievers by `system_of`, keyed by their content `fingerprint`

FUSIONS = ("weighted", "RRF")
SYSTEMS = (*REGISTRY, *FUSIONS)  # the built-in systems in display order
