"""Whether two systems' difference on a metric is noise, read from the paired bootstrap of their per-question
differences (evaluation/stats.py): the numbers and one plain sentence each, for the Tour's steps 3 and 7 (ui/tour.py)
and ``python -m retrieval fusion``.

- `Tie`: two systems' means side by side; "tie" only when the means are equal or the 95% interval of a - b holds
  zero, otherwise which is better, beyond noise.
- `Noise`: the best fusion against its best member: a gain (or difference) that can't be told apart from noise, or
  one that can, and which system is then better.

As in analyses/fusion_gains.py, `text` takes `name` (applied to every system name: the app escapes it) and
`stress` (the phrase the app sets in bold); the defaults give the plain `.sentence`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..core.numbers import MINUS, interval_text, signed
from ..core.words import plural
from ..evaluation import stats
from ..evaluation.experiment import Evaluation
from ..evaluation.stats import Interval

Words = Callable[[str], str]


def _same(text: str) -> str:
    return text


@dataclass(frozen=True)
class Tie:
    """Two systems' means on a metric over n questions and the paired bootstrap interval of a - b."""

    a: str
    b: str
    mean_a: float
    mean_b: float
    interval: Interval
    label: str
    n: int

    @property
    def tied(self) -> bool:
        """Equal means, or an interval that holds zero."""
        return self.mean_a == self.mean_b or self.interval.holds_zero

    def text(self, name: Words = _same, stress: Words = _same) -> str:
        """'BM25 is ahead of LSA by 0.012 on mean nDCG@5 (...), but the 95% bootstrap interval ... holds zero: on
        these 14 questions they tie, and ranking them on their means would be a mistake.'"""
        sa, sb, label, n = name(self.a), name(self.b), self.label, self.n
        span = interval_text(self.interval.low, self.interval.high)
        if self.mean_a == self.mean_b:
            return (
                f"{sa} and {sb} have the same mean {label}, {self.mean_a:.3f}, on the {plural(n, 'question')}: a tie."
            )
        (lead, hi), (behind, lo) = sorted(((sa, self.mean_a), (sb, self.mean_b)), key=lambda x: -x[1])
        if self.interval.holds_zero:
            return (
                f"{lead} is ahead of {behind} by {hi - lo:.3f} on mean {label} ({hi:.3f} against {lo:.3f}), but the "
                f"95% bootstrap interval of {sa} {MINUS} {sb}, {span}, holds zero: on these {plural(n, 'question')} "
                f"they {stress('tie')}, and ranking them on their means would be a mistake."
            )
        return (
            f"{lead} is better than {behind} on mean {label} ({hi:.3f} against {lo:.3f}), and the 95% bootstrap "
            f"interval of {sa} {MINUS} {sb}, {span}, leaves zero out: on this data they do {stress('not')} tie."
        )

    @property
    def sentence(self) -> str:
        """The plain sentence."""
        return self.text()


@dataclass(frozen=True)
class Noise:
    """A fusion against a member: the paired bootstrap interval of fusion - member over n questions."""

    fusion: str
    member: str
    interval: Interval
    label: str
    n: int

    @property
    def beyond_noise(self) -> bool:
        """The 95% interval leaves zero out."""
        return not self.interval.holds_zero

    def text(self, name: Words = _same) -> str:
        """The plain reading: noise or not, and what that means."""
        f, m, iv = name(self.fusion), name(self.member), self.interval
        if iv.holds_zero:
            what = "gain" if iv.mean > 0 else "difference"
            return (
                f"With {plural(self.n, 'question')}, the {what} of {f} over {m} ({signed(iv.mean)}) can't be told "
                "apart from noise: the bootstrap reshuffles the questions, the independent unit, and zero stays "
                "inside the 95% interval. Don't read it as an established difference."
            )
        better = f if iv.mean > 0 else m
        return (
            f"With {plural(self.n, 'question')}, the difference ({signed(iv.mean)}) is more than noise: the 95% "
            f"interval leaves zero out, so {better} is better here on {self.label}."
        )

    @property
    def sentence(self) -> str:
        """The plain sentence."""
        return self.text()


def best_of(ev: Evaluation, systems: Sequence[str], metric: str) -> str:
    """The system with the highest mean (the first listed on a tie)."""
    return max(systems, key=lambda s: (ev.mean(s, metric), -list(systems).index(s)))


def best_against_best(
    ev: Evaluation, fusions: Sequence[str], members: Sequence[str], metric: str, label: str
) -> tuple[Noise, np.ndarray]:
    """The better fusion against the better of its members on `metric` (written `label`): the finding and the
    per-question differences it reads (the Tour draws their resampled means)."""
    fusion, member = best_of(ev, fusions, metric), best_of(ev, members, metric)
    diff = ev.values[fusion][metric] - ev.values[member][metric]
    return Noise(fusion, member, stats.bootstrap(diff), label, int(diff.size)), diff
