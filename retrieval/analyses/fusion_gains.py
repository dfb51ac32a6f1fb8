"""What a fusion gains over its members, question by question, and where two systems part: the numbers and their
plain sentences, for the Tour's steps 4 and 6 (ui/tour.py renders them) and ``python -m retrieval fusion``.

- `split_k`: the smallest cutoff at which one of two systems finds a question in its top k and the other does not;
  `Split`: which questions each finds alone at a cutoff, which neither, and where they part.
- `Standing`: where a fusion's mean stands against its members' (above both, level with the better, between, below).
- `Picks`: on the questions where the members' first relevant ranks differ, how often the fusion takes the better
  member's rank, beats both, or falls behind the better one.
- `Gains`: the questions a fusion scores above every member on, and those of them it wins with the later relevant
  documents (its first relevant one no higher than the best member's).

Each sentence is written once, here. It takes two optional callables so that the app can render it without a second
wording: `name` (applied to every system name and question id: the app escapes them for Markdown) and `stress` (the
phrase the app sets in bold); both default to the identity, which gives the plain sentence of `.sentence`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..core.words import plural
from ..evaluation.experiment import Evaluation

K_MAX = 20  # the smallest cutoff at which two systems part is looked for up to here (the app's curves: k = 1..20)
SHOWN_IDS = 6  # question ids a sentence names before "and N more"
NEVER = np.iinfo(np.int64).max  # a first relevant rank of 0 (not found) sorts after every rank

Words = Callable[[str], str]


def _same(text: str) -> str:
    return text


def id_list(ids: Sequence[str], limit: int = SHOWN_IDS, name: Words = _same) -> str:
    """'q01, q12', the first `limit` and how many more."""
    shown = ", ".join(name(i) for i in ids[:limit])
    return shown + (f" and {len(ids) - limit:,} more" if len(ids) > limit else "")


def found(first_rank: np.ndarray, k: int) -> np.ndarray:
    """Whether each question's first relevant document is in the top k."""
    fr = np.asarray(first_rank)
    return (fr > 0) & (fr <= k)


def split_k(first_a: np.ndarray, first_b: np.ndarray, k_max: int = K_MAX) -> int | None:
    """The smallest cutoff 1..k_max at which one system finds a question in its top k and the other does not."""
    for k in range(1, k_max + 1):
        if (found(first_a, k) != found(first_b, k)).any():
            return k
    return None


def _never(ranks) -> np.ndarray:
    r = np.asarray(ranks)
    return np.where(r > 0, r, NEVER)


# ------------------------------------------------------------------------------------------ two systems part


@dataclass(frozen=True)
class Split:
    """Where two systems fail at cutoff k: the questions only one finds in its top k, those neither finds, and the
    smallest cutoff at which they part (None: not up to k_max)."""

    a: str
    b: str
    k: int
    only_a: tuple[str, ...]
    only_b: tuple[str, ...]
    neither: tuple[str, ...]
    parts_at: int | None
    k_max: int = K_MAX

    def text(self, name: Words = _same, stress: Words = _same, aside: str = "") -> str:
        """The sentence; `aside` is what the caller adds after "at k = N one finds a question the other misses"."""
        sa, sb, k = name(self.a), name(self.b), self.k
        fail = (
            f"Neither finds {id_list(self.neither, name=name)} in its top {k}."
            if self.neither
            else f"Every question is found by at least one of them in the top {k}."
        )
        if self.only_a or self.only_b:
            la = f" ({id_list(self.only_a, name=name)})" if self.only_a else ""
            lb = f" ({id_list(self.only_b, name=name)})" if self.only_b else ""
            return (
                f"At k = {k}, {sa} alone finds {plural(len(self.only_a), 'question')} in its top {k}{la} and {sb} "
                f"alone {len(self.only_b):,}{lb}: they fail on different questions, which is what a fusion can use. "
                f"{fail}"
            )
        if self.parts_at is not None:
            return (
                f"At k = {k} they fail on the same questions: no question is in one's top {k} and not in the "
                f"other's. {fail} They part lower down: at {stress(f'k = {self.parts_at}')} one finds a question the "
                f"other misses{aside}."
            )
        return (
            f"{sa} and {sb} find the same questions at every cutoff from 1 to {self.k_max}: a fusion of the two has "
            f"little to gain here. {fail}"
        )

    @property
    def sentence(self) -> str:
        """The plain sentence."""
        return self.text()


def split(
    a: str, b: str, first_a: np.ndarray, first_b: np.ndarray, qids: Sequence[str], k: int, k_max: int = K_MAX
) -> Split:
    """Two systems' first relevant ranks (0 = not found) over the questions `qids`, read at cutoff k."""
    in_a, in_b = found(first_a, k), found(first_b, k)
    ids = np.array(list(qids), dtype=object)
    return Split(
        a,
        b,
        int(k),
        tuple(ids[in_a & ~in_b]),
        tuple(ids[in_b & ~in_a]),
        tuple(ids[~in_a & ~in_b]),
        split_k(first_a, first_b, k_max),
        k_max,
    )


# ------------------------------------------------------------------------------------------ a fusion against its members


@dataclass(frozen=True)
class Standing:
    """A fusion's mean on a metric against its members' means."""

    fusion: str
    value: float
    members: tuple[tuple[str, float], ...]  # (member, its mean), in the fusion's order
    label: str  # the metric as written ("nDCG@5")

    @property
    def where(self) -> str:
        """'above both its members', 'level with its better member', 'between its members', 'below every member'."""
        values = [x for _, x in self.members]
        best, worst, value = max(values), min(values), self.value
        if len(values) == 1:
            return (
                "above its only member"
                if value > best
                else "level with its only member"
                if value == best
                else "below its only member"
            )
        if value > best:
            return "above every member" if len(values) > 2 else "above both its members"
        if value == best:
            return "level with its better member"
        if value >= worst:
            return "between its members"
        return "below every member" if len(values) > 2 else "below both its members"

    def text(self, name: Words = _same, stress: Words = _same) -> str:
        """'RRF scores 0.737 on mean nDCG@5, above both its members (BM25 0.691 and LSA 0.679).'"""
        names = " and ".join(f"{name(m)} {x:.3f}" for m, x in self.members)
        return f"{stress(name(self.fusion))} scores {self.value:.3f} on mean {self.label}, {self.where} ({names})."

    @property
    def sentence(self) -> str:
        """The plain sentence."""
        return self.text()


@dataclass(frozen=True)
class Picks:
    """On the questions where the members' first relevant ranks differ: how often the fusion's first relevant rank
    equals the better member's, is higher than both, or is lower than the better one."""

    fusion: str
    differ: int
    matches: int
    beats: int
    behind: int

    def text(self, name: Words = _same) -> str:
        """The sentence."""
        f = name(self.fusion)
        if not self.differ:
            return (
                "Its members put the first relevant document at the same rank on every question, so "
                f"{f} has nothing to pick between."
            )
        return (
            f"On the {plural(self.differ, 'question')} where the members disagree, {f} matches the better member on "
            f"{self.matches:,}, beats both on {self.beats:,} and falls behind the better on {self.behind:,}."
        )

    @property
    def sentence(self) -> str:
        """The plain sentence."""
        return self.text()


def picks(fusion: str, fusion_ranks: np.ndarray, member_ranks: Sequence[np.ndarray]) -> Picks:
    """`Picks` from the first relevant ranks (0 = not found) of the fusion and of each member."""
    m = np.stack([_never(r) for r in member_ranks])
    differ = (m != m[0]).any(axis=0)
    f = _never(fusion_ranks)[differ]
    best = m.min(axis=0)[differ]
    return Picks(fusion, int(differ.sum()), int((f == best).sum()), int((f < best).sum()), int((f > best).sum()))


@dataclass(frozen=True)
class Gains:
    """Where a fusion scores above every member on one metric, question by question (positions in the evaluated)."""

    fusion: str
    above: tuple[int, ...]  # the fusion's value is above every member's
    later: tuple[int, ...]  # of those, its first relevant document is no higher than the best member's first


def fusion_gains(
    fusion: str,
    values: np.ndarray,
    member_values: Sequence[np.ndarray],
    first: np.ndarray,
    member_first: Sequence[np.ndarray],
) -> Gains:
    """The questions a fusion scores above every member on (its per-question `values` against theirs), and those of
    them where its first relevant rank is no better than the best member's: there the gain comes from the later
    relevant documents, ranked higher by the fusion than by either member."""
    top = np.max(np.stack([np.asarray(m, dtype=float) for m in member_values]), axis=0)
    above = np.flatnonzero(np.asarray(values, dtype=float) > top + 1e-12)
    best = np.min(np.stack([_never(m) for m in member_first]), axis=0)
    own = _never(first)
    return Gains(fusion, tuple(int(i) for i in above), tuple(int(i) for i in above if own[i] >= best[i]))


def gains_text(
    g: Gains,
    qids: Sequence[str],
    label: str,
    n_members: int,
    name: Words = _same,
    stress: Words = _same,
    aside: str = "",
) -> str:
    """Where a fusion's gain on the mean comes from, from `fusion_gains`: the questions it scores above every member
    on, and how many of them it wins with later relevant documents, not the first (`aside`: what the caller adds
    after "higher than either member does")."""
    f = name(g.fusion)
    every = "both its members" if n_members == 2 else "every member"
    if not g.above:
        return (
            f"On no question does {f} score above {every} on {label}: its mean moves only by taking the better "
            "member's value where they differ."
        )
    later, first = [qids[i] for i in g.later], [qids[i] for i in g.above if i not in g.later]
    said = (
        f"On {label} itself, {f} scores above {every} on {plural(len(g.above), 'question')} "
        f"({id_list([qids[i] for i in g.above], name=name)})"
    )
    if not later:
        return said + ": on each it puts the first relevant document higher than any member does."
    return (
        said
        + f". On {len(later):,} of them ({id_list(later, name=name)}) its first relevant document is no higher than "
        f"the better member's: {stress('the gain comes from the later relevant documents')}: past the first, it "
        f"ranks more of them, or better-graded ones, higher than either member does{aside}."
        + (
            f" On {len(first):,} ({id_list(first, name=name)}) it puts the first relevant document higher."
            if first
            else ""
        )
    )


@dataclass(frozen=True)
class FusionFinding:
    """A fusion against its members on one metric: where its mean stands, how it picks between their first relevant
    ranks, and the questions it gains on; one plain sentence of the three."""

    standing: Standing
    picks: Picks
    gains: Gains
    qids: tuple[str, ...]

    @property
    def sentence(self) -> str:
        """The three sentences, plain."""
        n = len(self.standing.members)
        return f"{self.standing.sentence} {self.picks.sentence} {gains_text(self.gains, self.qids, self.standing.label, n)}"

    def to_json(self) -> dict:
        """The numbers and the sentence, question ids for positions."""
        return {
            "fusion": self.standing.fusion,
            "mean": self.standing.value,
            "members": dict(self.standing.members),
            "standing": self.standing.where,
            "members_differ": self.picks.differ,
            "matches_better": self.picks.matches,
            "beats_both": self.picks.beats,
            "behind_better": self.picks.behind,
            "above_every_member": [self.qids[i] for i in self.gains.above],
            "gain_from_later_documents": [self.qids[i] for i in self.gains.later],
            "sentence": self.sentence,
        }


def explain_fusion(
    ev: Evaluation, fusion: str, metric: str, label: str, members: Sequence[str], qids: Sequence[str]
) -> FusionFinding:
    """A fusion of `ev` against its `members` on `metric` (written `label`), over the evaluated questions `qids`."""
    mine, firsts = ev.values[fusion][metric], [ev.first_rank[m] for m in members]
    return FusionFinding(
        Standing(fusion, ev.mean(fusion, metric), tuple((m, ev.mean(m, metric)) for m in members), label),
        picks(fusion, ev.first_rank[fusion], firsts),
        fusion_gains(fusion, mine, [ev.values[m][metric] for m in members], ev.first_rank[fusion], firsts),
        tuple(qids),
    )
