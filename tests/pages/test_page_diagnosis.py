"""The Diagnosis page, entered through app.py as a person does: the failing questions with their class, the shared
words highlighted, and BM25's per-term contributions following k1.

Note: after `switch_page`, AppTest runs the page script without app.py's frame (Streamlit's pages/ folder mode), so
the sidebar is not there; a slider is moved on the first page, through the sidebar, before switching."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from apptest import move, open_app, outside_code, shown
from conftest import ROOT
from retrieval.corpus.dataset import assemble

pytestmark = pytest.mark.app

PAGE = "pages/diagnosis.py"


def open_diagnosis(before=None) -> AppTest:
    """app.py, then (after `before(at)` on the first page, if given) the page under test."""
    return open_app(PAGE, before=before)


def table(at: AppTest, column: str) -> pd.DataFrame:
    """The first dataframe shown that has `column`."""
    for df in at.dataframe:
        value = df.value
        if column in value.columns:
            return value
    raise AssertionError(f"no table with a {column!r} column")


def overlap(at: AppTest) -> dict[tuple[str, str], dict]:
    """The lexical-overlap table as {(system, question): row}."""
    df = table(at, "shared with the first result")
    return {(r["system"], r["question"]): r for r in df.to_dict("records")}


def contributions(at: AppTest) -> dict[tuple[str, str], dict]:
    """BM25's per-term table as {(document, term): row}."""
    df = table(at, "contribution")
    return {(r["document"], r["term"]): r for r in df.to_dict("records")}


@pytest.fixture(scope="module")
def at():
    return open_diagnosis()


def test_graded_not_relevant_on_the_judge_page_export1_makes_q10_the_articles_surface_homonymy(invented):
    graded = invented.with_judgements([("q10", "export1", 0)])
    at = open_app(PAGE, before=lambda a: (a.session_state.__setitem__("dataset", graded), a.run()))
    row = overlap(at)[("BM25", "q10")]
    assert (row["class"], row["its judgement"]) == ("surface homonymy", "grade 0")


def test_opens_at_the_sidebars_k_with_the_article_failures(at):
    assert at.title[0].value == "Diagnosis"
    assert not at.number_input  # no threshold of its own: the sidebar's k (5) is the threshold
    assert "top k, the sidebar's cutoff: k = 5" in shown(at.caption[0].value)
    rows = overlap(at)
    assert rows[("BM25", "q02")]["class"] == "vocabulary gap"
    assert rows[("BM25", "q02")]["first result"] == "none"
    assert (
        rows[("BM25", "q02")]["relevant documents (grade): shared words"]
        == "refund1 (2): none; refund2 (2): none; refund3 (1): none"
    )
    # export1 shares "data" with q10 but no judgement names it: unjudged at the top, and the page says to grade it
    assert (
        rows[("BM25", "q10")]["class"] == "unjudged at the top" and rows[("BM25", "q10")]["its judgement"] == "unjudged"
    )
    assert rows[("BM25", "q10")]["first result"] == "export1"
    assert any("*unjudged at the top*" in i.value and "Judge page" in i.value for i in at.info)
    assert "Judge: grade them" in [p.value for p in at.get("page_link")]
    assert rows[("BM25", "q10")]["shared with the first result"] == "data"
    assert rows[("LSA", "q10")]["class"] == "late rank" and rows[("LSA", "q10")]["first relevant at"] == "13"
    assert {q for _, q in rows} == {"q02", "q10"}
    assert {s for s, _ in rows} == {"BM25", "LSA", "weighted", "RRF"}  # dense fails no question


def test_a_fusion_losing_what_lsa_ranks_13th_is_beyond_its_top_10(at):
    rows = overlap(at)
    for fusion in ("weighted", "RRF"):  # LSA has q10's backup2 at 13, the fusions keep their top 10
        row = rows[(fusion, "q10")]
        assert (
            row["class"] == "beyond the fusion's top 10" and row["first relevant at"] == "> 10"
        )  # as the heatmap writes it
        assert row["members: first relevant at"] == "BM25 not found, LSA 13"
        # q02: no member finds a refund document, so the words' class stands and the fusion's miss is not found
        assert rows[(fusion, "q02")]["class"] in ("vocabulary gap", "unjudged at the top")
        assert rows[(fusion, "q02")]["first relevant at"] == "not found"
    assert rows[("BM25", "q10")]["members: first relevant at"] == ""
    counts = table(at, "vocabulary gap")
    assert counts["beyond the fusion's top 10"].tolist() == [0, 0, 0, 1, 1]


def test_the_fusion_depth_follows_the_sidebar():
    at = open_app(PAGE, query={"fusion_depth": "100"})
    assert not at.exception
    rows = overlap(at)
    assert "beyond the fusion's top 100" in shown(at.caption[0].value)
    for fusion in ("weighted", "RRF"):  # at depth 100 both fusions reach LSA's 13th: found, late
        assert (rows[(fusion, "q10")]["class"], rows[(fusion, "q10")]["first relevant at"]) == ("late rank", "13")
    assert rows[("RRF", "q02")]["first relevant at"] == "not found"  # neither member lists a refund document


def test_an_old_link_with_t_opens_at_the_sidebars_k():
    at = open_app(PAGE, query={"t": "7"})
    assert not at.exception
    assert not at.number_input
    assert {q for _, q in overlap(at)} == {"q02", "q10"}
    bad = open_app(PAGE, query={"t": "not a number"})
    assert not bad.exception and {q for _, q in overlap(bad)} == {"q02", "q10"}


def test_counts_per_class_and_system(at):
    counts = table(at, "vocabulary gap")
    assert counts.loc["BM25", "vocabulary gap"] == 1 and counts.loc["BM25", "unjudged at the top"] == 1
    assert counts.loc["BM25", "surface homonymy"] == 0
    assert counts.loc["BM25", "late rank"] == 0 and counts.loc["LSA", "late rank"] == 1
    assert list(counts["all"]) == [2, 2, 0, 2, 2]  # dense (the pinned model) fails none
    assert len(at.get("vega_lite_chart")) >= 1


def test_defaults_to_the_first_failing_question_and_its_relevant_documents(at):
    assert at.selectbox(key="diag_question").value == "q02"
    assert set(at.multiselect(key="diag_docs_q02").value) == {"refund1", "refund2", "refund3"}
    rows = contributions(at)
    assert {t for _, t in rows} == {"get", "money", "back"}
    assert all(r["contribution"] == 0 and not r["in the corpus"] for r in rows.values())
    assert any("vocabulary gap" in i.value for i in at.info)


def test_with_dense_the_page_answers_the_articles_hypothesis_before_the_question_up_close(at):
    """The invented corpus ships its vectors: dense is there, and the page says what it fixes relative to BM25."""
    heads = [h.value for h in at.subheader]
    assert (
        heads.index("Failing questions")
        < heads.index("What the dense retriever changes")
        < heads.index("One question up close")
    )
    md = [shown(m.value) for m in at.markdown]
    assert any(
        m.startswith("The article's hypothesis")
        and "holds on this data" in m
        and "fixes 1 of the 1 vocabulary-gap" in m
        for m in md
    )
    lines = "\n".join(md)
    assert "fixed: q02, vocabulary gap; dense rank 1, BM25 not found" in lines
    assert "fixed: q10, unjudged at the top; dense rank 1, BM25 not found" in lines
    assert "broken:" not in lines


def test_without_dense_the_page_says_how_to_add_it():
    from test_page_data import beir_zip, upload

    from ui.diagnosis import DENSE_HINT

    up = open_app("pages/data.py")  # an uploaded corpus has no vectors until encoded or uploaded
    upload(up, "data_zip", ("fruit.zip", beir_zip(), "application/zip"))
    up.switch_page("pages/diagnosis.py").run()
    assert not up.exception
    assert [i.value for i in up.info].count(DENSE_HINT) == 1
    assert not any(shown(m.value).startswith("The article's hypothesis") for m in up.markdown)


def test_q10_shows_the_shared_word_highlighted_in_question_and_document():
    at = open_diagnosis()
    at.selectbox(key="diag_question").set_value("q10").run()
    assert not at.exception
    md = [m.value for m in at.markdown]
    question = next(m for m in md if m.startswith("**Question:**"))
    assert ":orange-background[**data**]" in question
    assert any(":orange-background[**Data**] export produces" in m for m in md)  # export1's text
    assert any(m.startswith("**export1**") and "shares: data" in m for m in md)
    assert any(m.startswith("**backup3**") and "shares: none" in m for m in md)
    assert set(at.multiselect(key="diag_docs_q10").value) == {"export1", "backup3", "backup2"}
    rows = contributions(at)
    assert rows[("export1", "data")]["contribution"] == pytest.approx(3.105547, abs=1e-6)
    assert rows[("backup3", "data")]["contribution"] == 0
    summary = table(at, "BM25 rank").set_index("document")
    assert (
        summary.loc["export1", "BM25 rank"] == "1" and summary.loc["backup3", "BM25 rank"] == "not retrieved (score 0)"
    )
    assert not at.warning  # the contributions add up to the score BM25 ranked by


def test_q12_explains_a_rare_word_beating_the_right_one():
    at = open_diagnosis()
    at.selectbox(key="diag_question").set_value("q12").run()
    assert not at.exception and not at.warning
    summary = table(at, "BM25 rank").set_index("document")
    assert summary.loc["api2", "BM25 rank"] == "1" and summary.loc["misc4", "BM25 rank"] == "2"
    rows = contributions(at)
    assert rows[("api2", "time")]["idf"] > rows[("misc4", "support")]["idf"]  # df 1 against df 4
    assert rows[("api2", "time")]["contribution"] > rows[("misc4", "support")]["contribution"]


def _contribution_of_data_in_export1(at: AppTest) -> tuple[float, float]:
    at.selectbox(key="diag_question").set_value("q10").run()
    assert not at.exception
    row = contributions(at)[("export1", "data")]
    return row["contribution"], row["length norm K"]


def test_moving_k1_changes_the_bm25_contributions_shown():
    default = open_diagnosis()
    k_default = contributions(default)[("refund1", "get")]["length norm K"]
    c_default, _ = _contribution_of_data_in_export1(default)

    moved = open_diagnosis(before=lambda at: at.sidebar.slider(key="k1").set_value(2.5).run())
    assert "k1 = 2.5" in moved.subheader[-1].value
    assert contributions(moved)[("refund1", "get")]["length norm K"] != pytest.approx(k_default)
    c_moved, k_moved = _contribution_of_data_in_export1(moved)
    assert c_moved != pytest.approx(c_default)
    # idf x tf (k1 + 1) / (tf + K) with tf = 1
    idf = contributions(moved)[("export1", "data")]["idf"]
    assert c_moved == pytest.approx(idf * 3.5 / (1 + k_moved))

    # and on the page itself, through the slider's session key
    default.session_state["k1"] = 0.5
    default.run()
    assert not default.exception
    assert contributions(default)[("export1", "data")]["contribution"] == pytest.approx(
        idf * 1.5 / (1 + contributions(default)[("export1", "data")]["length norm K"])
    )


def test_a_larger_k_turns_late_ranks_into_passes():
    at = open_diagnosis()
    move(at, "k", 20)
    assert not at.exception
    rows = overlap(at)
    assert ("LSA", "q10") not in rows and ("BM25", "q10") in rows
    move(at, "k", 1)  # q01 (LSA at 2) and q12 (BM25 at 2) now fail, late
    rows = overlap(at)
    assert rows[("LSA", "q01")]["class"] == rows[("BM25", "q12")]["class"] == "late rank"


def test_corpus_text_is_never_live_markup():
    docs = [
        ("d1", "Data <b>bold</b> [link](http://evil.example) :streamlit: $x$ -> **stars** <script>alert(1)</script>"),
        ("d2", "Nothing in common here."),
        ("d3", "Restore the backups."),
        ("d4", "Printers need toner."),
        ("d5", "Windows open at dawn."),
    ]
    queries = [("q<1>", "<img src=x onerror=alert(1)> data **now** [x](javascript:alert(1))")]
    ds = assemble("hostile", docs, queries, [("q<1>", "d3", 1), ("q<1>", "d1", 0)])  # d1 judged not relevant
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["dataset"] = ds
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, [e.value for e in at.exception]
    assert overlap(at)[("BM25", "q<1>")]["class"] == "surface homonymy"
    shown = [m for m in at.markdown]
    assert all(not m.proto.allow_html for m in shown)
    bodies = [m.value for m in shown]
    assert any(":orange-background[**data**]" in b for b in bodies)
    for b in bodies:
        for live in ("<b>", "<script>", "<img", "](http", "](javascript", ":streamlit:", "**stars**", "**now**", "$x$"):
            assert not re.search(r"(?<!\\)" + re.escape(live), outside_code(b)), (live, b)


def many_failures():
    """40 questions whose one relevant document shares no word with them (every system fails), and q00 with seven
    relevant documents of 600 characters each."""
    filler = " ".join(f"filler{i}" for i in range(70))  # 600+ characters, no question word
    docs = [(f"r{i}", f"relevant{i} {filler}") for i in range(7)] + [
        (f"d{i:02d}", f"about topic{i:02d} and more") for i in range(40)
    ]
    queries = [(f"q{i:02d}", f"where is topic{i:02d}") for i in range(40)]
    qrels = [("q00", f"r{i}", 1) for i in range(7)] + [(f"q{i:02d}", f"r{i % 7}", 1) for i in range(1, 40)]
    return assemble("many", docs, queries, qrels)


@pytest.fixture(scope="module")
def many():
    at = open_diagnosis()
    at.session_state["dataset"] = many_failures()
    return at.run()


def case_table(at: AppTest) -> pd.DataFrame:
    return table(at, "shared with the first result")


def test_the_failing_questions_come_a_page_at_a_time(many):
    assert not many.exception
    pager = next(p for p in many.get("pagination") if p.key == "diag_case_page")
    counts = table(many, "vocabulary gap")
    total = int(counts["all"].sum())
    assert total >= 40 and pager.num_pages == -(-total // 15)
    seen = []
    for page in range(1, pager.num_pages + 1):
        next(p for p in many.get("pagination") if p.key == "diag_case_page").set_value(page).run()
        rows = case_table(many)
        assert len(rows) == (15 if page < pager.num_pages else total - 15 * (pager.num_pages - 1))
        seen += list(zip(rows["system"], rows["question"]))
    assert len(seen) == len(set(seen)) == total  # every failing question once
    assert [s for s, _ in seen[:40]] == ["BM25"] * 40  # in the systems' order, then the questions'


def test_a_page_left_beyond_the_last_shows_the_first(many):
    """Fewer failing questions than before (the sliders moved): a page number beyond the last opens page 1."""
    next(p for p in many.get("pagination") if p.key == "diag_case_page").set_value(1).run()
    first = case_table(many)
    next(p for p in many.get("pagination") if p.key == "diag_case_page").set_value(2).run()
    assert not case_table(many).equals(first)
    many.session_state["diag_case_page"] = 99
    many.run()
    assert not many.exception
    assert case_table(many).equals(first)


def test_the_class_filter_keeps_one_class_and_goes_back_to_page_one(many):
    gaps = int(table(many, "vocabulary gap")["vocabulary gap"].sum())
    many.segmented_control(key="diag_case_class").set_value("vocabulary gap").run()
    assert not many.exception
    pagers = [p for p in many.get("pagination") if p.key == "diag_case_page"]
    assert (pagers[0].value if pagers else 1) == 1
    rows = case_table(many)
    assert set(rows["class"]) == {"vocabulary gap"} and len(rows) == min(15, gaps)
    assert f"{gaps:,} failing questions" in " ".join(c.value for c in many.caption)
    many.segmented_control(key="diag_case_class").set_value("all classes").run()


def test_a_questions_documents_are_cut_and_come_three_at_a_time(many):
    many.selectbox(key="diag_question").set_value("q00").run()
    assert not many.exception
    assert any(m.value == "**Relevant documents** (7)" for m in many.markdown)
    boxes = [m.value for m in many.markdown if re.match(r"\*\*r\d\*\* · relevant", m.value)]
    assert [b.split("**")[1] for b in boxes] == ["r0", "r1", "r2"]
    pager = next(p for p in many.get("pagination") if p.key == "diag_docs_page_relevant")
    assert pager.num_pages == 3  # 7 documents, 3 to a page
    heads = [shown(m.value) for m in many.markdown if shown(m.value).startswith("relevant0 ")]
    assert len(heads) == 1 and heads[0].endswith(" …") and len(heads[0]) <= 200 + 2
    rest = [e for e in many.expander if e.label.startswith("the rest (")]
    text = many.session_state["dataset"].doc_texts[0]
    assert rest and rest[0].label == f"the rest ({len(text):,} characters in all)"
    assert (heads[0][:-2] + " " + shown(rest[0].markdown[0].value)).split() == text.split()  # head + rest = the text
    pager.set_value(3).run()
    boxes = [m.value for m in many.markdown if re.match(r"\*\*r\d\*\* · relevant", m.value)]
    assert [b.split("**")[1] for b in boxes] == ["r6"]


def test_a_class_filter_whose_class_disappears_falls_back_to_all_classes():
    at = open_diagnosis()
    move(at, "k", 1)  # q01 (LSA at 2) and q12 (BM25 at 2) now fail, late
    at.segmented_control(key="diag_case_class").set_value("late rank").run()
    assert set(case_table(at)["class"]) == {"late rank"}
    move(at, "k", 20)  # no late rank within 20 on the invented corpus (LSA's 13 passes)
    assert not at.exception
    control = at.segmented_control(key="diag_case_class")
    assert "late rank" not in control.options and control.value == "all classes"
    assert {q for _, q in overlap(at)} == {"q02", "q10"}
