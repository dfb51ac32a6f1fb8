"""Several raters' grades of the same (question, document) pairs: how far they agree, where they disagree most,
and one grade per pair by a rule the person chooses.

Agreement is Cohen's kappa for each two raters over the pairs both graded, plain (only identical grades agree) and
weighted for graded relevance (a near grade agrees in part: linear or quadratic in the distance between the grades;
`kappa`, checked against scikit-learn's `cohen_kappa_score`), and Krippendorff's alpha over every rater at once,
ordinal (grades are ordered), which allows any rater to leave any pair out (the `krippendorff` package). All are 1
for perfect agreement and 0 for what chance gives. `explain` says in one sentence each what the measures measure,
from their numbers: why a plain kappa below 0 can sit beside an ordinal alpha above it.

>>> grades = [("q1", "d1", "ana", 2), ("q1", "d1", "ben", 2), ("q1", "d2", "ana", 0), ("q1", "d2", "ben", 1),
...           ("q2", "d1", "ana", 1), ("q2", "d1", "ben", 1), ("q2", "d3", "ana", 0), ("q2", "d3", "ben", 0)]
>>> combine(grades, "mean")
{('q1', 'd1'): 2, ('q1', 'd2'): 1, ('q2', 'd1'): 1, ('q2', 'd3'): 0}
>>> a = agreement(grades)
>>> a.raters, a.pairs_graded_twice, round(a.cohen[("ana", "ben")], 4)
(('ana', 'ben'), 4, 0.6364)
>>> round(a.linear[("ana", "ben")], 4), round(a.quadratic[("ana", "ben")], 4)
(0.7143, 0.8)
>>> [(d.query_id, d.doc_id, d.grades) for d in disagreements(grades)]
[('q1', 'd2', {'ana': 0, 'ben': 1})]
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import combinations

import krippendorff
import numpy as np

from ..core.errors import InputError
from ..core.words import agree, plural

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


WEIGHTS = {  # how far apart two grades disagree, by weighting (the kappa's name -> its disagreement weight)
    "plain": "identical grades agree, any two different grades disagree fully",
    "linear": "grades disagree in proportion to how far apart they are (0 against 2 twice 1 against 2)",
    "quadratic": "grades disagree by the square of how far apart they are (0 against 2 four times 1 against 2)",
}


def kappa(x: Iterable[int], y: Iterable[int], weights: str = "plain") -> float | None:
    """Cohen's kappa of two raters' grades of the same items (x[i] and y[i] grade item i), weighted by `weights` (a
    key of WEIGHTS): 1 − Σ w·observed / Σ w·expected over the table of grade against grade, the expected table being
    what the raters' own shares of each grade give by chance, w the disagreement of two grades (0 on the diagonal;
    1, |i − j| or (i − j)² off it, i and j the grades themselves). None below two items, or when chance would make
    no disagreement (both raters gave one and the same grade throughout).

    >>> round(kappa([2, 1, 0, 1], [2, 0, 0, 1]), 4), round(kappa([2, 1, 0, 1], [2, 0, 0, 1], "quadratic"), 4)
    (0.6364, 0.8)
    """
    if weights not in WEIGHTS:
        raise InputError(f"kappa weights {weights!r}: expected one of {', '.join(WEIGHTS)}")
    a, b = np.asarray(list(x), dtype=np.int64), np.asarray(list(y), dtype=np.int64)
    if a.shape != b.shape:
        raise InputError(f"kappa: {a.size} grades against {b.size}: each item needs both raters' grade")
    if a.size < 2:
        return None
    lo = int(min(a.min(), b.min()))
    n = int(max(a.max(), b.max())) - lo + 1
    observed = np.zeros((n, n))
    np.add.at(observed, (a - lo, b - lo), 1.0)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / a.size
    i, j = np.indices((n, n))
    w = {"plain": (i != j).astype(float), "linear": np.abs(i - j).astype(float), "quadratic": (i - j) ** 2.0}[weights]
    chance = float((w * expected).sum())
    return None if chance == 0 else 1.0 - float((w * observed).sum()) / chance


@dataclass(frozen=True)
class PairAgreement:
    """Two raters over the pairs both graded: how many, how many with the same grade, how many chance would give the
    same grade (from each rater's own shares of the grades), how far apart the others are, and the kappas."""

    raters: tuple[str, str]
    shared: int
    same: int
    chance_same: float
    apart: dict[int, int]  # distance between the two grades (1, 2, ...) -> pairs that far apart
    plain: float | None
    linear: float | None
    quadratic: float | None


def _pair(a: str, b: str, x: list[int], y: list[int]) -> PairAgreement:
    n = len(x)
    share = Counter(y)
    chance = sum(c * share.get(g, 0) for g, c in Counter(x).items()) / n if n else 0.0
    apart = Counter(abs(p - q) for p, q in zip(x, y) if p != q)
    return PairAgreement(
        (a, b),
        n,
        sum(p == q for p, q in zip(x, y)),
        chance,
        dict(sorted(apart.items())),
        *(kappa(x, y, w) for w in WEIGHTS),
    )


@dataclass(frozen=True)
class Agreement:
    """How far the raters agree: each two raters' Cohen's kappa over the pairs both graded, plain and weighted (None
    below two such pairs, or when both gave one and the same grade throughout: kappa is undefined), and
    Krippendorff's ordinal alpha over all of them (None when fewer than two pairs were graded twice or every grade
    is the same)."""

    raters: tuple[str, ...]
    pairs_graded_twice: int  # pairs two raters or more graded
    cohen: dict[tuple[str, str], float | None]
    shared: dict[tuple[str, str], int]  # pairs each two raters both graded
    alpha: float | None
    each: dict[tuple[str, str], PairAgreement] = field(default_factory=dict)  # each two raters, in `cohen`'s order

    @property
    def linear(self) -> dict[tuple[str, str], float | None]:
        """Each two raters' kappa with linear weights."""
        return {p: e.linear for p, e in self.each.items()}

    @property
    def quadratic(self) -> dict[tuple[str, str], float | None]:
        """Each two raters' kappa with quadratic weights."""
        return {p: e.quadratic for p, e in self.each.items()}


def _by_pair(grades: Iterable[tuple[str, str, str, int]]) -> dict[tuple[str, str], dict[str, int]]:
    out: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    for q, d, r, g in grades:
        out[(q, d)][r] = int(g)
    return dict(out)


def agreement(grades: Iterable[tuple[str, str, str, int]]) -> Agreement:
    """The raters' agreement over their grades (question, document, rater, grade), one grade per rater and pair."""
    by_pair = _by_pair(grades)
    raters = tuple(sorted({r for rs in by_pair.values() for r in rs}))
    each = {}
    for a, b in combinations(raters, 2):
        both = [(rs[a], rs[b]) for rs in by_pair.values() if a in rs and b in rs]
        each[(a, b)] = _pair(a, b, [p[0] for p in both], [p[1] for p in both])
    twice = [rs for rs in by_pair.values() if len(rs) >= 2]
    alpha = None
    values = {g for rs in twice for g in rs.values()}
    if len(twice) >= 2 and len(values) > 1:
        data = np.full((len(raters), len(twice)), np.nan)
        for j, rs in enumerate(twice):
            for i, r in enumerate(raters):
                if r in rs:
                    data[i, j] = rs[r]
        alpha = float(
            krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal", value_domain=sorted(values))
        )
    return Agreement(
        raters, len(twice), {p: e.plain for p, e in each.items()}, {p: e.shared for p, e in each.items()}, alpha, each
    )


@dataclass(frozen=True)
class Explained:
    """One measure of agreement, its value(s) and one plain sentence saying what it measures, from the numbers."""

    measure: str
    sentence: str


def _side(x: float, of: float, above: str, below: str, level: str) -> str:
    return above if x > of + 1e-9 else below if x < of - 1e-9 else level


def explain(a: Agreement) -> tuple[Explained, ...]:
    """What plain kappa, the weighted kappas and ordinal alpha measure, one sentence each, with the numbers of the
    two raters who graded the most documents in common (the first such two on a tie) and of the whole group: why
    a kappa below 0 can sit beside an alpha above it (grades that differ by one count as near misses in the others).
    Empty with fewer than two raters."""
    if len(a.raters) < 2:
        return ()
    defined = [e for e in a.each.values() if e.plain is not None]
    if not defined:
        pair = "no two raters share two documents with more than one grade between them"
        return (
            Explained(
                "Cohen's kappa",
                f"Cohen's kappa, plain or weighted, compares two raters over the documents "
                f"both graded, and is undefined here: {pair}.",
            ),
            Explained("Krippendorff's alpha", _alpha_sentence(a, None)),
        )
    e = max(defined, key=lambda x: x.shared)  # max keeps the first of the most
    who = f"{e.raters[0]} and {e.raters[1]}"
    chance = _side(e.same, e.chance_same, "more often than", "less often than", "as often as")
    plain = (
        f"Cohen's kappa counts only identical grades, beyond what chance gives: {who} gave the same grade to "
        f"{e.same} of {plural(e.shared, 'document')}, where their own mix of grades would match on "
        f"{e.chance_same:.1f} by chance, so their kappa is {e.plain:.3f} ({chance} chance)."
    )
    differ = e.shared - e.same
    near = e.apart.get(1, 0)
    far = differ - near
    how = (
        f"{near} of their {plural(differ, 'different grade')} {agree(near, 'is', 'are')} one apart and {far} further"
        if differ
        else "their grades never differ"
    )
    weighted = (
        f"Weighted kappa counts a near grade as partly agreeing (linear: by how far apart the grades are; "
        f"quadratic: by the square of it): {e.linear:.3f} and {e.quadratic:.3f} for {who}, "
        f"{_side(e.linear, e.plain, 'above', 'below', 'equal to')} their plain kappa; {how}."
    )
    return (
        Explained("Cohen's kappa", plain),
        Explained("weighted kappa", weighted),
        Explained("Krippendorff's alpha", _alpha_sentence(a, e)),
    )


def _alpha_sentence(a: Agreement, e: PairAgreement | None) -> str:
    if a.alpha is None:
        return (
            f"Krippendorff's ordinal alpha, one figure for every rater at once, is undefined here: "
            f"{plural(a.pairs_graded_twice, 'document')} graded twice or more, and it needs two with more than "
            "one grade among them."
        )
    than = (
        ""
        if e is None
        else (
            f", {_side(a.alpha, e.plain, 'above', 'below', 'equal to')} {e.raters[0]} and {e.raters[1]}'s plain kappa"
        )
    )
    return (
        f"Krippendorff's ordinal alpha reads the grades as ordered too (a near grade is a small disagreement) and "
        f"takes all {plural(len(a.raters), 'rater')} at once over the {plural(a.pairs_graded_twice, 'document')} "
        f"graded twice or more, chance from everyone's grades pooled: {a.alpha:.3f}{than}."
    )


@dataclass(frozen=True)
class Disagreement:
    """A pair the raters graded differently: each rater's grade, and the spread (highest less lowest)."""

    query_id: str
    doc_id: str
    grades: dict[str, int]
    spread: int


def disagreements(grades: Iterable[tuple[str, str, str, int]], limit: int | None = None) -> list[Disagreement]:
    """The pairs graded differently, the largest spread first, then the most raters, then by question and document."""
    out = [
        Disagreement(q, d, dict(sorted(rs.items())), max(rs.values()) - min(rs.values()))
        for (q, d), rs in _by_pair(grades).items()
        if len(set(rs.values())) > 1
    ]
    out.sort(key=lambda x: (-x.spread, -len(x.grades), x.query_id, x.doc_id))
    return out[:limit] if limit is not None else out
