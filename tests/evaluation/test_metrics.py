"""Metrics: the article's worked example, scikit-learn's ndcg_score and trec_eval (pytrec_eval) as independent oracles."""

from __future__ import annotations

import math

import numpy as np
import pytest

from retrieval.core.errors import InputError
from retrieval.corpus.dataset import Qrels, assemble, parse_run
from retrieval.evaluation import metrics
from retrieval.retrievers.ranking import from_run

LOG2 = math.log2
RELEVANT = {"a": 2, "b": 1, "c": 1}
UNIVERSE = ["a", "b", "c", "x", "y", "z", "w", "v"]
IDEAL5 = 2 / LOG2(2) + 1 / LOG2(3) + 1 / LOG2(4)  # a, b, c in the best order


def values(ranking: list[str], relevant: dict[str, int], name: str) -> float:
    qrels, ranks = metrics.judged_ranks_from_list(ranking, relevant)
    return float(metrics.per_query(qrels, 1, ranks, name)[0])


# ------------------------------------------------------------------ the article's worked example


@pytest.mark.parametrize(
    "ranking, expected",
    [
        (
            ["a", "x", "y", "b", "z"],
            {"hit@3": 1.0, "recall@5": 2 / 3, "mrr": 1.0, "ndcg@5": (2 / LOG2(2) + 1 / LOG2(5)) / IDEAL5},
        ),
        (
            ["x", "y", "a", "b", "z"],
            {"hit@3": 1.0, "recall@5": 2 / 3, "mrr": 1 / 3, "ndcg@5": (2 / LOG2(4) + 1 / LOG2(5)) / IDEAL5},
        ),
        (["x", "y", "z", "w", "v"], {"hit@3": 0.0, "recall@5": 0.0, "mrr": 0.0, "ndcg@5": 0.0}),
    ],
    ids=["a-first", "a-third", "none"],
)
def test_worked_example_formulas(ranking, expected):
    for name, want in expected.items():
        assert values(ranking, RELEVANT, name) == pytest.approx(want, abs=1e-12), name


def test_worked_example_printed_figures():
    # expected.md: 0.776 / 0.457 (0.456949) / 0
    assert round(values(["a", "x", "y", "b", "z"], RELEVANT, "ndcg@5"), 3) == 0.776
    assert round(values(["x", "y", "a", "b", "z"], RELEVANT, "ndcg@5"), 6) == 0.456949
    assert round(values(["x", "y", "a", "b", "z"], RELEVANT, "recall@5"), 2) == 0.67
    assert round(values(["x", "y", "a", "b", "z"], RELEVANT, "mrr"), 2) == 0.33


def test_sklearn_ndcg_score_on_the_whole_universe_and_the_trap():
    from sklearn.metrics import ndcg_score

    ranking = ["x", "y", "a", "b", "z"]
    truth = np.array([[RELEVANT.get(d, 0) for d in UNIVERSE]])
    scores = np.array([[5 - ranking.index(d) if d in ranking else 0 for d in UNIVERSE]])
    theirs = ndcg_score(truth, scores, k=5)
    ours = values(ranking, RELEVANT, "ndcg@5")
    assert ours == pytest.approx(theirs, abs=1e-12)
    assert round(theirs, 6) == 0.456949

    only_retrieved = np.array([[RELEVANT.get(d, 0) for d in ranking]])
    trap = ndcg_score(only_retrieved, np.array([[5, 4, 3, 2, 1]]), k=5)
    assert round(trap, 6) == 0.543791
    assert trap == pytest.approx((2 / LOG2(4) + 1 / LOG2(5)) / (2 / LOG2(2) + 1 / LOG2(3)))
    # ours keeps c in the ideal DCG whatever is retrieved
    assert round(ours, 6) == 0.456949


def test_perfect_ranking_scores_one_everywhere():
    ranking = ["a", "b", "c", "x", "y"]
    for name in ("hit@1", "recall@3", "mrr", "ndcg@5", "ndcg@3", "ndcg_exp@5", "precision@3"):
        assert values(ranking, RELEVANT, name) == pytest.approx(1.0, abs=1e-12), name


def test_swapping_equal_grades_changes_nothing():
    for name in ("ndcg@5", "ndcg_exp@5", "recall@5", "mrr"):
        assert values(["a", "b", "c"], RELEVANT, name) == values(["a", "c", "b"], RELEVANT, name)


def test_ndcg_exp_uses_gain_two_to_the_grade_minus_one():
    ranking = ["x", "y", "a", "b", "z"]
    g = lambda grade: 2**grade - 1  # noqa: E731
    dcg = g(2) / LOG2(4) + g(1) / LOG2(5)
    idcg = g(2) / LOG2(2) + g(1) / LOG2(3) + g(1) / LOG2(4)
    assert values(ranking, RELEVANT, "ndcg_exp@5") == pytest.approx(dcg / idcg, abs=1e-12)
    # with grades 0/1 only the two gains coincide
    binary = {"a": 1, "b": 1}
    assert values(["x", "a", "b"], binary, "ndcg_exp@3") == pytest.approx(values(["x", "a", "b"], binary, "ndcg@3"))
    # with grade 3 they differ: exponential weighs it 7, linear 3
    graded = {"a": 3, "b": 1}
    lin = (1 / LOG2(2) + 3 / LOG2(3)) / (3 / LOG2(2) + 1 / LOG2(3))
    exp = (1 / LOG2(2) + 7 / LOG2(3)) / (7 / LOG2(2) + 1 / LOG2(3))
    assert values(["b", "a"], graded, "ndcg@2") == pytest.approx(lin, abs=1e-12)
    assert values(["b", "a"], graded, "ndcg_exp@2") == pytest.approx(exp, abs=1e-12)


def test_cutoff_applies_to_every_metric():
    ranking = ["x", "y", "z", "a"]
    assert values(ranking, RELEVANT, "hit@3") == 0.0
    assert values(ranking, RELEVANT, "hit@4") == 1.0
    assert values(ranking, RELEVANT, "recall@3") == 0.0
    assert values(ranking, RELEVANT, "recall@4") == pytest.approx(1 / 3)
    assert values(ranking, RELEVANT, "precision@4") == pytest.approx(1 / 4)
    assert values(ranking, RELEVANT, "precision@10") == pytest.approx(1 / 10)  # trec_eval's P_k divides by k
    assert values(ranking, RELEVANT, "mrr") == pytest.approx(1 / 4)
    assert values(ranking, RELEVANT, "mrr@3") == 0.0
    assert values(ranking, RELEVANT, "ndcg@3") == 0.0


# ------------------------------------------------------------------ names


@pytest.mark.parametrize("name", ["foo", "ndcg@x", "err@10", "recall@-1", "", "hit@3@4", "mapp"])
def test_unknown_metric_name_lists_the_valid_ones(name):
    with pytest.raises(InputError) as e:
        metrics.parse(name)
    msg = str(e.value)
    for valid in (
        "hit@k",
        "recall@k",
        "precision@k",
        "mrr",
        "ndcg@k",
        "ndcg_exp@k",
        "map, map@k",
        "rprec",
        "bpref",
        "judged@k",
    ):
        assert valid in msg


@pytest.mark.parametrize("name", ["ndcg", "hit", "recall", "precision", "ndcg_exp", "judged"])
def test_metric_without_cutoff_is_an_error_naming_it(name):
    with pytest.raises(InputError, match=rf"{name}.*cutoff|cutoff.*{name}"):
        metrics.parse(name)


def test_zero_cutoff_is_rejected():
    with pytest.raises(InputError):
        metrics.parse("ndcg@0")


def test_metric_names_round_trip_and_list_parsing():
    assert [m.name for m in metrics.parse_list("hit@3, recall@5,mrr,ndcg@5,ndcg@5")] == [
        "hit@3",
        "recall@5",
        "mrr",
        "ndcg@5",
    ]
    assert metrics.parse("NDCG_EXP@10").name == "ndcg_exp@10"
    assert metrics.parse("mrr@10") == metrics.Metric("mrr", 10)
    with pytest.raises(InputError):
        metrics.parse_list(" , ")
    with pytest.raises(InputError, match="foo"):
        metrics.parse_list("hit@3,foo")


# ------------------------------------------------------------------ no relevant document: NaN, left out of means


def _qrels(rows: list[tuple[int, str, int]]) -> Qrels:
    return Qrels(
        query=np.array([r[0] for r in rows], dtype=np.int64),
        doc=np.arange(len(rows), dtype=np.int64),
        doc_id=np.array([r[1] for r in rows], dtype=object),
        grade=np.array([r[2] for r in rows], dtype=np.int64),
    )


def test_question_without_relevant_document_is_nan_and_left_out_of_the_mean():
    # q0: a relevant at rank 1; q1: only a grade-0 judgement; q2: relevant, not retrieved; q3: no judgement at all
    qrels = _qrels([(0, "a", 1), (1, "b", 0), (2, "c", 2)])
    ranks = np.array([1, 1, 0])
    for name in ("hit@3", "recall@5", "precision@5", "mrr", "ndcg@5", "ndcg_exp@5"):
        v = metrics.per_query(qrels, 4, ranks, name)
        assert math.isnan(v[1]) and math.isnan(v[3]), name
        assert v[2] == 0.0, name
        assert metrics.mean(v) == pytest.approx((v[0] + 0.0) / 2), name
    assert metrics.mean(metrics.per_query(qrels, 4, ranks, "mrr")) == pytest.approx((1 + 0) / 2)


def test_mean_of_all_nan_is_nan():
    assert math.isnan(metrics.mean(np.array([np.nan, np.nan])))


def test_first_relevant_rank_ignores_non_relevant_judgements():
    qrels = _qrels([(0, "a", 0), (0, "b", 1), (1, "c", 1)])
    first = metrics.first_relevant_rank(qrels, 3, np.array([1, 4, 0]))
    assert first.tolist() == [4, 0, 0]


# ------------------------------------------------------------------ trec_eval (pytrec_eval) on random runs

TREC = {  # trec_eval measure -> our metric
    "ndcg_cut_{k}": "ndcg@{k}",
    "recall_{k}": "recall@{k}",
    "success_{k}": "hit@{k}",
    "P_{k}": "precision@{k}",
}


def _texts(rng, n_docs: int, n_q: int) -> tuple[list, list]:
    """Documents (ids not in index order) and questions of a random collection."""
    docs = [(f"d{i:03d}", f"text {i}") for i in rng.permutation(n_docs)]
    return docs, [(f"q{i:02d}", f"question {i}") for i in range(n_q)]


def _judgements(rng, queries, n_docs: int, sizes: tuple[int, int], fix) -> list[tuple[str, str, int]]:
    """Random graded judgements (0 to 3) of a random number of documents per question (`sizes`: the range of that
    number), each question's grades then shaped by `fix(question index, grades)`."""
    out = []
    for qi, (qid, _) in enumerate(queries):
        judged = rng.choice(n_docs, size=int(rng.integers(*sizes)), replace=False)
        grades = rng.integers(0, 4, size=judged.size)
        fix(qi, grades)
        out += [(qid, f"d{d:03d}", int(g)) for d, g in zip(judged, grades)]
    return out


def _random_collection(seed: int):
    """Documents, questions, graded judgements and a TREC run with distinct scores, as bytes."""
    rng = np.random.default_rng(seed)
    n_docs, n_q = 60, 12
    docs, queries = _texts(rng, n_docs, n_q)

    def fix(qi, grades):
        if qi == 3:
            grades[:] = 0  # q03: only non-relevant judgements
        if qi == 5:
            grades[0] = 3  # q05 surely has a relevant document (and none of them will be retrieved)

    judgements = _judgements(rng, queries, n_docs, (1, 12), fix)
    lines = []
    for qi, (qid, _) in enumerate(queries):
        if qi == 7:
            continue  # q07 is not answered at all: it counts as zero
        judged = {d for q, d, g in judgements if q == qid and g > 0}
        pool = [
            f"d{i:03d}" for i in range(n_docs) if qi != 5 or f"d{i:03d}" not in judged
        ]  # q05: nothing relevant retrieved
        retrieved = rng.choice(pool, size=int(rng.integers(3, 25)), replace=False)
        scores = rng.permutation(np.round(rng.uniform(0, 100, size=retrieved.size), 6))
        # distinct scores (trec_eval and we break ties differently); the rank column is deliberately wrong
        assert len(set(scores.tolist())) == scores.size
        for rank, (d, s) in enumerate(zip(retrieved, scores)):
            lines.append(f"{qid} Q0 {d} {rank + 1} {s:.6f} rnd")
    order = rng.permutation(len(lines))
    run_bytes = ("\n".join(lines[i] for i in order) + "\n").encode()
    return docs, queries, judgements, run_bytes


def _agree(ds, ranking, our_name: str, theirs: dict, trec_name: str, tol: float, seed: int) -> int:
    """Our per-question values of one metric against trec_eval's, question by question; how many were compared.
    A question without a relevant document has no value (NaN) here; one the run does not answer trec_eval
    skips, and it scores zero here."""
    ours = metrics.per_query(ds.qrels, ds.n_queries, ranking.judged_rank, our_name)
    checked = 0
    for qi, qid in enumerate(ds.query_ids):
        if ds.n_relevant[qi] == 0:
            assert math.isnan(ours[qi]), (qid, our_name)
        elif qid not in theirs:
            assert ours[qi] == 0.0, (qid, our_name)
        else:
            assert ours[qi] == pytest.approx(theirs[qid][trec_name], abs=tol), (seed, qid, our_name)
            checked += 1
    return checked


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_agrees_with_trec_eval_on_random_graded_runs(seed):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    docs, queries, judgements, run_bytes = _random_collection(seed)
    ds = assemble("random", docs, queries, judgements)
    ranking = from_run(parse_run(run_bytes, "x.run"), ds)

    qrels = {}
    for q, d, g in judgements:
        qrels.setdefault(q, {})[d] = g
    run = {}
    for line in run_bytes.decode().splitlines():
        q, _, d, _, s, _ = line.split()
        run.setdefault(q, {})[d] = float(s)
    ks = (1, 3, 5, 10, 20)
    measures = {"recip_rank"} | {m.split("_{")[0] + "." + ",".join(map(str, ks)) for m in TREC}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)

    checked = 0
    for k in ks:
        pairs = [(t.format(k=k), o.format(k=k)) for t, o in TREC.items()] + [("recip_rank", "mrr")]
        for trec_name, our_name in pairs:
            checked += _agree(ds, ranking, our_name, theirs, trec_name, 1e-9, seed)
    assert checked > 100
    # the collection covers the awkward cases
    assert ds.n_relevant[3] == 0 and "q07" not in theirs
    assert theirs["q05"]["recip_rank"] == 0.0


# ------------------------------------------------------------------ map, rprec, bpref, judged@k: names


def test_new_metric_names_parse_with_and_without_their_cutoffs():
    assert metrics.parse("map") == metrics.Metric("map", None)
    assert metrics.parse("MAP@10") == metrics.Metric("map", 10)
    assert metrics.parse("rprec").name == "rprec"
    assert metrics.parse(" bpref ").name == "bpref"
    assert metrics.parse("judged@10") == metrics.Metric("judged", 10)
    assert [m.name for m in metrics.parse_list("map,map@5,rprec,bpref,judged@10,map")] == [
        "map",
        "map@5",
        "rprec",
        "bpref",
        "judged@10",
    ]


@pytest.mark.parametrize("name", ["rprec@5", "bpref@10", "RPREC@1"])
def test_rprec_and_bpref_refuse_a_cutoff_naming_the_form_to_write(name):
    with pytest.raises(InputError, match="takes no cutoff") as e:
        metrics.parse(name)
    assert name.split("@")[0].lower() in str(e.value)


def test_judged_and_map_refuse_a_zero_cutoff():
    for name in ("judged@0", "map@0"):
        with pytest.raises(InputError, match=">= 1"):
            metrics.parse(name)


# ------------------------------------------------------------------ map, rprec, bpref, judged@k: the formulas written out

ABC = {"a": 1, "b": 1, "c": 1}


def test_average_precision_is_the_mean_of_precision_at_each_relevant_rank_over_all_relevant():
    # a at rank 2 (P@2 = 1/2), b at rank 4 (P@4 = 2/4), c never retrieved: it adds nothing and counts in R = 3
    ranking = ["x", "a", "y", "b", "z"]
    assert values(ranking, ABC, "map") == pytest.approx((1 / 2 + 2 / 4) / 3, abs=1e-15)
    assert values(ranking, ABC, "map@3") == pytest.approx((1 / 2) / 3, abs=1e-15)  # map_cut_3: b is cut off, R stays 3
    assert values(ranking, ABC, "map@1") == 0.0
    assert values(ranking, ABC, "map@5") == values(ranking, ABC, "map")
    assert values(["a", "b", "c"], ABC, "map") == pytest.approx(1.0, abs=1e-15)
    # grades don't matter, only relevant or not
    assert values(ranking, {"a": 2, "b": 1, "c": 3}, "map") == values(ranking, ABC, "map")
    # a grade-0 judgement is not relevant: it does not enter R
    assert values(ranking, {**ABC, "x": 0}, "map") == values(ranking, ABC, "map")


def test_r_precision_counts_the_relevant_documents_in_the_top_r():
    assert values(["a", "x", "b", "c"], ABC, "rprec") == pytest.approx(2 / 3, abs=1e-15)  # top 3 = a x b
    assert values(["x", "y", "z", "a"], ABC, "rprec") == 0.0
    assert values(["c"], ABC, "rprec") == pytest.approx(1 / 3, abs=1e-15)  # a list shorter than R
    assert values(["x", "a"], {"a": 1, "n": 0}, "rprec") == 0.0  # R = 1: only the first result counts
    # at R it is precision@R and recall@R
    ranking = ["b", "x", "c", "y"]
    assert values(ranking, ABC, "rprec") == values(ranking, ABC, "precision@3") == values(ranking, ABC, "recall@3")


def test_bpref_counts_judged_non_relevant_documents_above_each_relevant_one():
    judged = {"a": 1, "b": 1, "n": 0, "m": 0, "o": 0}  # R = 2, N = 3
    # a has n above it (1), b has n and m (2): ((1 - 1/2) + (1 - 2/2)) / 2; u is unjudged and plays no part
    assert values(["n", "a", "u", "m", "b"], judged, "bpref") == pytest.approx(
        ((1 - 1 / 2) + (1 - 2 / 2)) / 2, abs=1e-15
    )
    assert values(["n", "a", "m", "b"], judged, "bpref") == values(["u", "n", "v", "a", "w", "m", "b"], judged, "bpref")
    # n_d is capped at R: o above too changes nothing once two are above b
    assert values(["n", "m", "o", "a", "b"], judged, "bpref") == 0.0
    # a relevant document not retrieved adds 0 and still counts in R
    assert values(["a", "n"], judged, "bpref") == pytest.approx(1 / 2, abs=1e-15)
    # judged non-relevant documents below every relevant one cost nothing
    assert values(["a", "b", "n", "m", "o"], judged, "bpref") == 1.0


def test_bpref_without_judged_non_relevant_documents_is_the_recall_of_the_whole_list():
    # N = 0: min(N, R) = 0 never divides, every retrieved relevant document scores 1
    assert values(["x", "a", "y", "z", "w", "b"], ABC, "bpref") == pytest.approx(2 / 3, abs=1e-15)


def test_bpref_with_more_relevant_than_judged_non_relevant_divides_by_n():
    judged = {"a": 1, "b": 1, "c": 1, "n": 0}  # R = 3 > N = 1: the denominator is min(N, R) = 1
    assert values(["a", "n", "b", "c"], judged, "bpref") == pytest.approx(
        (1 + (1 - 1 / 1) + (1 - 1 / 1)) / 3, abs=1e-15
    )
    judged = {"a": 1, "b": 1, "c": 1, "n": 0, "m": 0}  # R = 3 > N = 2
    assert values(["a", "n", "b", "m", "c"], judged, "bpref") == pytest.approx(
        (1 + (1 - 1 / 2) + (1 - 2 / 2)) / 3, abs=1e-15
    )


def test_bpref_reads_a_negative_grade_as_judged_not_relevant():
    # the lab's rule (grade <= 0 = judged not relevant); trec_eval would read -1 as "pooled, not judged" and give 1
    assert values(["n", "a"], {"a": 1, "n": -1}, "bpref") == 0.0
    assert values(["n", "a"], {"a": 1, "n": -1, "m": 0}, "bpref") == pytest.approx(1 - 1 / 1, abs=1e-15)


def test_judged_at_k_is_the_judged_share_of_the_top_k_divided_by_k():
    judged = {"a": 2, "n": 0, "m": -1}
    ranking = ["a", "u", "n", "v", "m"]
    assert values(ranking, judged, "judged@1") == 1.0
    assert values(ranking, judged, "judged@2") == pytest.approx(1 / 2, abs=1e-15)
    assert values(ranking, judged, "judged@4") == pytest.approx(2 / 4, abs=1e-15)  # a grade-0 judgement counts
    assert values(ranking, judged, "judged@5") == pytest.approx(3 / 5, abs=1e-15)  # a negative one too
    assert values(ranking, judged, "judged@10") == pytest.approx(3 / 10, abs=1e-15)  # divided by k, as P_k
    assert values(["u", "v"], judged, "judged@2") == 0.0


def test_new_metrics_have_no_value_without_a_relevant_document_and_zero_when_nothing_is_found():
    # q0: a relevant at rank 2 under a judged non-relevant; q1: only a grade-0 judgement, retrieved;
    # q2: relevant, not retrieved; q3: no judgement at all
    qrels = _qrels([(0, "n", 0), (0, "a", 1), (1, "b", 0), (2, "c", 2)])
    ranks = np.array([1, 2, 1, 0])
    want = {"map": 1 / 2, "map@1": 0.0, "rprec": 0.0, "bpref": 1 - 1 / 1, "judged@2": 2 / 2, "judged@4": 2 / 4}
    for name, v0 in want.items():
        v = metrics.per_query(qrels, 4, ranks, name)
        assert math.isnan(v[1]) and math.isnan(v[3]), name
        assert v[0] == pytest.approx(v0, abs=1e-15), name
        assert v[2] == 0.0, name
        assert metrics.mean(v) == pytest.approx((v0 + 0.0) / 2), name


def test_existing_metrics_are_unchanged_by_the_new_ones():
    # the same call, the same bits: the new kinds take their own path
    qrels, ranks = metrics.judged_ranks_from_list(["x", "y", "a", "b", "z"], RELEVANT)
    assert float(metrics.per_query(qrels, 1, ranks, "ndcg@5")[0]) == (2 / LOG2(4) + 1 / LOG2(5)) / IDEAL5


# ------------------------------------------------------------------ map, rprec, bpref, judged@k against trec_eval


def _tied_collection(seed: int):
    """Random judgements (grades 0..3) and a run with many tied scores, as bytes, covering: a question with only
    grade-0 judgements, one whose relevant documents are never retrieved, one not answered, one with no judged
    non-relevant document, judged documents never retrieved, and judged and unjudged documents outside the corpus
    that the run retrieves."""
    rng = np.random.default_rng(seed)
    n_docs, n_q = 50, 14
    docs, queries = _texts(rng, n_docs, n_q)

    def fix(qi, grades):
        if qi == 3:
            grades[:] = 0
        if qi in (5, 9):
            grades[0] = 2
        if qi == 9:
            grades[:] = np.maximum(grades, 1)  # no judged non-relevant document: N = 0

    judgements = _judgements(rng, queries, n_docs, (2, 16), fix)
    judgements += [("q01", "x900", 1), ("q02", "x901", 0)]  # judged, outside the corpus, retrieved below
    lines = []
    for qi, (qid, _) in enumerate(queries):
        if qi == 7:
            continue
        relevant = {d for q, d, g in judgements if q == qid and g > 0}
        pool = [f"d{i:03d}" for i in range(n_docs) if qi != 5 or f"d{i:03d}" not in relevant]
        retrieved = list(rng.choice(pool, size=int(rng.integers(3, 30)), replace=False))
        retrieved += ["x900", "x902"] if qi == 1 else ["x901"] if qi == 2 else []
        scores = rng.integers(0, 6, size=len(retrieved)).astype(float)  # few values: long ties
        for d, s in zip(retrieved, scores):
            lines.append(f"{qid} Q0 {d} 0 {s:.1f} tied")
    order = rng.permutation(len(lines))
    return docs, queries, judgements, ("\n".join(lines[i] for i in order) + "\n").encode()


def _our_order_for_trec_eval(run_bytes: bytes) -> dict[str, dict[str, float]]:
    """The run as pytrec_eval reads it, tie-free: each question's documents by score descending, then document id
    ascending (the lab's documented rule, written here independently), given scores n, n - 1, ..."""
    rows: dict[str, list[tuple[float, str]]] = {}
    for line in run_bytes.decode().splitlines():
        q, _, d, _, s, _ = line.split()
        rows.setdefault(q, []).append((float(s), d))
    out = {}
    for q, items in rows.items():
        items.sort(key=lambda t: (-t[0], t[1]))
        out[q] = {d: float(len(items) - i) for i, (_, d) in enumerate(items)}
    return out


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_map_rprec_bpref_and_judged_agree_with_trec_eval_on_tied_runs(seed):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    docs, queries, judgements, run_bytes = _tied_collection(seed)
    ds = assemble("tied", docs, queries, judgements)
    ranking = from_run(parse_run(run_bytes, "x.run"), ds)
    run = _our_order_for_trec_eval(run_bytes)
    qrels: dict[str, dict[str, int]] = {}
    for q, d, g in judgements:
        qrels.setdefault(q, {})[d] = g
    ks = (1, 3, 5, 10, 20)
    cut = ",".join(map(str, ks))
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"map", f"map_cut.{cut}", "Rprec", "bpref"}).evaluate(run)
    # judged@k's oracle: P_k with every judged document, grade 0 included, made relevant
    every_judged = {q: {d: 1 for d in docs_} for q, docs_ in qrels.items()}
    judged_oracle = pytrec_eval.RelevanceEvaluator(every_judged, {f"P.{cut}"}).evaluate(run)

    pairs = [("map", "map", theirs), ("Rprec", "rprec", theirs), ("bpref", "bpref", theirs)]
    pairs += [(f"map_cut_{k}", f"map@{k}", theirs) for k in ks] + [(f"P_{k}", f"judged@{k}", judged_oracle) for k in ks]
    checked = sum(
        _agree(ds, ranking, our_name, oracle, trec_name, 1e-12, seed) for trec_name, our_name, oracle in pairs
    )
    assert checked > 150
    # the collection holds the awkward cases, and they are not trivially zero
    assert ds.n_relevant[3] == 0 and "q07" not in theirs
    assert theirs["q05"]["map"] == 0.0 and ds.n_relevant[5] > 0
    assert not any(g <= 0 for q, _, g in judgements if q == "q09")
    assert (ranking.judged_rank[(ds.qrels.doc < 0)] > 0).all()  # the judged outside-corpus documents are retrieved
    assert (ranking.judged_rank == 0).any()
    assert len({s for line in run_bytes.decode().splitlines() for s in [line.split()[4]]}) <= 6  # ties everywhere


def test_the_ideal_dcg_kept_per_judgements_is_the_formula_and_follows_new_judgements(invented):
    """experiment.ideal_dcg keeps each (judgements, k, gain)'s ideal DCG: equal to metrics.ideal_dcg, read-only, and
    a dataset with one more judgement (another fingerprint) gets its own, which the new grade raises."""
    from retrieval.evaluation import experiment

    m = metrics.parse("ndcg@3")
    kept = experiment.ideal_dcg(invented, m)
    assert np.array_equal(kept, metrics.ideal_dcg(invented.qrels, invented.n_queries, 3)) and not kept.flags.writeable
    assert experiment.ideal_dcg(invented, metrics.parse("ndcg@3")) is kept
    q = int(invented.qrels.query[0])
    unjudged = next(
        d for d in invented.doc_ids if (q, d) not in set(zip(invented.qrels.query.tolist(), invented.qrels.doc_id))
    )
    more = invented.with_judgements([(invented.query_ids[q], unjudged, 2)])
    again = experiment.ideal_dcg(more, m)
    want = metrics.ideal_dcg(more.qrels, more.n_queries, 3)
    assert np.array_equal(again, want) and again[q] >= kept[q] and not np.array_equal(again, kept)


# ------------------------------------------------------------------------------ where bpref and judged@k mean nothing


def test_without_a_judged_non_relevant_document_bpref_is_the_whole_lists_recall_and_warns():
    # judgements of relevant documents only (Cranfield's): a system that lists every document gets bpref 1 however it
    # ranks them, one that ranks the relevant document first and stops gets the same; nDCG tells them apart
    ds = assemble(
        "rel-only",
        [(f"d{i}", f"text {i}") for i in range(6)],
        [("q1", "a"), ("q2", "b")],
        [("q1", "d5", 1), ("q2", "d0", 1)],
    )
    everything_last = parse_run(
        b"q1 Q0 d0 1 9 s\nq1 Q0 d1 2 8 s\nq1 Q0 d2 3 7 s\nq1 Q0 d3 4 6 s\nq1 Q0 d4 5 5 s\nq1 Q0 d5 6 4 s\n"
        b"q2 Q0 d5 1 9 s\nq2 Q0 d0 2 8 s\n",
        "run",
    )
    r = from_run(everything_last, ds)
    assert metrics.per_query(ds.qrels, 2, r.judged_rank, "bpref").tolist() == [1.0, 1.0]
    assert metrics.per_query(ds.qrels, 2, r.judged_rank, "ndcg@5").tolist()[0] == 0.0
    assert metrics.without_non_relevant(ds.qrels, 2) == (2, 2)
    said = metrics.meaning_warnings(ds.qrels, 2, ["bpref", "ndcg@5", "judged@5"])
    assert [w.split(":")[0] for w in said] == ["bpref", "judged@k"]
    assert "2 of the 2 questions" in said[0] and "rewards ranking anything" in said[0] and "scores 1" in said[0]
    assert "equals precision@k" in said[1]
    assert metrics.meaning_warnings(ds.qrels, 2, ["ndcg@5", "map", "mrr"]) == []  # the other metrics keep their meaning
    # one question judged not relevant somewhere: it leaves the count; both: no warning
    one = assemble(
        "one",
        [(f"d{i}", f"text {i}") for i in range(6)],
        [("q1", "a"), ("q2", "b")],
        [("q1", "d5", 1), ("q1", "d0", 0), ("q2", "d0", 1)],
    )
    assert metrics.without_non_relevant(one.qrels, 2) == (1, 2)
    assert "1 of the 2 questions" in metrics.meaning_warnings(one.qrels, 2, ["bpref"])[0]
    both = assemble(
        "both",
        [(f"d{i}", f"text {i}") for i in range(6)],
        [("q1", "a"), ("q2", "b")],
        [("q1", "d5", 1), ("q1", "d0", 0), ("q2", "d0", 1), ("q2", "d1", 0)],
    )
    assert metrics.meaning_warnings(both.qrels, 2, ["bpref", "judged@3"]) == []
    # a question with no relevant document is out of every mean: it does not count either way
    unjudged = assemble("u", [("d0", "x"), ("d1", "y")], [("q1", "a"), ("q2", "b")], [("q1", "d0", 1), ("q1", "d1", 0)])
    assert metrics.without_non_relevant(unjudged.qrels, 2) == (0, 1)
