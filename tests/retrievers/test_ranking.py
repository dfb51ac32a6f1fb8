"""Rankings: positive scores only, ties by document id, exact ranks of judged documents however deep."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from retrieval.corpus.dataset import assemble, parse_run
from retrieval.retrievers.ranking import from_lists, from_run, rank_rows


def random_dataset(seed: int, n_docs: int = 40, n_q: int = 6):
    rng = np.random.default_rng(seed)
    ids = [f"doc{i:02d}" for i in rng.permutation(n_docs)]  # corpus order differs from id order
    judgements = []
    for q in range(n_q):
        for d in rng.choice(n_docs, size=6, replace=False):
            judgements.append((f"q{q}", ids[d], int(rng.integers(0, 3))))
    judgements = list({(q, d): (q, d, g) for q, d, g in judgements}.values())
    judgements.append(("q0", "outside", 2))  # a judged document not in the corpus
    ds = assemble("r", [(d, d) for d in ids], [(f"q{q}", "x") for q in range(n_q)], judgements)
    # few distinct values, so ties are everywhere; some zeros and negatives, which are not results
    scores = rng.choice([-1.0, 0.0, 0.0, 0.5, 1.0, 1.0, 2.0, 3.5], size=(n_q, n_docs))
    return ds, scores


def brute(ds, row, threshold=1e-9):
    """Documents with a score above the threshold, by score descending then id ascending."""
    keep = [j for j in range(ds.n_docs) if row[j] > threshold]
    return sorted(keep, key=lambda j: (-row[j], ds.doc_ids[j]))


def brute_judged(ds, full_lists, depth=None):
    out = []
    for j in range(len(ds.qrels)):
        q, d = int(ds.qrels.query[j]), int(ds.qrels.doc[j])
        lst = full_lists[q] if depth is None else full_lists[q][:depth]
        out.append(lst.index(d) + 1 if d in lst else 0)
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("depth", [1, 3, 10, 100])
@pytest.mark.parametrize("sparse", [False, True])
def test_rank_rows_against_sorted(seed, depth, sparse):
    ds, scores = random_dataset(seed)
    rows = sp.csr_matrix(scores) if sparse else scores
    r = rank_rows("S", ds, [(0, rows[:4]), (4, rows[4:])], depth)
    full = [brute(ds, scores[q]) for q in range(ds.n_queries)]
    for q in range(ds.n_queries):
        assert r.top(q)[0].tolist() == full[q][:depth]
        assert r.top(q)[1].tolist() == [scores[q, j] for j in full[q][:depth]]
        assert r.n_results[q] == len(full[q])
    # judged ranks are exact beyond the stored depth
    assert r.judged_rank.tolist() == brute_judged(ds, full)


@pytest.mark.parametrize("depth", [2, 10, 40])
def test_rank_rows_truncated_and_threshold(depth):
    ds, scores = random_dataset(3)
    r = rank_rows("S", ds, [(0, scores)], depth, threshold=-5.0, truncate=True)
    full = [brute(ds, scores[q], threshold=-5.0) for q in range(ds.n_queries)]
    assert all(len(f) == ds.n_docs for f in full)  # every document competes, zeros and negatives too
    for q in range(ds.n_queries):
        assert r.top(q)[0].tolist() == full[q][:depth]
    # a judged document beyond the depth is not retrieved
    assert r.judged_rank.tolist() == brute_judged(ds, full, depth)
    assert r.n_results.tolist() == [depth] * ds.n_queries


def test_zero_is_not_a_result_and_unknown_judged_doc_is_never_retrieved():
    ds, scores = random_dataset(4)
    r = rank_rows("S", ds, [(0, scores)], 100)
    assert all((r.top(q)[1] > 0).all() for q in range(ds.n_queries))
    outside = [j for j in range(len(ds.qrels)) if ds.qrels.doc_id[j] == "outside"]
    assert outside and all(r.judged_rank[j] == 0 for j in outside)


def test_adding_a_constant_or_scaling_changes_no_ranking():
    ds, _ = random_dataset(5)
    rng = np.random.default_rng(5)
    scores = rng.choice([0.25, 0.5, 1.0, 2.0, 4.0], size=(ds.n_queries, ds.n_docs))  # all positive, with ties
    base = rank_rows("S", ds, [(0, scores)], 15)
    for transformed in (scores + 8.0, scores * 4.0, scores * 0.5 + 0.125):
        r = rank_rows("S", ds, [(0, transformed)], 15)
        assert r.docs.tolist() == base.docs.tolist()
        assert r.judged_rank.tolist() == base.judged_rank.tolist()


def test_ties_by_id_not_by_corpus_position():
    ds = assemble("t", [("c", "x"), ("a", "x"), ("b", "x")], [("q", "x")], [("q", "b", 1)])
    r = rank_rows("S", ds, [(0, np.array([[1.0, 1.0, 1.0]]))], 10)
    assert r.top_ids(ds, 0) == ["a", "b", "c"]
    assert r.judged_rank.tolist() == [2]


def test_from_lists_keeps_the_order_given():
    ds = assemble(
        "t", [("c", "x"), ("a", "x"), ("b", "x")], [("q1", "x"), ("q2", "y")], [("q1", "b", 1), ("q2", "a", 1)]
    )
    r = from_lists("L", ds, [np.array([0, 2]), np.array([], dtype=np.int64)], [np.array([2.0, 1.0]), np.array([])])
    assert r.top_ids(ds, 0) == ["c", "b"] and r.top_ids(ds, 1) == []
    assert r.judged_rank.tolist() == [2, 0]
    assert r.top_ids(ds, 0, 1) == ["c"]


def test_from_run_ranks_by_score_and_id_and_matches_judgements():
    ds = assemble(
        "t",
        [("d1", "x"), ("d2", "x"), ("d3", "x"), ("d4", "x")],
        [("q1", "x"), ("q2", "x")],
        [("q1", "d3", 1), ("q1", "d4", 2), ("q2", "d1", 1)],
    )
    run = parse_run(b"q1 Q0 d4 1 0.5 t\nq1 Q0 d3 2 0.5 t\nq1 Q0 d2 3 0.9 t\nq2 Q0 d2 1 1 t\n", "t.run")
    r = from_run(run, ds)
    assert r.name == "t"
    assert r.top_ids(ds, 0) == ["d2", "d3", "d4"]
    assert r.top(0)[1].tolist() == [0.9, 0.5, 0.5]
    assert r.judged_rank.tolist() == [2, 3, 0]
    assert r.warnings == ()
    assert from_run(run, ds, name="other").name == "other"


def test_top_entries_are_every_question_s_top_k_one_question_at_a_time():
    ds = assemble(
        "t", [(f"d{i}", f"text {i}") for i in range(6)], [("q1", "a"), ("q2", "b"), ("q3", "c")], [("q1", "d0", 1)]
    )
    lists = [np.array([5, 0, 3, 1]), np.array([], dtype=np.int64), np.array([2, 4])]
    r = from_lists("L", ds, lists, [np.arange(len(x), 0, -1, dtype=np.float64) for x in lists])
    for qs in (np.arange(3), np.array([2, 0])):
        for k in (1, 3, 10):
            q, position, doc = r.top_entries(qs, k)
            expected = [(int(x), i, int(d)) for x in qs for i, d in enumerate(r.top(int(x), k)[0])]
            assert list(zip(q.tolist(), position.tolist(), doc.tolist())) == expected
