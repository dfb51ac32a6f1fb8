"""The paired bootstrap over questions: is a difference between two systems more than noise?

The article's procedure, kept bit for bit: d = per-question differences, ``rng = numpy.random.default_rng(seed)``,
``resamples`` times ``rng.choice(d, size=len(d)).mean()``, sorted; the 95% interval is the 126th and 4875th of
5000 values. The resampled indices depend only on the number of questions and the seed, so they are drawn
once (cached) and applied to any number of metrics and systems at once.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache, wraps

import numpy as np

from ..core.errors import InputError

RESAMPLES = 5000
SEED = 0
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Interval:
    """A bootstrap result: the observed mean and the percentile interval of the resampled means."""

    mean: float
    low: float
    high: float
    resamples: int
    seed: int
    confidence: float

    @property
    def holds_zero(self) -> bool:
        """True when the interval contains zero: the difference can't be told apart from noise."""
        return self.low <= 0 <= self.high


def _check(n: int, resamples: int, confidence: float) -> None:
    """Reject what cannot be bootstrapped, naming the parameter."""
    if n < 1:
        raise InputError("bootstrap: no question to resample")
    if resamples < 2:
        raise InputError(f"resamples must be >= 2, got {resamples}")
    if not 0 < confidence < 1:
        raise InputError(f"confidence must be in (0, 1), got {confidence}")


_DRAWS_LOCK = threading.RLock()


def _one_maker(cached):
    """A cached function of the draws made by one thread at a time: a page asking for draws that `prepare` is making
    in the background waits for them instead of making them again beside it (both then slower). Its cache_info and
    cache_clear stay reachable."""

    @wraps(cached)
    def call(*args):
        with _DRAWS_LOCK:
            return cached(*args)

    call.cache_info, call.cache_clear = cached.cache_info, cached.cache_clear
    return call


@_one_maker
@lru_cache(maxsize=16)
def indices(n: int, resamples: int = RESAMPLES, seed: int = SEED) -> np.ndarray:
    """The resampled question indices, resamples x n, drawn exactly as `resamples` calls of `rng.choice(n, size=n)`."""
    rng = np.random.default_rng(seed)
    idx = np.empty((resamples, n), dtype=np.intp)
    for i in range(resamples):
        idx[i] = rng.choice(n, size=n)
    idx.setflags(write=False)
    return idx


def percentile_positions(resamples: int, confidence: float) -> tuple[int, int]:
    """Indices of the interval's ends in the sorted resampled means (125 and 4874 for 5000 at 95%)."""
    lo = int(np.floor(resamples * (1 - confidence) / 2 + 1e-9))
    return lo, resamples - 1 - lo


def resampled_means(values: np.ndarray, resamples: int = RESAMPLES, seed: int = SEED) -> np.ndarray:
    """Means of every resample for each row of `values` (..., n): all resamples at once."""
    v = np.asarray(values, dtype=np.float64)
    idx = indices(v.shape[-1], resamples, seed)
    return np.ascontiguousarray(v[..., idx]).mean(
        axis=-1
    )  # contiguous rows: the article's summation order, bit for bit


def bootstrap(
    values: np.ndarray, resamples: int = RESAMPLES, seed: int = SEED, confidence: float = CONFIDENCE
) -> Interval:
    """Percentile bootstrap interval of the mean of `values` (one per question)."""
    v = np.asarray(values, dtype=np.float64)
    _check(v.size, resamples, confidence)
    means = np.sort(resampled_means(v, resamples, seed))
    lo, hi = percentile_positions(resamples, confidence)
    return Interval(float(v.mean()), float(means[lo]), float(means[hi]), resamples, seed, confidence)


def paired_bootstrap(
    a: np.ndarray, b: np.ndarray, resamples: int = RESAMPLES, seed: int = SEED, confidence: float = CONFIDENCE
) -> Interval:
    """Bootstrap interval of the mean per-question difference a - b (the questions are the resampled unit)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise InputError(f"paired bootstrap: {a.size} and {b.size} questions, they must be the same questions")
    return bootstrap(a - b, resamples, seed, confidence)


EXACT_UP_TO = 50  # questions: up to here `intervals` gathers and averages exactly as the article does (its 14)


COUNTS_STEP = 1_000_000  # counts turned into float64 at a time (8 MB: reused heap, where 32 MB was a fresh mapping
# each time, its page faults 20-30 ms of a 1,000-question interval in the app)


@_one_maker
@lru_cache(maxsize=4)
def counts(n: int, resamples: int = RESAMPLES, seed: int = SEED) -> np.ndarray:
    """How often each question is drawn in each resample of `indices`, resamples x n, in the smallest unsigned
    integer type that holds the largest count (uint8 in practice: a question drawn 256 times in n draws is
    vanishingly rare): 5 MB at 1,000 questions and 5,000 resamples. Kept, as it depends on nothing else, so an
    interval costs a matrix product per rerun instead of 5 million counts (a slider step at 1,000 questions:
    16 intervals took 38-39 ms, now 8-9 ms, the same numbers to the bit: medians of 7 in three alternated runs)."""
    idx = indices(n, resamples, seed)
    out = np.empty((resamples, n), dtype=np.min_scalar_type(n))  # a count is at most n
    step = max(1, COUNTS_STEP // n)
    for lo in range(0, resamples, step):
        part = idx[lo : lo + step]
        out[lo : lo + step] = np.bincount(
            (part + n * np.arange(part.shape[0])[:, None]).ravel(), minlength=part.size
        ).reshape(part.shape)
    small = out.astype(np.min_scalar_type(int(out.max()) if out.size else 0), copy=False)
    small.setflags(write=False)
    return small


COUNTS_F64_MAX_BYTES = 64 * 2**20  # the counts kept as float64 too (questions x resamples) up to this size: 40 MB at
# 1,000 questions and 5,000 resamples, one such matrix at a time (`counts_f64`); above it each product converts a block


@_one_maker
@lru_cache(maxsize=1)
def counts_f64(n: int, resamples: int = RESAMPLES, seed: int = SEED) -> np.ndarray:
    """`counts` as float64, questions x resamples (what the product reads as is: converting the uint8 counts
    took half of each interval's 16 ms at 1,000 questions)."""
    c = np.ascontiguousarray(counts(n, resamples, seed).T, dtype=np.float64)
    c.setflags(write=False)
    return c


_BLAS_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _blas():
    """The process's thread pools as threadpoolctl finds them (looked up once: it scans the loaded libraries)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


@contextmanager
def _one_blas_thread():
    """BLAS on the calling thread alone, one caller at a time (threadpoolctl; the limit is process-wide, so the lock
    keeps two callers from restoring each other's). The resample product is small (16 x 1,000 by 1,000 x 5,000):
    on two threads it took 16-40 ms with another process busy on a core (a browser beside the app), on one 9-16 ms."""
    with _BLAS_LOCK, _blas().limit(limits=1, user_api="blas"):
        yield


def _exact_by_default(n: int) -> bool:
    """Whether `intervals` of n questions gathers and averages each resample as the article does (EXACT_UP_TO)."""
    return n <= EXACT_UP_TO


def counts_f64_fit(n: int, resamples: int) -> bool:
    """Whether the counts of n questions are kept as float64 (`counts_f64`: at most COUNTS_F64_MAX_BYTES)."""
    return n * resamples * 8 <= COUNTS_F64_MAX_BYTES


def means_by_counts(v: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """Every resample's mean for each row as one matrix product with the resamples' counts per question (`counts`).

    The same resamples as `resampled_means` (the same `indices`), summed in another order: equal to within a few
    ulps, and about a hundred times faster at a thousand questions.
    """
    n = v.shape[-1]
    with _one_blas_thread():
        if counts_f64_fit(n, resamples):
            return v @ counts_f64(n, resamples, seed) / n
        c = counts(n, resamples, seed)
        means = np.empty((v.shape[0], resamples))
        step = max(1, COUNTS_STEP // n)
        for lo in range(0, resamples, step):
            means[:, lo : lo + step] = v @ c[lo : lo + step].T.astype(np.float64) / n
        return means


def prepare(n: int, resamples: int = RESAMPLES, seed: int = SEED) -> None:
    """Make the draws `intervals` reads for rows of n questions (`indices`, then the counts it multiplies by), so
    its first call reads them: 0.3 s at 1,000 questions, which a page's first intervals after an upload waited for
    (sampled in the Overview's first run). Nothing for no question."""
    if n < 1:
        return
    if _exact_by_default(n):
        indices(n, resamples, seed)
    elif counts_f64_fit(n, resamples):
        counts_f64(n, resamples, seed)
    else:
        counts(n, resamples, seed)


def intervals(
    values: np.ndarray,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    confidence: float = CONFIDENCE,
    exact: bool | None = None,
) -> np.ndarray:
    """Interval ends of the mean for each row of `values` (rows x n) at once: an array rows x 2.

    `exact` (default: up to EXACT_UP_TO questions) averages each resample as the article does, bit for bit;
    otherwise the means come from one matrix product of resample counts (the same resamples, to a few ulps).
    """
    v = np.atleast_2d(np.asarray(values, dtype=np.float64))
    _check(v.shape[-1], resamples, confidence)
    if exact is None:
        exact = _exact_by_default(v.shape[-1])
    means = resampled_means(v, resamples, seed) if exact else means_by_counts(v, resamples, seed)
    lo, hi = percentile_positions(resamples, confidence)
    means = np.partition(means, (lo, hi), axis=-1)  # the two order statistics a sort would put there, in linear time
    out = np.stack([means[..., lo], means[..., hi]], axis=-1)
    return out if np.ndim(values) > 1 else out[0]
