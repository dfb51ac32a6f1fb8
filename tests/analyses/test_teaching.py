"""The teaching helpers: the toy ranking and its checks, DCG written out, the scikit-learn trap, the ID-based
context metrics, and the diagnosis page's rows and escaped, highlighted text."""

from __future__ import annotations

import itertools
import math
import re

import pytest

from retrieval.analyses import diagnosis, teaching
from retrieval.core.errors import InputError
from retrieval.engine.engine import evaluate
from retrieval.evaluation import experiment, metrics


def test_the_article_example_by_our_metrics():
    third, first, none = (teaching.article_toy(n) for n in ("a third", "a first", "no relevant document"))
    m = teaching.rank_metrics(third, 5)
    assert m["hit@5"] == 1.0 and round(m["recall@5"], 2) == 0.67 and round(m["RR"], 2) == 0.33
    assert round(m["nDCG@5 (linear gain)"], 6) == 0.456949
    assert round(teaching.rank_metrics(third, 3)["hit@3"], 6) == 1.0
    m = teaching.rank_metrics(first, 5)
    assert m["RR"] == 1.0 and round(m["nDCG@5 (linear gain)"], 3) == 0.776
    assert all(v == 0.0 for v in teaching.rank_metrics(none, 5).values())


def test_exponential_gain_is_declared_and_differs():
    m = teaching.rank_metrics(teaching.article_toy(), 5)
    # (2^2 - 1)/log2(4) + 1/log2(5) over 3 + 1/log2(3) + 1/log2(4)
    expected = (3 / 2 + 1 / math.log2(5)) / (3 + 1 / math.log2(3) + 1 / 2)
    assert m["nDCG@5 (exponential gain)"] == pytest.approx(expected)
    assert m["nDCG@5 (exponential gain)"] != m["nDCG@5 (linear gain)"]


@pytest.mark.parametrize("exponential", [False, True])
@pytest.mark.parametrize("k", [1, 2, 3, 5, 10])
def test_written_out_terms_add_up_to_the_metric(k, exponential):
    toy = teaching.article_toy()
    terms, ideal = teaching.dcg_terms(toy, k, exponential), teaching.ideal_terms(toy, k, exponential)
    assert [t["position"] for t in terms] == list(range(1, min(k, 5) + 1))
    for t in terms + ideal:
        assert t["discount"] == pytest.approx(1 / math.log2(t["position"] + 1))
        assert t["term"] == pytest.approx(t["gain"] * t["discount"])
        assert t["gain"] == (2 ** t["grade"] - 1 if exponential else t["grade"])
    name = f"nDCG@{k} ({'exponential' if exponential else 'linear'} gain)"
    assert sum(t["term"] for t in terms) / sum(t["term"] for t in ideal) == pytest.approx(
        teaching.rank_metrics(toy, k)[name]
    )
    assert [t["document"] for t in ideal] == ["a", "b", "c"][:k]  # c is judged though not retrieved


def test_the_sklearn_trap():
    trap = teaching.sklearn_trap(teaching.article_toy(), 5)
    assert round(trap.whole, 6) == 0.456949 and round(trap.retrieved_only, 6) == 0.543791
    assert set(trap.universe) == set("abcxyzwv")
    assert trap.y_score_retrieved == (5, 4, 3, 2, 1) and trap.y_true_retrieved == (0, 0, 2, 1, 0)
    first = teaching.sklearn_trap(teaching.article_toy("a first"), 5)
    assert first.whole == pytest.approx(
        teaching.rank_metrics(teaching.article_toy("a first"), 5)["nDCG@5 (linear gain)"]
    )


def test_sklearn_refusing_one_document_is_reported_not_raised():
    toy = teaching.parse_toy([{"document": "a", "grade": 1}])
    trap = teaching.sklearn_trap(toy, 5)
    assert math.isnan(trap.retrieved_only) and "more than 1 document" in trap.note


def test_ragas_id_metrics_ignore_the_order():
    retrieved, relevant = teaching.RAGAS_EXAMPLE
    for order in itertools.permutations(retrieved):
        assert teaching.id_context_precision(order, relevant) == pytest.approx(1 / 3)
        assert teaching.id_context_recall(order, relevant) == pytest.approx(0.5)
    rows = teaching.every_order(retrieved, {d: 1 for d in relevant}, 3)
    assert len(rows) == 6
    assert {round(r["context precision"], 6) for r in rows} == {0.333333}
    assert {r["context recall"] for r in rows} == {0.5}
    assert {round(r["RR"], 6) for r in rows} == {1.0, 0.5, 0.333333}
    assert len({round(r["nDCG@3"], 6) for r in rows}) == 3


def test_ragas_id_metrics_are_on_sets_and_undefined_when_empty():
    assert teaching.id_context_precision(["d1", "d1", "d2"], ["d1"]) == 0.5
    assert math.isnan(teaching.id_context_precision([], ["d1"]))
    assert math.isnan(teaching.id_context_recall(["d1"], []))
    assert teaching.id_context_precision([1, 2], ["1"]) == 0.5  # ids compared as strings, as Ragas does


def test_parse_toy_accepts_the_editor_shapes():
    toy = teaching.parse_toy(
        [
            {"document": " x ", "grade": 0.0},
            {"document": "a", "grade": 2.0},
            {"document": "b", "grade": None},
            {"document": "c", "grade": float("nan")},
        ],
        [{"document": "d", "grade": "1"}],
        "w, v  v",
    )
    assert toy.ranking == ("x", "a", "b", "c")
    assert toy.judged == {"x": 0, "a": 2, "b": 0, "c": 0, "d": 1}
    assert toy.universe == ("x", "a", "b", "c", "d", "w", "v")
    assert toy.relevant == ("a", "d")


@pytest.mark.parametrize(
    "ranking, unretrieved, message",
    [
        ([{"document": "", "grade": 1}], [], "position 1: the document id is empty"),
        ([{"document": None, "grade": 1}], [], "position 1: the document id is empty"),
        ([{"document": "a", "grade": 1}, {"document": "a", "grade": 2}], [], "document 'a' is already at position 1"),
        ([{"document": "a", "grade": 1}], [{"document": "a", "grade": 1}], "document 'a' is already listed"),
        ([{"document": "a", "grade": 1.5}], [], "position 1 (a): the grade must be a whole number"),
        ([{"document": "a", "grade": "two"}], [], "the grade must be a whole number"),
        ([{"document": "a", "grade": -1}], [], "the grade must be 0 or more"),
        ([{"document": "a", "grade": True}], [], "the grade must be a whole number"),
        ([], [{"document": "c", "grade": None}], "a judged document needs a grade"),
    ],
)
def test_parse_toy_names_the_bad_cell(ranking, unretrieved, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        teaching.parse_toy(ranking, unretrieved)


def test_a_toy_without_relevant_document_has_undefined_metrics():
    toy = teaching.parse_toy([{"document": "x", "grade": 0}, {"document": "y", "grade": None}])
    assert all(math.isnan(v) for v in teaching.rank_metrics(toy, 5).values())
    assert teaching.ideal_terms(toy, 5) == []


def test_shuffled_is_reproducible_and_moves_something():
    items = list("xyabz")
    assert teaching.shuffled(items, 3) == teaching.shuffled(items, 3)
    for seed in range(30):
        out = teaching.shuffled(items, seed)
        assert sorted(out) == sorted(items) and out != items
    assert teaching.shuffled(["a"], 0) == ["a"]
    assert teaching.shuffled([], 0) == []


# ------------------------------------------------------------------------------------ diagnosis helpers


def test_token_spans_follow_the_tokeniser_on_odd_case():
    text = "KELVIN \u212a and \u0130stanbul data"
    spans = teaching.token_spans(text)
    assert [t for *_, t in spans] == re.findall(r"[a-z0-9]+", text.lower())
    for start, end, tok in spans:
        assert tok in text[start:end].lower()


@pytest.fixture(scope="module")
def evaluation(invented):
    return evaluate(invented, experiment.Params(), ["mrr"])


def test_overlap_rows_and_counts_on_the_invented_corpus(invented, evaluation):
    cases = {s: diagnosis.diagnose(invented, r, 3) for s, r in evaluation.rankings.items()}
    rows = teaching.overlap_rows(cases["BM25"])
    by_q = {r["question"]: r for r in rows}
    assert set(by_q) == {"q02", "q10"}
    assert by_q["q02"]["class"] == "vocabulary gap" and by_q["q02"]["first result"] == "none"
    assert (
        by_q["q02"]["relevant documents (grade): shared words"]
        == "refund1 (2): none; refund2 (2): none; refund3 (1): none"
    )
    assert by_q["q10"]["class"] == "unjudged at the top" and by_q["q10"]["shared with the first result"] == "data"
    assert by_q["q10"]["first result"] == "export1" and by_q["q10"]["first relevant at"] == "not found"
    assert by_q["q10"]["its judgement"] == "unjudged" and by_q["q02"]["its judgement"] == ""  # q02: nothing listed
    assert teaching.judgement_label(0) == "grade 0" and teaching.judgement_label(None) == "unjudged"
    lsa = {r["question"]: r for r in teaching.overlap_rows(cases["LSA"])}
    assert lsa["q10"]["class"] == "late rank" and lsa["q10"]["first relevant at"] == "13"
    counts = {(r["system"], r["class"]): r["questions"] for r in teaching.class_counts(cases)}
    assert len(counts) == 4 * len(diagnosis.CLASSES)
    assert counts[("BM25", "vocabulary gap")] == 1 and counts[("BM25", "unjudged at the top")] == 1
    assert counts[("BM25", "surface homonymy")] == 0 and counts[("BM25", "late rank")] == 0
    assert counts[("LSA", "late rank")] == 1 and counts[("LSA", "surface homonymy")] == 0


def test_first_results_and_bm25_position(invented, evaluation):
    q10 = invented.query_index["q10"]
    got = {a.system: a for a in teaching.first_results(invented, evaluation.rankings, q10)}
    assert got["BM25"].first == "export1" and got["BM25"].rank == 0
    assert got["LSA"].rank == 13
    q02 = invented.query_index["q02"]
    assert all(a.first is None and a.n_results == 0 for a in teaching.first_results(invented, evaluation.rankings, q02))
    bm = evaluation.rankings["BM25"]
    assert teaching.bm25_position(bm, q10, invented.doc_index["export1"]) == 1
    assert teaching.bm25_position(bm, q10, invented.doc_index["backup3"]) == 0
    q12 = invented.query_index["q12"]
    assert teaching.bm25_position(bm, q12, invented.doc_index["misc4"]) == 2


def test_metrics_are_the_apps_own():
    # the lab goes through judged_ranks_from_list + per_query, nothing else
    qrels, ranks = metrics.judged_ranks_from_list(list("xyabz"), teaching.ARTICLE_RELEVANT)
    assert teaching.rank_metrics(teaching.article_toy(), 5)["nDCG@5 (linear gain)"] == float(
        metrics.per_query(qrels, 1, ranks, "ndcg@5")[0]
    )


def test_the_trap_is_said_plainly_from_the_numbers():
    """teaching.trap_text, the Tour's step 8 (ui.tour.trap_sentence adds escapes, bold and code): inflated when the
    retrieved-only value is above the whole universe's, the same when every relevant document was retrieved."""
    toy = teaching.article_toy("a third")
    trap = teaching.sklearn_trap(toy, 5)
    ours = teaching.rank_metrics(toy, 5)["nDCG@5 (linear gain)"]
    missing = [d for d in toy.relevant if d not in toy.ranking]
    said = teaching.trap_text(ours, trap.whole, trap.retrieved_only, missing, 5)
    assert trap.retrieved_only > trap.whole and missing
    assert f"it gives {trap.retrieved_only:.6f}, inflated" in said and "ndcg_score given every document" in said
    assert f"never sees {', '.join(missing)} (relevant, not retrieved)" in said and "**" not in said
    assert said.endswith("Always pass the whole universe, with score 0 for what was not retrieved.")
    assert "the same here" in teaching.trap_text(0.5, 0.5, 0.5, [], 5)
