"""ui/tuning.py: the Tuning page's builders, with the values the definitions give, and its landscape kept in
the dataset's engine."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from retrieval import tuning
from retrieval.engine import CACHE_SIZES
from retrieval.params import Params
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
    assert msg == ("Moved to the best setting: the sidebar now holds k1 = 1.25, b = 0.75 "
                   "(snapped to the slider's steps: k1 1.23 → 1.25).")
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
    assert ui.scale_text(True, means, True) == (" The palette spans the grid's own range, 0.5000 to 0.7500: every setting "
                                                "can't be told apart from the best, so the colours show noise.")
    assert ui.scale_text(False, means, False) == " The y axis spans the grid's own range, 0.5000 to 0.7500."
    assert ui.steps_text(("k1", "b")) == "k1: 0.05, b: 0.05"
    assert ui.steps_text(("rrf_k",)) == "rrf_k: 1"
    assert ui.how_to_read("dims", ("dims",)).startswith("Click near a point to move the sidebar's dims there.")


def test_held_fixed_and_current_setting():
    p = Params(k1=0.9, b=0.4, dims=3, rrf_k=20, alpha=0.3)
    assert ui.held_fixed("alpha", p) == (0.9, 0.4, 3, 10, ("BM25", "LSA"), (None, None)) == ui.held_fixed("rrf_k", p)
    assert ui.held_fixed("k1,b", p) == () and ui.held_fixed("dims", p) == ()
    # an extra source among the members is held by its content's fingerprint, never by the object
    dense = SimpleNamespace(name="dense", fingerprint="f1")
    run = SimpleNamespace(name="r *1*", fingerprint="f2")
    q = Params(members=("dense", "BM25", "r *1*"), weights=(1.0, 2.0, 0.5), fusion_depth=100)
    assert ui.held_fixed("rrf_k", q, (dense, run)) == (1.2, 0.75, 6, 100, ("dense", "BM25", "r *1*"), ("f1", None, "f2"))
    held = ui.held_params(ui.held_fixed("rrf_k", q, (dense, run)))
    assert held.members == q.members and held.fusion_depth == 100 and held.weights == (1.0, 1.0, 1.0)
    assert ui.held_params(ui.held_fixed("alpha", p)) == Params(k1=0.9, b=0.4, dims=3)
    assert ui.current_setting(("k1", "b"), p) == {"k1": 0.9, "b": 0.4}
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
    cells = ui.heatmap_cells(pd.DataFrame({"k1": [0.0, 0.2], "b": [0.5, 0.5]}), np.array([0.0, 0.2, 0.6]), np.array([0.0, 0.5, 1.0]))
    assert cells["k1_lo"].tolist() == pytest.approx([-0.1, 0.1]) and cells["k1_hi"].tolist() == pytest.approx([0.1, 0.3])
    assert cells["b_lo"].tolist() == [0.25, 0.25] and cells["b_hi"].tolist() == [0.75, 0.75]


def _land(values: np.ndarray, best: int, p, p_holm) -> ui.Landscape:
    return ui.Landscape(SimpleNamespace(values=values), best, None, np.asarray(p, float), np.asarray(p_holm, float))


def test_versus_best_on_the_grid_reads_the_sweeps_p_values():
    land = _land(np.zeros((3, 4)), 0, [1.0, 0.02, 0.3], [1.0, 0.04, 0.3])
    assert ui.versus_best(land, np.zeros(4), True, 1) == ui.Versus(
        0.02, 0.04, 2, "the 2 comparisons of every other grid setting with the best")


def test_versus_best_between_grid_points_adds_the_current_setting_to_the_family():
    values = np.array([[1.0, 0.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 1.0]])
    land = _land(values, 0, [1.0, 0.2, 0.5], [1.0, 0.4, 0.5])
    vs = ui.versus_best(land, values[0].copy(), False, 2)
    # the same values as the best: every sign vector gives a mean difference of 0, so p = 1; Holm over
    # {0.2, 0.5, 1}: the largest stays 1
    assert (vs.p, vs.p_holm, vs.family) == (1.0, 1.0, 3)
    assert vs.family_text.endswith("plus the current setting, which lies between grid points")


@pytest.mark.parametrize("args, start", [
    ((True, True, 0.0, (1.0, 1.0)), "**The current setting is the best.**"),
    ((False, True, 0.0, (1.0, 1.0)), "**The current setting scores exactly what the best scores**"),
    ((False, False, 0.0, (1.0, 1.0)), "**The current setting ties with the best**"),
    ((False, False, -0.1, (0.001, 0.04)), "**The current setting is worse than the best beyond chance**"),
    ((False, False, -0.1, (0.01, 0.2)), "**Alone, the current setting looks worse than the best** (p = 0.010)"),
    ((False, False, -0.1, (0.3, 0.9)), "**The current setting can't be told apart from the best** (p = 0.300, Holm-adjusted 0.900)"),
])
def test_verdict_follows_the_definitions_in_order(args, start):
    is_best, identical, diff, (p, p_holm) = args
    said = ui.verdict(is_best, identical, diff, ui.Versus(p, p_holm, 12, ""), 13)
    assert said.startswith(start)
    if start.startswith("**Alone"):
        assert "Holm-adjusted p = 0.200" in said and "picking the best of 13 settings" in said


def test_significant_counts_leave_the_best_out():
    land = _land(np.zeros((4, 1)), 2, [0.01, 0.05, 0.0, 0.2], [0.03, 0.1, 0.0, 0.4])
    assert ui.significant_counts(land) == (2, 1)  # 0.01 and 0.05 <= 0.05 before; only 0.03 after


def test_method_and_floor_texts():
    assert ui.method_text(3) == "exact: all 2^3 = 8 sign vectors"
    assert ui.floor_text(100, 9_999) == (" With 9,999 random sign vectors the smallest p-value is 2/10,000 ≈ 0.0002, "
                                         "so no Holm-adjusted p over 100 comparisons falls below 0.020.")
    assert ui.floor_text(10_000, 9_999).endswith("falls below 1.000.")


def test_validation_text_reads_the_optimism_and_the_gain():
    text = ui.validation_text(0.7, 0.65, 176, 14, 0.6)
    assert text == ("Choosing the best of 176 settings on all 14 questions reports 0.7000; on questions the choice never saw, "
                    "the same procedure scores 0.6500. The 0.0500 between them is over-fitting: the tuning fitted these "
                    "particular questions, not the retriever. The sidebar's setting scores 0.6000: tuning gains 0.0500 on unseen questions.")
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
    assert wins.to_dict("records")[:2] == [{"system": "A", "how": "alone", "questions": 1, "order": 0},
                                           {"system": "A", "how": "tied with another system", "questions": 1, "order": 1}]


MEMBERS = ("BM25", "my *run*")
ROWS = [
    {"doc_id": "d1", "grade": 2, "fused_rank": 1, "ranks": {"BM25": 1, "my *run*": 3}, "contributions": {"BM25": 0.5, "my *run*": 0.25},
     "total": 0.75, "in_top": MEMBERS, "rescued_by": "both"},
    {"doc_id": "d2", "grade": 0, "fused_rank": 2, "ranks": {"BM25": None, "my *run*": 1}, "contributions": {"BM25": 0.0, "my *run*": 0.5},
     "total": 0.5, "in_top": ("my *run*",), "rescued_by": "my *run*"},
    {"doc_id": "d3", "grade": 1, "fused_rank": None, "ranks": {"BM25": None, "my *run*": None}, "contributions": {"BM25": 0.0, "my *run*": 0.0},
     "total": 0.0, "in_top": (), "rescued_by": None},
    {"doc_id": "d4", "grade": 0, "fused_rank": 3, "ranks": {"BM25": 40, "my *run*": None}, "contributions": {"BM25": 0.2, "my *run*": 0.2},
     "total": 0.4, "in_top": (), "rescued_by": None},
]


def test_fusion_rows_labels_and_notes():
    assert [ui.row_label(r) for r in ROWS] == ["#1 · d1 ✓2", "#2 · d2", "not fused · d3 ✓1", "#3 · d4"]
    assert [ui.contribution_note(r, 10, 2) for r in ROWS] == [
        "in both top 10s", "only in my *run*'s top 10", "relevant, left out of the fused list", "in neither top 10: the sum put it here"]
    parts = ui.contribution_parts(ROWS, 10, MEMBERS)
    assert len(parts) == 8 and parts["retriever"].tolist()[:2] == ["BM25", "my *run*"]
    assert parts["contribution"].tolist()[:2] == [0.5, 0.25] and parts["rank"].tolist()[:4] == ["1", "3", "—", "1"]
    table = ui.contribution_table(ROWS, MEMBERS, 10).set_index("document")
    assert list(table.columns) == ["grade", "fused rank", "BM25 rank", "my *run* rank", "from BM25", "from my *run*", "total",
                                   "in the top 10 of"]
    # only documents of the fused list, of any grade, say whose top list holds them; the left-out relevant one: nothing
    assert table["in the top 10 of"].tolist() == ["both", "my *run* only", "", "neither"]
    assert table.loc["d2", "BM25 rank"] == "—" and table.loc["d1", "my *run* rank"] == "3" and table.loc["d4", "BM25 rank"] == "40"
    assert table.loc["d2", "from my *run*"] == 0.5


def test_holders_with_three_members():
    r = {"fused_rank": 4, "in_top": ("a", "b")}
    assert ui.holders_text(r, 3) == "a, b" and ui.contribution_note(r, 10, 3) == "in the top 10s of a, b"
    every = {"fused_rank": 1, "in_top": ("a", "b", "c")}
    assert ui.holders_text(every, 3) == "all 3" and ui.contribution_note(every, 10, 3) == "in all 3 top 10s"
    nobody = {"fused_rank": 2, "in_top": ()}
    assert ui.holders_text(nobody, 3) == "none" and ui.contribution_note(nobody, 10, 3) == "in no top 10: the sum put it here"


def test_fusion_formula_at_the_sidebars_values():
    p = Params(k1=1.2, b=0.75, dims=6, rrf_k=60, alpha=0.5)
    caption, axis = ui.fusion_formula("RRF", p, 10)
    assert caption == ("Reciprocal Rank Fusion of BM25 + LSA at k = 60: a document gets 1/(k + rank) from each list whose "
                       "top 10 holds it (k1 = 1.2, b = 0.75, d = 6).")
    assert axis == "1/(k + BM25 rank) + 1/(k + LSA rank)"
    caption, axis = ui.fusion_formula("weighted", p, 10)
    assert caption.startswith("Weighted fusion of BM25 + LSA at alpha = 0.5: each document scores alpha × min-max(BM25) + ")
    assert axis == "alpha × minmax(BM25) + (1 − alpha) × minmax(LSA)"
    run = Params(members=("dense", "my *run*"), alpha=0.25, fusion_depth=100)
    caption, axis = ui.fusion_formula("weighted", run, 100)
    assert caption == ("Weighted fusion of dense + my \\*run\\* at alpha = 0.25: each document scores alpha × min-max(dense) + "
                       "(1 − alpha) × min-max(my \\*run\\*), each min-max normalised over every document's score for this "
                       "question (fused from each top 100).")
    assert axis == "alpha × minmax(dense) + (1 − alpha) × minmax(my *run*)"  # a chart title: plain text
    three = Params(members=("BM25", "dense", "LSA"), weights=(0.5, 1.0, 0.25), dims=4)
    caption, axis = ui.fusion_formula("weighted", three, 10)
    assert "each document scores 0.5 × min-max(BM25) + 1 × min-max(dense) + 0.25 × min-max(LSA)" in caption
    assert caption.endswith("(fused from each top 10, k1 = 1.2, b = 0.75, d = 4).")
    assert axis == "0.5 × minmax(BM25) + 1 × minmax(dense) + 0.25 × minmax(LSA)"
    assert ui.fusion_formula("RRF", three, 10)[1] == "1/(k + BM25 rank) + 1/(k + dense rank) + 1/(k + LSA rank)"


def test_the_alpha_sweep_is_offered_for_exactly_two_members():
    assert ui.offered(("BM25", "dense")) == list(ui.WHAT)
    assert ui.offered(("BM25", "LSA", "dense")) == ["k1 × b (BM25)", "LSA dimensions", "RRF constant"]
    assert ui.offered(("BM25",)) == ["k1 × b (BM25)", "LSA dimensions", "RRF constant"]
    text = ui.no_alpha_text(("BM25", "LSA", "a_b"))
    assert "fuses BM25 + LSA + a\\_b" in text and "with 3 each has its own weight, set in the sidebar" in text
    assert ui.axis_title("alpha", ("dense", "BM25")) == "alpha (weight of dense)" and ui.axis_title("rrf_k", ()) == "RRF constant k"
    assert ui.members_text(("BM25", "[x](y)")) == "BM25 + \\[x\\]\\(y\\)"


def test_the_landscape_is_kept_in_the_datasets_engine(invented):
    assert CACHE_SIZES[ui.MEMO] >= 3
    memo = cache.engine(invented).memo
    first = ui.landscape(invented, "dims", "ndcg@5", ())
    assert ui.landscape(invented, "dims", "ndcg@5", ()) is first  # a second call computes nothing
    assert ui.landscape(invented, "dims", "recall@5", ()) is not first  # the metric is in the key
    sw = tuning.sweep(invented, "dims", "ndcg@5", Params(), cache.engine(invented))
    assert first.sweep.means.tolist() == pytest.approx(sw.means.tolist())
    assert first.best == tuning.best_setting(sw.values)
    assert memo.size(ui.MEMO) >= 2


def test_a_fusion_landscape_is_keyed_by_its_members_and_their_content(invented):
    from retrieval import dataset

    engine = cache.engine(invented)
    lines = [f"{qid} Q0 {did} {i + 1} {10 - i} t" for qid in invented.query_ids for i, did in enumerate(invented.doc_ids[:10])]
    run = dataset.parse_run("\n".join(lines).encode(), "a.run", "mine")
    other = dataset.parse_run("\n".join(lines[::-1][:50]).encode(), "b.run", "mine")  # the same name, other content
    p = Params(members=("BM25", "mine"))
    first = ui.landscape(invented, "rrf_k", "ndcg@5", ui.held_fixed("rrf_k", p, (run,)), (run,))
    assert ui.landscape(invented, "rrf_k", "ndcg@5", ui.held_fixed("rrf_k", p, (run,)), (run,)) is first
    second = ui.landscape(invented, "rrf_k", "ndcg@5", ui.held_fixed("rrf_k", p, (other,)), (other,))
    assert second is not first
    for land, source in ((first, run), (second, other)):
        want = tuning.sweep_rrf_k(invented, "ndcg@5", engine=engine, base=ui.held_params(ui.held_fixed("rrf_k", p, (source,))),
                                  extra=(source,))
        assert np.array_equal(land.sweep.values, want.values)
    rows = ui.explain(invented, "q01", "rrf", p, (run,))
    assert rows and all(list(r["ranks"]) == ["BM25", "mine"] for r in rows)
    assert ui.explain(invented, "q01", "rrf", p, (run,)) is rows
