"""ui/tuning.py: the Tuning page's builders, with the values the definitions give, and its landscape kept in
the memo of the dataset's engine."""

from __future__ import annotations

import math
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from retrieval.analyses import tuning
from retrieval.core.params import Params
from retrieval.engine.engine import CACHE_SIZES
from ui import cache, charts
from ui import tuning as ui

MINUS = "\u2212"


def test_tied_runs_widen_by_half_a_step_but_not_past_the_ends():
    runs = ui.tied_runs(np.array([1.0, 2.0, 3.0, 4.0, 5.0]), np.array([True, True, False, False, True]))
    assert runs.to_dict("records") == [{"start": 1.0, "end": 2.5}, {"start": 4.5, "end": 5.0}]
    uneven = ui.tied_runs(np.array([0.0, 10.0, 20.0, 40.0]), np.array([False, True, True, False]))
    assert uneven.to_dict("records") == [{"start": 5.0, "end": 30.0}]  # half of 10 before, half of 20 after
    assert ui.tied_runs(np.array([3.0]), np.array([False])).empty
    assert list(ui.tied_runs(np.array([3.0]), np.array([False])).columns) == ["start", "end"]


def test_move_message_names_every_slider_and_only_the_snapped_ones():
    msg = ui.move_message("Moved to the best setting", {"k1": 1.23, "b": 0.75}, {"k1": 1.25, "b": 0.75})
    assert msg == (
        "Moved to the best setting: the sidebar now holds k1 = 1.25, b = 0.75 "
        "(snapped to the slider's steps: k1 1.23 → 1.25)."
    )
    assert ui.move_message("Moved", {"dims": 6}, {"dims": 6}) == "Moved: the sidebar now holds dims = 6."


def test_picked_setting_keeps_the_swept_parameters_of_the_first_point():
    event = {"selection": {"pick": [{"k1": 0.4, "b": 0.2, "mean": 0.6}, {"k1": 9, "b": 9}]}}
    assert ui.picked_setting(event, ("k1", "b")) == {"k1": 0.4, "b": 0.2}
    assert ui.picked_setting({"selection": {"pick": []}}, ("k1", "b")) == {}
    assert ui.picked_setting(None, ("dims",)) == {}
    assert ui.picked_setting({"selection": {"pick": [{"dims": None}]}}, ("dims",)) == {}


def test_the_chart_key_changes_with_the_setting():
    assert ui.chart_key("k1,b", {"k1": 1.2, "b": 0.75}) == "tune_chart_k1_b_1.2_0.75"
    assert ui.chart_key("dims", {"dims": 6}) == "tune_chart_dims_6"


def test_scale_and_steps_texts():
    means = np.array([0.5, 0.75, 0.6])
    assert ui.scale_text(True, means, True) == (
        " The palette spans the grid's own range, 0.5000 to 0.7500: every setting "
        "can't be told apart from the best, so the colours show noise."
    )
    assert ui.scale_text(False, means, False) == " The y axis spans the grid's own range, 0.5000 to 0.7500."
    assert ui.steps_text(("k1", "b")) == "k1: 0.05, b: 0.05"
    assert ui.steps_text(("rrf_k",)) == "rrf_k: 1"
    assert ui.how_to_read("dims", ("dims",)).startswith("Click near a point to move the sidebar's dims there.")


def test_held_fixed_and_current_setting():
    p = Params(k1=0.9, b=0.4, dims=3, rrf_k=20, alpha=0.3)
    words = (("query_words", "once"), ("k3", 8.0))  # BM25's rule for repeated question words: held by its sweeps
    held = ((("k1", 0.9), ("b", 0.4), ("dims", 3), *words), 10, ("BM25", "LSA"), (None, None))
    assert ui.held_fixed("alpha", p) == held == ui.held_fixed("rrf_k", p)
    assert ui.held_fixed("k1,b", p) == (words,) == ui.held_fixed("analysis", p) and ui.held_fixed("dims", p) == ()
    assert ui.held_fixed("k1,b", replace(p, query_words="k3", k3=2.0)) == ((("query_words", "k3"), ("k3", 2.0)),)
    # a joint sweep holds what it does not sweep: never d, so a move of the d slider reuses it
    assert ui.held_fixed("alpha,dims", p) == ((("k1", 0.9), ("b", 0.4), *words), 10, ("BM25", "LSA"), (None, None))
    assert ui.held_fixed("alpha,dims", p) == ui.held_fixed("alpha,dims", replace(p, dims=50, alpha=0.9))
    assert ui.held_fixed("k1,dims", p)[0] == (("b", 0.4), ("alpha", 0.3), *words)
    assert ui.held_params(ui.held_fixed("k1,dims", p)) == Params(b=0.4, alpha=0.3)
    three = Params(members=("BM25", "LSA", "dense"), weights=(1.0, 2.0, 0.5))
    assert ui.held_fixed("k1,dims", three)[0] == (("b", 0.75), ("alpha", 0.5), *words, ("weights", (1.0, 2.0, 0.5)))
    assert ui.held_params(ui.held_fixed("k1,dims", three)).weights == (1.0, 2.0, 0.5)
    # an sources source among the members is held by its content's fingerprint, never by the object
    dense = SimpleNamespace(name="dense", fingerprint="f1")
    run = SimpleNamespace(name="r *1*", fingerprint="f2")
    q = Params(members=("dense", "BM25", "r *1*"), weights=(1.0, 2.0, 0.5), fusion_depth=100)
    assert ui.held_fixed("rrf_k", q, (dense, run)) == (
        (("k1", 1.2), ("b", 0.75), ("dims", 6), *words),
        100,
        ("dense", "BM25", "r *1*"),
        ("f1", None, "f2"),
    )
    held = ui.held_params(ui.held_fixed("rrf_k", q, (dense, run)))
    assert held.members == q.members and held.fusion_depth == 100 and held.weights == (1.0, 1.0, 1.0)
    assert ui.held_params(ui.held_fixed("alpha", p)) == Params(k1=0.9, b=0.4, dims=3)
    assert ui.current_setting(("k1", "b"), p) == {"k1": 0.9, "b": 0.4}
    assert ui.current_setting(("analysis", "k1"), replace(p, stemmer="porter")) == {
        "analysis": "porter/article",
        "k1": 0.9,
    }
    assert ui.current_setting(("alpha",), p) == {"alpha": 0.3}


def test_points_and_marks_frames():
    sw = SimpleNamespace(names=("alpha",), means=np.array([0.2, 0.4]), setting=lambda i: {"alpha": [0.0, 1.0][i]})
    ties = SimpleNamespace(tied=np.array([False, True]), intervals=np.array([[-0.3, -0.1], [0.0, 0.0]]))
    land = ui.Landscape(sw, 1, ties, np.array([0.01, 1.0]), np.array([0.01, 1.0]))
    points = ui.points_frame(land)
    assert points.to_dict("records") == [
        {"alpha": 0.0, "mean": 0.2, "status": charts.NOT_TIED, "low": -0.3, "high": -0.1, "p": 0.01, "p_holm": 0.01},
        {"alpha": 1.0, "mean": 0.4, "status": charts.TIED, "low": 0.0, "high": 0.0, "p": 1.0, "p_holm": 1.0},
    ]
    marks = ui.marks_frame({"alpha": 1.0}, 0.4, {"alpha": 0.5}, 0.3).set_index("what")
    assert marks.loc[charts.BEST].to_dict() == {"alpha": 1.0, "mean": 0.4}
    assert marks.loc[charts.CURRENT].to_dict() == {"alpha": 0.5, "mean": 0.3}
    cells = ui.heatmap_cells(
        pd.DataFrame({"k1": [0.0, 0.2], "b": [0.5, 0.5]}), np.array([0.0, 0.2, 0.6]), np.array([0.0, 0.5, 1.0])
    )
    assert cells["k1_lo"].tolist() == pytest.approx([-0.1, 0.1]) and cells["k1_hi"].tolist() == pytest.approx(
        [0.1, 0.3]
    )
    assert cells["b_lo"].tolist() == [0.25, 0.25] and cells["b_hi"].tolist() == [0.75, 0.75]


def _land(values: np.ndarray, best: int, p, p_holm) -> ui.Landscape:
    return ui.Landscape(SimpleNamespace(values=values), best, None, np.asarray(p, float), np.asarray(p_holm, float))


def test_versus_best_on_the_grid_reads_the_sweeps_p_values():
    land = _land(np.zeros((3, 4)), 0, [1.0, 0.02, 0.3], [1.0, 0.04, 0.3])
    assert ui.versus_best(land, np.zeros(4), True, 1) == ui.Versus(
        0.02, 0.04, 2, "the 2 comparisons of every other grid setting with the best"
    )


def test_versus_best_between_grid_points_adds_the_current_setting_to_the_family():
    values = np.array([[1.0, 0.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 1.0]])
    land = _land(values, 0, [1.0, 0.2, 0.5], [1.0, 0.4, 0.5])
    vs = ui.versus_best(land, values[0].copy(), False, 2)
    # the same values as the best: every sign vector gives a mean difference of 0, so p = 1; Holm over
    # {0.2, 0.5, 1}: the largest stays 1
    assert (vs.p, vs.p_holm, vs.family) == (1.0, 1.0, 3)
    assert vs.family_text.endswith("plus the current setting, which lies between grid points")


def signals(**changes) -> ui.Signals:
    """Constructed signals: by default a current setting worse than the best alone (p 0.004) but not after Holm
    (0.132), which cross-validation says tuning would beat by 0.041."""
    base = dict(
        n_settings=176,
        n_tied=40,
        all_same=False,
        at_best=False,
        current_tied=False,
        diff=-0.05,
        p=0.004,
        p_holm=0.132,
        family=176,
        gain=0.041,
    )
    return ui.Signals(**{**base, **changes})


# the rules as a truth table: (every mean equal, all tied, at the best, Holm p, cross-validated gain) -> the verdict
@pytest.mark.parametrize(
    "changes, kind",
    [
        (dict(all_same=True, n_tied=176), "same"),
        (dict(n_tied=176), "flat"),
        (dict(n_tied=176, at_best=True), "flat"),  # everything ties: being "the best" means nothing
        (dict(at_best=True, p=1.0, p_holm=1.0, diff=0.0), "best"),
        (dict(p_holm=0.05), "tune"),  # the level itself rejects (p <= 0.05)
        (dict(p_holm=0.01, gain=0.0), "unstable"),
        (dict(p_holm=0.01, gain=-0.02), "unstable"),
        (dict(p_holm=0.01, gain=None), "unstable"),  # no cross-validation: no gain shown
        (dict(), "hint"),
        (dict(p_holm=0.0500001), "hint"),
        (dict(gain=1e-13), "keep"),  # a gain within rounding is no gain
        (dict(gain=-0.01, p=0.3, p_holm=1.0), "keep"),
    ],
)
def test_verdict_rules(changes, kind):
    s = signals(**changes)
    assert ui.verdict_kind(s) == kind
    assert ui.offers_best(kind) == (kind not in ("same", "flat", "best"))


def test_the_verdict_reconciles_the_three_signals():
    text = ui.verdict_text(signals(), "k1 and b", "k1 = 2.2, b = 0.7", "nDCG@10")
    assert text == (
        "**Tuning k1 and b may gain about +0.041 nDCG@10 on unseen questions** (cross-validated), **but no single "
        "setting beats the current one once 176 comparisons are corrected for** (Holm-adjusted p = 0.132): treat the "
        "best (k1 = 2.2, b = 0.7) as a hint, not a finding. Alone, the current setting looks worse than the best "
        "(p = 0.004, outside the tie region on the chart), but picking the best of 176 settings makes gaps like this "
        "one expected by chance."
    )
    # in the tie region, and not even worse alone: only the hint
    quiet = ui.verdict_text(signals(p=0.3, current_tied=True), "d", "dims = 12", "nDCG@5")
    assert quiet.endswith("treat the best (dims = 12) as a hint, not a finding.")


def test_the_verdict_texts_carry_their_numbers():
    tune = ui.verdict_text(signals(p=0.0001, p_holm=0.0004, diff=-0.06), "d", "dims = 185", "nDCG@10")
    assert tune.startswith(
        "**Tuning d pays**: about +0.041 nDCG@10 on questions the choice never saw (cross-validated)"
    )
    assert "even after Holm's correction for 176 comparisons (adjusted p < 0.001)" in tune
    assert tune.endswith("Expect about +0.041, not the +0.06 measured on these very questions.")
    unstable = ui.verdict_text(signals(p_holm=0.01, gain=-0.0059), "alpha", "alpha = 0.7", "MRR")
    assert (
        "**but the gain does not carry over to new ones** (cross-validated, −0.0059 MRR on questions the choice never saw)"
        in unstable
    )
    keep = ui.verdict_text(signals(gain=-0.002, p=0.2), "RRF k", "rrf_k = 4", "nDCG@5")
    assert keep.startswith(
        "**Keep the current setting**: no setting beats it once 176 comparisons are corrected for "
        "(Holm-adjusted p = 0.132), and tuning shows no gain on unseen questions (cross-validated, −0.002"
    )
    assert ui.verdict_text(signals(all_same=True, n_tied=176), "k1 and b", "k1 = 0, b = 0", "nDCG@5") == (
        "**Every setting scores the same here**: all 176 have the same mean nDCG@5, so there is nothing to tune."
    )
    flat = ui.verdict_text(signals(n_tied=176), "k1 and b", "k1 = 0, b = 0", "nDCG@5")
    assert flat.startswith(
        "**Every setting scores the same here, within noise**: all 176 settings can't be told apart "
        "from the best (k1 = 0, b = 0)"
    )
    best = ui.verdict_text(signals(at_best=True, gain=-0.004), "d", "dims = 12", "nDCG@5")
    assert best.startswith("**The current setting is the best of the 176 settings.** Expect less on new questions")
    assert "−0.004" in best
    assert ui.about(0.04123) == "+0.041" and ui.about(-0.00591) == "−0.0059" and ui.about(0.23) == "+0.23"
    assert ui.p_is(0.0004) == "p < 0.001" and ui.p_is(0.132) == "p = 0.132" and ui.p_is(1.0) == "p = 1"


def test_the_expectation_after_tuning_reads_true_when_the_two_gains_round_alike():
    # Cranfield's d: cross-validated +0.2190, measured +0.2218; both read +0.22
    same = ui.verdict_text(signals(p=0.0001, p_holm=0.0004, diff=-0.22185, gain=0.21899), "d", "dims = 200", "nDCG@5")
    assert same.endswith("Expect about +0.22 on new questions too, as measured on these very questions.")
    assert "not the" not in same
    assert (
        tuning.expectation_text(0.041, 0.06) == "Expect about +0.041, not the +0.06 measured on these very questions."
    )
    assert tuning.expectation_text(0.0512, 0.0448) == (
        "Expect about +0.051 on new questions, more than the +0.045 measured on these very questions."
    )
    for gain, measured in ((0.23, 0.2301), (0.0059, 0.00591), (0.5, 0.5)):  # equal when read: one number, said once
        text = tuning.expectation_text(gain, measured)
        assert text.count(ui.about(gain)) == 1 and ui.about(gain) == ui.about(measured)


def test_enough_sign_vectors_for_holm_to_reject():
    from retrieval.evaluation import significance

    assert tuning.sign_vectors_for(21) == significance.RESAMPLES  # 4 x 21 / 0.05 = 1,680: the library's 10,000
    for m in (176, 200, 399, 5000):
        r = tuning.sign_vectors_for(m)
        assert r + 1 >= 4 * m / 0.05 and r == max(significance.RESAMPLES, math.ceil(80 * m) - 1)
        assert (m - 1) * 2 / (r + 1) <= 0.025  # Holm's floor over the m - 1 comparisons with the best: half the level


# the edge rule: (axis, position of the best, lower and upper bound) -> the open ends it lies at
@pytest.mark.parametrize(
    "axis, pos, lo, hi, sides",
    [
        (np.arange(1.0, 201.0), 195, 1, 1399, ["high"]),  # d = 196 of 1..200, the corpus allows 1,399: may lie beyond
        (np.arange(1.0, 201.0), 180, 1, 1399, ["high"]),  # the outer tenth: positions 180..199
        (np.arange(1.0, 201.0), 179, 1, 1399, []),
        (np.arange(1.0, 201.0), 199, 1, 200, []),  # the corpus allows no more than 200: nothing lies beyond
        (np.arange(1.0, 201.0), 0, 1, 1399, []),  # d = 1 is d's own bound
        (np.linspace(0, 1, 11), 10, 0, 1, []),  # b = 1: b can't pass 1
        (np.linspace(0, 1, 11), 0, 0, 1, []),
        (np.linspace(0, 3, 16), 15, 0, math.inf, ["high"]),  # k1 = 3: the grid stops, k1 does not
        (np.linspace(0, 3, 16), 14, 0, math.inf, []),  # 16 settings: the outer tenth is the end one alone
        (np.arange(1.0, 201.0), 0, 0, math.inf, ["low"]),  # RRF k = 1: k may be below 1
        (np.array([5.0]), 0, 0, math.inf, ["low", "high"]),
    ],
)
def test_edge_rule(axis, pos, lo, hi, sides):
    assert ui.edge_sides(axis, pos, lo, hi) == sides


def test_edge_warnings_of_a_sweep():
    d = np.arange(1.0, 201.0)
    sw = SimpleNamespace(names=("dims",), axes=(d,), shape=(200,), setting=lambda i: {"dims": int(d[i])})
    (text,) = ui.edge_warnings(sw, 195, 1399)
    assert text.startswith(
        "**The best is at the edge of the range searched** (dims = 196; the range searched ends at 200): "
        "the optimum may lie beyond it. The sidebar's slider stops at 200;"
    )
    assert ui.edge_warnings(sw, 195, 200) == []  # the corpus allows no more
    a, dd = np.linspace(0, 1, 21), np.array([1.0, 2.0, 5.0, 200.0])
    joint = SimpleNamespace(
        names=("alpha", "dims"),
        axes=(a, dd),
        shape=(21, 4),
        setting=lambda i: {"alpha": float(a[i // 4]), "dims": int(dd[i % 4])},
    )
    (only,) = ui.edge_warnings(joint, 20 * 4 + 3, 1399)  # alpha = 1 (its bound), d = 200 (open)
    assert "(dims = 200;" in only
    k = np.arange(1.0, 201.0)
    rrf = SimpleNamespace(names=("rrf_k",), axes=(k,), shape=(200,), setting=lambda i: {"rrf_k": float(k[i])})
    assert ui.edge_warnings(rrf, 0, 1399) == [
        "**The best is at the edge of the range searched** (rrf_k = 1; the range searched "
        "starts at 1): the optimum may lie below it."
    ]
    assert (
        ui.bounds("b", 1399) == (0.0, 1.0)
        and ui.bounds("dims", 27) == (1.0, 27.0)
        and ui.bounds("k1", 9)[1] == math.inf
    )


def test_chart_rows_are_bounded():
    rows = [{"doc_id": f"d{i}"} for i in range(56)]
    drawn, more = ui.chart_rows(rows)
    assert [r["doc_id"] for r in drawn] == [f"d{i}" for i in range(ui.CHART_ROWS)] and more == 56 - ui.CHART_ROWS
    assert ui.chart_rows(rows[:3]) == (rows[:3], 0)
    assert ui.more_text(15, 41) == "The chart shows the first 15 documents; 41 more are in the table below."
    assert ui.more_text(3, 0) == ""


def test_grid_and_held_texts():
    a, d = np.linspace(0, 1, 21), tuning.thin(np.arange(1.0, 201.0))
    sw = SimpleNamespace(names=("alpha", "dims"), axes=(a, d), means=np.zeros(21 * d.size))
    assert ui.grid_text(sw) == f"21 alpha × {d.size} d = {21 * d.size} settings"
    assert ui.grid_text(SimpleNamespace(names=("dims",), axes=(d,), means=np.zeros(7))) == "7 settings"
    p = Params(k1=0.9, dims=3, fusion_depth=100)
    assert ui.held_values("alpha", p) == "k1 = 0.9 (BM25), b = 0.75 (BM25), d = 3 (LSA), each member's top 100"
    assert ui.held_values("alpha,dims", p) == "k1 = 0.9 (BM25), b = 0.75 (BM25), each member's top 100"
    assert ui.held_values("k1,dims", p) == "b = 0.75 (BM25), alpha = 0.5, each member's top 100"
    assert ui.held_values("dims", p) == ""
    dense = Params(members=("dense", "LSA"), dims=4)
    assert (
        ui.held_values("rrf_k", dense) == "d = 4 (LSA), each member's top 10"
    )  # BM25 is not fused: its k1, b are not held
    assert ui.names_text(("rrf_k", "dims")) == "RRF k and d" and ui.names_text(("k1", "b")) == "k1 and b"


def test_significant_counts_leave_the_best_out():
    land = _land(np.zeros((4, 1)), 2, [0.01, 0.05, 0.0, 0.2], [0.03, 0.1, 0.0, 0.4])
    assert ui.significant_counts(land) == (2, 1)  # 0.01 and 0.05 <= 0.05 before; only 0.03 after


def test_method_and_floor_texts():
    assert ui.method_text(3) == "exact: all 2^3 = 8 sign vectors"
    assert ui.floor_text(100, 9_999) == (
        " With 9,999 random sign vectors the smallest p-value is 2/10,000 ≈ 0.0002, "
        "so no Holm-adjusted p over 100 comparisons falls below 0.020."
    )
    assert ui.floor_text(10_000, 9_999).endswith("falls below 1.000.")


def test_validation_text_reads_the_optimism_and_the_gain():
    text = ui.validation_text(0.7, 0.65, 176, 14, 0.6)
    assert text == (
        "Choosing the best of 176 settings on all 14 questions reports 0.7000; on questions the choice never saw, "
        "the same procedure scores 0.6500. The 0.0500 between them is over-fitting: the tuning fitted these "
        "particular questions, not the retriever. The sidebar's setting scores 0.6000: tuning gains 0.0500 on unseen questions."
    )
    flat = ui.validation_text(0.6, 0.6, 5, 20, 0.6)
    assert flat.startswith("Here the cross-validated score (0.6000) is no lower than the in-sample one (0.6000)")
    assert flat.endswith("tuning shows no gain that carries over to unseen questions.")


def test_folds_table_names_the_chosen_settings():
    cv = SimpleNamespace(folds=2, fold_sizes=(3, 2), chosen=(1, 0), train_means=(0.5, 0.6), test_means=(0.4, 0.7))
    sw = SimpleNamespace(setting=lambda i: {"dims": [2, 5][i]})
    table = ui.folds_table(cv, sw)
    assert table.index.tolist() == [1, 2]
    assert table["chosen on the other folds"].tolist() == ["dims = 5", "dims = 2"]
    assert table["test mean (held out)"].tolist() == [0.4, 0.7]


def test_oracle_tables_count_wins_alone_and_tied():
    oracle = tuning.oracle({"A": np.array([1.0, 0.0, 0.5]), "B": np.array([0.0, 1.0, 0.5])})
    table, wins = ui.oracle_tables(oracle)
    # per-question maxima 1, 1, 0.5: the oracle's mean is 2.5 / 3; each system's is 0.5
    assert table["mean"].tolist() == [0.5, 0.5]
    assert table["below the oracle"].tolist() == pytest.approx([2.5 / 3 - 0.5] * 2)
    assert table["best alone on"].tolist() == [1, 1] and table["best, tied, on"].tolist() == [1, 1]
    assert wins.to_dict("records")[:2] == [
        {"system": "A", "how": "alone", "questions": 1, "order": 0},
        {"system": "A", "how": "tied with another system", "questions": 1, "order": 1},
    ]


MEMBERS = ("BM25", "my *run*")
ROWS = [
    {
        "doc_id": "d1",
        "judged": True,
        "grade": 2,
        "fused_rank": 1,
        "ranks": {"BM25": 1, "my *run*": 3},
        "contributions": {"BM25": 0.5, "my *run*": 0.25},
        "total": 0.75,
        "in_top": MEMBERS,
        "rescued_by": "both",
    },
    {
        "doc_id": "d2",
        "judged": True,
        "grade": 0,
        "fused_rank": 2,
        "ranks": {"BM25": None, "my *run*": 1},
        "contributions": {"BM25": 0.0, "my *run*": 0.5},
        "total": 0.5,
        "in_top": ("my *run*",),
        "rescued_by": None,
    },  # not relevant: brought in, not rescued
    {
        "doc_id": "d3",
        "judged": True,
        "grade": 1,
        "fused_rank": None,
        "ranks": {"BM25": None, "my *run*": None},
        "contributions": {"BM25": 0.0, "my *run*": 0.0},
        "total": 0.0,
        "in_top": (),
        "rescued_by": None,
    },
    {
        "doc_id": "d4",
        "judged": False,
        "grade": 0,
        "fused_rank": 3,
        "ranks": {"BM25": 40, "my *run*": None},
        "contributions": {"BM25": 0.2, "my *run*": 0.2},
        "total": 0.4,
        "in_top": (),
        "rescued_by": None,
    },
    {
        "doc_id": "d5",
        "judged": True,
        "grade": 1,
        "fused_rank": 4,
        "ranks": {"BM25": 2, "my *run*": 80},
        "contributions": {"BM25": 0.3, "my *run*": 0.05},
        "total": 0.35,
        "in_top": ("BM25",),
        "rescued_by": "BM25",
    },
]


def test_fusion_rows_labels_and_notes():
    assert [ui.row_label(r) for r in ROWS] == ["#1 · d1 ✓2", "#2 · d2", "not fused · d3 ✓1", "#3 · d4", "#4 · d5 ✓1"]
    assert [ui.contribution_note(r, 10, 2) for r in ROWS] == [
        "in both top 10s",
        "only in my *run*'s top 10",
        "relevant, left out of the fused list",
        "in neither top 10: the sum put it here",
        "relevant, rescued by BM25",
    ]  # only the relevant document one member alone brought in is rescued
    parts = ui.contribution_parts(ROWS, 10, MEMBERS)
    assert len(parts) == 10 and parts["retriever"].tolist()[:2] == ["BM25", "my *run*"]
    assert parts["contribution"].tolist()[:2] == [0.5, 0.25] and parts["rank"].tolist()[:4] == ["1", "3", "—", "1"]
    table = ui.contribution_table(ROWS, MEMBERS, 10).set_index("document")
    assert list(table.columns) == [
        "grade",
        "fused rank",
        "BM25 rank",
        "my *run* rank",
        "from BM25",
        "from my *run*",
        "total",
        "in the top 10 of",
    ]
    # only documents of the fused list, of any grade, say whose top list holds them; the left-out relevant one: nothing
    assert table["in the top 10 of"].tolist() == ["both", "my *run* only", "", "neither", "BM25 only"]
    assert (
        table.loc["d2", "BM25 rank"] == "—"
        and table.loc["d1", "my *run* rank"] == "3"
        and table.loc["d4", "BM25 rank"] == "40"
    )
    assert table.loc["d2", "from my *run*"] == 0.5
    # d2 is judged not relevant (0), d4 named by no judgement: unjudged, never shown as a 0
    assert table["grade"].tolist() == ["2", "0", "1", "unjudged", "1"]
    assert parts.set_index("doc_id")["grade"].to_dict() == {
        "d1": "2",
        "d2": "0",
        "d3": "1",
        "d4": "unjudged",
        "d5": "1",
    }


def test_holders_with_three_members():
    r = {"fused_rank": 4, "in_top": ("a", "b")}
    assert ui.holders_text(r, 3) == "a, b" and ui.contribution_note(r, 10, 3) == "in the top 10s of a, b"
    every = {"fused_rank": 1, "in_top": ("a", "b", "c")}
    assert ui.holders_text(every, 3) == "all 3" and ui.contribution_note(every, 10, 3) == "in all 3 top 10s"
    nobody = {"fused_rank": 2, "in_top": ()}
    assert (
        ui.holders_text(nobody, 3) == "none"
        and ui.contribution_note(nobody, 10, 3) == "in no top 10: the sum put it here"
    )


def test_fusion_formula_at_the_sidebars_values():
    p = Params(k1=1.2, b=0.75, dims=6, rrf_k=60, alpha=0.5)
    caption, axis = ui.fusion_formula("RRF", p, 10)
    assert caption == (
        "Reciprocal Rank Fusion of BM25 + LSA at k = 60: a document gets 1/(k + rank) from each list whose "
        "top 10 holds it (k1 = 1.2, b = 0.75, d = 6)."
    )
    assert axis == "1/(k + BM25 rank) + 1/(k + LSA rank)"
    caption, axis = ui.fusion_formula("weighted", p, 10)
    assert caption.startswith(
        "Weighted fusion of BM25 + LSA at alpha = 0.5: each document scores alpha × min-max(BM25) + "
    )
    assert axis == "alpha × minmax(BM25) + (1 − alpha) × minmax(LSA)"
    run = Params(members=("dense", "my *run*"), alpha=0.25, fusion_depth=100)
    caption, axis = ui.fusion_formula("weighted", run, 100)
    # the weighted fusion scores every document: its caption says so, as its rows do ("in neither top 10: the sum put
    # it here"), not that it fuses each member's top 100 (RRF's)
    assert caption == (
        "Weighted fusion of dense + my \\*run\\* at alpha = 0.25: each document scores alpha × min-max(dense) + "
        "(1 − alpha) × min-max(my \\*run\\*), each min-max normalised over every document's score for this "
        "question; every document competes and the fused list keeps the top 100, so a document in neither "
        "member's own top 100 can enter it on the sum."
    )
    assert axis == "alpha × minmax(dense) + (1 − alpha) × minmax(my *run*)"  # a chart title: plain text
    three = Params(members=("BM25", "dense", "LSA"), weights=(0.5, 1.0, 0.25), dims=4)
    caption, axis = ui.fusion_formula("weighted", three, 10)
    assert "each document scores 0.5 × min-max(BM25) + 1 × min-max(dense) + 0.25 × min-max(LSA)" in caption
    assert caption.endswith(
        "the fused list keeps the top 10, so a document in no member's own top 10 can enter it on "
        "the sum (the members at k1 = 1.2, b = 0.75, d = 4)."
    )
    assert "fused from each top" not in caption
    assert axis == "0.5 × minmax(BM25) + 1 × minmax(dense) + 0.25 × minmax(LSA)"
    assert ui.fusion_formula("RRF", three, 10)[1] == "1/(k + BM25 rank) + 1/(k + dense rank) + 1/(k + LSA rank)"


def test_the_alpha_sweeps_are_offered_for_exactly_two_members_and_d_with_lsa_fused():
    one = ["k1 × b (BM25)", "LSA dimensions", "RRF constant"]
    assert ui.offered(("BM25", "LSA")) == list(ui.WHAT)
    text = "text analysis × k1 × b"  # BM25's own: offered whatever is fused
    assert ui.offered(("BM25", "dense")) == [*one, "alpha (weighted fusion)", text]  # LSA not fused: no sweep with d
    assert ui.offered(("BM25", "LSA", "dense")) == [*one, "RRF k × d", "k1 × d", text]
    assert ui.offered(("dense", "LSA")) == [
        *one,
        "alpha (weighted fusion)",
        "alpha × d",
        "RRF k × d",
        text,
    ]  # no k1 × d
    assert ui.offered(("BM25",)) == [*one, text]
    assert ui.no_joint_text(("BM25", "dense")).startswith(
        "No joint sweep with d: it varies LSA's dimensions inside the fusion"
    )
    assert ui.no_joint_text(("dense", "LSA")) == "No k1 × d sweep: the sidebar fuses dense + LSA, without BM25."
    assert ui.no_joint_text(("BM25", "LSA")) == ""
    text = ui.no_alpha_text(("BM25", "LSA", "a_b"))
    assert "fuses BM25 + LSA + a\\_b" in text and "with 3 each has its own weight, set in the sidebar" in text
    assert (
        ui.axis_title("alpha", ("dense", "BM25")) == "alpha (weight of dense)"
        and ui.axis_title("rrf_k", ()) == "RRF constant k"
    )
    assert ui.members_text(("BM25", "[x](y)")) == "BM25 + \\[x\\]\\(y\\)"


def test_the_landscape_is_kept_in_the_datasets_engine(invented):
    assert CACHE_SIZES[ui.MEMO] >= 3 and CACHE_SIZES[ui.VERSUS] >= 1  # kinds of the engine's one memo, bounded
    memo = cache.engine(invented).memo
    first = ui.landscape(invented, "dims", "ndcg@5", ())
    assert ui.landscape(invented, "dims", "ndcg@5", ()) is first  # a second call computes nothing
    assert ui.landscape(invented, "dims", "recall@5", ()) is not first  # the metric is in the key
    sw = tuning.sweep(invented, "dims", "ndcg@5", Params(), cache.engine(invented))
    assert first.sweep.means.tolist() == pytest.approx(sw.means.tolist())
    assert first.best == tuning.best_setting(sw.values)
    assert memo.size(ui.MEMO) >= 2


def test_a_fusion_landscape_is_keyed_by_its_members_and_their_content(invented):
    from retrieval.corpus import dataset

    engine = cache.engine(invented)
    lines = [
        f"{qid} Q0 {did} {i + 1} {10 - i} t"
        for qid in invented.query_ids
        for i, did in enumerate(invented.doc_ids[:10])
    ]
    run = dataset.parse_run("\n".join(lines).encode(), "a.run", "mine")
    other = dataset.parse_run("\n".join(lines[::-1][:50]).encode(), "b.run", "mine")  # the same name, other content
    p = Params(members=("BM25", "mine"))
    first = ui.landscape(invented, "rrf_k", "ndcg@5", ui.held_fixed("rrf_k", p, (run,)), (run,))
    assert ui.landscape(invented, "rrf_k", "ndcg@5", ui.held_fixed("rrf_k", p, (run,)), (run,)) is first
    second = ui.landscape(invented, "rrf_k", "ndcg@5", ui.held_fixed("rrf_k", p, (other,)), (other,))
    assert second is not first
    for land, source in ((first, run), (second, other)):
        want = tuning.sweep_rrf_k(
            invented,
            "ndcg@5",
            engine=engine,
            base=ui.held_params(ui.held_fixed("rrf_k", p, (source,))),
            sources=(source,),
        )
        assert np.array_equal(land.sweep.values, want.values)
    rows = ui.explain(invented, "q01", "rrf", p, (run,))
    assert rows and all(list(r["ranks"]) == ["BM25", "mine"] for r in rows)
    assert ui.explain(invented, "q01", "rrf", p, (run,)) is rows


def test_a_joint_landscape_is_kept_in_the_engine_and_drawn_as_cells(invented):
    held = ui.held_fixed("rrf_k,dims", Params())
    first = ui.landscape(invented, "rrf_k,dims", "ndcg@5", held)
    assert (
        ui.landscape(invented, "rrf_k,dims", "ndcg@5", ui.held_fixed("rrf_k,dims", Params(dims=14, rrf_k=5))) is first
    )
    want = tuning.sweep_joint(invented, "rrf_k,dims", "ndcg@5", engine=cache.engine(invented))
    assert np.array_equal(first.sweep.values, want.values) and first.resamples == tuning.sign_vectors_for(
        want.means.size
    )
    assert first.best == tuning.best_setting(want.values)
    points = ui.points_frame(first)
    best, near = first.sweep.setting(first.best), first.sweep.setting(first.sweep.nearest(rrf_k=60, dims=6))
    marks = ui.marks_frame(best, first.sweep.means[first.best], near, 0.5)
    spec = ui.joint_heatmap(points, marks, "rrf_k", "RRF constant k", "nDCG@5", select="pick").to_dict()
    layers = spec["layer"]
    assert layers[0]["mark"]["type"] == "rect" and layers[0]["encoding"]["x"]["field"] == "dims"
    assert layers[0]["encoding"]["y"]["field"] == "rrf_k" and layers[0]["encoding"]["x"]["type"] == "ordinal"
    # d's columns in ascending order, k's rows from the largest down; the click selects both fields
    assert layers[0]["encoding"]["x"]["sort"] == sorted(points["dims"].unique().tolist())
    assert layers[0]["encoding"]["y"]["sort"] == sorted(points["rrf_k"].unique().tolist(), reverse=True)
    (pick,) = spec["params"]  # the selection, on the top (invisible) layer of cells
    assert (
        pick["name"] == "pick"
        and pick["select"]["fields"] == ["rrf_k", "dims"]
        and pick["views"] == [layers[-1]["name"]]
    )
    assert ui.joint_heatmap(points, marks, "rrf_k", "k", "nDCG@5", domain=(0.0, 1.0)).to_dict()["layer"][0]["encoding"][
        "color"
    ]["scale"]["domain"] == [0.0, 1.0]
    assert (
        ui.axis_title("rrf_k,dims", ("BM25", "LSA")) == "RRF constant k"
        and ui.axis_title("alpha,dims", ("BM25", "LSA")) == "alpha (weight of BM25)"
    )


# ------------------------------------------------------------------------------------------- one verdict, page and command line


@pytest.mark.parametrize(
    "what, sidebar",
    [
        ("k1,b", {}),  # b = 0.75 lies between grid points; every setting ties with the best: flat
        ("dims", {}),  # d = 6, a grid point
        ("dims", {"dims": 12}),  # the best d
        ("alpha", {"alpha": 0.37}),  # between grid points: the current setting joins Holm's family
        ("alpha", {"alpha": 0.51}),  # between grid points, above every grid setting: nothing to move to
        ("alpha,dims", {}),
    ],
)
def test_the_page_and_the_command_line_say_the_same_verdict(invented, capsys, what, sidebar):
    """`python -m retrieval tune` prints tuning.verdict's words; the page's `judge`, from its own landscape, the
    sidebar's setting as the engine scores it and its folds, says the same words for the same numbers (the page in
    Markdown with its headline in bold, the terminal without the bold; each with its own name of the metric)."""
    from retrieval import cli

    flags = [f"--{n.replace('_', '-')}={v:g}" for n, v in sidebar.items()]
    assert cli.main(["tune", "--params", what, "--metric", "ndcg@5", "--folds", "5", *flags]) == 0
    (line,) = [x for x in capsys.readouterr().out.splitlines() if x.startswith(cli.VERDICT)]
    printed = line[len(cli.VERDICT) :]

    p = Params(**sidebar)
    held = ui.held_fixed(what, p)
    land = ui.landscape(invented, what, "ndcg@5", held)
    current = ui.current_setting(land.sweep.names, p)
    current_vals = cache.engine(invented).evaluate(p, ["ndcg@5"]).values[tuning.SYSTEM_OF[what]]["ndcg@5"]
    folds = min(tuning.FOLDS, ui.max_folds(int(invented.evaluated.size)))  # the folds slider's default: 5
    cv = tuning.cross_validate(land.sweep.values, folds, tuning.SEED)
    said = ui.judge(invented, what, "ndcg@5", held, land, current, current_vals, cv, "ndcg@5")
    assert said.plain == printed
    if sidebar == {"alpha": 0.51}:
        assert said.kind == "best" and printed.startswith("The current setting scores above every setting of the grid")
    shown_md = ui.verdict_markdown(said)  # the page's Markdown: the library's words, the headline in bold
    assert shown_md.replace("**", "") == printed and shown_md.startswith("**")
    # the page's label names the metric its way; the rest of the words are the same
    shown = ui.judge(invented, what, "ndcg@5", held, land, current, current_vals, cv, "nDCG@5")
    assert shown.kind == said.kind and shown.plain == printed.replace("ndcg@5", "nDCG@5")
    # and the library's own report says it too
    report = tuning.to_json(tuning.tune(invented, what, "ndcg@5", p, engine=cache.engine(invented)))
    assert report["verdict"] == {"kind": said.kind, "text": printed}
    assert report["current"]["p_holm"] == said.versus.p_holm and report["current"]["on_grid"] == said.on_grid


def test_a_setting_between_grid_points_above_the_whole_grid_is_not_told_to_move():
    # between grid points the current setting may score above every grid setting: the best is no gain over it
    s = signals(diff=0.003, at_best=True, p=0.2, p_holm=1.0, gain=0.01)
    assert ui.verdict_kind(s) == "best" and not ui.offers_best("best")
    text = ui.verdict_text(s, "alpha", "alpha = 0.35", "nDCG@5")
    assert text.startswith(
        "**The current setting scores above every setting of the grid**: +0.003 nDCG@5 over the best "
        "of the 176 (alpha = 0.35)."
    )
    assert (
        "Expect less" not in text and "+0.01 nDCG@5 against it" in text
    )  # cross-validation shows no loss: none claimed


def test_the_verdict_claims_nothing_cross_validation_could_not_show():
    unstable = ui.verdict_text(signals(p_holm=0.01, gain=None), "d", "dims = 12", "nDCG@5")
    assert (
        "whether the gain carries over to new ones is unknown** (cross-validation needs at least 2 questions)"
        in unstable
    )
    assert "does not carry over" not in unstable and "the folds" not in unstable
    keep = ui.verdict_text(signals(gain=None, p=0.2), "d", "dims = 12", "nDCG@5")
    assert keep.endswith("and there are too few questions to cross-validate (at least 2 are needed).")
    best = ui.verdict_text(signals(at_best=True, diff=0.0, gain=None), "d", "dims = 12", "nDCG@5")
    assert best == "**The current setting is the best of the 176 settings.**"
    # "looks worse alone" is said only of a setting below the best
    assert "looks worse" not in ui.verdict_text(signals(p=0.01, diff=0.0, gain=0.0), "d", "dims = 12", "nDCG@5")


def test_the_verdict_reads_the_library_rule():
    # one rule: the page's names are the library's
    # the page's words are the library's, its headline in bold: the library writes no Markdown
    for changes in (
        {},
        dict(all_same=True, n_tied=176),
        dict(n_tied=176),
        dict(at_best=True, gain=-0.004),
        dict(p_holm=0.01, gain=None),
        dict(p_holm=0.01, gain=-0.0059),
        dict(p=0.0001, p_holm=0.0004),
    ):
        s = signals(**changes)
        shown, said = ui.verdict_text(s, "d", "dims = 12", "nDCG@5"), tuning.verdict_text(s, "d", "dims = 12", "nDCG@5")
        assert shown.replace("**", "") == said and "**" not in said and shown.startswith("**")
    assert ui.verdict_kind is tuning.verdict_kind
    assert ui.Signals is tuning.Signals and ui.Versus is tuning.Versus and ui.ALPHA_LEVEL == tuning.ALPHA_LEVEL
