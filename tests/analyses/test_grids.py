"""The text analysis sweep beside the k1 x b sweep (retrieval.analyses.grids): one story from the two. Its grid is a
coarse subset of the finer one; what it says of each best, gain and end follows the numbers, on constructed sweeps
(each case of an end of the grid), on the invented corpus and on a real-shaped collection (bench/synthetic.py)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from conftest import ROOT
from retrieval import cli
from retrieval.analyses import grids, tuning
from retrieval.core.errors import InputError
from retrieval.core.params import Params

sys.path.insert(0, str(ROOT / "bench"))
import synthetic  # bench/ is not a package: on the path just above

N_Q = 10
NOISE = np.linspace(-0.01, 0.01, N_Q)  # the same for every setting: the means order the settings


def coarse(
    means: dict, k1s=(0.0, 1.2, 3.0), bs=(0.0, 0.75, 1.0), choices=("none/article", "snowball/article")
) -> tuning.Sweep:
    """An analysis sweep whose setting (analysis, k1, b) scores `means` (0.3 elsewhere) on every question, give or take NOISE."""
    values = np.array([[means.get((a, k1, b), 0.3)] * N_Q for a in choices for k1 in k1s for b in bs]) + NOISE
    return tuning.Sweep(
        "BM25",
        "ndcg@5",
        ("analysis", "k1", "b"),
        (np.arange(len(choices), dtype=float), np.array(k1s), np.array(bs)),
        values,
        tuple(f"q{i}" for i in range(N_Q)),
        Params(),
        choices=choices,
    )


def fine(means: dict, k1s=(0.0, 1.4, 2.2, 3.0), bs=(0.0, 0.5, 1.0)) -> tuning.Sweep:
    """A k1 x b sweep at the article's analysis whose setting (k1, b) scores `means` (0.3 elsewhere)."""
    values = np.array([[means.get((k1, b), 0.3)] * N_Q for k1 in k1s for b in bs]) + NOISE
    return tuning.Sweep(
        "BM25",
        "ndcg@5",
        ("k1", "b"),
        (np.array(k1s), np.array(bs)),
        values,
        tuple(f"q{i}" for i in range(N_Q)),
        Params(),
    )


CURRENT = np.full(N_Q, 0.3) + NOISE


def test_the_coarse_grid_is_an_evenly_spaced_subset_of_the_finer_one():
    k1s, bs = tuning.even(tuning.K1_GRID, tuning.ANALYSIS_POINTS), tuning.even(tuning.B_GRID, tuning.ANALYSIS_POINTS)
    assert k1s.tolist() == [0.0, 0.6, 1.2, 1.8, 2.4, 3.0] and bs.tolist() == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert set(k1s) <= set(tuning.K1_GRID) and set(bs) <= set(tuning.B_GRID)
    assert np.unique(np.round(np.diff(k1s), 9)).size == 1 and np.unique(np.round(np.diff(bs), 9)).size == 1  # one step
    assert tuning.even(np.arange(4.0), 6).tolist() == [0, 1, 2, 3]  # short enough: whole


def test_a_best_at_the_coarse_end_the_finer_sweep_puts_inside_is_said_as_the_coarse_grid_s_gap():
    c = grids.compare(coarse({("none/article", 3.0, 0.75): 0.5}), fine({(2.2, 0.5): 0.52}), CURRENT, 5)
    assert c.best == {"analysis": "none/article", "k1": 3.0, "b": 0.75} and c.at_end == ("k1",)
    assert c.fine_best == {"k1": 2.2, "b": 0.5} and c.fine_at_end == () and not c.same_best
    assert c.coarse_mean == pytest.approx(0.5) and c.fine_mean == pytest.approx(0.52)
    assert (
        "At none/article, this sweep finds k1 = 3, b = 0.75 (0.5000); the finer k1 × b sweep finds k1 = 2.2, b = 0.5 (0.5200)."
        in c.text
    )
    assert c.text.endswith(
        "Its best has k1 = 3 at the end of the range searched, but the finer sweep puts k1 = 2.2 inside "
        "it: this grid has no value k1 between 1.2 and 3."
    )
    assert "may lie beyond" not in c.text


def test_a_best_at_the_end_of_both_grids_may_lie_beyond():
    c = grids.compare(coarse({("none/article", 3.0, 0.75): 0.5}), fine({(3.0, 0.5): 0.52}), CURRENT, 5)
    assert c.at_end == ("k1",) and c.fine_at_end == ("k1",)
    assert c.text.endswith("Both sweeps put k1 = 3 at the end of the range searched: the optimum may lie beyond it.")


def test_a_best_at_the_end_for_another_analysis_says_how_to_place_it():
    c = grids.compare(
        coarse({("snowball/article", 3.0, 0.0): 0.6, ("none/article", 1.2, 0.75): 0.4}),
        fine({(2.2, 0.5): 0.42}),
        CURRENT,
        5,
    )
    assert c.best["analysis"] == "snowball/article" and c.coarse_best == {"k1": 1.2, "b": 0.75}
    assert c.text.endswith(
        "Its best, at snowball/article, has k1 = 3 at the end of the range searched: the optimum may lie "
        "beyond it, or k1 between 1.2 and 3, where this grid has no value; move the sidebar to "
        "snowball/article and sweep k1 × b to place it."
    )


def test_bounds_are_no_open_end_and_agreeing_sweeps_say_one_best():
    c = grids.compare(coarse({("none/article", 0.0, 1.0): 0.5}), fine({(0.0, 1.0): 0.5}), CURRENT, 5)
    assert c.at_end == () and c.same_best  # k1 = 0 and b = 1 are the parameters' own bounds
    assert "At none/article, both sweeps find k1 = 0, b = 1 (0.5000)." in c.text
    assert "end of the range" not in c.text


def test_the_two_gains_are_the_two_cross_validations():
    co, fi = coarse({("snowball/article", 1.2, 0.75): 0.6, ("none/article", 1.2, 0.75): 0.4}), fine({(2.2, 0.5): 0.42})
    c = grids.compare(co, fi, CURRENT, 5, 0)
    assert c.gain == pytest.approx(tuning.cross_validate(co.values, 5, 0).cross_validated - CURRENT.mean())
    assert c.fine_gain == pytest.approx(tuning.cross_validate(fi.values, 5, 0).cross_validated - CURRENT.mean())
    assert (
        f"Cross-validated against the current setting, tuning k1 and b alone at none/article scores "
        f"{tuning.about(c.fine_gain)} (the k1 × b sweep); choosing the text analysis as well, {tuning.about(c.gain)} "
        "(this sweep)."
    ) in c.text


def test_sweeps_that_do_not_match_are_refused():
    with pytest.raises(InputError):
        grids.compare(fine({}), fine({}), CURRENT)
    other = tuning.Sweep("BM25", "mrr", ("k1", "b"), fine({}).axes, fine({}).values, fine({}).qids, Params())
    with pytest.raises(InputError, match="same questions on the same metric"):
        grids.compare(coarse({}), other, CURRENT)
    stemmed = tuning.Sweep(
        "BM25", "ndcg@5", ("k1", "b"), fine({}).axes, fine({}).values, fine({}).qids, Params(stemmer="porter")
    )
    with pytest.raises(InputError, match="porter/article"):
        grids.compare(coarse({}), stemmed, CURRENT)


@pytest.fixture(scope="module")
def real_shaped():
    """A real-shaped collection: Zipfian words, 400 documents, 40 questions (bench/synthetic.py)."""
    return synthetic.generate(400, n_queries=40)


@pytest.mark.slow
@pytest.mark.parametrize("which", ["invented", "real-shaped"])
def test_on_a_corpus_the_paragraph_holds_the_two_sweeps_numbers(which, invented, real_shaped):
    ds = invented if which == "invented" else real_shaped
    base, folds = Params(), 5
    co = tuning.sweep_analysis(ds, "ndcg@5", base=base)
    fi = tuning.sweep_bm25(ds, "ndcg@5", base=base)
    now = tuning.current_values(ds, "k1,b", "ndcg@5", base)
    c = grids.compare(co, fi, now, folds)
    assert set(c.k1s) <= set(tuning.K1_GRID) | {base.k1} and set(c.bs) <= set(tuning.B_GRID) | {base.b}
    assert c.fine_shape == (16, 11) and co.shape[1:] == (len(c.k1s), len(c.bs))
    row = tuning.analysis_rows(co, now, folds)[co.choices.index("none/article")]
    assert c.coarse_best == row.best and c.coarse_mean == row.best_mean
    at = tuning.best_setting(fi.values)
    assert c.fine_best == fi.setting(at) and c.fine_mean == fi.means[at]
    on_fine = [
        i
        for i in range(co.means.size)
        if co.setting(i)["analysis"] == "none/article" and co.setting(i)["b"] in set(tuning.B_GRID)
    ]  # the coarse settings the finer grid holds too
    assert max(co.means[on_fine]) <= c.fine_mean + 1e-12  # a subset's best is never above the whole grid's
    assert f"({c.coarse_mean:.4f})" in c.text and f"({c.fine_mean:.4f})" in c.text
    assert tuning.about(c.gain) in c.text and tuning.about(c.fine_gain) in c.text
    assert grids.values_text(c.k1s) in c.text


@pytest.mark.slow
def test_the_command_line_says_the_page_s_words(capsys, invented):
    """`tune --params analysis` prints the same paragraph the Tuning page shows under its table."""
    assert cli.main(["tune", "--params", "analysis", "--folds", "3"]) == 0
    out = capsys.readouterr().out
    base = Params()
    co = tuning.sweep_analysis(invented, "ndcg@5", base=base)
    want = grids.compare(
        co, tuning.sweep_bm25(invented, "ndcg@5", base=base), tuning.current_values(invented, "k1,b", "ndcg@5", base), 3
    ).text
    assert want in out.splitlines()
