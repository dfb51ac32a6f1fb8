"""k-fold cross-validation of choosing the best setting: the in-sample best against the held-out estimate."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.errors import InputError
from .sweep import _DECIMALS, FOLDS, SEED
from .ties import best_setting


@dataclass(frozen=True, eq=False)
class CrossValidation:
    """k-fold cross-validation of choosing the best setting: in-sample best mean against the held-out estimate."""

    folds: int
    seed: int
    in_sample: float  # the best setting's mean over all questions (chosen on them)
    in_sample_best: int
    cross_validated: float  # mean over all questions, each measured with the setting chosen without its fold
    chosen: tuple[int, ...]  # per fold: the setting chosen on the other folds
    train_means: tuple[float, ...]  # per fold: the chosen setting's mean on the other folds
    test_means: tuple[float, ...]  # per fold: its mean on the held-out fold
    fold_sizes: tuple[int, ...]
    assignment: np.ndarray  # fold of each question

    @property
    def optimism(self) -> float:
        """How much of the in-sample score is over-fitting: in-sample minus cross-validated."""
        return self.in_sample - self.cross_validated


def fold_assignment(n: int, folds: int = FOLDS, seed: int = SEED) -> np.ndarray:
    """Fold of each of n questions: a seeded permutation cut into `folds` near-equal parts (numpy.array_split)."""
    if isinstance(folds, bool) or int(folds) != folds or folds < 2:
        raise InputError(f"folds must be a whole number >= 2, got {folds}")
    if folds > n:
        raise InputError(f"folds: {folds} folds need at least {folds} questions, there are {n}")
    perm = np.random.default_rng(seed).permutation(n)
    out = np.empty(n, dtype=np.int64)
    for f, part in enumerate(np.array_split(perm, int(folds))):
        out[part] = f
    return out


def cross_validate(values: np.ndarray, folds: int = FOLDS, seed: int = SEED) -> CrossValidation:
    """For each fold, pick the best setting on the other folds and measure it on the held-out one (all folds at once)."""
    v = np.asarray(values, dtype=np.float64)
    best = best_setting(v)
    n = v.shape[1]
    fold = fold_assignment(n, folds, seed)
    onehot = np.zeros((n, int(folds)))
    onehot[np.arange(n), fold] = 1.0
    sizes = onehot.sum(axis=0)
    fold_sums = v @ onehot  # settings x folds
    train = (v.sum(axis=1, keepdims=True) - fold_sums) / (n - sizes)
    chosen = np.argmax(np.round(train, _DECIMALS), axis=0)
    cols = np.arange(int(folds))
    test = np.array([v[chosen[f], fold == f].mean() for f in cols])
    held_out = v[chosen[fold], np.arange(n)]
    return CrossValidation(
        int(folds),
        int(seed),
        float(v[best].mean()),
        best,
        float(held_out.mean()),
        tuple(int(c) for c in chosen),
        tuple(float(x) for x in train[chosen, cols]),
        tuple(float(x) for x in test),
        tuple(int(s) for s in sizes),
        fold,
    )
