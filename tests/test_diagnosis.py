"""Diagnosis: which questions fail, with which shared words, and the class of each failure."""

from __future__ import annotations

import numpy as np
import pytest

from retrieval.dataset import assemble
from retrieval.diagnosis import CLASSES, classify, diagnose, shared_words
from retrieval.ranking import from_lists

DOCS = {
    "apple": "Apple pie recipe with fresh cream.",
    "crumble": "Apple crumble baked slowly.",
    "river": "The river bank floods every spring.",
    "branch": "Our branch offices welcome customers from 9 to 5.",
    "refund": "Recover the funds you paid within 30 days.",
    "tea": "Afternoon tea served with scones.",
    "noise1": "Parking is free on Sundays.",
    "noise2": "Printers need toner.",
    "noise3": "Windows open at dawn.",
}
QUESTIONS = {
    "q_ok": "apple crumble",
    "q_late": "fresh apple pie",
    "q_homonym": "bank opening hours",
    "q_gap": "can I get my money back",
    "q_gap_with_result": "money back please",
    "q_beyond": "cream tea",
    "q_third": "baked crumble",
    "q_unjudged": "printers",
}
JUDGED = [
    ("q_ok", "crumble", 2),
    ("q_late", "apple", 2),
    ("q_homonym", "branch", 2),
    ("q_gap", "refund", 2),
    ("q_gap_with_result", "refund", 1),
    ("q_beyond", "tea", 1),
    ("q_third", "crumble", 1),
    ("q_unjudged", "noise2", 0),
]
LISTS = {
    "q_ok": ["crumble", "apple"],
    "q_late": ["noise1", "noise2", "noise3", "crumble", "apple"],
    "q_homonym": ["river", "noise1"],
    "q_gap": [],
    "q_gap_with_result": ["noise1"],
    "q_beyond": ["noise3", "apple"],
    "q_third": ["noise1", "noise2", "crumble"],
    "q_unjudged": ["noise1"],
}


@pytest.fixture(scope="module")
def case():
    ds = assemble("diag", list(DOCS.items()), list(QUESTIONS.items()), JUDGED)
    docs = [np.array([ds.doc_index[d] for d in LISTS[q]], dtype=np.int64) for q in ds.query_ids]
    scores = [np.arange(len(x), 0, -1, dtype=np.float64) for x in docs]
    return ds, from_lists("SYS", ds, docs, scores)


def by_qid(cases):
    return {c.qid: c for c in cases}


def test_which_questions_are_diagnosed(case):
    ds, r = case
    got = by_qid(diagnose(ds, r))
    assert set(got) == {"q_late", "q_homonym", "q_gap", "q_gap_with_result", "q_beyond"}
    assert [c.qid for c in diagnose(ds, r)] == [q for q in QUESTIONS if q in got]  # question order
    assert all(c.system == "SYS" for c in got.values())


def test_late_rank(case):
    c = by_qid(diagnose(*case))["q_late"]
    assert (c.rank, c.kind, c.first_result, c.first_result_words) == (5, "late rank", "noise1", ())
    assert c.relevant == (("apple", 2, ("apple", "fresh", "pie")),)
    assert c.question == "fresh apple pie"


def test_surface_homonymy(case):
    c = by_qid(diagnose(*case))["q_homonym"]
    assert (c.rank, c.kind, c.first_result, c.first_result_words) == (0, "surface homonymy", "river", ("bank",))
    assert c.relevant == (("branch", 2, ()),)


def test_vocabulary_gap_with_and_without_results(case):
    got = by_qid(diagnose(*case))
    c = got["q_gap"]
    assert (c.rank, c.kind, c.first_result, c.first_result_words) == (0, "vocabulary gap", None, ())
    assert c.relevant == (("refund", 2, ()),)
    c = got["q_gap_with_result"]
    assert (c.rank, c.kind, c.first_result, c.first_result_words) == (0, "vocabulary gap", "noise1", ())


def test_relevant_shares_words_but_list_ended_is_late_rank(case):
    c = by_qid(diagnose(*case))["q_beyond"]
    assert (c.rank, c.kind, c.first_result) == (0, "late rank", "noise3")
    assert c.relevant == (("tea", 1, ("tea",)),)


def test_threshold_parameter(case):
    ds, r = case
    assert "q_third" not in by_qid(diagnose(ds, r, threshold=3))
    c = by_qid(diagnose(ds, r, threshold=2))["q_third"]
    assert (c.rank, c.kind) == (3, "late rank")
    assert "q_late" not in by_qid(diagnose(ds, r, threshold=5))
    assert "q_late" in by_qid(diagnose(ds, r, threshold=4))
    # threshold 0: every question with a relevant document is diagnosed, even one found first
    c = by_qid(diagnose(ds, r, threshold=0))["q_ok"]
    assert (c.rank, c.kind) == (1, "late rank")


@pytest.mark.parametrize(
    "rank, threshold, first_shares, relevant_shares, want",
    [
        (4, 3, False, False, "late rank"),
        (4, 3, True, True, "late rank"),
        (10, 9, True, False, "late rank"),
        (0, 3, True, False, "surface homonymy"),
        (0, 3, True, True, "surface homonymy"),
        (0, 3, False, False, "vocabulary gap"),
        (0, 3, False, True, "late rank"),
    ],
)
def test_classify_rules(rank, threshold, first_shares, relevant_shares, want):
    assert classify(rank, threshold, first_shares, relevant_shares) == want
    assert want in CLASSES


def test_shared_words_use_the_tokeniser():
    assert shared_words("Can I get MY money back?", "Money-back guarantee: get it") == ("back", "get", "money")
    assert shared_words("the of and", "the of and") == ()


def test_invented_corpus_diagnosis(invented):
    from retrieval.engine import Engine
    from retrieval.params import Params

    r = Engine(invented).rankings(Params())
    got = {c.qid: c.kind for c in diagnose(invented, r["BM25"])}
    assert got == {"q02": "vocabulary gap", "q10": "surface homonymy"}
    # LSA finds q10 at 13: late rank
    lsa = by_qid(diagnose(invented, r["LSA"]))
    assert (lsa["q10"].rank, lsa["q10"].kind) == (13, "late rank")
