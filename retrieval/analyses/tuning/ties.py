"""The best setting and the settings that can't be told apart from it: the bootstrap's tie region and the
permutation p-values against the best with Holm's correction."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...core.errors import InputError
from ...evaluation import significance, stats
from .sweep import _BOOT_CELLS, _DECIMALS, _NEAR_ZERO, SEED

# ------------------------------------------------------------------------------------------- analysis


def best_setting(values: np.ndarray) -> int:
    """Index of the setting with the highest mean (rows x questions); exact ties go to the first."""
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 2 or v.shape[0] == 0 or v.shape[1] == 0:
        raise InputError(f"expected settings x questions values, got shape {v.shape}")
    return int(np.argmax(np.round(v.mean(axis=1), _DECIMALS)))


@dataclass(frozen=True, eq=False)
class TieRegion:
    """The settings that can't be told apart from the best: the paired bootstrap interval of (setting - best) holds zero."""

    best: int
    intervals: np.ndarray  # settings x 2: interval ends of mean(setting - best)
    tied: np.ndarray  # bool per setting (the best included)
    resamples: int
    seed: int
    confidence: float

    @property
    def size(self) -> int:
        """Number of settings tied with the best (the best included)."""
        return int(self.tied.sum())


def tie_region(
    values: np.ndarray,
    best: int | None = None,
    resamples: int = stats.RESAMPLES,
    seed: int = stats.SEED,
    confidence: float = stats.CONFIDENCE,
) -> TieRegion:
    """Paired bootstrap of every setting against the best, all settings at once (identical rows bootstrapped once).

    The intervals come from one matrix product over the shared resamples; every row with an end within 1e-9
    of zero, where the verdict could hang on rounding, is recomputed exactly by stats.intervals. Elsewhere
    the ends equal stats.intervals' to within about 1e-13, far from changing which side of zero they fall.
    """
    v = np.asarray(values, dtype=np.float64)
    best = best_setting(v) if best is None else int(best)
    if resamples < 2 or not 0 < confidence < 1:
        stats.intervals(v[:1], resamples, seed, confidence)  # raises the library's error
    diffs = v - v[best]
    uniq, inverse = np.unique(diffs, axis=0, return_inverse=True)
    ends = stats.intervals(uniq, resamples, seed, confidence, exact=False)
    near = np.flatnonzero((np.abs(ends) <= _NEAR_ZERO).any(axis=1))
    step = max(1, _BOOT_CELLS // (resamples * v.shape[1]))
    for lo in range(0, near.size, step):
        rows = near[lo : lo + step]
        ends[rows] = stats.intervals(uniq[rows], resamples, seed, confidence, exact=True)
    ends = ends[np.asarray(inverse).ravel()]
    tied = (ends[:, 0] <= 0) & (ends[:, 1] >= 0)
    tied[best] = True
    return TieRegion(best, ends, tied, resamples, seed, confidence)


def sign_vectors_for(n_settings: int, level: float = 0.05) -> int:
    """How many random sign vectors to draw for the comparisons of a grid's settings with its best: enough that
    Holm's smallest possible adjusted p over the family (at most n_settings comparisons, each p at least
    2 / (R + 1)) is at most half the level, so the corrected test can reject at all: R + 1 >= 4 m / level (80 m
    at 0.05); at least significance.RESAMPLES."""
    return max(significance.RESAMPLES, math.ceil(4 * n_settings / level) - 1)


def versus_best(
    values: np.ndarray, best: int | None = None, resamples: int = significance.RESAMPLES, seed: int = SEED
) -> tuple[np.ndarray, np.ndarray]:
    """Paired randomisation p-value of every setting against the best, and the Holm-adjusted p-values.

    The comparisons with the best form one family of (settings - 1) tests; the best itself gets 1 and 1.
    """
    v = np.asarray(values, dtype=np.float64)
    best = best_setting(v) if best is None else int(best)
    uniq, inverse = np.unique(v - v[best], axis=0, return_inverse=True)
    p = significance.permutation_pvalues(uniq, resamples, seed)[np.asarray(inverse).ravel()]
    others = np.arange(v.shape[0]) != best
    adjusted = np.ones(v.shape[0])
    if others.any():
        adjusted[others] = significance.holm(p[others])
    p[best] = 1.0
    return p, adjusted
