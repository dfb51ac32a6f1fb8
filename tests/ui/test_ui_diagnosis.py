"""ui/diagnosis.py: the Diagnosis page's builders, with the values their definitions give."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from apptest import outside_code, shown
from retrieval.analyses import diagnosis, teaching
from retrieval.analyses.teaching import FirstResult
from retrieval.core.params import Params
from retrieval.corpus.dataset import assemble
from retrieval.engine.engine import Engine
from ui import diagnosis as ui


def _case(system: str, qid: str, kind: str) -> diagnosis.Case:
    return diagnosis.Case(system, qid, "text", 0, None, (), (), kind)


CASES = {
    "BM25": [_case("BM25", "q2", "vocabulary gap"), _case("BM25", "q5", "late rank")],
    "LSA": [_case("LSA", "q5", "late rank"), _case("LSA", "q1", "surface homonymy")],
    "RRF": [],
}


def test_class_table_is_systems_by_classes_with_their_sum():
    table = ui.class_table(pd.DataFrame(teaching.class_counts(CASES)), list(CASES))
    assert table.index.tolist() == ["BM25", "LSA", "RRF"]
    assert table.columns.tolist() == [*diagnosis.CLASSES, "all"]
    assert table["all"].tolist() == [2, 2, 0]
    assert table.loc["LSA", "surface homonymy"] == 1 and table.loc["BM25", "vocabulary gap"] == 1
    assert table.loc["RRF"].tolist() == [0, 0, 0, 0, 0, 0]
    named = ui.class_table(pd.DataFrame(teaching.class_counts(CASES)), list(CASES), 100)
    assert named.columns.tolist() == [
        "vocabulary gap",
        "surface homonymy",
        "unjudged at the top",
        "late rank",
        "beyond the fusion's top 100",
        "all",
    ]
    assert named.to_numpy().tolist() == table.to_numpy().tolist()


def test_a_fusions_rows_name_its_depth_and_its_members_ranks():
    cut = diagnosis.Case(
        "RRF",
        "q7",
        "bank hours",
        0,
        "n00",
        ("bank",),
        (("branch", 1, ()),),
        diagnosis.FUSION_CUT,
        10,
        (("BM25", 13), ("LSA", 0)),
    )
    late = diagnosis.Case("BM25", "q7", "bank hours", 13, "n00", ("bank",), (("branch", 1, ()),), "late rank")
    lost = diagnosis.Case(
        "RRF",
        "q8",
        "bank hours",
        0,
        "n00",
        ("bank",),
        (("branch", 1, ()),),
        diagnosis.UNJUDGED,
        10,
        (("BM25", 0), ("LSA", 0)),
    )
    rows = ui.case_rows([cut, late, lost])
    assert [r["class"] for r in rows] == ["beyond the fusion's top 10", "late rank", "unjudged at the top"]
    # one rule: "> 10" where a member lists a relevant document, "not found" where none does
    assert [r["first relevant at"] for r in rows] == ["> 10", "13", "not found"]
    assert [r["members: first relevant at"] for r in rows] == [
        "BM25 13, LSA not found",
        "",
        "BM25 not found, LSA not found",
    ]
    assert rows[0]["shared with the first result"] == "bank" and rows[0]["system"] == "RRF"


def test_fusion_depths_name_the_fusions_only():
    assert ui.fusion_depths({"BM25": None, "weighted": None, "RRF": None, "mine": None}, Params(fusion_depth=100)) == {
        "weighted": 100,
        "RRF": 100,
    }


def test_a_documents_head_ends_at_a_space_within_its_first_200_characters():
    words = " ".join(f"w{i:03d}" for i in range(100))  # 5 characters a word, 499 in all
    cut = ui.head_cut(words)
    assert cut == 199 and words[cut] == " " and len(words[:cut]) <= ui.HEAD_CHARS  # 40 words end at 199
    assert ui.head_cut("x" * 250) == len("x" * 250)  # at most 1.25 x 200: shown whole
    assert ui.head_cut("y" * 400) == ui.HEAD_CHARS  # no space to cut at: cut at 200


def test_failing_systems_keep_the_order_of_the_systems_and_their_cases():
    assert ui.failing_systems(CASES) == {"q2": ["BM25"], "q5": ["BM25", "LSA"], "q1": ["LSA"]}
    assert ui.failing_systems({"BM25": []}) == {}


def test_question_label_cuts_at_70_and_names_the_failing_systems():
    assert ui.question_label("q1", "short", None) == "q1 · short"
    long = "x" * 71
    assert ui.question_label("q1", long, ["BM25", "LSA"]) == "q1 · " + "x" * 67 + "...  (fails: BM25, LSA)"
    assert ui.question_label("q1", "y" * 70, []) == "q1 · " + "y" * 70  # 70 characters fit


def test_relevant_words_win_over_wrong_ones():
    assert ui.question_colors({"data", "export"}, {"data", "backup"}) == {
        "data": "green",
        "export": "green",
        "backup": "orange",
    }


def test_first_results_frame_reads_each_systems_answer():
    answers = [FirstResult("BM25", 3, "d9", 10), FirstResult("LSA", 0, None, 0), FirstResult("RRF", 1, "d1", 10)]
    rows = ui.first_results_frame(answers, {"d1": 2, "d9": 0}).to_dict("records")
    assert rows == [
        {
            "system": "BM25",
            "first relevant at": "3",
            "first result": "d9",
            "first result is relevant": "no",
            "results": 10,
        },
        {
            "system": "LSA",
            "first relevant at": "not found",
            "first result": "none (empty list)",
            "first result is relevant": "—",
            "results": 0,
        },
        {
            "system": "RRF",
            "first relevant at": "1",
            "first result": "d1",
            "first result is relevant": "yes",
            "results": 10,
        },
    ]
    assert ui.first_results_frame(answers, {"d1": 2})["first result is relevant"].tolist() == ["unjudged", "—", "yes"]
    missed = [FirstResult("RRF", 0, "d9", 10), FirstResult("BM25", 0, "d9", 10), FirstResult("LSA", 4, "d9", 10)]
    fused = ui.first_results_frame(missed, {"d1": 2}, {"RRF": 100}, ("BM25", "LSA"))["first relevant at"].tolist()
    assert fused == ["> 100", "not found", "4"]  # LSA lists it: the fusion's miss is its cut
    alone = ui.first_results_frame(missed, {"d1": 2}, {"RRF": 100}, ("BM25",))["first relevant at"].tolist()
    assert alone == ["not found", "not found", "4"]  # its only member lists nothing relevant: not found


def test_doc_label_and_bm25_rank_text():
    assert ui.doc_label("d1", {"d1": 2}, ["d3", "d1"]) == "d1 (relevant, grade 2; BM25 #2)"
    assert ui.doc_label("d3", {"d1": 2}, ["d3", "d1"]) == "d3 (BM25 #1)"
    assert ui.doc_label("d7", {}, []) == "d7"
    assert ui.bm25_rank_text(4, 1.5, 100) == "4"
    assert ui.bm25_rank_text(None, 0.0, 100) == "not retrieved (score 0)"
    assert ui.bm25_rank_text(None, 0.3, 100) == "beyond 100"


DS = assemble(
    "t",
    [("d1", "apple pie apple"), ("d2", "pear tart"), ("d3", "apple jam")],
    [("q1", "apple tart"), ("q2", "plum")],
    [("q1", "d1", 2), ("q2", "d2", 1), ("q2", "dx", 1)],
)


def test_doc_text_is_none_outside_the_corpus_and_shared_words_skip_it():
    assert ui.doc_text(DS, "d2") == "pear tart" and ui.doc_text(DS, "dx") is None
    assert ui.shared_with(DS, "apple tart", ["d1", "d2", "dx"]) == {"apple", "tart"}


def test_the_term_tables_add_up_to_the_bm25_score():
    eng = Engine(DS)
    p = Params()
    bm = eng.rankings(p, ())["BM25"]
    per_term, summary, mismatch = ui.term_tables(DS, eng, bm, 0, ["apple", "tart"], ["d1", "d2"], p, {"d1": 2})
    assert not mismatch
    assert per_term[["document", "term"]].values.tolist() == [
        ["d1", "apple"],
        ["d1", "tart"],
        ["d2", "apple"],
        ["d2", "tart"],
    ]
    by_doc = per_term.groupby("document")["contribution"].sum()
    assert summary.set_index("document")["BM25 score"].to_dict() == by_doc.to_dict()
    assert summary["grade"].tolist() == [2, 0]
    # lengths 3 and 2 tokens, the corpus's average (3 + 2 + 2) / 3
    assert summary["length"].tolist() == [3, 2]
    assert summary["× average"].tolist() == [3 / (7 / 3), 2 / (7 / 3)]


def test_the_failing_questions_are_kept_in_the_datasets_engine_and_follow_what_they_read(monkeypatch):
    """Kept in the memo of the dataset's engine under the engine's keys of the rankings they read: asked again,
    nothing is diagnosed; a k1 step diagnoses BM25 and the fusions again, never LSA; another threshold, every system;
    rankings that are not the engine's own (equal copies here) are diagnosed as they are, never served a kept value."""
    import weakref

    from retrieval.core.memo import Memo
    from retrieval.engine import registry

    monkeypatch.setattr(registry, "_ENGINES", Memo({"engine": 2, "derived": 2}))
    monkeypatch.setattr(registry, "_ROOTS", weakref.WeakValueDictionary())
    diagnosed, real = [], diagnosis.diagnose
    monkeypatch.setattr(diagnosis, "diagnose", lambda ds, r, *a, **k: diagnosed.append(r.name) or real(ds, r, *a, **k))
    e, p = registry.for_dataset(DS), Params()
    ranks = e.rankings(p)
    first = ui.diagnose_all(DS, ranks, 1, p)
    assert sorted(diagnosed) == sorted(r.name for r in ranks.values())
    diagnosed.clear()
    assert ui.diagnose_all(DS, ranks, 1, p) == first and diagnosed == []  # kept
    k1 = replace(p, k1=p.k1 + 0.4)
    ui.diagnose_all(DS, e.rankings(k1), 1, k1)
    assert sorted(diagnosed) == sorted(ranks[n].name for n in ("BM25", "weighted", "RRF"))  # LSA's run did not change
    diagnosed.clear()
    ui.diagnose_all(DS, ranks, 2, p)
    assert sorted(diagnosed) == sorted(r.name for r in ranks.values())  # the threshold is in the key
    diagnosed.clear()
    copies = {n: replace(r) for n, r in ranks.items()}
    assert ui.diagnose_all(DS, copies, 1, p) == first and len(diagnosed) == len(ranks)  # not the engine's: computed


# ------------------------------------------------------------------------------------------ what dense changes


@pytest.fixture(scope="module")
def with_dense(invented):
    """The invented corpus evaluated with the dense retriever (the bundled model), its failing questions at k = 3."""
    from retrieval.corpus import embeddings
    from retrieval.retrievers import dense

    aligned = embeddings.align(dense.embeddings_of(invented), invented)
    ev = Engine(invented).evaluate(Params(), ["ndcg@10"], (aligned,))
    assert "dense" in ev.systems
    return ev, {name: diagnosis.diagnose(invented, r, 3) for name, r in ev.rankings.items()}


def test_dense_summary_on_the_invented_corpus(invented, with_dense):
    ev, cases = with_dense
    said, classes = ui.dense_summary(invented, ev.rankings, cases, 3)
    answered = int(((ev.first_rank["BM25"] > 0) & (ev.first_rank["BM25"] <= 3)).sum())
    assert answered == 12
    assert said == (
        "The article's hypothesis (a dense retriever closes BM25's vocabulary gap) holds on this data: dense fixes "
        "1 of the 1 vocabulary-gap question BM25 fails at k = 3, and it breaks 0 of the 12 questions BM25 answers "
        "in its top 3."
    )
    assert [c.kind for c in classes] == list(
        diagnosis.CLASSES[:4]
    )  # neither BM25 nor dense is a fusion: no class of the cut
    got = {c.kind: c for c in classes}
    assert [shown(x) for x in got["vocabulary gap"].fixed] == [
        "fixed: q02, vocabulary gap; dense rank 1, BM25 not found · “can I get my money back”"
    ]
    assert [shown(x) for x in got["unjudged at the top"].fixed] == [
        "fixed: q10, unjudged at the top; dense rank 1, BM25 not found · “I want my data from yesterday back”"
    ]
    assert all(c.broken == () for c in classes) and got["late rank"].fixed == ()
    assert [shown(c.heading) for c in classes] == [
        "**vocabulary gap** · fixed 1 of BM25's 1 · broken 0",
        "**surface homonymy** · fixed 0 of BM25's 0 · broken 0",
        "**unjudged at the top** · fixed 1 of BM25's 1 · broken 0",
        "**late rank** · fixed 0 of BM25's 0 · broken 0",
    ]


def test_dense_summary_follows_the_threshold(invented, with_dense):
    ev, _ = with_dense
    cases = {name: diagnosis.diagnose(invented, r, 1) for name, r in ev.rankings.items()}
    _, classes = ui.dense_summary(invented, ev.rankings, cases, 1)
    got = {c.kind: c for c in classes}
    bm, de = ev.first_rank["BM25"], ev.first_rank["dense"]
    assert (de == 1).all()  # dense ranks a relevant document first everywhere: at t = 1 it fixes every BM25 failure
    assert len(got["late rank"].fixed) == int((bm > 1).sum()) == got["late rank"].base_fails > 0
    assert len(got["vocabulary gap"].fixed) == 1 and all(c.broken == () for c in classes)


def test_without_dense_there_is_no_summary(with_dense, invented):
    ev, cases = with_dense
    ranks = {k: v for k, v in ev.rankings.items() if k != "dense"}
    assert ui.dense_summary(invented, ranks, cases, 3) is None


def _change(outcome: str, kind: str, qid: str = "q", base_rank: int = 0, other_rank: int = 1) -> diagnosis.Change:
    return diagnosis.Change(outcome, kind, qid, "text", "BM25", "dense", base_rank, other_rank)


def test_verdict_says_holds_in_part_does_not_hold_or_nothing_to_answer():
    gaps = [
        _case("BM25", "q1", "vocabulary gap"),
        _case("BM25", "q2", "vocabulary gap"),
        _case("BM25", "q3", "late rank"),
    ]
    part = ui.verdict(
        [_change("fixed", "vocabulary gap", "q1"), _change("broken", "late rank", "q4", 1, 5)], gaps, 10, 3
    )
    assert part == (
        "The article's hypothesis (a dense retriever closes BM25's vocabulary gap) holds in part on this data: dense "
        "fixes 1 of the 2 vocabulary-gap questions BM25 fails at k = 3, and it breaks 1 of the 7 questions BM25 "
        "answers in its top 3."
    )
    # a fixed late-rank question does not count for the hypothesis
    none = ui.verdict([_change("fixed", "late rank", "q3")], gaps, 3, 5)
    assert none.startswith(
        "The article's hypothesis (a dense retriever closes BM25's vocabulary gap) does not hold on this data: "
        "dense fixes 0 of the 2 vocabulary-gap questions BM25 fails at k = 5"
    )
    assert none.endswith("it breaks 0 of the 0 questions BM25 answers in its top 5.")
    nothing = ui.verdict([], [_case("BM25", "q3", "late rank")], 4, 3)
    assert nothing == (
        "Nothing to answer here: BM25 fails no question on a vocabulary gap at k = 3, so the hypothesis is not "
        "tested on this data; dense breaks 0 of the 3 questions BM25 answers in its top 3."
    )


def _section(ds, ranks, cases, threshold):
    """The section alone, as a script for AppTest.from_function."""
    from ui import diagnosis as page

    page.dense_changes(ds, ranks, cases, threshold)


def test_the_section_renders_the_verdict_and_the_lines(invented, with_dense):
    ev, cases = with_dense
    at = AppTest.from_function(_section, args=(invented, ev.rankings, cases, 3), default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    assert [h.value for h in at.subheader] == ["What the dense retriever changes"]
    assert not at.info  # no hint: dense is there
    body = [shown(m.value) for m in at.markdown]
    assert body[0].startswith(
        "The article's hypothesis (a dense retriever closes BM25's vocabulary gap) holds on this data"
    )
    assert body[1:] == [
        "**vocabulary gap** · fixed 1 of BM25's 1 · broken 0",
        "- fixed: q02, vocabulary gap; dense rank 1, BM25 not found · “can I get my money back”",
        "**surface homonymy** · fixed 0 of BM25's 0 · broken 0",
        "**unjudged at the top** · fixed 1 of BM25's 1 · broken 0",
        "- fixed: q10, unjudged at the top; dense rank 1, BM25 not found · “I want my data from yesterday back”",
        "**late rank** · fixed 0 of BM25's 0 · broken 0",
    ]


def test_without_dense_the_section_says_how_to_add_it(invented, with_dense):
    ev, cases = with_dense
    ranks = {k: v for k, v in ev.rankings.items() if k != "dense"}
    at = AppTest.from_function(_section, args=(invented, ranks, cases, 3), default_timeout=60).run()
    assert [i.value for i in at.info] == [ui.DENSE_HINT] and "--embeddings e5-small" in ui.DENSE_HINT
    assert not at.markdown and not at.caption


def test_a_change_line_escapes_its_id_and_question():
    c = diagnosis.Change(
        "fixed", "vocabulary gap", "q*1_", " see [this](http://x.io) <b>now</b> ", "BM25", "dense", 0, 2
    )
    line = ui.change_line(c)
    assert "[this](" not in outside_code(line) and "<b>" not in line and "q*1_" not in line
    assert (
        shown(line)
        == "fixed: q*1_, vocabulary gap; dense rank 2, BM25 not found · “see [this](http://x.io) <b>now</b>”"
    )
