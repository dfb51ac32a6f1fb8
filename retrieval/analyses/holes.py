"""The judging pool: the holes in a dataset's judgements, i.e. the documents of the corpus that some system ranks
in a question's top k and that no judgement of the question grades (TREC's pooling, read the other way: what the
pool of these systems would add). Numbers and findings only; the Judge page renders them (ui/judge.py) and
``python -m retrieval holes`` prints them as text or JSON.

A run's document outside the corpus has no text to read and is left out. An unjudged document counts as not
relevant in every metric, so a system whose top k holds many of them may be understated (judged@k says how much of
its top k carries a judgement).
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass, field

import numpy as np

from ..core.words import agree, plural
from ..corpus.dataset import Dataset
from ..retrievers.ranking import Ranking


@dataclass(frozen=True)
class Hole:
    """One unjudged document of a question: which systems rank it in their top k, and where."""

    doc: int
    ranked_by: tuple[tuple[str, int], ...]  # (system, rank from 1), best rank first, then by name

    @property
    def best(self) -> int:
        """Its best rank among the systems."""
        return self.ranked_by[0][1]


def ranked_by_text(hole: Hole) -> str:
    """'BM25 #1 · dense #3' (names as given: escape before Markdown)."""
    return " · ".join(f"{s} #{r}" for s, r in hole.ranked_by)


@dataclass(frozen=True)
class SystemHoles:
    """One system's share of the pool: the unjudged documents in its top k summed over the questions, and how many
    of them no new grade has filled."""

    system: str
    k: int
    unjudged: int
    still_unjudged: int

    @property
    def sentence(self) -> str:
        """'BM25: 12 unjudged documents in its top 5, 3 of them graded since.'"""
        graded = self.unjudged - self.still_unjudged
        since = f", {graded:,} of them graded since" if graded else ""
        return f"{self.system}: {plural(self.unjudged, 'unjudged document')} in its top {self.k}{since}."


@dataclass(frozen=True, eq=False)
class Pool:
    """Every (question, document, system, rank) with the document in the system's top k and not judged for the
    question: parallel arrays, one entry per system that ranks the pair (a pair ranked by two systems is two
    entries), in system order then question then rank."""

    k: int
    n_queries: int
    systems: tuple[str, ...]
    q: np.ndarray  # question index
    doc: np.ndarray  # document index
    system: np.ndarray  # index into `systems`
    rank: np.ndarray  # from 1
    _pairs: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        n = int(self.doc.max()) + 1 if self.doc.size else 1
        object.__setattr__(self, "_pairs", np.unique(self.q * n + self.doc) if self.q.size else np.zeros(0, np.int64))

    def entries(self) -> list[tuple[int, int, str, int]]:
        """The pool as (question, document, system name, rank) tuples."""
        names = self.systems
        return [
            (int(q), int(d), names[s], int(r))
            for q, d, s, r in zip(self.q.tolist(), self.doc.tolist(), self.system.tolist(), self.rank.tolist())
        ]

    @property
    def pairs(self) -> int:
        """Distinct (question, document) pairs in the pool: the documents there are to grade."""
        return int(self._pairs.size)

    @property
    def questions(self) -> int:
        """Questions with at least one unjudged document in some top k."""
        return int(np.unique(self.q).size)

    def counts(self) -> dict[int, int]:
        """Per question with a hole: its distinct unjudged documents."""
        n = int(self.doc.max()) + 1 if self.doc.size else 1
        q = np.unique(self.q * n + self.doc) // n
        found, count = np.unique(q, return_counts=True)
        return dict(zip(found.tolist(), count.tolist()))

    def question_order(self) -> list[int]:
        """The questions with a hole, the most holes first (distinct documents), ties in question order."""
        counts = self.counts()
        return sorted(counts, key=lambda q: (-counts[q], q))

    def per_system(self, graded: Set[tuple[int, int]] = frozenset()) -> tuple[SystemHoles, ...]:
        """Per system: the unjudged documents in its top k (summed over the questions), and how many of them are
        still unjudged once the new grades (`graded`: (question, document) indices) count."""
        left = np.array([(q, d) not in graded for q, d in zip(self.q.tolist(), self.doc.tolist())], dtype=bool)
        size = np.bincount(self.system, minlength=len(self.systems))
        still = np.bincount(self.system, weights=left.astype(float), minlength=len(self.systems))
        return tuple(SystemHoles(s, self.k, int(size[i]), int(still[i])) for i, s in enumerate(self.systems))

    def holes_of(self, ds: Dataset, q: int) -> list[Hole]:
        """A question's unjudged documents: those ranked by the most systems first, then the best rank, then id."""
        at = np.flatnonzero(self.q == q)
        by_doc: dict[int, list[tuple[str, int]]] = {}
        for i in at.tolist():
            by_doc.setdefault(int(self.doc[i]), []).append((self.systems[int(self.system[i])], int(self.rank[i])))
        out = [Hole(d, tuple(sorted(pairs, key=lambda p: (p[1], p[0])))) for d, pairs in by_doc.items()]
        return sorted(out, key=lambda h: (-len(h.ranked_by), h.best, ds.doc_ids[h.doc]))

    @property
    def sentence(self) -> str:
        """What the pool holds, in one plain sentence: '7 unjudged documents in some system's top 5, over 4 of 14
        questions.' or that every top k is judged."""
        if not self.pairs:
            return (
                f"Every document in every system's top {self.k} is judged: nothing to grade at this cutoff (a larger "
                "k may show some)."
            )
        return (
            f"{plural(self.pairs, 'unjudged document')} in some system's top {self.k}, over {self.questions:,} of "
            f"{plural(self.n_queries, 'question')}."
        )


def judging_pool(ds: Dataset, ranks: Mapping[str, Ranking], k: int) -> Pool:
    """The pool of `ranks` (system -> ranking) at cutoff `k` against `ds`'s judgements (every judgement, graded 0
    too: a document judged not relevant is no hole). A document outside the corpus is left out."""
    if int(k) < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    qr, n = ds.qrels, max(ds.n_docs, 1)
    known = qr.doc >= 0
    judged = np.unique(qr.query[known].astype(np.int64) * n + qr.doc[known])
    parts: list[tuple[np.ndarray, ...]] = []
    for i, r in enumerate(ranks.values()):
        q, position, doc = r.top_entries(np.arange(ds.n_queries), int(k))
        keep = (doc >= 0) & ~np.isin(q.astype(np.int64) * n + doc, judged)
        parts.append((q[keep], doc[keep], np.full(int(keep.sum()), i, dtype=np.int64), position[keep] + 1))
    cols = [
        np.concatenate([p[j] for p in parts]).astype(np.int64) if parts else np.zeros(0, np.int64) for j in range(4)
    ]
    return Pool(int(k), ds.n_queries, tuple(ranks), *cols)


def questions_text(pool: Pool, ds: Dataset, limit: int | None = None) -> list[str]:
    """The pool question by question, the most holes first, one plain line each (ids as given: the command line
    makes them safe for a terminal): 'q03 (2 unjudged): d7 (BM25 #2 · RRF #4), d9 (LSA #5)'."""
    order = pool.question_order()
    counts = pool.counts()
    lines = []
    for q in order[:limit]:
        holes = pool.holes_of(ds, q)
        listed = ", ".join(f"{ds.doc_ids[h.doc]} ({ranked_by_text(h)})" for h in holes)
        lines.append(f"{ds.query_ids[q]} ({counts[q]:,} unjudged): {listed}")
    return lines


def to_json(pool: Pool, ds: Dataset, judged: Mapping[str, float] | None = None) -> dict:
    """The pool as JSON: its size, each system's share (with its judged@k mean when given), and every question's
    unjudged documents, the most first, each with the systems that rank it and where."""
    counts = pool.counts()
    return {
        "dataset": {"name": ds.name, "documents": ds.n_docs, "queries": ds.n_queries},
        "k": pool.k,
        "unjudged": pool.pairs,
        "questions": pool.questions,
        "sentence": pool.sentence,
        "systems": [
            {
                "system": s.system,
                "unjudged": s.unjudged,
                **({f"judged@{pool.k}": judged[s.system]} if judged is not None and s.system in judged else {}),
            }
            for s in pool.per_system()
        ],
        "holes": [
            {
                "query": ds.query_ids[q],
                "unjudged": counts[q],
                "documents": [
                    {"doc": ds.doc_ids[h.doc], "ranked_by": [{"system": s, "rank": r} for s, r in h.ranked_by]}
                    for h in pool.holes_of(ds, q)
                ],
            }
            for q in pool.question_order()
        ],
    }


def most_unjudged_sentence(shares: tuple[SystemHoles, ...]) -> str:
    """From each system's share of the pool: the system (or systems, on a tie) with the most unjudged documents
    still in its top k, whose means the holes may understate the most (an unjudged document counts as not
    relevant). Empty when no system has one left."""
    most = max((s.still_unjudged for s in shares), default=0)
    if most <= 0:
        return ""
    names = [s.system for s in shares if s.still_unjudged == most]
    who = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return (
        f"{who} {agree(len(names), 'has', 'have')} the most unjudged documents in {agree(len(names), 'its', 'their')} "
        f"top {shares[0].k} ({most:,}, summed over the questions): an unjudged document counts as not relevant, "
        f"so {agree(len(names), 'its', 'their')} means may be understated the most."
    )
