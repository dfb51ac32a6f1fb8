"""The retriever interface, the built-in retrievers registered under it, and TREC runs as systems.

A retriever is a name, the parameters it reads (names in `params.SPECS`) and `run(engine, params, depth)`:
every question's best lists with the exact rank of every judged document (a `ranking.BestLists`), computed
from what the engine holds for the dataset. It also says how the weighted fusion reads its scores of other
documents (`member`). The engine caches each run on (the retriever's name, the values of the parameters it
reads, depth), so a parameter a retriever does not read never recomputes it.

Adding a retriever: a module with its scoring and a class like `Lsa` below, then `register(TheClass())`.
No page changes: the systems appear in every view, the fusions can take them as members.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from . import bm25, lsa
from .dataset import Dataset, TrecRun
from .fusion import Member
from .params import Params
from .ranking import BestLists, from_run

if TYPE_CHECKING:  # the engine imports this module
    from .engine import Engine


class Retriever(Protocol):
    """What the engine needs of a retriever."""

    name: str
    params: tuple[str, ...]  # the Params fields its ranking depends on

    def run(self, engine: "Engine", params: Params, depth: int) -> BestLists:
        """Every question's best lists (at least `depth` deep) and the exact rank of every judged document."""

    def member(self, run: BestLists, engine: "Engine") -> Member:
        """The run as a member of the weighted fusion."""


def _rows_at(at, top_d: np.ndarray, n_top: np.ndarray) -> np.ndarray:
    """Scores of each question's first n_top[q] documents of top_d[q] through `at(questions, documents)`, 0 beyond."""
    keep = np.arange(top_d.shape[1])[None, :] < np.asarray(n_top)[:, None]
    out = np.zeros(top_d.shape)
    out[keep] = at(np.nonzero(keep)[0], top_d[keep])
    return out


def _outside(run: BestLists, absent) -> np.ndarray:
    """The highest score a document outside a run's list can have: the list's last when it is full, else `absent`."""
    width = run.top_d.shape[1]
    if width == 0:
        return np.broadcast_to(np.asarray(absent, dtype=np.float64), run.n_top.shape).copy()
    last = run.top_s[:, width - 1]
    return np.where(run.n_top == width, last, absent).astype(np.float64)


class Bm25:
    """BM25 with Lucene's idf (bm25.py): k1, b. A document without a question term scores 0."""

    name = "BM25"
    params = ("k1", "b")

    def run(self, engine: "Engine", params: Params, depth: int) -> bm25.Bm25Run:
        probe = engine.probe_for(self.name, params)
        probe_d, probe_n, probe_at = probe if probe is not None else (None, None, None)
        return bm25.run(engine.bm25, engine.plan, engine.dataset, params.k1, params.b, depth, probe=probe_d,
                        probe_n=probe_n, hint=engine.latest_run(self.name), probe_at=probe_at,
                        judged_at=engine.judged_positions())

    def member(self, run: bm25.Bm25Run, engine: "Engine") -> Member:
        def at_rows(top_d: np.ndarray, n_top: np.ndarray) -> np.ndarray:
            if run.probe is top_d:  # scored in the run's own pass, up to each list's length (0 beyond)
                return run.probe_scores
            return run.at_rows(top_d, n_top)

        return Member(self.name, run, _outside(run, 0.0), run.hi > 0, at_rows, run.row)


class Lsa:
    """LSA (lsa.py): TF-IDF and a d-dimensional truncated SVD, cosine. Its lists rank every document."""

    name = "LSA"
    params = ("dims",)

    def run(self, engine: "Engine", params: Params, depth: int) -> lsa.LsaRun:
        model, qvec = engine.lsa_fit(params.dims)
        return lsa.run(engine.dataset, model, qvec, depth)

    def member(self, run: lsa.LsaRun, engine: "Engine") -> Member:
        return Member(self.name, run, _outside(run, -np.inf), run.hi > 0, run.at_rows, run.row)


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
    return RunLists(top_d, top_s, counts, counts.copy(), lo, hi, ranking, keys[order], ranking.scores[inside][order], n_docs)


class Run:
    """An external system's TREC run as a system: it reads no parameter."""

    params: tuple[str, ...] = ()

    def __init__(self, trec: TrecRun):  # its name is checked against the others' by Engine.rankings
        self.trec = trec
        self.name = trec.name

    def run(self, engine: "Engine", params: Params, depth: int) -> RunLists:  # its lists are as long as the file's
        return run_lists(engine.dataset, self.trec, self.name)

    def member(self, run: RunLists, engine: "Engine") -> Member:
        return Member(self.name, run, _outside(run, run.lo), run.n_res > 0,
                      lambda top_d, n_top: _rows_at(run.at, top_d, n_top), run.row)


def system_of(source) -> Retriever:
    """The system an uploaded source stands for: a TREC run's `Run`, or what the source makes (`source.system()`,
    e.g. embeddings' dense retriever)."""
    if isinstance(source, TrecRun):
        return Run(source)
    return source.system()


FUSIONS = ("weighted", "RRF")
SYSTEMS = (*REGISTRY, *FUSIONS)  # the built-in systems in display order
