"""ui/diagnosis.py: the Diagnosis page's builders, with the values their definitions give."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from retrieval import diagnosis, teaching
from retrieval.dataset import assemble
from retrieval.engine import Engine
from retrieval.params import Params
from retrieval.teaching import FirstResult
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
    assert table.loc["RRF"].tolist() == [0, 0, 0, 0]


def test_failing_systems_keep_the_order_of_the_systems_and_their_cases():
    assert ui.failing_systems(CASES) == {"q2": ["BM25"], "q5": ["BM25", "LSA"], "q1": ["LSA"]}
    assert ui.failing_systems({"BM25": []}) == {}


def test_question_label_cuts_at_70_and_names_the_failing_systems():
    assert ui.question_label("q1", "short", None) == "q1 · short"
    long = "x" * 71
    assert ui.question_label("q1", long, ["BM25", "LSA"]) == "q1 · " + "x" * 67 + "...  (fails: BM25, LSA)"
    assert ui.question_label("q1", "y" * 70, []) == "q1 · " + "y" * 70  # 70 characters fit


def test_relevant_words_win_over_wrong_ones():
    assert ui.question_colors({"data", "export"}, {"data", "backup"}) == {"data": "green", "export": "green", "backup": "orange"}


def test_first_results_frame_reads_each_systems_answer():
    answers = [FirstResult("BM25", 3, "d9", 10), FirstResult("LSA", 0, None, 0), FirstResult("RRF", 1, "d1", 10)]
    rows = ui.first_results_frame(answers, {"d1": 2}).to_dict("records")
    assert rows == [
        {"system": "BM25", "first relevant at": "3", "first result": "d9", "first result is relevant": "no", "results": 10},
        {"system": "LSA", "first relevant at": "not found", "first result": "none (empty list)", "first result is relevant": "—", "results": 0},
        {"system": "RRF", "first relevant at": "1", "first result": "d1", "first result is relevant": "yes", "results": 10},
    ]


def test_doc_label_and_rank_text():
    assert ui.doc_label("d1", {"d1": 2}, ["d3", "d1"]) == "d1 (relevant, grade 2; BM25 #2)"
    assert ui.doc_label("d3", {"d1": 2}, ["d3", "d1"]) == "d3 (BM25 #1)"
    assert ui.doc_label("d7", {}, []) == "d7"
    assert ui.rank_text(4, 1.5, 100) == "4"
    assert ui.rank_text(None, 0.0, 100) == "not retrieved (score 0)"
    assert ui.rank_text(None, 0.3, 100) == "beyond 100"


DS = assemble("t", [("d1", "apple pie apple"), ("d2", "pear tart"), ("d3", "apple jam")], [("q1", "apple tart"), ("q2", "plum")],
              [("q1", "d1", 2), ("q2", "d2", 1), ("q2", "dx", 1)])


def test_doc_text_is_none_outside_the_corpus_and_shared_words_skip_it():
    assert ui.doc_text(DS, "d2") == "pear tart" and ui.doc_text(DS, "dx") is None
    assert ui.shared_with(DS, "apple tart", ["d1", "d2", "dx"]) == {"apple", "tart"}


def test_the_term_tables_add_up_to_the_bm25_score():
    eng = Engine(DS)
    p = Params()
    bm = eng.rankings(p, ())["BM25"]
    per_term, summary, mismatch = ui.term_tables(DS, eng, bm, 0, ["apple", "tart"], ["d1", "d2"], p, {"d1": 2})
    assert not mismatch
    assert per_term[["document", "term"]].values.tolist() == [["d1", "apple"], ["d1", "tart"], ["d2", "apple"], ["d2", "tart"]]
    by_doc = per_term.groupby("document")["contribution"].sum()
    assert summary.set_index("document")["BM25 score"].to_dict() == by_doc.to_dict()
    assert summary["grade"].tolist() == [2, 0]
    # lengths 3 and 2 tokens, the corpus's average (3 + 2 + 2) / 3
    assert summary["length"].tolist() == [3, 2]
    assert summary["× average"].tolist() == [3 / (7 / 3), 2 / (7 / 3)]


def test_the_ranking_key_follows_the_content():
    eng = Engine(DS)
    a = eng.rankings(Params(), ())["BM25"]
    assert ui.ranking_key(a) == ui.ranking_key(eng.rankings(Params(), ())["BM25"])  # equal content, equal key
    assert ui.ranking_key(replace(a, name="other")) != ui.ranking_key(a)
    assert ui.ranking_key(replace(a, judged_rank=a.judged_rank + 1)) != ui.ranking_key(a)
