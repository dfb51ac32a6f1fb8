"""The Per question page, entered through app.py: the rank heatmap, then one question's rankings side by side."""

from __future__ import annotations

import pandas as pd
import pytest
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

from apptest import move, open_app

pytestmark = pytest.mark.app

PAGE = "pages/per_question.py"
SYSTEMS = ["BM25", "LSA", "dense", "weighted", "RRF"]  # on the invented corpus (its vectors ship)
UPLOADED = ["BM25", "LSA", "weighted", "RRF"]  # an uploaded corpus, not encoded


def heatmap(at) -> pd.DataFrame:
    """The heatmap's cells as the chart received them (qid, system, rank, label, ...), one row per cell."""
    charts = at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart")
    assert len(charts) == 1
    frames = [convert_arrow_bytes_to_pandas_df(d.data.data) for d in charts[0].proto.datasets]
    return max(frames, key=len)  # the label layer holds every cell; the colour layers split found / not found


def side_by_side(at) -> dict[str, pd.DataFrame]:
    """Each system's top list as shown: system -> table (rank, document, grade, score, text)."""
    out = {}
    for col in at.columns:
        heads = [m.value for m in col.markdown if m.value.startswith("**")]
        tables = [d.value for d in col.dataframe if "score" in d.value.columns]
        if heads and tables:
            out[heads[0].split("**")[1]] = tables[0]
    return out


def first_relevant(at) -> dict[str, str]:
    """The per-system cards: system -> rank of the first relevant document (or 'not found')."""
    return {m.label: m.value for m in at.metric}


@pytest.fixture(scope="module")
def at():
    return open_app(PAGE)


def test_opens_without_exception_with_its_defaults(at):
    assert not at.exception
    assert at.title[0].value == "Per question"
    assert at.segmented_control(key="pq_show").value == "all questions"
    assert at.segmented_control(key="pq_sort").value == "question order"
    q = at.selectbox(key="pq_question")
    assert q.value == 0 and q.options[0] == "q01 — how much does the Pro plan cost" and len(q.options) == 14
    assert not at.get("pagination")  # 14 questions fit on one page


def test_heatmap_has_every_question_and_system_with_not_found_labelled(at):
    cells = heatmap(at)
    assert len(cells) == 14 * 5 and list(dict.fromkeys(cells["system"])) == SYSTEMS
    by = cells.set_index(["qid", "system"])
    assert by.loc[("q10", "LSA"), "label"] == "13" and by.loc[("q10", "BM25"), "label"] == "—"
    assert by.loc[("q10", "BM25"), "status"] == "not found" and by.loc[("q10", "LSA"), "status"] == "beyond the top 5"
    assert by.loc[("q01", "LSA"), "label"] == "2" and by.loc[("q12", "BM25"), "label"] == "2"
    assert (cells["label"] == "—").sum() == 5  # q02 for BM25, LSA and both fusions, q10 for BM25
    # one rule: a fusion's miss is its cut ("> 10", the sidebar's fusion depth) only where a member lists a relevant
    # document (q10: LSA at 13); where none does (q02: neither BM25 nor LSA), it is not found, as for any system
    for fusion in ("weighted", "RRF"):
        assert (by.loc[("q10", fusion), "label"], by.loc[("q10", fusion), "status"]) == (
            "> 10",
            "beyond the fusion's top 10",
        )
        assert (by.loc[("q02", fusion), "label"], by.loc[("q02", fusion), "status"]) == ("—", "not found")
    assert "I want my data from yesterday back" in by.loc[("q10", "LSA"), "question"]  # the hover text


def test_counts_per_system(at):
    counts = at.dataframe[0].value
    assert list(counts.index) == SYSTEMS
    assert list(counts.columns) == ["in the top 5", "beyond 5", "not found", "> 10"]
    assert counts.loc["BM25"].tolist() == [12, 0, 2, 0]
    assert counts.loc["LSA"].tolist() == [12, 1, 1, 0]
    assert counts.loc["RRF"].tolist() == [12, 0, 1, 1]  # q02 not found (no member lists it), q10 beyond its top 10


def test_the_default_question_side_by_side(at):
    assert first_relevant(at) == {"BM25": "1", "LSA": "2", "dense": "1", "weighted": "1", "RRF": "1"}
    tables = side_by_side(at)
    assert list(tables) == SYSTEMS
    bm25 = tables["BM25"]
    assert bm25["document"].tolist() == ["pricing1", "sso1", "pricing2"]  # BM25 scores only three documents
    assert bm25["grade"].tolist() == ["✓ 2", "", "✓ 1"]
    assert len(tables["LSA"]) == 10 and tables["LSA"]["document"].tolist()[:3] == ["sso1", "pricing1", "pricing2"]
    assert tables["LSA"]["text"].str.len().gt(0).all()


def test_q02_no_member_finds_so_the_fusions_do_not_find_it_either():
    at = open_app(PAGE)
    at.selectbox(key="pq_question").set_value(1).run()
    assert first_relevant(at) == {
        "BM25": "not found",
        "LSA": "not found",
        "dense": "1",
        "weighted": "not found",
        "RRF": "not found",
    }
    heads = [m.value for m in at.markdown if m.value.startswith("**RRF**")]
    assert heads == ["**RRF** · no relevant document in its list, nor in its members'"]


def test_selecting_q10_shows_lsa_at_13_and_bm25_not_found():
    at = open_app(PAGE)
    at.selectbox(key="pq_question").set_value(9).run()
    assert not at.exception
    assert first_relevant(at) == {"BM25": "not found", "LSA": "13", "dense": "1", "weighted": "> 10", "RRF": "> 10"}
    judged = at.dataframe[-1].value.set_index("document")
    assert judged.loc["backup3", "grade"] == 2 and judged.loc["backup2", "grade"] == 1
    assert judged.loc["backup2", "LSA"] == 13 and pd.isna(judged.loc["backup2", "BM25"])
    assert side_by_side(at)["BM25"]["document"].tolist() == ["export1"]
    assert any(
        c.endswith(
            "'not retrieved' = not in the system's list (a fusion's list is its top 10: beyond the fusion's top 10)."
        )
        for c in [c.value for c in at.caption]
    )
    heads = [m.value for m in at.markdown if m.value.startswith("**RRF**")]
    assert heads == ["**RRF** · no relevant document in its top 10: beyond the fusion's top 10"]


def dialogs(node) -> list:
    """The dialog blocks under an AppTest node."""
    found = [node] if getattr(node, "type", None) == "dialog" else []
    for child in getattr(node, "children", {}).values():
        found += dialogs(child)
    return found


def click(at, qid: str, round_: int = 0):
    """A click on one of the heatmap's cells, as the chart reports it (its selection, in the chart's key)."""
    at.session_state[f"pq_heatmap_{round_}"] = {"selection": {"pick": [{"qid": qid}]}}
    return at.run()


def test_a_click_on_a_cell_opens_its_question_in_a_dialog_and_below():
    at = open_app(PAGE)
    assert not dialogs(at._tree)
    click(at, "q10")
    assert not at.exception, [e.value for e in at.exception]
    (box,) = dialogs(at._tree)
    assert box.proto.dialog.title == "One question"
    inside = [m.value for m in box.markdown]
    assert inside[0].startswith("**q10** — I want my data from yesterday back")
    assert {m.label: m.value for m in box.metric} == {
        "BM25": "not found",
        "LSA": "13",
        "dense": "1",
        "weighted": "> 10",
        "RRF": "> 10",
    }
    assert any(
        t.value["document"].tolist() == ["export1"] for t in box.dataframe if "score" in t.value.columns
    )  # BM25's list
    assert at.selectbox(key="pq_question").value == 9  # and the question below follows
    at.run()  # another rerun, no new click: the dialog is not opened again
    assert not dialogs(at._tree)


def test_a_closed_dialog_gives_a_fresh_chart_so_the_same_cell_opens_it_again():
    from ui import per_question as ui

    at = open_app(PAGE)
    click(at, "q02")
    assert dialogs(at._tree)
    at.session_state[ui.KEY_HEAT_ROUND] = 1  # what closing the dialog does (ui.dialog_closed, its on_dismiss)
    at.run()
    assert not dialogs(at._tree) and not at.exception
    click(at, "q02", round_=1)
    assert [m.value for m in dialogs(at._tree)[0].markdown][0].startswith("**q02**")


def test_the_missed_filter_keeps_the_questions_some_system_misses():
    at = open_app(PAGE)
    at.segmented_control(key="pq_show").set_value("missed in the top k by some system").run()
    assert not at.exception
    assert list(dict.fromkeys(heatmap(at)["qid"])) == ["q02", "q10"]
    at.segmented_control(key="pq_sort").set_value("hardest first").run()
    move(at, "k", 1)  # now q01 (LSA at 2) and q12 (BM25 at 2) miss too
    assert list(dict.fromkeys(heatmap(at)["qid"])) == ["q02", "q10", "q01", "q12"]


def test_moving_k_shows_more_results_and_says_why_a_list_is_short():
    at = open_app(PAGE)
    move(at, "k", 15)
    assert not at.exception
    tables = side_by_side(at)
    assert len(tables["LSA"]) == 13  # LSA scores 13 documents above zero for q01
    assert len(tables["weighted"]) == len(tables["RRF"]) == 10  # the fusions keep their top 10
    notes = [c.value for c in at.caption]
    assert any("LSA returns only 13 documents" in n for n in notes)
    assert any("RRF returns only 10 documents: the fusions keep their top 10" in n for n in notes)


def test_moving_k1_changes_the_bm25_scores_shown():
    at = open_app(PAGE)
    before = side_by_side(at)
    move(at, "k1", 2.5)
    assert not at.exception
    after = side_by_side(at)
    assert after["BM25"]["score"].tolist() != before["BM25"]["score"].tolist()
    assert after["LSA"]["score"].tolist() == before["LSA"]["score"].tolist()


# ------------------------------------------------------------------------------------ a bigger uploaded dataset


def forty_questions():
    """40 questions, each about one word of its own document; q03's text carries Markdown and HTML; a run 'mine'."""
    from retrieval.corpus import dataset

    docs = [(f"d{i:02d}", f"topic{i:02d} filler words about topic{i:02d}") for i in range(40)]
    queries = [(f"q{i:02d}", f"where is topic{i:02d}") for i in range(40)]
    queries[3] = ("q03", "<b>where</b> is *topic03* [x](http://e.x)")
    qrels = [(f"q{i:02d}", f"d{i:02d}", 1 + i % 2) for i in range(40)]
    ds = dataset.assemble("forty", docs, queries, qrels)
    lines = [f"q{i:02d} Q0 d{(i + 1) % 40:02d} 1 2.0 mine\nq{i:02d} Q0 d{i:02d} 2 1.0 mine" for i in range(40)]
    run = dataset.parse_run("\n".join(lines).encode(), "mine.run", "mine")
    return ds, run


@pytest.fixture(scope="module")
def big():
    at = open_app(PAGE)
    ds, run = forty_questions()
    at.session_state["dataset"] = ds
    at.session_state["runs"] = {"mine": run}
    return at.run()


def test_many_questions_are_paginated_and_runs_are_a_column(big):
    assert not big.exception
    pages = big.get("pagination")
    assert len(pages) == 1 and pages[0].num_pages == 2 and pages[0].value == 1
    cells = heatmap(big)
    assert list(dict.fromkeys(cells["system"])) == [*UPLOADED, "mine"]
    assert cells["qid"].nunique() == 30 and cells["qid"].iloc[0] == "q00"
    assert set(cells.loc[cells["system"] == "mine", "label"]) == {"2"}  # the run puts the relevant document second
    assert cells["row"].str.len().max() <= len("q00 · ") + 40  # the row labels are cut (the tooltip has the text)


def test_the_second_page_holds_the_rest(big):
    pages = big.get("pagination")
    pages[0].set_value(2).run()
    assert not big.exception
    assert list(dict.fromkeys(heatmap(big)["qid"])) == [f"q{i:02d}" for i in range(30, 40)]


def test_question_text_is_shown_inert_and_the_run_side_by_side(big):
    big.selectbox(key="pq_question").set_value(3).run()
    assert not big.exception
    line = next(m.value for m in big.markdown if m.value.startswith("**q03**"))
    assert (
        "\\<b\\>" in line and "\\*topic03\\*" in line and "`[x](http://e.x)`" in line
    )  # escaped or code, never markup
    tables = side_by_side(big)
    assert list(tables) == [*UPLOADED, "mine"]
    assert tables["mine"]["document"].tolist() == ["d04", "d03"] and tables["mine"]["grade"].tolist() == ["", "✓ 2"]
    assert first_relevant(big)["mine"] == "2"


@pytest.mark.slow
def test_a_new_order_goes_back_to_the_first_page_which_shows_the_hardest(big):
    fresh = open_app(PAGE)
    ds, run = forty_questions()
    fresh.session_state["dataset"] = ds
    fresh.session_state["runs"] = {"mine": run}
    fresh.run().segmented_control(key="pq_sort").set_value("hardest first").run()
    hardest = list(dict.fromkeys(heatmap(fresh)["qid"]))  # the hardest first page, reached straight
    big.segmented_control(key="pq_sort").set_value("question order").run()
    big.get("pagination")[0].set_value(2).run()
    assert big.get("pagination")[0].value == 2
    big.segmented_control(key="pq_sort").set_value("hardest first").run()
    assert not big.exception
    assert big.get("pagination")[0].value == 1
    shown = list(dict.fromkeys(heatmap(big)["qid"]))
    assert shown == hardest and len(shown) == 30 and shown != [f"q{i:02d}" for i in range(30)]
    big.segmented_control(key="pq_sort").set_value("question order").run()  # back as the other tests found it
    assert big.get("pagination")[0].value == 1
