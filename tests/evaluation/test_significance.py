"""The paired randomisation test against scipy.stats.permutation_test, and Holm's correction on a worked example."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from retrieval.core.errors import InputError
from retrieval.engine.engine import evaluate
from retrieval.evaluation import significance


def _mean_diff(x, y, axis):
    return np.mean(x - y, axis=axis)


def _scipy_p(a, b, **kw) -> float:
    res = sps.permutation_test(
        (a, b), _mean_diff, permutation_type="samples", vectorized=True, alternative="two-sided", **kw
    )
    return float(res.pvalue)


@pytest.mark.parametrize("n", range(2, 13))
def test_exact_p_values_equal_scipy_exactly(n):
    rng = np.random.default_rng(100 + n)
    for trial in range(6):
        a = rng.random(n).round(2)
        b = rng.random(n).round(2)
        if trial == 1:
            b = a.copy()  # no difference at all: p = 1
        if trial == 2:
            b = a - 0.1  # the same shift on every question: the smallest p a test of n questions allows
        if trial == 3:
            b[: n // 2] = a[: n // 2]  # zero differences on half the questions
        ours = significance.paired_permutation(a, b)
        assert ours.exact and ours.resamples == 2**n
        assert ours.p_value == _scipy_p(a, b, n_resamples=np.inf)


def test_exact_on_the_article_comparison_equals_scipy(invented):
    ev = evaluate(invented)
    a, b = ev.values["BM25"]["ndcg@5"], ev.values["LSA"]["ndcg@5"]
    ours = significance.paired_permutation(a, b)
    assert ours.exact and ours.resamples == 2**14
    assert ours.mean_diff == pytest.approx(0.012, abs=5e-4)
    assert ours.p_value == _scipy_p(a, b, n_resamples=np.inf)
    assert ours.p_value > 0.5  # the article's +0.012 is noise, as its bootstrap interval says


def test_smallest_exact_p_value_by_hand():
    # every question better by the same amount: only the all-plus and all-minus sign vectors reach |mean| = 0.1
    a, b = np.full(5, 0.6), np.full(5, 0.5)
    assert significance.paired_permutation(a, b).p_value == pytest.approx(2 / 2**5)


def test_monte_carlo_agrees_with_scipy_within_sampling_error():
    rng = np.random.default_rng(7)
    n, resamples = 40, 20_000
    for shift in (0.0, 0.04, 0.08):
        a = rng.random(n)
        b = a + rng.normal(shift, 0.2, n)
        ours = significance.paired_permutation(a, b, resamples=resamples, seed=3)
        assert not ours.exact and ours.resamples == resamples
        theirs = _scipy_p(a, b, n_resamples=resamples, rng=3)
        # each p is twice a one-sided proportion q: its standard error is 2 sqrt(q (1 - q) / resamples), and two
        # independent estimates differ by sqrt(2) times that
        q = min(theirs / 2, 0.5)
        sd = np.sqrt(2) * 2 * np.sqrt(max(q * (1 - q), 1e-4) / resamples)
        assert abs(ours.p_value - theirs) < 5 * sd


def test_monte_carlo_is_seeded_and_approaches_the_exact_value():
    rng = np.random.default_rng(11)
    a, b = rng.random(14), rng.random(14)
    exact = significance.paired_permutation(a, b).p_value
    mc1 = significance.paired_permutation(a, b, resamples=10_000, seed=5, exact_limit=1)
    mc2 = significance.paired_permutation(a, b, resamples=10_000, seed=5, exact_limit=1)
    assert not mc1.exact and mc1.p_value == mc2.p_value
    assert abs(mc1.p_value - exact) < 6 * np.sqrt(exact * (1 - exact) / 10_000) + 1e-3


def test_many_rows_at_once_equal_one_at_a_time():
    rng = np.random.default_rng(3)
    for n in (9, 30):
        d = rng.normal(0.02, 0.1, size=(6, n))
        d[2] = 0.0
        many = significance.permutation_pvalues(d, resamples=5000, seed=1)
        one = [significance.permutation_pvalues(row, resamples=5000, seed=1)[0] for row in d]
        assert np.array_equal(many, np.array(one))
        assert many[2] == 1.0


def test_holm_worked_example():
    p = [0.01, 0.04, 0.03, 0.005]
    # by hand: sorted 0.005, 0.01, 0.03, 0.04 times m - i + 1 = 4, 3, 2, 1 -> 0.02, 0.03, 0.06, 0.04;
    # the running maximum keeps the order: 0.02, 0.03, 0.06, 0.06; back in the input order:
    expected = [0.03, 0.06, 0.06, 0.02]
    assert significance.holm(p) == pytest.approx(expected, abs=1e-15)
    assert significance.holm_reject(p, 0.05).tolist() == [True, False, False, True]
    # without the correction all four would pass 0.05: three comparisons at once are not three single ones


def test_holm_caps_at_one_keeps_order_and_handles_ties():
    assert significance.holm([0.5, 0.6]).tolist() == [1.0, 1.0]
    assert significance.holm([0.02, 0.02, 0.9]).tolist() == pytest.approx([0.06, 0.06, 0.9])
    assert significance.holm([0.04]).tolist() == [0.04]
    rng = np.random.default_rng(0)
    p = rng.random(50) ** 3
    adj = significance.holm(p)
    order = np.argsort(p)
    assert np.all(np.diff(adj[order]) >= 0) and np.all(adj >= p) and np.all(adj <= 1)


def test_compare_systems_is_one_holm_family(invented):
    ev = evaluate(invented)
    values = {s: ev.values[s]["ndcg@5"] for s in ev.systems}
    rows = significance.compare_systems(values)
    assert len(rows) == 6
    raw = [r["p_value"] for r in rows]
    assert [r["p_holm"] for r in rows] == pytest.approx(significance.holm(raw).tolist())
    first = rows[0]
    assert (first["a"], first["b"]) == ("BM25", "LSA")
    assert first["p_value"] == significance.paired_permutation(values["BM25"], values["LSA"]).p_value
    assert first["mean_diff"] == pytest.approx(float(np.mean(values["BM25"] - values["LSA"])))


def test_bad_input_is_an_input_error():
    with pytest.raises(InputError):
        significance.paired_permutation(np.array([]), np.array([]))
    with pytest.raises(InputError):
        significance.paired_permutation(np.ones(3), np.ones(4))
    with pytest.raises(InputError):
        significance.holm([0.1, 1.5])
    with pytest.raises(InputError):
        significance.compare_systems({"A": np.ones(3)}, pairs=[("A", "B")])
