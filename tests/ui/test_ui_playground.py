"""The Playground's parts (ui/playground.py) with plain inputs: judging, the words note, the tables and the
headline figures, checked against the rankings and the metric formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest

from retrieval.core.params import Params
from retrieval.corpus.dataset import assemble
from retrieval.corpus.text import Analysis
from retrieval.engine import adhoc, engine
from ui import playground as pg
from ui.format import MINUS


@pytest.fixture(scope="module")
def eng(invented):
    return engine.Engine(invented)


def test_marking_a_document_takes_its_dataset_grade_or_one_and_unmarking_keeps_a_dataset_judgement_at_zero():
    original = {"refund1": 2, "refund3": 0}
    assert pg.marked({}, original, "refund1", True) == {"refund1": 2}
    assert pg.marked({}, original, "misc4", True) == {"misc4": pg.MARKED_GRADE}
    assert pg.marked({}, original, "refund3", True) == {"refund3": pg.MARKED_GRADE}  # judged 0 there: marked as 1
    assert pg.marked({"refund1": 2}, original, "refund1", False) == {"refund1": 0}
    assert pg.marked({"misc4": 1}, original, "misc4", False) == {}


def test_the_judging_table_s_edits_apply_by_row_and_ignore_what_is_not_a_mark():
    rows = ["a", "b", "c"]
    edits = {0: {"relevant": True}, "2": {"relevant": True}, 1: {"grade": 5}, 7: {"relevant": True}}
    assert pg.edited({"b": 1}, {}, rows, edits) == {"b": 1, "a": 1, "c": 1}
    assert pg.edited({"b": 1}, {}, rows, {1: {"relevant": False}}) == {}
    assert pg.edited({"b": 1}, {}, rows, {}) == {"b": 1}


def test_the_metrics_are_the_sidebar_s_then_the_four_at_the_sidebar_s_k_once_each():
    assert pg.metric_names("ndcg@5", 5) == ["ndcg@5", "hit@5", "recall@5", "mrr"]
    assert pg.metric_names("precision@10", 10) == ["precision@10", "hit@10", "recall@10", "mrr", "ndcg@10"]
    assert pg.metric_names("bpref", 3) == ["bpref", "hit@3", "recall@3", "mrr", "ndcg@3"]


def test_the_words_note_names_the_unknown_words_and_says_when_nothing_can_match(eng):
    kind, text = pg.words_note(eng.adhoc("can I get my money back refund")[2])
    assert kind == "info" and "**refund**" in text and r"get\, money\, back" in text
    kind, text = pg.words_note(eng.adhoc("can I get my money back")[2])
    assert kind == "warning" and "None of its words" in text and "vocabulary gap" in text
    kind, text = pg.words_note(eng.adhoc("what is it")[2])
    assert kind == "warning" and "No word is left after the stop words" in text


def test_the_top_grid_is_each_system_s_list_with_the_relevant_marked(eng, invented):
    one, ranks, _ = eng.adhoc("refund order support", judgements=(("refund1", 2), ("refund2", 0)))
    grades = {"refund1": 2, "refund2": 0}
    grid = pg.top_grid(one, ranks, grades)
    assert list(grid.columns) == list(ranks) and list(grid.index) == list(range(1, pg.TOP + 1))
    for s, r in ranks.items():
        ids = r.top_ids(one, 0, pg.TOP)
        cells = [c for c in grid[s] if c]
        assert [c.split(" ")[0] for c in cells] == ids
        for c in cells:
            assert c == (
                "refund1 ✓ 2"
                if c.startswith("refund1")
                else "refund2 0"
                if c.startswith("refund2")
                else c.split(" ")[0]
            )


def test_the_judging_rows_are_every_list_in_order_then_the_other_judged_documents(eng):
    one, ranks, _ = eng.adhoc("password reset", judgements=(("export1", 1),))
    rows = pg.judging_rows(one, ranks, {"export1": 1})
    listed = [d for r in ranks.values() for d in r.top_ids(one, 0, pg.TOP)]
    assert rows[: len(set(listed))] == list(dict.fromkeys(listed))
    assert rows.count("export1") == 1 and len(rows) == len(set(rows))


def test_a_rank_cell_is_exact_for_a_judged_document_and_bounded_for_another(eng, invented):
    p = Params(depth=12, fusion_depth=10)
    one, ranks, scores = eng.adhoc("backup of the invoice", p, judgements=(("misc1", 1),))
    lsa = ranks["LSA"]
    row = scores.rows["LSA"]
    order = sorted(range(invented.n_docs), key=lambda i: (-row[i], invented.doc_ids[i]))
    expected = order.index(invented.doc_index["misc1"]) + 1 if row[invented.doc_index["misc1"]] > 1e-9 else 0
    assert pg.rank_cell(one, lsa, "misc1", 12) == (str(expected) if expected else "not found")
    listed = lsa.top_ids(one, 0)
    assert pg.rank_cell(one, lsa, listed[3], 12) == "4"
    outside = next(invented.doc_ids[i] for i in order[12:] if invented.doc_ids[i] != "misc1" and row[i] > 1e-9)
    assert pg.rank_cell(one, lsa, outside, 12) == "> 12"  # a result further down than the list goes
    bm = ranks["BM25"]
    zero = next(d for i, d in enumerate(invented.doc_ids) if scores.rows["BM25"][i] == 0 and d != "misc1")
    assert bm.top(0)[0].size < 12 and pg.rank_cell(one, bm, zero, 12) == "not found"  # BM25 scores it 0
    w = ranks["weighted"]
    cut = next(d for d in lsa.top_ids(one, 0) if d not in w.top_ids(one, 0) and d != "misc1")
    assert (
        w.top(0)[0].size == 10 and pg.rank_cell(one, w, cut, 12) == "not found"
    )  # past the fusion's cut: not retrieved


def test_the_judged_ranks_put_the_typed_text_s_beside_the_original_s(eng, invented):
    q = invented.query_index["q02"]
    judged = adhoc.judgements_of(invented, q)
    one, ranks, _ = eng.adhoc("can I get my money back refund", judgements=judged, qid="q02")
    original = eng.rankings(Params())
    frame = pg.judged_ranks_frame(one, ranks, invented, original, "q02").set_index("document")
    assert list(frame.index) == ["refund1", "refund2", "refund3"]  # by grade, then id
    j = {d: i for i, d in enumerate(invented.qrels.doc_id) if invented.qrels.query[i] == q}
    for s in ranks:
        for d in frame.index:
            now = ranks[s].judged_rank[list(one.qrels.doc_id).index(d)]
            before = original[s].judged_rank[j[d]]
            label = lambda r: str(r) if r else "not found"  # noqa: E731
            assert frame.loc[d, s] == (label(now) if now == before else f"{label(now)} ← {label(before)}")
    assert frame.loc["refund1", "BM25"] == "1 ← not found"
    cells = [frame.loc[d, s] for d in frame.index for s in ranks]
    assert any("←" in c for c in cells) and any("←" not in c for c in cells)  # a rank that did not change: written once


def test_the_headline_is_the_typed_value_and_its_change_from_the_original(eng, invented):
    q = invented.query_index["q02"]
    judged = adhoc.judgements_of(invented, q)
    one, ranks, _ = eng.adhoc("can I get my money back refund", judgements=judged, qid="q02")
    typed = adhoc.evaluate(one, ranks, ["ndcg@5"])
    original = eng.evaluate(Params(), ["ndcg@5"])
    at = pg.original_position(invented, "q02")
    assert invented.evaluated[at] == q
    ideal = 2 + 2 / math.log2(3) + 1 / math.log2(4)
    value, delta, change = pg.headline(typed, original, at, "BM25", "ndcg@5")
    assert value == f"{2 / ideal:.4f}" and change == pytest.approx(2 / ideal, abs=1e-15)  # it was 0: nothing found
    assert delta == f"+{2 / ideal:.4f}"
    frame = pg.metrics_frame(typed, original, at, list(ranks), ["ndcg@5"])
    assert list(frame["question"][:2]) == ["typed", "original"] and frame["nDCG@5"][1] == 0.0
    assert frame["nDCG@5"][0] == pytest.approx(2 / ideal, abs=1e-15) and list(frame["first relevant"][:2]) == [
        "1",
        "not found",
    ]
    q1 = invented.query_index["q01"]
    at1 = pg.original_position(invented, "q01")
    one, ranks, _ = eng.adhoc(invented.query_texts[q1], judgements=adhoc.judgements_of(invented, q1), qid="q01")
    value, delta, change = pg.headline(adhoc.evaluate(one, ranks, ["ndcg@5"]), original, at1, "LSA", "ndcg@5")
    assert change == 0.0 and delta == "0.0000"  # verbatim: no change
    before = original.values["BM25"]["ndcg@5"][at1]
    assert before > 0
    one, ranks, _ = eng.adhoc("zyzzyva", judgements=adhoc.judgements_of(invented, q1), qid="q01")
    value, delta, change = pg.headline(adhoc.evaluate(one, ranks, ["ndcg@5"]), original, at1, "BM25", "ndcg@5")
    assert value == "0.0000" and change == -before and delta == f"{MINUS}{before:.4f}"  # a true minus
    value, delta, change = pg.headline(adhoc.evaluate(one, ranks, ["ndcg@5"]), None, None, "LSA", "ndcg@5")
    assert value == "0.0000" and delta is None


def test_a_document_line_escapes_the_id_and_gives_every_retriever_s_score():
    ds = assemble("h", [("**zz**<b>", "apple pie"), ("plain", "apple tree")], [("q", "apple")], [("q", "plain", 1)])
    e = engine.Engine(ds)
    one, ranks, scores = e.adhoc("apple pie", Params(dims=1), judgements=(("**zz**<b>", 2),))
    d = ds.doc_index["**zz**<b>"]
    rank = int(np.flatnonzero(ranks["BM25"].top(0)[0] == d)[0]) + 1
    line = pg.doc_line(one, scores, ranks, "BM25", rank, d, {"**zz**<b>": 2})
    assert line.startswith(rf"**{rank}. \*\*zz\*\*\<b\>** · ✓ grade 2 · BM25 {scores.rows['BM25'][d]:.4f}")
    assert f"LSA cosine {scores.rows['LSA'][d]:.4f}" in line
    line = pg.doc_line(one, scores, ranks, "RRF", 1, int(ranks["RRF"].top(0)[0][0]), {})
    assert line.split(" · ")[1] == f"RRF {ranks['RRF'].top(0)[1][0]:.4f}"


def test_the_bm25_table_adds_up_to_the_scores(eng, invented):
    p = Params(k1=0.9, b=0.4)
    one, ranks, scores = eng.adhoc("refund within days support", p)
    docs = ranks["BM25"].top(0, pg.TOP)[0]
    frame, columns = pg.bm25_frame(eng, scores.text, docs, one, p)
    assert columns == list(scores.terms) and list(frame.columns) == ["document", *scores.terms, "BM25 score"]
    np.testing.assert_allclose(frame["BM25 score"], scores.rows["BM25"][docs], rtol=0, atol=1e-12)
    np.testing.assert_allclose(frame[list(scores.terms)].sum(axis=1), frame["BM25 score"], rtol=0, atol=1e-12)


@pytest.mark.parametrize("query_words", ["each", "k3"])
def test_under_a_stemmer_the_bm25_table_names_the_words_of_each_stem_and_still_adds_up(invented, query_words):
    stemmed = engine.for_dataset(invented, analysis=Analysis("snowball"))
    p = Params(stemmer="snowball", query_words=query_words, k3=2.0)
    one, ranks, scores = stemmed.adhoc("refunds refund refunded plans", p)
    docs = ranks["BM25"].top(0, pg.TOP)[0]
    frame, columns = pg.bm25_frame(stemmed, scores.text, docs, one, p)
    assert columns[0] == "refund ← refunds, refund, refunded" and columns[1] == "plan ← plans"
    np.testing.assert_allclose(frame["BM25 score"], scores.rows["BM25"][docs], rtol=0, atol=1e-12)
    np.testing.assert_allclose(frame[columns].sum(axis=1), frame["BM25 score"], rtol=0, atol=1e-12)


def test_the_marks_counted_against_the_bound_are_the_changes_from_the_original_judgements():
    original = {"a": 2, "b": 0}
    assert pg.changes(original, original) == 0
    assert pg.changes({"a": 2, "b": 0, "c": 1}, original) == 1  # added
    assert pg.changes({"a": 0, "b": 0}, original) == 1  # unmarked
    assert pg.changes({"b": 0}, original) == 1  # taken away
    assert pg.changes({"x": 1, "y": 1}, {}) == 2
