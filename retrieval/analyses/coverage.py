"""How much of each system's top k the judgements say nothing about, and whether that is much: the rule the Overview
warns by, on any judgements (the Data page's numbers: `report.unjudged_at_k`).

The rule: a system's top k is **much unjudged** when more than one result in five carries no judgement (its
unjudged share above `UNJUDGED_LIMIT` = 0.2, the complement of the Overview's judged@k floor of 0.8). Why one in
five: an unjudged result counts as not relevant, so if they were all relevant a system's precision@k could be
higher by up to its unjudged share, 0.2 at the limit: more than the gap between two systems on most collections,
enough to reorder them. It is a fixed share, the same on every collection and at every k, never fitted to one.

On judgements that name relevant documents only (no grade 0: BEIR's and many others'), judged@k equals precision@k
and cannot tell a hole from a miss; the unjudged share still says how much of the top k nobody looked at, so the
warning is given there too, with what it means there.

Worked example: BM25 lists 50 results in the top 5 of 10 questions, 32 of them unjudged: 64% of its top 5 is
unjudged, above the limit, so it is named; a system with 8 of 50 unjudged (16%) is not.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..corpus.dataset import Dataset
from ..evaluation.report import Unjudged, unjudged_at_k
from ..retrievers.ranking import Ranking

UNJUDGED_LIMIT = 0.2  # above this share of unjudged results in the top k, a system's top k is much unjudged


@dataclass(frozen=True)
class Coverage:
    """Each system's unjudged results in its top k, and whether the judgements name documents not relevant."""

    k: int
    systems: tuple[Unjudged, ...]
    names_non_relevant: bool  # some judgement has a grade of 0 or less

    @property
    def much_unjudged(self) -> tuple[Unjudged, ...]:
        """The systems whose unjudged share of the top k is above UNJUDGED_LIMIT, in the order given."""
        return tuple(u for u in self.systems if u.results and u.share > UNJUDGED_LIMIT)


def coverage(dataset: Dataset, rankings: Mapping[str, Ranking], k: int) -> Coverage:
    """The unjudged share of every system's top k over the questions with a relevant document."""
    return Coverage(
        int(k),
        tuple(unjudged_at_k(dataset, r, k, name) for name, r in rankings.items()),
        bool((dataset.qrels.grade <= 0).any()),
    )


def percent(share: float) -> str:
    """A share as a whole percent, never rounded to 0% or 100% when it is neither: 0.667 -> "67%", 0.999 -> ">99%"."""
    if 0 < share < 0.01:
        return "<1%"
    if 0.99 < share < 1:
        return ">99%"
    return f"{share:.0%}"


def coverage_sentence(c: Coverage) -> str | None:
    """The warning when some system's top k is much unjudged, naming each with its share; None otherwise.
    Names are the caller's to escape.

    >>> from ..evaluation.report import Unjudged
    >>> c = Coverage(5, (Unjudged("BM25", 10, 50, 32), Unjudged("LSA", 10, 50, 8)), False)
    >>> print(coverage_sentence(c))
    64% of BM25's top 5 is unjudged: no judgement names those documents. These judgements name relevant documents only, so each unjudged document counts as not relevant: if some are relevant, the metrics understate the system. The Judge page lists them, to grade; the Data page counts them for every system.
    """
    much = c.much_unjudged
    if not much:
        return None
    listed = [f"{percent(u.share)} of {u.system}'s top {c.k}" for u in much]
    names = listed[0] if len(listed) == 1 else ", ".join(listed[:-1]) + " and " + listed[-1]
    whom = "the system" if len(much) == 1 else "these systems"
    if c.names_non_relevant:
        means = (
            f"An unjudged document counts as not relevant: if some are relevant, the metrics understate {whom} "
            f"(more than {UNJUDGED_LIMIT:.0%} unjudged is enough to reorder two systems)."
        )
    else:
        means = (
            "These judgements name relevant documents only, so each unjudged document counts as not relevant: if "
            f"some are relevant, the metrics understate {whom}."
        )
    return (
        f"{names} {'is' if len(much) == 1 else 'are'} unjudged: no judgement names those documents. {means} "
        "The Judge page lists them, to grade; the Data page counts them for every system."
    )
