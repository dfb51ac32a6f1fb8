"""Several raters' grades of the same (question, document) pairs: how far they agree, where they disagree most,
and one grade per pair by a rule the person chooses.

Agreement is Cohen's kappa for each two raters over the pairs both graded (scikit-learn's `cohen_kappa_score`), and
Krippendorff's alpha over every rater at once, ordinal (grades are ordered), which allows any rater to leave any
pair out (the `krippendorff` package). Both are 1 for perfect agreement and 0 for what chance gives.

>>> grades = [("q1", "d1", "ana", 2), ("q1", "d1", "ben", 2), ("q1", "d2", "ana", 0), ("q1", "d2", "ben", 1),
...           ("q2", "d1", "ana", 1), ("q2", "d1", "ben", 1), ("q2", "d3", "ana", 0), ("q2", "d3", "ben", 0)]
>>> combine(grades, "mean")
{('q1', 'd1'): 2, ('q1', 'd2'): 1, ('q2', 'd1'): 1, ('q2', 'd3'): 0}
>>> a = agreement(grades)
>>> a.raters, a.pairs_graded_twice, round(a.cohen[("ana", "ben")], 4)
(('ana', 'ben'), 4, 0.6364)
>>> [(d.query_id, d.doc_id, d.grades) for d in disagreements(grades)]
[('q1', 'd2', {'ana': 0, 'ben': 1})]
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import combinations

import krippendorff
import numpy as np
from sklearn.metrics import cohen_kappa_score

from ..core.errors import InputError

# how the raters' grades of a pair make the one grade the metrics use
RULES = {
    "original": "the original judgements only, the raters' grades left out",
    "mean": "the mean, rounded half up",
    "median": "the median, rounded half up",
    "majority": "the grade most raters gave, the lowest on a tie",
}


def _round_half_up(x: float) -> int:
    return math.floor(x + 0.5)


def combine(grades: Iterable[tuple[str, str, str, int]], rule: str) -> dict[tuple[str, str], int]:
    """One grade per (question, document) from the raters' grades (question, document, rater, grade), by `rule`
    (a key of RULES); none for "original". Each rater counts once per pair (their grade as given)."""
    if rule not in RULES:
        raise InputError(f"grades rule {rule!r}: expected one of {', '.join(RULES)}")
    if rule == "original":
        return {}
    by_pair: dict[tuple[str, str], list[int]] = defaultdict(list)
    for q, d, _, g in grades:
        by_pair[(q, d)].append(int(g))
    out = {}
    for pair, gs in sorted(by_pair.items()):
        if rule == "mean":
            out[pair] = _round_half_up(sum(gs) / len(gs))
        elif rule == "median":
            out[pair] = _round_half_up(float(np.median(gs)))
        else:
            counts = Counter(gs)
            top = max(counts.values())
            out[pair] = min(g for g, c in counts.items() if c == top)
    return out


@dataclass(frozen=True)
class Agreement:
    """How far the raters agree: each two raters' Cohen's kappa over the pairs both graded (None below two such
    pairs, or when both gave one and the same grade throughout: kappa is undefined), and Krippendorff's ordinal alpha
    over all of them (None when fewer than two pairs were graded twice or every grade is the same)."""

    raters: tuple[str, ...]
    pairs_graded_twice: int  # pairs two raters or more graded
    cohen: dict[tuple[str, str], float | None]
    shared: dict[tuple[str, str], int]  # pairs each two raters both graded
    alpha: float | None


def _by_pair(grades: Iterable[tuple[str, str, str, int]]) -> dict[tuple[str, str], dict[str, int]]:
    out: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    for q, d, r, g in grades:
        out[(q, d)][r] = int(g)
    return dict(out)


def agreement(grades: Iterable[tuple[str, str, str, int]]) -> Agreement:
    """The raters' agreement over their grades (question, document, rater, grade), one grade per rater and pair."""
    by_pair = _by_pair(grades)
    raters = tuple(sorted({r for rs in by_pair.values() for r in rs}))
    cohen, shared = {}, {}
    for a, b in combinations(raters, 2):
        both = [(rs[a], rs[b]) for rs in by_pair.values() if a in rs and b in rs]
        shared[(a, b)] = len(both)
        x, y = [p[0] for p in both], [p[1] for p in both]
        defined = len(both) >= 2 and len(set(x) | set(y)) > 1  # one grade throughout, by both: chance is certain
        cohen[(a, b)] = float(cohen_kappa_score(x, y)) if defined else None
    twice = [rs for rs in by_pair.values() if len(rs) >= 2]
    alpha = None
    values = {g for rs in twice for g in rs.values()}
    if len(twice) >= 2 and len(values) > 1:
        data = np.full((len(raters), len(twice)), np.nan)
        for j, rs in enumerate(twice):
            for i, r in enumerate(raters):
                if r in rs:
                    data[i, j] = rs[r]
        alpha = float(krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal",
                                         value_domain=sorted(values)))
    return Agreement(raters, len(twice), cohen, shared, alpha)


@dataclass(frozen=True)
class Disagreement:
    """A pair the raters graded differently: each rater's grade, and the spread (highest less lowest)."""

    query_id: str
    doc_id: str
    grades: dict[str, int]
    spread: int


def disagreements(grades: Iterable[tuple[str, str, str, int]], limit: int | None = None) -> list[Disagreement]:
    """The pairs graded differently, the largest spread first, then the most raters, then by question and document."""
    out = [Disagreement(q, d, dict(sorted(rs.items())), max(rs.values()) - min(rs.values()))
           for (q, d), rs in _by_pair(grades).items() if len(set(rs.values())) > 1]
    out.sort(key=lambda x: (-x.spread, -len(x.grades), x.query_id, x.doc_id))
    return out[:limit] if limit is not None else out
