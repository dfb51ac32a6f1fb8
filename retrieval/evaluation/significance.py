"""Significance beyond the bootstrap: the paired randomisation (sign-flip permutation) test and Holm's correction.

Paired randomisation test of the mean per-question difference d = a - b. Under the null hypothesis that the two
systems are exchangeable on each question, every difference is as likely to have either sign, so the null
distribution of the mean is that of ``mean(s * d)`` over sign vectors s in {-1, +1}^n. With 2^n small enough
every sign vector is enumerated (exact p-value); otherwise ``resamples`` vectors are drawn with
``numpy.random.default_rng(seed)`` and the p-value counts the observed statistic once, (count + 1) / (resamples + 1).

The two-sided p-value is the convention of ``scipy.stats.permutation_test``: twice the smaller one-sided
p-value, at most 1, with null values within 100 machine epsilons (relative) of the observed mean counted as
equal to it, so that rounding never decides.

Holm's step-down correction (Holm, Scand. J. Statist. 1979) controls the family-wise error rate when m
comparisons are made at once: sort the p-values ascending, multiply the i-th (1-based) by m - i + 1, take the
running maximum so the adjusted values stay in the same order, and cap at 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from ..core.errors import InputError

RESAMPLES = 10_000
SEED = 0
EXACT_LIMIT = 2**16  # enumerate every sign vector up to this many (n <= 16 questions)
_CHUNK = 4_000_000  # sign-vector x question cells evaluated at once
_RTOL = 100 * np.finfo(np.float64).eps  # scipy's tolerance for "as extreme as the observed"


@dataclass(frozen=True)
class PermutationResult:
    """A paired randomisation test: the observed mean difference, its two-sided p-value and how it was computed."""

    mean_diff: float
    p_value: float
    exact: bool
    resamples: int  # sign vectors evaluated: 2^n when exact
    seed: int


def is_exact(n: int, resamples: int = RESAMPLES, exact_limit: int = EXACT_LIMIT) -> bool:
    """True when all 2^n sign vectors are enumerated rather than sampled."""
    return n < 63 and 2**n <= max(resamples, exact_limit)


def sign_vectors(
    n: int, resamples: int = RESAMPLES, seed: int = SEED, exact_limit: int = EXACT_LIMIT
) -> tuple[np.ndarray, bool]:
    """The sign vectors (rows x n, int8, +1/-1) of the null distribution and whether they are all 2^n of them."""
    if n < 1:
        raise InputError("permutation test: no question to compare")
    if resamples < 1:
        raise InputError(f"resamples must be >= 1, got {resamples}")
    if is_exact(n, resamples, exact_limit):
        bits = (np.arange(2**n, dtype=np.int64)[:, None] >> np.arange(n)) & 1
        return (1 - 2 * bits).astype(np.int8), True
    rng = np.random.default_rng(seed)
    return (1 - 2 * rng.integers(0, 2, size=(resamples, n), dtype=np.int8)).astype(np.int8), False


def _null_means(d: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """mean(s * d) for every sign vector s (rows of `signs`), for each row of d: array rows(d) x rows(signs)."""
    rows, n = d.shape
    out = np.empty((rows, signs.shape[0]))
    step = max(1, _CHUNK // max(n * rows, 1))
    for lo in range(0, signs.shape[0], step):
        s = signs[lo : lo + step].astype(np.float64)
        out[:, lo : lo + step] = np.mean(s[None, :, :] * d[:, None, :], axis=-1)
    return out


def permutation_pvalues(
    diffs: np.ndarray, resamples: int = RESAMPLES, seed: int = SEED, exact_limit: int = EXACT_LIMIT
) -> np.ndarray:
    """Two-sided paired randomisation p-values of the mean of each row of `diffs` (rows x questions; 1-D is one row), sharing the sign vectors."""
    d = np.atleast_2d(np.asarray(diffs, dtype=np.float64))
    if d.ndim != 2:
        raise InputError(f"permutation test: expected rows x questions, got shape {d.shape}")
    if not np.isfinite(d).all():
        raise InputError("permutation test: the differences must be finite numbers")
    signs, exact = sign_vectors(d.shape[1], resamples, seed, exact_limit)
    observed = np.mean(d, axis=-1)
    null = _null_means(d, signs)
    gamma = np.abs(_RTOL * observed)[:, None]
    less = np.count_nonzero(null <= observed[:, None] + gamma, axis=1)
    greater = np.count_nonzero(null >= observed[:, None] - gamma, axis=1)
    adjust = 0 if exact else 1
    total = signs.shape[0] + adjust
    p = np.minimum(less + adjust, greater + adjust) / total * 2
    return np.clip(p, 0.0, 1.0)


def paired_permutation(
    a: np.ndarray, b: np.ndarray, resamples: int = RESAMPLES, seed: int = SEED, exact_limit: int = EXACT_LIMIT
) -> PermutationResult:
    """Paired randomisation test of mean(a - b) over the same questions: two-sided, seeded, exact when 2^n is small."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise InputError(f"permutation test: {a.size} and {b.size} questions, they must be the same questions")
    d = a - b
    p = float(permutation_pvalues(d[None, :], resamples, seed, exact_limit)[0])
    exact = is_exact(d.size, resamples, exact_limit)
    return PermutationResult(float(d.mean()), p, exact, 2**d.size if exact else resamples, seed)


def holm(pvalues: np.ndarray | list[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values, in the input order: monotone in the raw p-values and at most 1."""
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1:
        raise InputError(f"Holm: expected a list of p-values, got shape {p.shape}")
    if np.isnan(p).any() or (p < 0).any() or (p > 1).any():
        raise InputError("Holm: p-values must be numbers in [0, 1]")
    m = p.size
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = stepped
    return out


def holm_reject(pvalues: np.ndarray | list[float], alpha: float = 0.05) -> np.ndarray:
    """Which hypotheses Holm's procedure rejects at family-wise level alpha."""
    if not 0 < alpha < 1:
        raise InputError(f"alpha must be in (0, 1), got {alpha}")
    return holm(pvalues) <= alpha


def compare_systems(
    values: dict[str, np.ndarray],
    pairs: list[tuple[str, str]] | None = None,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    alpha: float = 0.05,
) -> list[dict]:
    """Paired randomisation tests for several system pairs (all pairs by default), Holm-adjusted as one family.

    Each row: ``a``, ``b``, ``mean_diff`` (a - b), ``p_value``, ``p_holm``, ``significant`` (p_holm <= alpha), ``exact``.
    """
    names = list(values)
    pairs = list(combinations(names, 2)) if pairs is None else list(pairs)
    for a, b in pairs:
        for s in (a, b):
            if s not in values:
                raise InputError(f"unknown system {s!r}: known are {', '.join(names)}")
    if not pairs:
        return []
    diffs = np.stack(
        [np.asarray(values[a], dtype=np.float64) - np.asarray(values[b], dtype=np.float64) for a, b in pairs]
    )
    p = permutation_pvalues(diffs, resamples, seed)
    adjusted = holm(p)
    exact = is_exact(diffs.shape[1], resamples)
    return [
        {
            "a": a,
            "b": b,
            "mean_diff": float(diffs[i].mean()),
            "p_value": float(p[i]),
            "p_holm": float(adjusted[i]),
            "significant": bool(adjusted[i] <= alpha),
            "exact": exact,
        }
        for i, (a, b) in enumerate(pairs)
    ]
