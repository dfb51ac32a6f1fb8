"""The paired bootstrap: the article's literal loop, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from retrieval.core.errors import InputError
from retrieval.evaluation import stats


def article_interval(d: np.ndarray) -> tuple[float, float, float]:
    """expected.md, verbatim: default_rng(0), 5000 x rng.choice(d, size=len(d)).mean(), sorted, [125] and [4874]."""
    rng = np.random.default_rng(0)
    means = np.sort([rng.choice(d, size=len(d)).mean() for _ in range(5000)])
    return d.mean(), means[125], means[4874]


def random_pairs(seed: int, n: int):
    rng = np.random.default_rng(seed)
    a = rng.random(n)
    b = np.where(rng.random(n) < 0.3, 0.0, rng.random(n))
    return a, b


@pytest.mark.parametrize("seed, n", [(1, 14), (2, 3), (3, 50), (4, 1), (5, 225), (6, 9)])
def test_paired_bootstrap_is_the_article_loop_bit_for_bit(seed, n):
    a, b = random_pairs(seed, n)
    iv = stats.paired_bootstrap(a, b)
    mean, low, high = article_interval(a - b)
    assert (iv.mean, iv.low, iv.high) == (mean, low, high)
    assert (iv.resamples, iv.seed, iv.confidence) == (5000, 0, 0.95)


def test_bootstrap_on_values_with_ties_and_zeros_bit_for_bit():
    d = np.array([0.0, 0.0, 0.5, -0.5, 1.0, 0.0, 1 / 3, -1 / 3, 0.0, 0.25, 0.0, 0.0, -1.0, 0.0])
    iv = stats.bootstrap(d)
    assert (iv.mean, iv.low, iv.high) == article_interval(d)


def test_percentile_positions():
    assert stats.percentile_positions(5000, 0.95) == (125, 4874)  # the 126th and the 4875th
    assert stats.percentile_positions(1000, 0.90) == (1000 * 5 // 100, 1000 - 1 - 1000 * 5 // 100)
    assert stats.percentile_positions(10000, 0.99) == (50, 9949)
    lo, hi = stats.percentile_positions(2000, 0.95)
    assert (lo, hi) == (50, 1949) and lo + hi == 2000 - 1


def test_other_seed_and_resamples_follow_the_same_procedure():
    a, b = random_pairs(7, 20)
    d = a - b
    rng = np.random.default_rng(3)
    means = np.sort([rng.choice(d, size=len(d)).mean() for _ in range(1000)])
    iv = stats.paired_bootstrap(a, b, resamples=1000, seed=3, confidence=0.9)
    assert (iv.low, iv.high) == (means[50], means[949])


def test_intervals_rows_agree_with_bootstrap():
    rng = np.random.default_rng(8)
    v = rng.random((5, 14))
    rows = stats.intervals(v)
    assert rows.shape == (5, 2)
    for i in range(5):
        iv = stats.bootstrap(v[i])
        assert (rows[i, 0], rows[i, 1]) == (iv.low, iv.high)
        assert (rows[i, 0], rows[i, 1]) == article_interval(v[i])[1:]


def test_intervals_agree_with_bootstrap_to_rounding():
    v = np.random.default_rng(8).random((5, 14))
    rows = stats.intervals(v)
    for i in range(5):
        iv = stats.bootstrap(v[i])
        assert rows[i].tolist() == pytest.approx([iv.low, iv.high], abs=1e-15)


def test_constant_shift_of_both_systems_changes_nothing():
    rng = np.random.default_rng(9)
    a = rng.integers(0, 16, 14) / 16  # dyadic values: the shift is exact in floating point
    b = rng.integers(0, 16, 14) / 16
    base = stats.paired_bootstrap(a, b)
    shifted = stats.paired_bootstrap(a + 0.25, b + 0.25)
    assert (base.mean, base.low, base.high) == (shifted.mean, shifted.low, shifted.high)


def test_swapping_the_systems_mirrors_the_interval():
    rng = np.random.default_rng(10)
    a = rng.integers(0, 16, 14) / 16
    b = rng.integers(0, 16, 14) / 16
    ab, ba = stats.paired_bootstrap(a, b), stats.paired_bootstrap(b, a)
    assert (ba.mean, ba.low, ba.high) == pytest.approx((-ab.mean, -ab.high, -ab.low), abs=1e-15)


def test_identical_systems_give_a_zero_interval_holding_zero():
    a = np.random.default_rng(11).random(14)
    iv = stats.paired_bootstrap(a, a.copy())
    assert (iv.mean, iv.low, iv.high) == (0.0, 0.0, 0.0) and iv.holds_zero


def test_clear_difference_does_not_hold_zero():
    a = np.full(14, 0.9)
    b = np.linspace(0.0, 0.2, 14)
    iv = stats.paired_bootstrap(a, b)
    assert iv.low > 0 and not iv.holds_zero
    assert iv.low <= iv.mean <= iv.high


@pytest.mark.parametrize(
    "kwargs, word",
    [({"resamples": 1}, "resamples"), ({"confidence": 1.0}, "confidence"), ({"confidence": 0.0}, "confidence")],
)
def test_bad_parameters_rejected_naming_them(kwargs, word):
    with pytest.raises(InputError, match=word):
        stats.bootstrap(np.ones(5), **kwargs)


def test_mismatched_or_empty_systems_rejected():
    with pytest.raises(InputError):
        stats.paired_bootstrap(np.ones(5), np.ones(4))
    with pytest.raises(InputError):
        stats.bootstrap(np.array([]))


def test_intervals_by_counts_agree_with_the_exact_gather_on_many_questions():
    v = np.random.default_rng(3).random((4, 300))
    exact = stats.intervals(v, exact=True)
    fast = stats.intervals(v)  # 300 questions: above EXACT_UP_TO, the matrix product of resample counts
    assert v.shape[1] > stats.EXACT_UP_TO
    np.testing.assert_allclose(fast, exact, rtol=0, atol=1e-12)
    assert np.array_equal(stats.intervals(v[0, :14]), [stats.bootstrap(v[0, :14]).low, stats.bootstrap(v[0, :14]).high])


def test_resample_counts_are_how_often_each_question_is_drawn():
    """counts(n)[r, i] is the number of times question i is drawn in resample r of indices(n): each row sums to n,
    kept in a small unsigned type, read-only (it is shared by every interval of n questions)."""
    n, resamples = 37, 500
    idx = stats.indices(n, resamples, 3)
    c = stats.counts(n, resamples, 3)
    want = np.array([[np.count_nonzero(row == i) for i in range(n)] for row in idx])
    assert np.array_equal(c, want) and (c.sum(axis=1) == n).all()
    assert c.dtype == np.uint8 and not c.flags.writeable
    v = np.random.default_rng(5).random((3, n))
    np.testing.assert_allclose(stats.means_by_counts(v, resamples, 3), v[:, idx].mean(axis=-1), rtol=0, atol=1e-15)


@pytest.mark.parametrize("n", [0, 14, 60])
def test_prepare_makes_the_draws_the_first_intervals_then_read(n):
    """After `prepare(n)`, intervals of rows of n questions compute no draws (every cache they read is a hit), and
    give what they give without it."""
    stats.indices.cache_clear(), stats.counts.cache_clear(), stats.counts_f64.cache_clear()
    values = np.random.default_rng(3).random((2, n))
    fresh = stats.intervals(values) if n else None
    stats.indices.cache_clear(), stats.counts.cache_clear(), stats.counts_f64.cache_clear()
    stats.prepare(n)
    made = [f.cache_info().misses for f in (stats.indices, stats.counts, stats.counts_f64)]
    assert made == ([0, 0, 0] if n == 0 else [1, 0, 0] if n <= stats.EXACT_UP_TO else [1, 1, 1])
    if n:
        assert np.array_equal(stats.intervals(values), fresh)
        assert [f.cache_info().misses for f in (stats.indices, stats.counts, stats.counts_f64)] == made


def test_a_page_waits_for_the_draws_prepare_is_making_instead_of_making_them_again(monkeypatch):
    """`prepare` makes the draws in a thread (held here mid-way); intervals asked for meanwhile wait for them: the
    draws are made once (one cache miss), and the interval is the one made without `prepare`."""
    import threading

    n = 80
    values = np.random.default_rng(4).random((2, n))
    stats.indices.cache_clear(), stats.counts.cache_clear(), stats.counts_f64.cache_clear()
    want = stats.intervals(values)
    stats.indices.cache_clear(), stats.counts.cache_clear(), stats.counts_f64.cache_clear()
    started, go, real = threading.Event(), threading.Event(), np.random.default_rng

    def held(seed):
        started.set()
        go.wait(10)
        return real(seed)

    monkeypatch.setattr(np.random, "default_rng", held)
    t = threading.Thread(target=stats.prepare, args=(n,))
    t.start()
    assert started.wait(10)
    threading.Timer(0.2, go.set).start()
    got = stats.intervals(values)
    t.join(10)
    assert np.array_equal(got, want) and stats.indices.cache_info().misses == 1
