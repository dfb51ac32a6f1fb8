"""ui/tour.py: the step from the URL, and every sentence of the tour written from numbers (a tie said only when
the interval holds zero, fusion above / level / between / below its members, ...), expected values by arithmetic."""

from __future__ import annotations

import re

import numpy as np
import pytest

from retrieval.analyses import diagnosis, fusion_gains
from retrieval.corpus.dataset import assemble
from retrieval.engine.engine import evaluate
from retrieval.evaluation import stats
from ui import tour


def iv(mean: float, low: float, high: float) -> stats.Interval:
    return stats.Interval(mean, low, high, stats.RESAMPLES, stats.SEED, stats.CONFIDENCE)


@pytest.mark.parametrize(
    "raw, step",
    [
        ("4", 4),
        (4, 4),
        ("1", 1),
        ("10", 10),
        ("99", 10),
        ("0", 1),
        ("-3", 1),
        ("4.7", 4),
        (" 7 ", 7),
        ("abc", 1),
        ("", 1),
        (None, 1),
        ("nan", 1),
        ("inf", 10),
        ("-inf", 1),
        (["2", "6"], 6),
        ([], 1),
    ],
)
def test_a_step_from_the_url_is_clamped_never_an_error(raw, step):
    assert tour.clamp_step(raw) == step


def test_there_are_ten_steps_and_the_indicator_names_the_step():
    assert tour.N_STEPS == len(tour.STEPS) == len(tour.VIEWS) == 10
    assert tour.progress_text(4) == f"Step 4 of 10: {tour.STEPS[3]}"


# ------------------------------------------------------------------------------------------ the tie


def test_the_articles_bm25_and_lsa_tie_because_the_interval_holds_zero():
    # the article: BM25 0.691171, LSA 0.679138, interval [-0.081, +0.107]
    text = tour.tie_sentence("BM25", "LSA", 0.691171, 0.679138, iv(0.012033, -0.081, 0.107), "nDCG@5", 14)
    assert f"ahead of LSA by {0.691171 - 0.679138:.3f}" in text and "by 0.012" in text
    assert "[\u22120.081, +0.107], holds zero" in text and "they **tie**" in text and "14 questions" in text


def test_no_tie_is_said_when_the_interval_leaves_zero_out():
    text = tour.tie_sentence("BM25", "LSA", 0.50, 0.80, iv(-0.30, -0.41, -0.19), "MRR", 30)
    assert text.startswith("LSA is better than BM25 on mean MRR (0.800 against 0.500)") and "do **not** tie" in text
    assert "they **tie**" not in text and "leaves zero out" in text


def test_equal_means_are_a_tie_exactly():
    text = tour.tie_sentence("BM25", "LSA", 0.5, 0.5, iv(0.0, 0.0, 0.0), "hit@3", 1)
    assert text == "BM25 and LSA have the same mean hit@3, 0.500, on the 1 question: a tie."


# ------------------------------------------------------------------------------------------ where they fail


def test_split_k_is_the_first_cutoff_at_which_one_finds_what_the_other_misses():
    assert fusion_gains.split_k(np.array([1, 2, 0]), np.array([2, 1, 0])) == 1
    assert fusion_gains.split_k(np.array([3, 0]), np.array([5, 0])) == 3  # at 3 the first is found by one only
    assert fusion_gains.split_k(np.array([1, 0, 4]), np.array([1, 0, 4])) is None
    assert fusion_gains.split_k(np.array([30]), np.array([0])) is None  # beyond the cutoffs looked at


def test_the_disagreement_sentence_follows_the_numbers():
    split = tour.disagreement_sentence("BM25", "LSA", 1, ["q01"], ["q12"], ["q02", "q10"], 1)
    assert "BM25 alone finds 1 question in its top 1 (q01) and LSA alone 1 (q12)" in split
    assert "Neither finds q02, q10 in its top 1." in split
    same = tour.disagreement_sentence("BM25", "LSA", 5, [], [], ["q02", "q10"], 1)
    assert "fail on the same questions" in same and "at **k = 1**" in same
    never = tour.disagreement_sentence("BM25", "LSA", 5, [], [], [], None)
    assert "the same questions at every cutoff from 1 to 20" in never and "Every question is found" in never


def test_the_step_opens_on_a_question_found_but_not_first():
    assert tour.default_question(np.array([1, 0, 3, 2]), 5) == 2
    assert (
        tour.default_question(np.array([0, 7, 1]), 5) == 2
    )  # none inside the top k but not first: the first at rank 1
    assert tour.default_question(np.array([0, 9]), 5) == 0


# ------------------------------------------------------------------------------------------ one question


def test_the_four_metrics_read_aloud():
    values = {"hit@5": 1.0, "recall@5": 2 / 3, "mrr": 0.5, "ndcg@5": 0.61}
    text = tour.metrics_sentence("BM25", "q07", 5, 2, 2, 3, values)
    assert "at rank 2, inside the top 5" in text and "**hit@5 = 1**" in text
    assert f"**recall@5 = {2 / 3:.3f}**: 2 of its 3 relevant documents are there" in text
    assert "**RR = 1/2 = 0.500**" in text and "**nDCG@5 = 0.610**" in text
    late = tour.metrics_sentence(
        "LSA", "q10", 5, 13, 0, 2, {"hit@5": 0.0, "recall@5": 0.0, "mrr": 1 / 13, "ndcg@5": 0.0}
    )
    assert (
        "beyond the top 5" in late
        and "**hit@5 = 0**: no relevant document" in late
        and f"RR = 1/13 = {1 / 13:.3f}" in late
    )
    none = tour.metrics_sentence("BM25", "q02", 5, 0, 0, 3, {"hit@5": 0.0, "recall@5": 0.0, "mrr": 0.0, "ndcg@5": 0.0})
    assert "finds no relevant document for question q02" in none


def test_found_in_top_counts_the_relevant_documents_within_k(invented):
    ev = evaluate(invented, metric_names=["recall@5"])
    q = invented.query_index["q07"]  # relevant: invoice1 (2), invoice2 (1), invoice3 (1)
    found, relevant = tour.found_in_top(invented, ev.rankings["BM25"], q, 5)
    assert relevant == 3
    i = list(invented.evaluated).index(q)
    assert found / relevant == pytest.approx(ev.values["BM25"]["recall@5"][i])


# ------------------------------------------------------------------------------------------ the corpus


def small():
    docs = [("d1", "apple pie recipe"), ("d2", "apple juice"), ("d3", "pear tart"), ("d4", "plum jam")]
    queries = [("q1", "apple pie"), ("q2", "banana bread"), ("q3", "nothing judged")]
    return assemble("fruit", docs, queries, [("q1", "d1", 2), ("q1", "d2", 1), ("q2", "d3", 1), ("q2", "d4", 0)])


def test_the_corpus_facts_and_sentence():
    f = tour.corpus_facts(small())
    assert (f.documents, f.questions, f.evaluated, f.judgements, f.not_relevant) == (4, 3, 2, 4, 1)
    assert f.grades == {2: 1, 1: 2}
    text = tour.corpus_sentence("<b>fruit</b>", f)
    assert "4 documents and 3 questions" in text and "2 of the questions have at least one relevant document" in text
    assert "The other 1 question has no relevant document and is left out of every mean." in text
    assert (
        "3 relevant judgements (1 with grade 2, 2 with grade 1)" in text and "1 judgement says *not relevant*" in text
    )
    assert "<b>" not in text and r"\<b\>" in text


def test_sample_questions_lists_the_evaluated_ones_with_their_grades():
    frame = tour.sample_questions(small())
    assert list(frame["question"]) == ["q1", "q2"]
    assert frame.iloc[0]["relevant documents (grade)"] == "d1 (2), d2 (1)"


# ------------------------------------------------------------------------------------------ why


def test_the_examples_are_the_first_case_of_each_class_and_none_when_missing(invented):
    ev = evaluate(invented, metric_names=["hit@3"])
    cases = diagnosis.diagnose(invented, ev.rankings["BM25"], 3)
    found = tour.examples(cases)
    assert found["vocabulary gap"].qid == "q02" and found["surface homonymy"] is None  # export1 is unjudged for q10
    # step 5 shows the article's two classes (a note for a missing one) and every other class that occurs
    assert tour.shown_classes(cases) == ["vocabulary gap", "surface homonymy", "unjudged at the top"]
    shown_ = tour.examples(cases, tour.shown_classes(cases))
    assert shown_["unjudged at the top"].qid == "q10" and shown_["surface homonymy"] is None
    gap = tour.case_sentence(found["vocabulary gap"], 3)
    assert (
        "its list is empty" in gap
        and "none of its 3 relevant documents shares a word" in gap
        and "**vocabulary gap**" in gap
    )
    top = tour.case_sentence(shown_["unjudged at the top"], 3)
    assert (
        "puts export1 first on “data”" in top
        and "No judgement names export1" in top
        and "**unjudged at the top**" in top
    )
    assert "Judge page" in top and "surface homonymy" in top and "wrong and" not in top
    assert tour.first_result_note(shown_["unjudged at the top"]) == "BM25's first result, unjudged"
    assert "fails no question on a **surface homonymy** in the top 3" in tour.missing_sentence(
        "BM25", "surface homonymy", 3
    )
    none_said = tour.missing_sentence("BM25", "surface homonymy", 3, judged_not_relevant=False)
    assert (
        "No judgement of this data says *not relevant*, so no failure can be called a **surface homonymy**" in none_said
    )
    assert tour.missing_sentence("BM25", "late rank", 3, False) == tour.missing_sentence("BM25", "late rank", 3)
    counts = tour.counts_sentence("BM25", cases, 14, 3)
    assert "2 questions out of 14 (1 vocabulary gap, 0 surface homonymy, 1 unjudged at the top, 0 late rank)" in counts
    # graded 0 on the Judge page, export1 makes q10 the article's surface homonymy
    graded = invented.with_judgements([("q10", "export1", 0)])
    homonymy = tour.examples(diagnosis.diagnose(graded, evaluate(graded, metric_names=["hit@3"]).rankings["BM25"], 3))
    said = tour.case_sentence(homonymy["surface homonymy"], 3)
    assert "a judgement says it is not relevant (grade 0)" in said and "**surface homonymy**" in said
    assert tour.first_result_note(homonymy["surface homonymy"]) == "BM25's first result, judged not relevant (grade 0)"


def test_a_late_rank_is_shown_when_it_occurs(invented):
    ev = evaluate(invented, metric_names=["hit@1"])
    cases = diagnosis.diagnose(invented, ev.rankings["BM25"], 1)  # at k = 1, q12 (rank 2) is a late rank
    assert "late rank" in tour.shown_classes(cases)
    late = tour.examples(cases, tour.shown_classes(cases))["late rank"]
    assert late.qid == "q12" and "at rank 2, beyond the top 1. A **late rank**." in tour.case_sentence(late, 1)
    assert (
        tour.class_phrase("late rank") == "a late rank"
        and tour.class_phrase("unjudged at the top") == "its first result unjudged"
    )


def test_a_case_sentence_escapes_what_the_dataset_wrote():
    c = diagnosis.Case(
        "BM25", "q<1>", "**now** [x](javascript:alert(1))", 0, "d*2*", ("now",), (("d3", 1, ()),), "surface homonymy"
    )
    text = tour.case_sentence(c, 3)
    for live in ("<1>", "**now**", "](javascript", "d*2*"):
        assert not re.search(r"(?<!\\)" + re.escape(live), text), live


# ------------------------------------------------------------------------------------------ fusion and noise


def test_a_fusion_is_placed_against_its_members():
    members = {"BM25": 0.691171, "LSA": 0.679138}
    assert "above both its members (BM25 0.691 and LSA 0.679)" in tour.fusion_sentence(
        "RRF", 0.737367, members, "nDCG@5"
    )
    assert "level with its better member" in tour.fusion_sentence("RRF", 0.691171, members, "nDCG@5")
    assert "between its members" in tour.fusion_sentence("weighted", 0.68, members, "nDCG@5")
    assert "below both its members" in tour.fusion_sentence("weighted", 0.5, members, "nDCG@5")
    assert "above every member" in tour.fusion_sentence("RRF", 0.9, {**members, "dense": 0.8}, "nDCG@5")
    assert "below its only member (BM25 0.691)" in tour.fusion_sentence("RRF", 0.6, {"BM25": 0.691171}, "nDCG@5")


def test_the_ranks_sentence_counts_where_the_fusion_takes_the_better_member():
    a, b = np.array([1, 2, 0, 5, 3]), np.array([2, 1, 0, 5, 0])
    text = tour.ranks_sentence("RRF", np.array([1, 1, 0, 5, 0]), [a, b])  # differs on q0, q1, q4
    assert (
        "On the 3 questions where the members disagree, RRF matches the better member on 2, beats both on 0 and falls behind the better on 1."
        == text
    )
    assert "nothing to pick between" in tour.ranks_sentence("RRF", a, [a, a])


def test_best_of_takes_the_highest_mean_and_the_first_listed_on_a_tie(invented):
    ev = evaluate(invented, metric_names=["ndcg@5", "hit@3"])
    means = {s: ev.mean(s, "ndcg@5") for s in ("BM25", "LSA")}
    assert tour.best_of(ev, ["BM25", "LSA"], "ndcg@5") == max(means, key=means.get)
    assert tour.best_of(ev, ["weighted", "RRF"], "hit@3") == "weighted"  # both 12/14 at hit@3: the first listed


def test_the_noise_sentence_follows_the_interval():
    assert "can't be told apart from noise" in tour.noise_sentence(
        "RRF", "BM25", iv(0.046, -0.007, 0.113), "nDCG@5", 14
    )
    beyond = tour.noise_sentence("RRF", "BM25", iv(0.05, 0.01, 0.09), "nDCG@5", 200)
    assert "more than noise" in beyond and "RRF is better here on nDCG@5" in beyond


def test_the_trap_sentence_says_inflated_from_the_numbers():
    text = tour.trap_sentence(0.456949, 0.456949, 0.543791, ["c"], 5)
    assert "**0.543791**, inflated" in text and "agrees with ours" in text and "never sees c" in text
    many = tour.trap_sentence(0.49, 0.49, 0.92, [str(i) for i in range(25)], 5)
    assert "never sees 0, 1, 2, 3, 4, 5 and 19 more (relevant, not retrieved)" in many and "Always pass" in many
    assert "Always pass" not in tour.trap_sentence(0.49, 0.49, 0.92, ["c"], 5, advice=False)
    same = tour.trap_sentence(0.5, 0.5, 0.5, [], 5)
    assert "the same here" in same


# ------------------------------------------------------------------------------------------ dense and the end


def test_the_dense_example_says_fixed_or_not_from_the_rank():
    c = diagnosis.Case("BM25", "q02", "can I get my money back", 0, None, (), (("refund1", 2, ()),), "vocabulary gap")
    assert "**fixed**" in tour.dense_example_sentence(
        c, 1, 3
    ) and "rank 1, inside the top 3" in tour.dense_example_sentence(c, 1, 3)
    assert "still beyond the top 3: **not fixed**" in tour.dense_example_sentence(c, 7, 3)
    assert "nowhere in its list: **not fixed**" in tour.dense_example_sentence(c, 0, 3)
    assert "Data page" in tour.dense_hint() and "--embeddings e5-small" in tour.dense_hint()


def test_the_last_step_links_the_pages_the_router_has(monkeypatch):
    paths = [p for p, *_ in tour.next_pages([p for p, _, _ in tour.router.PAGES])]
    assert paths[:1] == ["pages/data.py"] and "pages/tuning.py" in paths and "pages/per_question.py" in paths
    monkeypatch.setattr(
        tour.router, "PAGES", (*tour.router.PAGES, ("pages/playground.py", "Playground", ":material/edit:"))
    )
    with_playground = tour.next_pages([p for p, _, _ in tour.router.PAGES])
    assert ("pages/playground.py", "Playground", ":material/edit:") == with_playground[1][:3]


def test_a_fusion_behind_its_member_is_a_difference_not_a_gain():
    text = tour.noise_sentence("RRF", "BM25", iv(-0.02, -0.05, 0.01), "nDCG@5", 14)
    assert "the difference of RRF over BM25 (\u22120.020)" in text and "gain" not in text


def test_the_fusion_intro_names_the_members_and_their_weights():
    two = tour.fusion_intro(["BM25", "LSA"], tour.Params())
    assert "alpha = 0.5 on BM25, 1 \u2212 alpha on LSA" in two and "1/(60 + rank) over each member's top 10" in two
    three = tour.fusion_intro(
        ["BM25", "LSA", "<b>run</b>"], tour.Params(members=("BM25", "LSA", "x"), weights=(0.5, 0.3, 0.2))
    )
    assert "one weight per member" in three and "<b>" not in three


def test_the_trap_question_is_the_first_with_a_relevant_document_in_and_one_out(invented):
    ev = evaluate(invented, metric_names=["ndcg@2"])
    r = ev.rankings["BM25"]
    q = tour.trap_question(invented, r, 2)
    assert invented.query_ids[q] == "q01"  # pricing1 in BM25's top 2, pricing2 third
    toy = tour.data_toy(invented, r, q, 2)
    assert toy.ranking == ("pricing1", "sso1") and toy.judged == {"pricing1": 2, "pricing2": 1}
    assert set(toy.universe) == {"pricing1", "sso1", "pricing2"}
    assert tour.found_in_top(invented, r, q, 3) == (2, 2)  # at k = 3 both are in: q01 no longer shows the trap
    assert tour.trap_question(invented, r, 3) != q


# ------------------------------------------------------------------------------------------ the issue's corrections


def test_the_fusions_gain_on_the_invented_corpus_comes_from_the_later_relevant_documents(invented):
    ev = evaluate(invented, metric_names=["ndcg@5"])
    members = ["BM25", "LSA"]
    qids = [invented.query_ids[q] for q in invented.evaluated]
    for f in ("weighted", "RRF"):
        g = fusion_gains.fusion_gains(
            f,
            ev.values[f]["ndcg@5"],
            [ev.values[m]["ndcg@5"] for m in members],
            ev.first_rank[f],
            [ev.first_rank[m] for m in members],
        )
        above = [qids[i] for i in g.above]
        # q03: both members and the fusion put a relevant document first (0.76 and 0.86); the fusion also puts the
        # second one higher than either member does, 0.95: above both, by the later relevant document
        assert "q03" in above and "q03" in [qids[i] for i in g.later]
        for i in g.above:
            assert ev.values[f]["ndcg@5"][i] > max(ev.values[m]["ndcg@5"][i] for m in members)
        said = tour.gains_sentence(g, qids, "nDCG@5", 2)
        assert f"On nDCG@5 itself, {f} scores above both its members on {len(g.above)} question" in said
        assert "**the gain comes from the later relevant documents**" in said
    rrf = fusion_gains.fusion_gains(
        "RRF",
        ev.values["RRF"]["ndcg@5"],
        [ev.values[m]["ndcg@5"] for m in members],
        ev.first_rank["RRF"],
        [ev.first_rank[m] for m in members],
    )
    q03 = qids.index("q03")
    assert tour.relevant_ranks(invented, ev.rankings["RRF"], int(invented.evaluated[q03])) == "1 (2), 3 (1)"
    assert tour.relevant_ranks(invented, ev.rankings["BM25"], int(invented.evaluated[q03])) == "1 (2)"
    assert tour.relevant_ranks(invented, ev.rankings["LSA"], int(invented.evaluated[q03])) == "1 (1), 2 (2)"
    assert q03 in rrf.later


def test_the_gains_sentence_says_first_or_later_or_none_from_the_numbers():
    qids = ["a", "b", "c"]
    none = fusion_gains.Gains("RRF", (), ())
    assert tour.gains_sentence(none, qids, "MRR", 2).startswith(
        "On no question does RRF score above both its members on MRR"
    )
    first = fusion_gains.Gains("RRF", (0, 2), ())
    assert "on 2 questions (a, c): on each it puts the first relevant document higher" in tour.gains_sentence(
        first, qids, "MRR", 3
    )
    assert "above every member" in tour.gains_sentence(first, qids, "MRR", 3)
    mixed = tour.gains_sentence(fusion_gains.Gains("RRF", (0, 1), (1,)), qids, "nDCG@5", 2)
    assert "On 1 of them (b)" in mixed and "On 1 (a) it puts the first relevant document higher." in mixed
    g = fusion_gains.fusion_gains(
        "F",
        np.array([0.9, 0.5, 0.8]),
        [np.array([0.8, 0.5, 0.7]), np.array([0.7, 0.6, 0.1])],
        np.array([1, 1, 1]),
        [np.array([1, 1, 2]), np.array([3, 1, 0])],
    )
    assert (g.above, g.later) == ((0, 2), (0,))  # question 2: its first relevant (1) is higher than the members' (2)


def test_the_trap_on_the_data_at_k_5_names_q03_whose_list_is_shorter_than_k(invented):
    """The issue: at k = 5 the tour said no question has a relevant document in BM25's top 5 and another outside
    it, while q03 has one at rank 1 and recall@5 = 0.5 (BM25 lists two documents for it)."""
    ev = evaluate(invented, metric_names=["recall@5"])
    r = ev.rankings["BM25"]
    split = [invented.query_ids[q] for q in tour.split_questions(invented, r, 5)]
    recall = dict(zip([invented.query_ids[q] for q in invented.evaluated], ev.values["BM25"]["recall@5"]))
    assert split == [q for q, v in recall.items() if 0 < v < 1] and "q03" in split
    assert all(int(r.n_results[invented.query_index[q]]) < 5 for q in split)  # each lists fewer than 5 documents
    assert tour.trap_question(invented, r, 5) is None
    assert "no question has" in tour.no_trap_sentence("x", "BM25", 5, [])
    said = tour.no_trap_sentence("x", "BM25", 5, split)
    assert f"{len(split)} question" in said and "(q03" in said and "lists fewer than 5 documents" in said
    assert "no question has" not in said


def test_the_corpus_sentence_says_which_judgements_were_given_on_the_judge_page():
    f = tour.corpus_facts(small(), added=1)
    assert (f.judgements, f.added) == (4, 1)
    text = tour.corpus_sentence("fruit · edited: 1 grade", f)
    assert (
        text.startswith("**fruit · edited\\: 1 grade** holds")
        and "Of the 4 judgements in use, 3 came with the data and 1 is a grade given on the Judge page." in text
    )
    assert "Judge page" not in tour.corpus_sentence("fruit", tour.corpus_facts(small()))
