"""The text analysis sweep's k1 x b grid beside the k1 x b sweep's: one story from the two.

The analysis sweep (`tuning.sweep_analysis`) scores every text analysis with k1 and b on a coarse subset of the
k1 x b sweep's grid (`tuning.even`: every third k1, every other b, and the base's values), since nine analyses on
the whole grid would be nine k1 x b sweeps. A page showing both must not let them contradict each other: the coarse
sweep's best k1 may be 3, the end of its range, where the finer sweep finds 2.2 inside it, and its cross-validated
gain includes choosing the analysis, which the k1 x b sweep does not. `compare` puts the two side by side at the
analysis both score (the base's) and says, from their numbers:

- which values the coarse sweep tries, and how many the finer one does: its best k1 and b are the nearest of few;
- at the shared analysis, each sweep's best setting and mean (the same or not);
- the cross-validated gains over the current setting: k1 and b alone (the k1 x b sweep) and with the analysis chosen
  too (the analysis sweep), each named for what it includes;
- the best of the analysis sweep at an open end of its grid (k1 = 3; b and the lower ends are bounds) only as far
  as it is known: both sweeps there (the optimum may lie beyond), the finer one inside (the coarse grid's gap), or
  at another analysis, where the finer sweep has not looked (how to look).

Worked example (Cranfield, nDCG@5, the article's setting): the analysis sweep tries k1 at 0, 0.6, 1.2, 1.8, 2.4, 3
and b at 0, 0.2, 0.4, 0.6, 0.75, 0.8, 1 (6 x 7 settings, where the k1 x b sweep tries 16 x 11); at none/article
each sweep names its best with its mean; tuning k1 and b alone gains a few thousandths cross-validated, choosing
the stemmer too a few hundredths.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..core.errors import InputError
from ..core.params import SPECS
from .tuning import FOLDS, SEED, Sweep, analysis_rows, best_setting, cross_validate
from .tuning.wording import about, setting_text


@dataclass(frozen=True)
class GridsCompared:
    """The analysis sweep's coarse k1 x b grid against the k1 x b sweep's, at the analysis both score, with the one
    plain paragraph (`text`) that says what each can tell."""

    analysis: str  # the text analysis both sweeps score (their base's): 'none/article'
    k1s: tuple[float, ...]  # the values the analysis sweep tries
    bs: tuple[float, ...]
    fine_shape: tuple[int, int]  # the k1 x b sweep's k1 and b values
    coarse_best: dict  # the analysis sweep's best k1 and b at `analysis`, and its mean
    coarse_mean: float
    fine_best: dict  # the k1 x b sweep's
    fine_mean: float
    fine_gain: float  # k1 and b tuned alone at `analysis`, cross-validated, over the current setting's mean
    gain: float  # the analysis sweep's: the analysis, k1 and b tuned together, cross-validated, over the same
    best: dict  # the analysis sweep's best setting: analysis, k1, b
    at_end: tuple[str, ...]  # parameters of `best` at an open end of the analysis sweep's grid
    fine_at_end: tuple[str, ...]  # parameters of `fine_best` at an open end of the k1 x b sweep's grid
    text: str

    @property
    def same_best(self) -> bool:
        """Whether both sweeps find the same k1 and b at the shared analysis."""
        return self.coarse_best == self.fine_best


def open_ends(setting: dict, axes: dict[str, np.ndarray]) -> tuple[str, ...]:
    """The parameters whose value in `setting` is an end of its axis where the parameter could go further (its
    valid range, params.SPECS, goes on: k1 beyond 3; not b at 1 or 0, nor k1 at 0)."""
    out = []
    for name, axis in axes.items():
        lo, hi = SPECS[name].valid
        v = float(setting[name])
        if (v == float(axis[-1]) and v < hi) or (v == float(axis[0]) and v > lo):
            out.append(name)
    return tuple(out)


def values_text(axis) -> str:
    """A grid's values for reading: '0, 0.6, 1.2, 1.8, 2.4, 3'."""
    return ", ".join(f"{float(x):g}" for x in axis)


def _between(name: str, value: float, axis: np.ndarray) -> str:
    """The gap next to an end value of a coarse axis: 'between 2.4 and 3'."""
    a = [float(x) for x in axis]
    i = a.index(float(value))
    other = a[i - 1] if i == len(a) - 1 and i > 0 else a[min(i + 1, len(a) - 1)]
    lo, hi = sorted((other, float(value)))
    return f"between {lo:g} and {hi:g}"


def compare_text(c: GridsCompared, coarse_axes: dict[str, np.ndarray]) -> str:
    """The paragraph: the coarse grid's limits, the two bests at the shared analysis, the two gains, and an end of
    the grid only as far as it is known."""
    n_coarse = len(c.k1s) * len(c.bs)
    parts = [
        (
            f"This sweep tries k1 at {values_text(c.k1s)} and b at {values_text(c.bs)} for each text analysis "
            f"({len(c.k1s)} × {len(c.bs)} = {n_coarse} settings, where the k1 × b sweep tries {c.fine_shape[0]} × "
            f"{c.fine_shape[1]}), so an analysis's best k1 and b here are the best of these few values, not the "
            "optimum itself."
        )
    ]
    if c.same_best:
        parts.append(f"At {c.analysis}, both sweeps find {setting_text(c.fine_best)} ({c.fine_mean:.4f}).")
    else:
        parts.append(
            f"At {c.analysis}, this sweep finds {setting_text(c.coarse_best)} ({c.coarse_mean:.4f}); the finer "
            f"k1 × b sweep finds {setting_text(c.fine_best)} ({c.fine_mean:.4f})."
        )
    parts.append(
        f"Cross-validated against the current setting, tuning k1 and b alone at {c.analysis} scores "
        f"{about(c.fine_gain)} (the k1 × b sweep); choosing the text analysis as well, {about(c.gain)} (this sweep)."
    )
    ends = list(c.at_end)
    if ends:
        said = setting_text({n: c.best[n] for n in ends})
        where = " and ".join(f"{n} {_between(n, c.best[n], coarse_axes[n])}" for n in ends)
        if c.best["analysis"] != c.analysis:
            parts.append(
                f"Its best, at {c.best['analysis']}, has {said} at the end of the range searched: the optimum "
                f"may lie beyond it, or {where}, where this grid has no value; move the sidebar to "
                f"{c.best['analysis']} and sweep k1 × b to place it."
            )
        elif all(n in c.fine_at_end and c.fine_best[n] == c.best[n] for n in ends):
            parts.append(f"Both sweeps put {said} at the end of the range searched: the optimum may lie beyond it.")
        else:
            parts.append(
                f"Its best has {said} at the end of the range searched, but the finer sweep puts "
                f"{setting_text({n: c.fine_best[n] for n in ends})} inside it: this grid has no value {where}."
            )
    return " ".join(parts)


def compare(
    coarse: Sweep, fine: Sweep, current_values: np.ndarray, folds: int = FOLDS, seed: int = SEED
) -> GridsCompared:
    """The analysis sweep (`coarse`, `tuning.sweep_analysis`) beside the k1 x b sweep (`fine`, `tuning.sweep_bm25`)
    of the same metric, questions and base (its analysis is the one they share), against the current setting's
    per-question values; both cross-validated with `folds` and `seed`."""
    if coarse.names != ("analysis", "k1", "b") or fine.names != ("k1", "b"):
        raise InputError("compare takes an analysis sweep and a k1 x b sweep")
    if coarse.qids != fine.qids or coarse.metric != fine.metric:
        raise InputError("the two sweeps must score the same questions on the same metric")
    analysis = "/".join(fine.base.analysis)
    if "/".join(coarse.base.analysis) != analysis or analysis not in coarse.choices:
        raise InputError(f"the analysis sweep must score the k1 x b sweep's analysis, {analysis}")
    now = float(np.mean(current_values))
    row = analysis_rows(coarse, current_values, folds, seed)[coarse.choices.index(analysis)]
    fine_at = best_setting(fine.values)
    fine_best = fine.setting(fine_at)
    best = coarse.setting(best_setting(coarse.values))
    coarse_axes = {"k1": coarse.axes[1], "b": coarse.axes[2]}
    fine_axes = {"k1": fine.axes[0], "b": fine.axes[1]}
    c = GridsCompared(
        analysis,
        tuple(float(x) for x in coarse.axes[1]),
        tuple(float(x) for x in coarse.axes[2]),
        (int(fine.axes[0].size), int(fine.axes[1].size)),
        dict(row.best),
        row.best_mean,
        fine_best,
        float(fine.means[fine_at]),
        cross_validate(fine.values, folds, seed).cross_validated - now,
        cross_validate(coarse.values, folds, seed).cross_validated - now,
        best,
        open_ends(best, coarse_axes),
        open_ends(fine_best, fine_axes),
        "",
    )
    return replace(c, text=compare_text(c, coarse_axes))
