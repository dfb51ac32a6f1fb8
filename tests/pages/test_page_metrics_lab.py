"""The Metrics lab page, entered through app.py: the article's worked example, the scikit-learn trap, the order-blind
ID-based context metrics beside the rank-aware ones, the shuffle, presets, edits and bad edits."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from apptest import open_app

pytestmark = pytest.mark.app

PAGE = "pages/metrics_lab.py"


def open_lab(before=None) -> AppTest:
    """app.py, then (after `before(at)` on the first page, if given) the page under test."""
    return open_app(PAGE, before=before)


def figures(at: AppTest) -> dict[str, str]:
    """Every st.metric as label -> value (the first of a repeated label)."""
    out: dict[str, str] = {}
    for m in at.metric:
        out.setdefault(m.label, m.value)
    return out


def set_based(at: AppTest) -> dict[str, str]:
    """The order-blind section's four figures: context precision, context recall, RR, nDCG@5."""
    labels = [m.label for m in at.metric]
    start = labels.index("context precision (ID-based)")
    return {m.label: m.value for m in list(at.metric)[start : start + 4]}


def edit(at: AppTest, **state) -> AppTest:
    """Seed the ranking editor's edit state (edited_rows / added_rows / deleted_rows), as a person's edits would, and rerun."""
    key = at.data_editor[0].key
    at.session_state[key] = {"edited_rows": {}, "added_rows": [], "deleted_rows": [], **state}
    return at.run()


@pytest.fixture(scope="module")
def at():
    return open_lab()


def test_starts_from_the_article_example(at):
    assert at.title[0].value == "Metrics lab"
    ranking = at.data_editor[0].value
    assert list(ranking["document"]) == ["x", "y", "a", "b", "z"] and list(ranking["grade"]) == [0, 0, 2, 1, 0]
    assert list(at.data_editor[1].value["document"]) == ["c"]
    assert at.text_input(key="ml_others").value == "w v"
    f = figures(at)
    assert f["hit@5"] == "1.000000" and f["recall@5"] == "0.666667" and f["RR"] == "0.333333"
    assert f["nDCG@5 (linear gain)"] == "0.456949"
    assert f["nDCG@5 (exponential gain)"] == "0.467371"


def test_every_dcg_term_is_written_out(at):
    written = [df.value for df in at.dataframe if "discount" in df.value.columns]
    assert len(written) == 4  # DCG and ideal DCG, linear and exponential gain
    terms, ideal = written[0], written[1]
    assert list(terms.columns) == ["position", "document", "grade", "gain", "discount", "term"]
    assert list(terms["document"]) == ["x", "y", "a", "b", "z"]
    assert terms["discount"].round(6).tolist() == [1.0, 0.63093, 0.5, 0.430677, 0.386853]
    assert list(ideal["document"]) == ["a", "b", "c"]
    assert round(terms["term"].sum() / ideal["term"].sum(), 6) == 0.456949
    assert any("= 1.430677 / 3.130930 = **0.456949**" in m.value for m in at.markdown)
    exp_terms, exp_ideal = written[2], written[3]
    assert exp_terms["gain"].tolist() == [0, 0, 3, 1, 0] and exp_ideal["gain"].tolist() == [3, 1, 1]


def test_the_sklearn_trap_side_by_side(at):
    f = figures(at)
    assert f["ours, nDCG@5"] == "0.456949"
    assert f["scikit-learn, whole universe"] == "0.456949"
    assert f["scikit-learn, only the retrieved"] == "0.543791"
    assert any("never sees c" in w.value for w in at.warning)


def test_set_based_context_metrics_beside_the_rank_aware_ones(at):
    s = set_based(at)
    assert s == {
        "context precision (ID-based)": "0.400000",
        "context recall (ID-based)": "0.666667",
        "RR": "0.333333",
        "nDCG@5": "0.456949",
    }
    orders = next(df.value for df in at.dataframe if "context precision" in df.value.columns)
    assert len(orders) == 6
    assert set(orders["context precision"].round(3)) == {0.333} and set(orders["context recall"]) == {0.5}
    assert orders["RR"].nunique() == 3


def test_a_first_gives_0_776():
    at = open_lab()
    at.selectbox(key="ml_preset").set_value("a first (a x y b z)").run()
    assert not at.exception
    f = figures(at)
    assert round(float(f["nDCG@5 (linear gain)"]), 3) == 0.776 and f["RR"] == "1.000000"
    assert list(at.data_editor[0].value["document"]) == ["a", "x", "y", "b", "z"]


def test_moving_a_first_by_editing_the_cells_gives_0_776():
    at = edit(open_lab(), edited_rows={0: {"document": "a", "grade": 2}, 2: {"document": "x", "grade": 0}})
    assert not at.exception and not at.error
    f = figures(at)
    assert round(float(f["nDCG@5 (linear gain)"]), 3) == 0.776 and f["RR"] == "1.000000"
    assert f["scikit-learn, whole universe"] == f["nDCG@5 (linear gain)"]


def test_the_shuffle_moves_mrr_and_ndcg_but_not_the_set_metrics():
    at = open_lab()
    start = set_based(at)
    documents = set(at.data_editor[0].value["document"])
    seen_rr, seen_ndcg = {start["RR"]}, {start["nDCG@5"]}
    for _ in range(6):
        at.button(key="ml_shuffle").click().run()
        assert not at.exception
        now = set_based(at)
        assert now["context precision (ID-based)"] == start["context precision (ID-based)"]
        assert now["context recall (ID-based)"] == start["context recall (ID-based)"]
        assert set(at.data_editor[0].value["document"]) == documents
        seen_rr.add(now["RR"])
        seen_ndcg.add(now["nDCG@5"])
    assert len(seen_rr) > 1 and len(seen_ndcg) > 1
    moved = next(df.value for df in at.dataframe if "moved" in df.value.columns).set_index("metric")["moved"]
    assert moved["context precision"] == "no" and moved["context recall"] == "no"


@pytest.mark.parametrize(
    "state, message",
    [
        ({"edited_rows": {0: {"document": ""}}}, "position 1: the document id is empty"),
        ({"edited_rows": {0: {"document": "a"}}}, "document 'a' is already at position 1"),
        ({"edited_rows": {1: {"grade": 1.5}}}, "position 2 (y): the grade must be a whole number"),
        ({"added_rows": [{"grade": 1}]}, "position 6: the document id is empty"),
    ],
)
def test_bad_edits_show_a_clear_message_not_an_exception(state, message):
    at = edit(open_lab(), **state)
    assert not at.exception
    assert any(message in e.value for e in at.error), [e.value for e in at.error]
    assert not at.metric  # nothing is scored from a broken table
    at.run()  # the next run still goes through app.py: the sidebar is there (a stopped run kept app.py's frame flag set)
    assert not at.exception and at.sidebar.slider


def test_start_over_undoes_the_edits():
    at = edit(open_lab(), edited_rows={0: {"document": ""}})
    assert at.error
    at.button(key="ml_start_over").click().run()
    assert not at.exception and not at.error
    assert list(at.data_editor[0].value["document"]) == ["x", "y", "a", "b", "z"]
    assert figures(at)["nDCG@5 (linear gain)"] == "0.456949"


def test_a_judged_document_must_not_be_listed_twice():
    at = open_lab()
    key = at.data_editor[1].key
    at.session_state[key] = {"edited_rows": {0: {"document": "a"}}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert not at.exception
    assert any("document 'a' is already listed" in e.value for e in at.error)


def test_the_cutoff_follows_the_sidebar():
    at = open_lab(before=lambda at: at.sidebar.slider(key="k").set_value(3).run())
    f = figures(at)
    assert f["hit@3"] == "1.000000" and f["recall@3"] == "0.333333"
    assert round(float(f["nDCG@3 (linear gain)"]), 6) == round(1 / (2 + 1 / 1.584962500721156 + 0.5), 6)


def test_edits_survive_a_page_switch():
    at = edit(open_lab(), edited_rows={0: {"document": "a", "grade": 2}, 2: {"document": "x", "grade": 0}})
    at.switch_page("pages/overview.py").run()
    at.switch_page(PAGE).run()
    assert not at.exception
    assert list(at.data_editor[0].value["document"]) == ["a", "y", "x", "b", "z"]
    assert round(float(figures(at)["nDCG@5 (linear gain)"]), 3) == 0.776
