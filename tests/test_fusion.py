"""Weighted min-max fusion and Reciprocal Rank Fusion, against their formulas written out."""

from __future__ import annotations

import math

import numpy as np
import pytest

from retrieval import fusion
from retrieval.core.errors import InputError
from retrieval.core.params import Params
from retrieval.corpus.dataset import assemble
from retrieval.engine.engine import Engine
from retrieval.retrievers.ranking import from_lists

IDS = ["d5", "d1", "d4", "d2", "d3", "d0", "d6"]  # corpus order is not id order


def small_dataset(n_queries: int = 2):
    return assemble(
        "f",
        [(d, f"text {d}") for d in IDS],
        [(f"q{i}", "x") for i in range(n_queries)],
        [(f"q{i}", "d1", 1) for i in range(n_queries)],
    )


def lists(ds, per_query: list[list[str]]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    docs = [np.array([ds.doc_index[d] for d in lst], dtype=np.int64) for lst in per_query]
    scores = [np.arange(len(lst), 0, -1, dtype=np.float64) for lst in per_query]
    return docs, scores


def ranking(ds, name, per_query):
    return from_lists(name, ds, *lists(ds, per_query))


# ------------------------------------------------------------------ min-max


def test_minmax_rows():
    x = np.array([[2.0, 4.0, 3.0], [5.0, 5.0, 5.0], [-1.0, 0.0, 1.0]])
    got = fusion.minmax(x)
    np.testing.assert_allclose(got[0], [(2 - 2) / (4 - 2), (4 - 2) / (4 - 2), (3 - 2) / (4 - 2)])
    assert got[1].tolist() == [0.0, 0.0, 0.0]  # a constant row becomes zeros
    np.testing.assert_allclose(got[2], [0.0, 0.5, 1.0])


def test_minmax_is_invariant_to_shift_and_positive_scale():
    x = np.random.default_rng(0).normal(size=(4, 9))
    np.testing.assert_allclose(fusion.minmax(3.5 * x + 7.0), fusion.minmax(x), atol=1e-12)


# ------------------------------------------------------------------ weighted


def test_weighted_scores_follow_the_formula():
    rng = np.random.default_rng(1)
    bm = np.where(rng.random((3, 7)) < 0.5, 0.0, rng.uniform(0, 5, (3, 7)))
    ls = rng.uniform(-0.3, 1.0, (3, 7))
    alpha = 0.3
    got = fusion.fuse_rows((alpha, 1 - alpha), [bm, ls])

    def mm(v):
        return (v - v.min()) / (v.max() - v.min())

    want = np.array([alpha * mm(bm[i]) + (1 - alpha) * mm(ls[i]) for i in range(3)])
    np.testing.assert_allclose(got, want, atol=1e-15)


def test_weighted_ranking_keeps_every_document_top_depth_ties_by_id():
    ds = small_dataset()
    bm = np.array([[0.0, 3.0, 0.0, 1.0, 0.0, 0.0, 0.0], [0.0] * 7])
    ls = np.array([[0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.9], [0.0, -0.1, 0.0, 0.0, 0.0, 0.0, 0.0]])
    r = fusion.weighted_dense(ds, [bm, ls], [bm.max(axis=1) > 0, ls.max(axis=1) > 0], (0.5, 0.5), depth=5)
    # q0: d1 = .5*1 + .5*0 = .5, d6 = .5*0 + .5*1 = .5, d2 = .5*(1/3) = 1/6, the rest 0 by id
    assert r.top_ids(ds, 0) == ["d1", "d6", "d2", "d0", "d3"]
    np.testing.assert_allclose(r.top(0)[1], [0.5, 0.5, 0.5 * (1 - 0) / 3, 0.0, 0.0])
    # q1: BM25 scores nothing and LSA's best is 0: neither scores, no result at all
    assert r.top_ids(ds, 1) == []
    # the relevant d1 is judged at its place, and truncation at depth holds
    assert r.judged_rank.tolist() == [1, 0]
    assert r.n_results.tolist() == [5, 0]


def test_alpha_one_is_bm25_order_and_alpha_zero_is_lsa_order(invented):
    prep = Engine(invented)
    for alpha, base in ((1.0, "BM25"), (0.0, "LSA")):
        r = prep.rankings(Params(alpha=alpha))
        for q in range(invented.n_queries):
            b = r[base].top_ids(invented, q, 10)
            w = r["weighted"].top_ids(invented, q, 10)
            if not b:
                continue
            assert w[: len(b)] == b, (alpha, invented.query_ids[q])


def test_alpha_half_reproduces_the_article_on_q01(invented):
    r = Engine(invented).rankings(Params())
    assert r["weighted"].top_ids(invented, 0, 1) == ["pricing1"]
    assert r["weighted"].top_ids(invented, 1) == []  # q02: neither retriever scores


@pytest.mark.parametrize("alpha", [-0.1, 1.01, math.nan, math.inf])
def test_bad_alpha_rejected_naming_it(alpha):
    with pytest.raises(InputError, match="alpha"):
        fusion.check_alpha(alpha)
    with pytest.raises(InputError, match="alpha"):
        Params(alpha=alpha).check()


# ------------------------------------------------------------------ RRF


def test_rrf_points_are_one_over_k_plus_rank():
    ds = small_dataset(1)
    a = ranking(ds, "A", [["d1", "d2", "d3"]])
    b = ranking(ds, "B", [["d3", "d4", "d1"]])
    r = fusion.rrf(ds, [a, b], k=60)
    got = dict(zip(r.top_ids(ds, 0), r.top(0)[1].tolist()))
    want = {
        "d1": 1 / (60 + 1) + 1 / (60 + 3),
        "d3": 1 / (60 + 3) + 1 / (60 + 1),
        "d2": 1 / (60 + 2),
        "d4": 1 / (60 + 2),
    }
    assert got.keys() == want.keys()
    for d in want:
        assert got[d] == pytest.approx(want[d], rel=1e-15)
    # d1 and d3 tie, as do d2 and d4: ties go by document id
    assert r.top_ids(ds, 0) == ["d1", "d3", "d2", "d4"]


def test_rrf_constant_changes_the_points():
    ds = small_dataset(1)
    a = ranking(ds, "A", [["d1", "d2"]])
    b = ranking(ds, "B", [["d2"]])
    r = fusion.rrf(ds, [a, b], k=0)
    got = dict(zip(r.top_ids(ds, 0), r.top(0)[1].tolist()))
    assert got == pytest.approx({"d2": 1 / (0 + 2) + 1 / (0 + 1), "d1": 1 / (0 + 1)})
    assert r.top_ids(ds, 0) == ["d2", "d1"]


def test_rrf_fuses_only_the_top_depth_of_each_list():
    ds = small_dataset(1)
    a = ranking(ds, "A", [["d0", "d1", "d2", "d3", "d4"]])
    b = ranking(ds, "B", [["d5", "d6", "d4"]])
    r = fusion.rrf(ds, [a, b], k=60, depth=2)
    got = dict(zip(r.top_ids(ds, 0), r.top(0)[1].tolist()))
    assert got == pytest.approx({"d0": 1 / 61, "d5": 1 / 61, "d1": 1 / 62, "d6": 1 / 62})
    assert r.top_ids(ds, 0) == ["d0", "d5", "d1", "d6"]
    # d4 (rank 5 in A, 3 in B) is beyond the depth of both lists: it is not retrieved
    r3 = fusion.rrf(ds, [a, b], k=60, depth=3)
    assert dict(zip(r3.top_ids(ds, 0), r3.top(0)[1].tolist()))["d4"] == pytest.approx(1 / (60 + 3))


def test_rrf_judged_rank_and_empty_questions():
    ds = small_dataset(2)
    a = ranking(ds, "A", [["d2", "d1"], []])
    b = ranking(ds, "B", [["d2"], []])
    r = fusion.rrf(ds, [a, b])
    assert r.top_ids(ds, 1) == []
    assert r.judged_rank.tolist() == [2, 0]  # q0's d1 is second behind d2


def test_rrf_of_one_list_keeps_its_order():
    ds = small_dataset(1)
    order = ["d6", "d0", "d5", "d2"]
    r = fusion.rrf(ds, [ranking(ds, "A", [order])])
    assert r.top_ids(ds, 0) == order


@pytest.mark.parametrize("k", [-1.0, math.nan, math.inf])
def test_bad_rrf_k_rejected_naming_it(k):
    ds = small_dataset(1)
    with pytest.raises(InputError, match="rrf_k"):
        fusion.rrf(ds, [ranking(ds, "A", [["d1"]])], k=k)
    with pytest.raises(InputError, match="rrf_k"):
        Params(rrf_k=k).check()


def test_rrf_on_invented_q01(invented):
    r = Engine(invented).rankings(Params())
    # BM25: pricing1, sso1, pricing2; LSA: sso1, pricing1, pricing2
    # pricing1 = sso1 = 1/61 + 1/62 (tie, by id), pricing2 = 1/63 + 1/63
    assert r["RRF"].top_ids(invented, 0, 3) == ["pricing1", "sso1", "pricing2"]
    s = r["RRF"].top(0, 3)[1]
    np.testing.assert_allclose(s, [1 / 61 + 1 / 62, 1 / 62 + 1 / 61, 2 / 63], rtol=1e-15)
