"""ui/per_question.py: the Per question page's builders, with the values their definitions give."""

from __future__ import annotations

import pandas as pd

from retrieval.core.params import Params
from retrieval.corpus.dataset import assemble
from retrieval.engine.engine import Engine
from ui import charts
from ui import per_question as ui

# question index x system: rank of the first relevant document, 0 = not found
FIRST = pd.DataFrame({"BM25": [1, 0, 7, 2], "LSA": [3, 0, 1, 9]}, index=[0, 2, 3, 5])


def test_cut_keeps_one_line_and_n_characters():
    assert ui.cut("a  b\n c", 10) == "a b c"
    assert ui.cut("abcdefghij", 10) == "abcdefghij"
    assert ui.cut("abcdefghijk", 10) == "abcdefghi…"


def test_a_rank_is_written_by_the_one_rule():
    assert ui.rank_text(0) == charts.NOT_FOUND and ui.rank_text(3) == "3"
    assert ui.rank_text(0, 100, True) == "> 100" and ui.rank_text(7, 100) == "7"  # a member lists it: beyond the top N
    assert ui.rank_text(0, 100) == charts.NOT_FOUND  # no member lists a relevant document: not found, fusion or not


def test_a_cells_text_and_what_its_miss_means():
    assert [
        ui.cell_label(0),
        ui.cell_label(0, 10, True),
        ui.cell_label(0, 10),
        ui.cell_label(4),
        ui.cell_label(4, 10, True),
    ] == ["—", "> 10", "—", "4", "4"]
    assert ui.missing_text() == charts.NOT_FOUND and ui.missing_text(1000, True) == "beyond the fusion's top 1000"
    assert ui.missing_text(1000) == charts.NOT_FOUND
    assert ui.fusion_depths(["BM25", "weighted", "mine", "RRF"], Params(fusion_depth=100)) == {
        "weighted": 100,
        "RRF": 100,
    }


def test_missed_in_the_top_k_by_some_system():
    assert ui.missed(FIRST, 5).tolist() == [False, True, True, True]
    assert ui.missed(FIRST, 9).tolist() == [False, True, False, False]


def test_hardest_first_orders_by_not_found_then_beyond_k_then_mean_rank():
    # index 2: two not found; 3 and 5: one beyond 5 each, mean ranks 4 and 5.5; 0: none, mean 2
    assert ui.hardest_first(FIRST, 5, 10).index.tolist() == [2, 5, 3, 0]
    tied = pd.DataFrame({"A": [4, 4, 1]}, index=[7, 8, 9])
    assert ui.hardest_first(tied, 3, 5).index.tolist() == [7, 8, 9]  # stable among equals


def test_pages():
    assert [ui.page_count(n, 30) for n in (1, 30, 31, 60, 61)] == [1, 1, 2, 2, 3]
    rows = pd.DataFrame({"x": range(65)})
    assert ui.page_rows(rows, 1, 30)["x"].tolist() == list(range(30))
    assert ui.page_rows(rows, 3, 30)["x"].tolist() == list(range(60, 65))


def test_counts_frame_splits_every_question_three_ways():
    counts = ui.counts_frame(FIRST, 5)
    assert counts.index.tolist() == ["BM25", "LSA"]
    assert counts.loc["BM25"].tolist() == [2, 1, 1]  # ranks 1 and 2 inside; 7 beyond; one not found
    assert counts.loc["LSA"].tolist() == [2, 1, 1]
    assert list(counts.columns) == ["in the top 5", "beyond 5", "not found"]


def test_a_fusions_misses_are_counted_beyond_its_top_n():
    first = FIRST.assign(RRF=[1, 0, 0, 0])  # a fusion of depth 10 missing three questions
    found = ui.found_by_members(first, ("BM25", "LSA"))
    assert found.tolist() == [True, False, True, True]  # question 2: neither member lists a relevant document
    counts = ui.counts_frame(first, 5, {"RRF": 10}, found)
    assert list(counts.columns) == ["in the top 5", "beyond 5", "not found", "> 10"]
    assert counts.loc["RRF"].tolist() == [1, 0, 1, 2]  # question 2 not found; 3 and 5 beyond its top 10
    assert counts.loc["BM25"].tolist() == [2, 1, 1, 0]  # not a fusion: its miss is not found
    assert counts.loc["RRF", "not found"] + counts.loc["RRF", "> 10"] == int((first["RRF"] == 0).sum())
    assert not counts.isna().any().any()  # every cell says something


def test_grade_text_and_short_list_reason():
    grades = {"d1": 2, "d2": 0}
    assert [ui.grade_text(d, grades) for d in ("d1", "d2", "d3")] == ["✓ 2", "0", ""]
    assert ui.short_list_reason("RRF", 100) == "the fusions keep their top 100"
    assert ui.short_list_reason("mysys", 100) == "the run file lists no more"


def test_styled_marks_the_relevant_rows():
    df = pd.DataFrame({"grade": ["✓ 1", "", "0"], "score": [1.0, 0.5, 0.25]})
    html = ui.styled(df).to_html()
    style = html.split("</style>")[0]  # the CSS rules: only the first row's two cells are styled
    assert "row0_col0" in style and "row0_col1" in style and "font-weight: bold" in style
    assert "row1_" not in style and "row2_" not in style
    assert "0.5000" in html and "0.2500" in html


DS = assemble(
    "t",
    [("d1", "apple pie"), ("d2", "pear tart"), ("d3", "apple jam")],
    [("q1", "apple"), ("q2", "pear")],
    [("q1", "d3", 1), ("q1", "d1", 2), ("q1", "d2", 0), ("q2", "d2", 1)],
)


def test_heatmap_cells_one_per_question_and_system():
    shown = pd.DataFrame({"BM25": [1, 0]}, index=[0, 1])
    cells = ui.heatmap_cells(DS, shown)
    assert cells[["qid", "row", "system", "rank", "label", "missing"]].values.tolist() == [
        ["q1", "q1 · apple", "BM25", 1, "1", charts.NOT_FOUND],
        ["q2", "q2 · pear", "BM25", 0, "—", charts.NOT_FOUND],
    ]
    fused = ui.heatmap_cells(
        DS, shown.rename(columns={"BM25": "RRF"}), {"RRF": 10}, pd.Series([True, True], index=[0, 1])
    )
    assert fused[["label", "missing"]].values.tolist() == [
        ["1", "beyond the fusion's top 10"],
        ["> 10", "beyond the fusion's top 10"],
    ]
    lost = ui.heatmap_cells(
        DS, shown.rename(columns={"BM25": "RRF"}), {"RRF": 10}, pd.Series([True, False], index=[0, 1])
    )
    assert lost[["label", "missing"]].values.tolist()[1] == ["—", charts.NOT_FOUND]  # no member lists one: not found
    long = assemble("t", [("d1", "x")], [("q1", "word " * 30)], [("q1", "d1", 1)])
    assert ui.heatmap_cells(long, pd.DataFrame({"BM25": [1]}, index=[0]))["row"][0] == "q1 · " + ui.cut(
        "word " * 30, ui.ROW_CHARS
    )


def _closing():
    import streamlit as st

    from ui import per_question as page

    st.session_state.setdefault("calls", 0)
    st.session_state["calls"] += 1
    if st.session_state["calls"] > 1:
        page.dialog_closed()
    st.text(page.heatmap_key())


def test_closing_the_dialog_names_a_new_chart():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_closing).run()
    assert at.text[0].value == "pq_heatmap_0"
    assert at.run().text[0].value == "pq_heatmap_1" and at.run().text[0].value == "pq_heatmap_2"


def test_one_question_reads_its_judgements_and_the_systems_lists():
    ev = Engine(DS).evaluate(Params(), "ndcg@5")
    one = ui.Question(DS, ev, 0)
    assert one.grades == {"d3": 1, "d1": 2, "d2": 0} and one.relevant == {"d3": 1, "d1": 2}
    bm25 = one.ranking_table("BM25", 10)
    assert set(bm25["document"]) == {"d1", "d3"} and bm25["rank"].tolist() == [1, 2]  # the two holding "apple"
    assert sorted(bm25["grade"]) == ["✓ 1", "✓ 2"]
    assert one.firsts["BM25"] == 1  # both are relevant
    judged = one.judged_table()
    assert judged["document"].tolist() == ["d1", "d3", "d2"]  # by grade, then id
    assert judged["BM25"].isna().tolist() == [False, False, True]  # d2 shares no word with the question
    assert one.on_screen(10)[:3] == ["d3", "d1", "d2"]
    assert one.doc_text(-1) == "(not in the corpus)"
