"""Diagnosis: which questions fail, with which shared words, and the class of each failure."""

from __future__ import annotations

import numpy as np
import pytest

from retrieval.analyses import diagnosis
from retrieval.analyses.diagnosis import (
    CLASSES,
    FUSION_CUT,
    HOMONYMY,
    OUTCOMES,
    UNJUDGED,
    Change,
    beyond_cut,
    changes,
    class_label,
    classify,
    describe,
    diagnose,
    members_found,
    rank_text,
    shared_words,
)
from retrieval.corpus.dataset import assemble
from retrieval.retrievers.ranking import from_lists

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
    ("q_homonym", "river", 0),  # judged not relevant: "river" sharing "bank" is a surface homonymy
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
    assert c.relevant == (("branch", 2, ()),) and c.first_grade == 0


def test_an_unjudged_first_result_on_a_shared_word_is_unjudged_at_the_top_not_a_homonymy(case):
    ds, r = case
    unjudged = assemble(
        "diag", list(DOCS.items()), list(QUESTIONS.items()), [j for j in JUDGED if j != ("q_homonym", "river", 0)]
    )
    c = by_qid(
        diagnose(
            unjudged,
            from_lists(
                "SYS", unjudged, [r.top(q)[0] for q in range(ds.n_queries)], [r.top(q)[1] for q in range(ds.n_queries)]
            ),
        )
    )["q_homonym"]
    # the same list and the same shared word: with no judgement of "river", the lab cannot call it wrong
    assert (c.rank, c.kind, c.first_result, c.first_result_words, c.first_grade) == (
        0,
        UNJUDGED,
        "river",
        ("bank",),
        None,
    )


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
    # the first result unjudged: a shared word makes it "unjudged at the top", never a homonymy; the rest is the same
    unjudged = classify(rank, threshold, first_shares, relevant_shares, first_judged=False)
    assert unjudged == (UNJUDGED if want == HOMONYMY else want)


@pytest.mark.parametrize(
    "rank, first_shares, relevant_shares, want",
    [
        (0, True, False, FUSION_CUT),  # a member has it: the fusion's cut, whatever the words
        (0, False, False, FUSION_CUT),
        (0, False, True, FUSION_CUT),
        (12, True, False, "late rank"),  # found beyond the threshold: late rank first
    ],
)
def test_a_fusion_that_loses_what_a_member_ranks_is_beyond_its_top_n(rank, first_shares, relevant_shares, want):
    assert classify(rank, 3, first_shares, relevant_shares, member_found=True) == want


def test_the_fusion_class_and_ranks_as_shown():
    assert CLASSES == ("vocabulary gap", "surface homonymy", "unjudged at the top", "late rank", FUSION_CUT)
    assert class_label(FUSION_CUT, 10) == "beyond the fusion's top 10" and class_label(FUSION_CUT, None) == FUSION_CUT
    assert class_label("late rank", 100) == "late rank"
    # the one rule of a miss: "> N" only for a fusion one of whose members lists a relevant document
    assert [rank_text(4), rank_text(0), rank_text(0, 1000), rank_text(0, 1000, True), rank_text(7, 10, True)] == [
        "4",
        "not found",
        "not found",
        "> 1000",
        "7",
    ]
    assert rank_text(0, None, True) == "not found"  # not a fusion: a member's find means nothing
    assert [beyond_cut(0, 10, True), beyond_cut(0, 10, False), beyond_cut(3, 10, True), beyond_cut(0, None, True)] == [
        True,
        False,
        False,
        False,
    ]
    assert members_found([np.array([0, 3, 0]), np.array([0, 0, 12])]).tolist() == [False, True, True]
    assert members_found([]).tolist() == []


# A fusion of two members at depth 10: BM25 ranks the relevant document "branch" 13th, LSA not at all; both put
# documents sharing "bank" with the question first. RRF fuses each member's top 10 only.
BANK_DOCS = {
    **{f"n{i:02d}": f"bank statement number {i}" for i in range(15)},
    "branch": "Our branch offices welcome customers.",
    "other": "Printers need toner.",
}
BANK_QUESTIONS = {"q_cut": "bank opening hours", "q_nobody": "bank holidays"}
BANK_JUDGED = [("q_cut", "branch", 1), ("q_nobody", "other", 1)]
BANK_LISTS = {  # question: (BM25's list, LSA's list)
    "q_cut": ([f"n{i:02d}" for i in range(12)] + ["branch"], [f"n{i:02d}" for i in range(14, 2, -1)]),
    "q_nobody": ([f"n{i:02d}" for i in range(5)], [f"n{i:02d}" for i in range(5, 10)]),  # neither member finds "other"
}


def _two_systems(name, docs, questions, judged, lists, systems):
    """A dataset and the rankings of both sides of its {question: (list, list)} table, scores falling with the rank."""
    ds = assemble(name, list(docs.items()), list(questions.items()), judged)

    def side(i):
        ids = [np.array([ds.doc_index[d] for d in lists[q][i]], dtype=np.int64) for q in ds.query_ids]
        return from_lists(systems[i], ds, ids, [np.arange(len(x), 0, -1, dtype=np.float64) for x in ids])

    return ds, side(0), side(1)


@pytest.fixture(scope="module")
def bank():
    return _two_systems("bank", BANK_DOCS, BANK_QUESTIONS, BANK_JUDGED, BANK_LISTS, ("BM25", "LSA"))


def test_a_fusion_cut_above_the_relevant_document_is_its_own_class(bank):
    from retrieval.fusion import rrf

    ds, bm25, lsa = bank
    fused = rrf(ds, [bm25, lsa], depth=10)
    got = by_qid(diagnose(ds, fused, 3, members=(bm25, lsa), depth=10))
    c = got["q_cut"]
    # the rule: the fusion finds nothing relevant (rank 0) and a member (BM25, rank 13) ranks a relevant document
    assert (c.rank, c.first_result_words, c.members, c.depth) == (0, ("bank",), (("BM25", 13), ("LSA", 0)), 10)
    assert c.kind == FUSION_CUT and class_label(c.kind, c.depth) == "beyond the fusion's top 10"
    assert c.rank_text == "> 10"  # a member lists it: the fusion lost it to its cut
    # without its members the same case reads as before: nothing found, an unjudged first result sharing "bank"
    assert by_qid(diagnose(ds, fused, 3))["q_cut"].kind == UNJUDGED
    # no member finds "other": the words' classes still apply (n00 first, sharing "bank", unjudged), and it is not found
    assert (got["q_nobody"].kind, got["q_nobody"].members) == (UNJUDGED, (("BM25", 0), ("LSA", 0)))
    assert got["q_nobody"].rank_text == "not found"
    # BM25 alone, given no depth: late rank at 13
    alone = by_qid(diagnose(ds, bm25, 3, members=(lsa,)))["q_cut"]
    assert (alone.rank, alone.kind, alone.members, alone.depth) == (13, "late rank", (), None)


def test_a_deeper_fusion_finds_it_and_the_question_is_a_late_rank(bank):
    from retrieval.fusion import rrf

    ds, bm25, lsa = bank
    fused = rrf(ds, [bm25, lsa], depth=100)
    c = by_qid(diagnose(ds, fused, 3, members=(bm25, lsa), depth=100))["q_cut"]
    # "branch" gets 1/(60 + 13) from BM25 alone; n00..n11 get at least 1/(60 + 12) from BM25 (n03..n11 from LSA
    # too), n14, n13, n12 at least 1/(60 + 3) from LSA: fifteen documents score more, so it is 16th
    assert (c.rank, c.kind) == (16, "late rank")


def test_shared_words_use_the_tokeniser():
    assert shared_words("Can I get MY money back?", "Money-back guarantee: get it") == ("back", "get", "money")
    assert shared_words("the of and", "the of and") == ()


def test_invented_corpus_diagnosis(invented):
    from retrieval.core.params import Params
    from retrieval.engine.engine import Engine

    r = Engine(invented).rankings(Params())
    got = {c.qid: c.kind for c in diagnose(invented, r["BM25"])}
    # q10's first result, export1, shares "data" but no judgement names it: unjudged at the top, not a homonymy
    assert got == {"q02": "vocabulary gap", "q10": UNJUDGED}
    graded = invented.with_judgements(
        [("q10", "export1", 0)]
    )  # a person says it is not relevant: the article's reading
    assert {c.qid: c.kind for c in diagnose(graded, Engine(graded).rankings(Params())["BM25"])}["q10"] == HOMONYMY
    # LSA finds q10 at 13: late rank
    lsa = by_qid(diagnose(invented, r["LSA"]))
    assert (lsa["q10"].rank, lsa["q10"].kind) == (13, "late rank")


# ------------------------------------------------------------------------------------------ what one system changes

# Two systems' lists for the same questions; the comments give each side's first relevant rank at threshold 3.
PAIR_LISTS = {  # question: (BASE's list, OTHER's list)
    "q_gap": ([], ["refund", "noise1"]),  # base not found (no shared word: gap), other 1 -> fixed
    "q_homonym": (
        ["river", "noise1"],
        ["noise2", "branch"],
    ),  # base not found, "bank" first (homonymy), other 2 -> fixed
    "q_late": (["noise1", "noise2", "noise3", "crumble", "apple"], ["apple"]),  # base 5 (late), other 1 -> fixed
    "q_ok": (["crumble"], ["noise1", "noise2", "noise3", "apple", "crumble"]),  # base 1, other 5 (late) -> broken
    "q_third": (
        ["noise1", "noise2", "crumble"],
        ["noise1", "noise2", "noise3", "crumble"],
    ),  # base 3 (at t), other 4 -> broken
    "q_beyond": (["noise3", "noise1", "tea"], ["noise1", "noise2", "tea"]),  # both 3, at t: both succeed
    "q_gap_with_result": (["noise1"], []),  # not found on both sides: both fail
    "q_unjudged": (["noise1"], ["noise2"]),  # no relevant document: never compared
}


@pytest.fixture(scope="module")
def pair():
    return _two_systems("pair", DOCS, QUESTIONS, JUDGED, PAIR_LISTS, ("BASE", "OTHER"))


def test_changes_fixed_and_broken_with_the_failing_sides_class_and_both_ranks(pair):
    ds, base, other = pair
    got = changes(ds, base, other)
    assert [(c.qid, c.outcome, c.kind, c.base_rank, c.other_rank) for c in got] == [
        ("q_ok", "broken", "late rank", 1, 5),
        ("q_late", "fixed", "late rank", 5, 1),
        ("q_homonym", "fixed", "surface homonymy", 0, 2),
        ("q_gap", "fixed", "vocabulary gap", 0, 1),
        ("q_third", "broken", "late rank", 3, 4),
    ]  # the dataset's question order
    assert all((c.base, c.other) == ("BASE", "OTHER") and c.question == QUESTIONS[c.qid] for c in got)
    assert {c.outcome for c in got} <= set(OUTCOMES) and {c.kind for c in got} <= set(CLASSES)


def test_a_broken_question_takes_the_other_sides_class(pair):
    ds, base, other = pair
    # OTHER puts "river" (which shares "bank") first and never finds "branch": homonymy on OTHER's side
    lists = [np.array([ds.doc_index["branch"]] if q == "q_homonym" else [], dtype=np.int64) for q in ds.query_ids]
    good = from_lists("GOOD", ds, lists, [np.ones(len(x)) for x in lists])
    broken = {c.qid: c for c in changes(ds, good, base)}
    assert (broken["q_homonym"].outcome, broken["q_homonym"].kind) == ("broken", "surface homonymy")
    assert (broken["q_homonym"].base_rank, broken["q_homonym"].other_rank) == (1, 0)
    assert all(c.outcome == "fixed" for q, c in broken.items() if q != "q_homonym")  # GOOD fails every other question


def test_rank_equal_to_the_threshold_succeeds(pair):
    ds, base, other = pair
    at3 = {c.qid for c in changes(ds, base, other, threshold=3)}
    assert "q_beyond" not in at3  # both at rank 3: both succeed
    assert "q_third" in at3  # 3 against 4: broken
    at4 = {c.qid: c.outcome for c in changes(ds, base, other, threshold=4)}
    assert "q_third" not in at4 and "q_beyond" not in at4  # 3 and 4 both succeed at 4
    assert at4["q_late"] == "fixed" and at4["q_ok"] == "broken"  # 5 still fails at 4
    at2 = {c.qid for c in changes(ds, base, other, threshold=2)}
    assert "q_third" not in at2 and "q_beyond" not in at2  # 3 and 4 both fail at 2
    assert "q_homonym" in at2  # OTHER's rank 2 succeeds at 2
    assert "q_homonym" not in {c.qid for c in changes(ds, base, other, threshold=1)}  # and fails at 1


def test_not_found_on_both_sides_and_unjudged_questions_are_not_changes(pair):
    ds, base, other = pair
    qids = {c.qid for c in changes(ds, base, other)}
    assert "q_gap_with_result" not in qids and "q_unjudged" not in qids
    assert changes(ds, base, base) == []  # a system changes nothing relative to itself


def test_swapping_the_systems_swaps_fixed_and_broken(pair):
    ds, base, other = pair
    forward = changes(ds, base, other)
    backward = {c.qid: c for c in changes(ds, other, base)}
    assert set(backward) == {c.qid for c in forward}
    for c in forward:
        b = backward[c.qid]
        assert b.outcome == {"fixed": "broken", "broken": "fixed"}[c.outcome]
        assert (b.kind, b.base_rank, b.other_rank, b.base, b.other) == (
            c.kind,
            c.other_rank,
            c.base_rank,
            "OTHER",
            "BASE",
        )


def test_describe_gives_the_plain_line():
    fixed = Change("fixed", "vocabulary gap", "q02", "can I get my money back", "BM25", "dense", 0, 1)
    assert describe(fixed) == "fixed: q02, vocabulary gap; dense rank 1, BM25 not found"
    broken = Change("broken", "late rank", "q05", "text", "BM25", "dense", 1, 7)
    assert describe(broken) == "broken: q05, late rank; dense rank 7, BM25 rank 1"
    both_lost = Change("broken", "vocabulary gap", "q9", "text", "A", "B", 2, 0)
    assert describe(both_lost) == "broken: q9, vocabulary gap; B not found, A rank 2"


@pytest.fixture(scope="module")
def invented_with_dense(invented):
    """The invented corpus's rankings with the dense retriever (the bundled model, computed once here)."""
    from retrieval.core.params import Params
    from retrieval.corpus import embeddings
    from retrieval.engine.engine import Engine
    from retrieval.retrievers import dense

    aligned = embeddings.align(dense.embeddings_of(invented), invented)
    return Engine(invented).rankings(Params(), (aligned,))


def test_invented_corpus_dense_fixes_q02_and_q10_and_breaks_nothing(invented, invented_with_dense):
    r = invented_with_dense
    got = changes(invented, r["BM25"], r["dense"], threshold=3)
    assert [(c.qid, c.outcome, c.kind, c.base_rank, c.other_rank) for c in got] == [
        ("q02", "fixed", "vocabulary gap", 0, 1),
        ("q10", "fixed", UNJUDGED, 0, 1),
    ]
    assert describe(got[0]) == "fixed: q02, vocabulary gap; dense rank 1, BM25 not found"
    assert got[0].question == "can I get my money back"
    # relative to LSA, which finds q10 at 13 (late rank), dense fixes the same two
    assert [(c.qid, c.kind) for c in changes(invented, r["LSA"], r["dense"])] == [
        ("q02", "vocabulary gap"),
        ("q10", "late rank"),
    ]


def test_the_hypothesis_is_read_from_the_counts_of_fixed_and_broken():
    """diagnosis.Hypothesis, the Diagnosis page's verdict (ui.diagnosis.verdict renders it): held only when every
    vocabulary-gap failure is fixed, in part when some are, not tested when BM25 has none."""
    from_counts = diagnosis.Hypothesis("BM25", "dense", 5, failing=2, fixed=1, broken=3, answered=10)
    assert from_counts.holds == "holds in part" and from_counts.sentence == (
        "The article's hypothesis (a dense retriever closes BM25's vocabulary gap) holds in part on this data: dense "
        "fixes 1 of the 2 vocabulary-gap questions BM25 fails at k = 5, and it breaks 3 of the 10 questions BM25 "
        "answers in its top 5."
    )
    assert diagnosis.Hypothesis("BM25", "dense", 5, 2, 2, 0, 10).holds == "holds"
    assert diagnosis.Hypothesis("BM25", "dense", 5, 2, 0, 0, 10).holds == "does not hold"
    untested = diagnosis.Hypothesis("BM25", "dense", 3, 0, 0, 1, 1)
    assert untested.holds == "not tested" and untested.sentence.startswith("Nothing to answer here: BM25 fails no")
