"""Tuning: sweeps equal the pipeline point by point, the tie region, cross-validation on cases whose answer is known,
the per-question oracle, the fusion explanation, and `python -m retrieval tune`."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from conftest import ROOT
from retrieval import fusion
from retrieval.analyses import tuning
from retrieval.core.errors import InputError
from retrieval.core.params import Params
from retrieval.corpus import dataset
from retrieval.corpus.text import Analysis, build_index, query_counts
from retrieval.engine.engine import Engine
from retrieval.evaluation import metrics, stats
from retrieval.retrievers import bm25, dense, lsa

# ------------------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def prep(invented):
    return Engine(invented)


@pytest.fixture(scope="module")
def tied():
    """A corpus of few words, many identical documents (exact score ties everywhere) and awkward judgements."""
    rng = np.random.default_rng(42)
    words = "apple pear plum fig kiwi lime".split()
    docs = []
    for i in range(40):
        k = int(rng.integers(1, 5))
        docs.append((f"d{(i * 7) % 40:02d}", " ".join(rng.choice(words, size=k))))
    docs += [("d40", "apple pear"), ("d41", "apple pear"), ("d42", "pear apple")]  # identical bags of words
    queries = [(f"q{i:02d}", " ".join(rng.choice(words, size=int(rng.integers(1, 4))))) for i in range(12)]
    queries.append(("q12", "banana"))  # shares no word with the corpus
    judgements = []
    for qid, _ in queries:
        for did in rng.choice([d for d, _ in docs], size=5, replace=False):
            judgements.append((qid, str(did), int(rng.integers(0, 4))))
    judgements.append(("q00", "missing-doc", 2))  # a judged document outside the corpus
    judgements.append(("q12", "d40", 1))
    return dataset.assemble("tied", docs, queries, judgements)


def _bm25_reference(ds, prep, k1, b, metric):
    ranking = bm25.search(ds, prep.bm25_scores(k1, b), 100)
    return metrics.per_query(ds.qrels, ds.n_queries, ranking.judged_rank, metric)[ds.evaluated]


# ------------------------------------------------------------------------------------------- sweeps = pipeline


@pytest.mark.parametrize("metric", ["ndcg@5", "mrr", "hit@3", "recall@10"])
def test_bm25_grid_equals_the_pipeline_at_every_point(invented, prep, tied, metric):
    for ds, p in ((invented, prep), (tied, Engine(tied))):
        sw = tuning.sweep_bm25(ds, metric, engine=p)
        assert sw.values.shape == (16 * 11, ds.evaluated.size) and sw.shape == (16, 11)
        assert sw.notes == ()  # the fast path agreed with bm25.score to the last bit
        for i in range(sw.values.shape[0]):
            s = sw.setting(i)
            assert np.array_equal(sw.values[i], _bm25_reference(ds, p, s["k1"], s["b"], metric)), (ds.name, s)


def test_grid_axes_are_the_issue_s(invented, prep):
    sw = tuning.sweep_bm25(invented, "ndcg@5", engine=prep)
    assert sw.axes[0].tolist() == [round(0.2 * i, 1) for i in range(16)]
    assert sw.axes[1].tolist() == [round(0.1 * i, 1) for i in range(11)]
    assert sw.setting(6 * 11 + 7) == {"k1": 1.2, "b": 0.7}
    assert sw.nearest(k1=1.2, b=0.75) in (6 * 11 + 7, 6 * 11 + 8)
    assert sw.grid().shape == (16, 11) and sw.grid()[6, 7] == sw.means[6 * 11 + 7]


def test_every_sweep_equals_evaluate_at_the_default_and_at_other_points(invented, prep):
    checks = {
        "k1,b": ("BM25", [dict(k1=1.2, b=0.7), dict(k1=0.0, b=0.0), dict(k1=3.0, b=1.0)]),
        "dims": ("LSA", [dict(dims=6), dict(dims=1), dict(dims=27)]),
        "rrf_k": ("RRF", [dict(rrf_k=60.0), dict(rrf_k=1.0), dict(rrf_k=200.0)]),
        "alpha": ("weighted", [dict(alpha=0.5), dict(alpha=0.0), dict(alpha=1.0), dict(alpha=0.35)]),
    }
    for key, (system, points) in checks.items():
        for metric in ("ndcg@5", "mrr"):
            sw = tuning.sweep(invented, key, metric, engine=prep)
            assert sw.system == system
            for point in points:
                i = sw.nearest(**point)
                assert sw.setting(i) == point
                ev = prep.evaluate(Params(**point), [metric])
                assert np.array_equal(sw.values[i], ev.values[system][metric]), (key, point, metric)


def test_the_article_s_means_sit_on_the_curves(invented, prep):
    # expected.md: nDCG@5 of LSA (6 dims) 0.679138, weighted (alpha 0.5) 0.733993, RRF (k 60) 0.737367
    assert tuning.sweep_dims(invented, "ndcg@5", engine=prep).means[5] == pytest.approx(0.679138, abs=5e-7)
    alpha = tuning.sweep_alpha(invented, "ndcg@5", engine=prep)
    assert alpha.means[alpha.nearest(alpha=0.5)] == pytest.approx(0.733993, abs=5e-7)
    rrf = tuning.sweep_rrf_k(invented, "ndcg@5", engine=prep)
    assert rrf.means[rrf.nearest(rrf_k=60)] == pytest.approx(0.737367, abs=5e-7)


def test_fusion_and_lsa_sweeps_equal_the_library_on_a_corpus_full_of_ties(tied):
    p = Engine(tied)
    base = Params(dims=3)
    fixed = tuning.fixed_parts(tied, base, p)
    for metric in ("ndcg@10", "mrr"):
        rrf = tuning.sweep_rrf_k(tied, metric, [0.0, 1.0, 2.5, 60.0, 200.0], p, base, fixed)
        alpha = tuning.sweep_alpha(tied, metric, tuning.ALPHA_GRID, p, base, fixed)
        for i in range(rrf.values.shape[0]):
            params = Params(dims=3, rrf_k=float(rrf.axes[0][i]))
            r = p.rankings(params)["RRF"]
            assert np.array_equal(
                rrf.values[i], metrics.per_query(tied.qrels, tied.n_queries, r.judged_rank, metric)[tied.evaluated]
            )
        for i in range(alpha.values.shape[0]):
            params = Params(dims=3, alpha=float(alpha.axes[0][i]))
            w = p.rankings(params)["weighted"]
            assert np.array_equal(
                alpha.values[i], metrics.per_query(tied.qrels, tied.n_queries, w.judged_rank, metric)[tied.evaluated]
            )
        dims = tuning.sweep_dims(tied, metric, engine=p)
        for i, d in enumerate(dims.axes[0]):
            f = p.lsa_fit(int(d))
            ranking = lsa.search(tied, f.model, f.qvec, 100)
            assert np.array_equal(
                dims.values[i],
                metrics.per_query(tied.qrels, tied.n_queries, ranking.judged_rank, metric)[tied.evaluated],
            )


def test_judged_ranks_equal_rank_rows_exactly_and_cut(tied):
    p = Engine(tied)
    for k1, b in ((0.0, 0.5), (1.2, 0.75), (2.0, 1.0)):
        scores = p.bm25_scores(k1, b)
        ref = bm25.search(tied, scores, 100).judged_rank
        dense = scores.toarray()
        assert np.array_equal(tuning.judged_ranks(tied, dense), ref)
        for depth in (1, 3, 10):
            assert np.array_equal(tuning.judged_ranks(tied, dense, depth=depth), np.where(ref <= depth, ref, 0))


def _brute_judged_ranks(ds, scores, threshold, depth):
    """Each judged document's rank counted by hand: 1 + the documents ranking before it by `ranks_before`'s rule
    (score descending, then tie key), 0 when it is no result or beyond `depth`."""
    tk = ds.tie_key
    out = np.zeros(len(ds.qrels), dtype=np.int64)
    for j, (q, d) in enumerate(zip(ds.qrels.query, ds.qrels.doc)):
        v = scores[q, d] if d >= 0 else -np.inf
        if d < 0 or not v > threshold:
            continue
        r = 1 + sum(1 for e, s in enumerate(scores[q]) if s > v or (s == v and tk[e] < tk[d]))
        out[j] = r if depth is None or r <= depth else 0
    return out


@pytest.mark.parametrize("threshold", [tuning.THRESHOLD, -1.0])
def test_judged_ranks_equal_a_count_by_hand_on_rows_full_of_ties(tied, threshold):
    rng = np.random.default_rng(3)
    scores = rng.integers(0, 4, size=(tied.n_queries, tied.n_docs)) / 4.0  # a quarter zeros, the rest 3 values
    scores[2] = -np.inf  # a question no member answers (the fusions' rows)
    scores[5, ::2] = -1e300  # very low scores, below every threshold
    for depth in (None, 1, 3, 10, 100):
        want = _brute_judged_ranks(tied, scores, threshold, depth)
        assert np.array_equal(tuning.judged_ranks(tied, scores, threshold, depth), want), depth


@pytest.mark.parametrize("query_words", ["once", "each", "k3"])
def test_the_bm25_grid_on_the_tick_s_pass_equals_the_dense_scores_ranked_by_hand(tied, query_words):
    """The k1 x b sweep runs bm25.run (bounded memory, no questions x documents matrix) at every setting: the same
    values as the dense reference (bm25_grid_scores, to the last bit bm25.score's) ranked by hand."""
    base = Params(query_words=query_words, k3=0.5)
    p = Engine(tied)
    metric = metrics.parse("ndcg@5")
    k1s, bs = [0.0, 0.6, 1.2, 3.0], [0.0, 0.75, 1.0]
    sw = tuning.sweep_bm25(tied, metric, k1s, bs, engine=p, base=base)
    g = tuning.bm25_grid(p, base)
    for i in range(sw.values.shape[0]):
        s = sw.setting(i)
        dense_scores = tuning.bm25_grid_scores(g, p, s["k1"], s["b"])
        ranks = _brute_judged_ranks(tied, dense_scores, tuning.THRESHOLD, metric.k)
        want = metrics.per_query(tied.qrels, tied.n_queries, ranks, metric)[tied.evaluated]
        assert np.array_equal(sw.values[i], want), s


def test_the_analysis_sweep_of_an_index_without_an_engine_equals_the_dense_scores_ranked_by_hand(tied):
    """sweep_analysis builds BM25's plan for an analysis it has no engine of: the same values as the dense reference."""
    other = Analysis("snowball", "none")
    base = Params(query_words="each")
    metric = metrics.parse("recall@10")
    sw = tuning.sweep_analysis(tied, metric, (other,), [0.5, 1.2], [0.3, 0.75], engine=Engine(tied), base=base)
    index = build_index(tied.doc_texts, analysis=other)
    corpus = tuning.Analysed(bm25.prepare(index), query_counts(index, tied.query_texts))
    g = tuning.bm25_grid(corpus, base)
    for i in range(sw.values.shape[0]):
        s = sw.setting(i)
        ranks = _brute_judged_ranks(tied, tuning.bm25_grid_scores(g, corpus, s["k1"], s["b"]), tuning.THRESHOLD, 10)
        want = metrics.per_query(tied.qrels, tied.n_queries, ranks, metric)[tied.evaluated]
        assert np.array_equal(sw.values[i], want), s


def test_the_dims_sweep_on_the_tick_s_pass_equals_the_dense_cosines_ranked_by_hand(tied):
    """Each d of the refitted curve is lsa.run (the d tick's pass): the same values as every cosine (lsa.score_chunks)
    ranked by hand."""
    p = Engine(tied)
    metric = metrics.parse("ndcg@5")
    sw = tuning.sweep_dims(tied, metric, [1, 2, 4], engine=p)
    for i, d in enumerate(sw.axes[0]):
        f = p.lsa_fit(int(d))
        cosines = np.concatenate([block for _, block in lsa.score_chunks(f.model, f.qvec)])
        ranks = _brute_judged_ranks(tied, cosines, tuning.THRESHOLD, metric.k)
        want = metrics.per_query(tied.qrels, tied.n_queries, ranks, metric)[tied.evaluated]
        assert np.array_equal(sw.values[i], want)


def test_truncated_dims_curve_is_the_refit_curve_up_to_rounding(invented, prep):
    refit = tuning.sweep_dims(invented, "ndcg@5", engine=prep, refit=True)
    cut = tuning.sweep_dims(invented, "ndcg@5", engine=prep, refit=False)
    assert cut.notes and not refit.notes
    assert refit.axes[0].tolist() == list(range(1, 28))  # 28 documents: at most 27 dimensions
    assert np.allclose(refit.means, cut.means, atol=1e-9)


def test_current_values_off_the_grid_equal_evaluate(invented, prep):
    ev = prep.evaluate(Params(), ["ndcg@5"])
    cur = tuning.current_values(invented, "k1,b", "ndcg@5", Params(), prep)  # b = 0.75 is not a grid point
    assert np.array_equal(cur, ev.values["BM25"]["ndcg@5"])
    assert cur.mean() == pytest.approx(0.691171, abs=5e-7)


# ------------------------------------------------------------------------------------------- best, ties, CV


def test_best_setting_prefers_the_first_of_exact_ties():
    v = np.array([[0.1, 0.5], [0.3, 0.3], [0.5, 0.1], [0.2, 0.2]])
    assert tuning.best_setting(v) == 0  # three settings share the mean 0.3
    assert tuning.best_setting(v[::-1]) == 1


def test_tie_region_is_the_paired_bootstrap_against_the_best():
    rng = np.random.default_rng(5)
    base = rng.random(30)
    noisy = base + 0.2 + rng.normal(0, 0.05, 30)
    noisy += 0.2 - noisy.mean() + base.mean() - 0.001  # a hair below the best on average, noisy per question
    v = np.stack([base, base + 0.2, noisy, base + 0.19, base + 0.2])
    ties = tuning.tie_region(v)
    assert ties.best == 1
    for i in range(v.shape[0]):
        iv = stats.paired_bootstrap(v[i], v[ties.best])
        assert ties.intervals[i].tolist() == pytest.approx([iv.low, iv.high], abs=1e-15)
        assert ties.tied[i] == (iv.holds_zero or i == ties.best)
    assert not ties.tied[0]  # worse on every question by 0.2
    assert ties.tied[2]  # a little worse on average, but noisy: can't be told apart
    assert not ties.tied[3]  # only 0.01 worse, but on every question: told apart
    assert ties.tied[4]  # identical to the best
    assert ties.size == int(ties.tied.sum())


def test_cv_equals_the_mean_when_one_setting_is_best_on_every_fold():
    rng = np.random.default_rng(0)
    noise = rng.random((6, 20))
    v = noise.copy()
    v[3] = noise.max(axis=0) + 0.05  # best on every question, so on every training set
    cv = tuning.cross_validate(v, folds=5, seed=0)
    assert cv.chosen == (3, 3, 3, 3, 3)
    assert cv.in_sample_best == 3
    assert cv.cross_validated == pytest.approx(v[3].mean(), abs=1e-15)
    assert cv.in_sample == pytest.approx(v[3].mean(), abs=1e-15)
    assert cv.optimism == pytest.approx(0.0, abs=1e-15)
    assert cv.fold_sizes == (4, 4, 4, 4, 4)


def test_cv_exposes_a_setting_that_memorises_noise():
    # 8 questions, 8 "memorising" settings: setting i scores 1 on question i and 0 elsewhere (pure noise),
    # plus a steady setting scoring c on every question. With 2 folds of 4, a memoriser whose question is in
    # the training half scores 1/4 there and 0 on the held-out half.
    n = 8
    for c, in_sample, cv_expected in ((0.2, 0.2, 0.0), (0.3, 0.3, 0.3)):
        v = np.vstack([np.eye(n), np.full((1, n), c)])
        cv = tuning.cross_validate(v, folds=2, seed=1)
        assert cv.in_sample == pytest.approx(in_sample)  # the steady setting is the in-sample best (1/8 < c)
        assert cv.in_sample_best == n
        # c = 0.2 < 1/4: each fold picks the first memoriser trained on, which scores 0 held out: CV = 0.
        # c = 0.3 > 1/4: each fold picks the steady setting: CV = 0.3, no optimism.
        assert cv.cross_validated == pytest.approx(cv_expected, abs=1e-15)
        for f, chosen in enumerate(cv.chosen):
            trained_on = np.flatnonzero(cv.assignment != f)
            assert chosen == (trained_on.min() if c < 0.25 else n)
        assert cv.optimism == pytest.approx(in_sample - cv_expected, abs=1e-15)


def test_cv_equals_a_plain_loop_over_folds():
    rng = np.random.default_rng(9)
    v = rng.random((12, 23)).round(2)
    cv = tuning.cross_validate(v, folds=4, seed=7)
    perm = np.random.default_rng(7).permutation(23)
    held = np.empty(23)
    for f, part in enumerate(np.array_split(perm, 4)):
        train = np.setdiff1d(np.arange(23), part)
        means = [np.mean(v[s, train]) for s in range(12)]
        best = int(np.argmax(np.round(means, 12)))
        assert cv.chosen[f] == best
        assert cv.test_means[f] == pytest.approx(np.mean(v[best, part]))
        held[part] = v[best, part]
        assert np.array_equal(np.flatnonzero(cv.assignment == f), np.sort(part))
    assert cv.cross_validated == pytest.approx(held.mean())


def test_fold_assignment_checks_its_input():
    a = tuning.fold_assignment(14, 5, 0)
    assert sorted(np.bincount(a).tolist()) == [2, 3, 3, 3, 3]
    assert np.array_equal(a, tuning.fold_assignment(14, 5, 0))
    assert not np.array_equal(a, tuning.fold_assignment(14, 5, 1))
    for bad in (1, 0, 15):
        with pytest.raises(InputError):
            tuning.fold_assignment(14, bad)


def test_tune_on_the_invented_corpus(invented, prep):
    t = tuning.tune(invented, "k1,b", "ndcg@5", engine=prep)
    assert t.sweep.values.shape == (176, 14)
    assert t.cv.in_sample == pytest.approx(t.sweep.means.max())
    assert t.cv.cross_validated <= t.cv.in_sample + 1e-12
    assert t.current == {"k1": 1.2, "b": 0.75}
    assert t.current_values.mean() == pytest.approx(0.691171, abs=5e-7)
    assert t.ties.tied[t.best]
    report = tuning.to_json(t)
    assert json.loads(json.dumps(report)) == report


# ------------------------------------------------------------------------------------------- oracle, explanation


def test_oracle_by_hand():
    o = tuning.oracle(
        {"A": np.array([1.0, 0.0, 0.5, 0.2]), "B": np.array([0.0, 1.0, 0.5, 0.4])}, ("q1", "q2", "q3", "q4")
    )
    assert o.values.tolist() == [1.0, 1.0, 0.5, 0.4]
    assert o.mean == pytest.approx(2.9 / 4)
    assert o.best == ("A", "B", "A", "B")
    assert o.winners == (("A",), ("B",), ("A", "B"), ("B",))
    assert o.system_means == pytest.approx({"A": 0.425, "B": 0.475})
    assert o.wins() == {"A": 2, "B": 2}


def test_oracle_of_the_article(invented, prep):
    ev = prep.evaluate()
    o = tuning.oracle_of(ev, "ndcg@5")
    stack = np.stack([ev.values[s]["ndcg@5"] for s in ev.systems])
    assert np.array_equal(o.values, stack.max(axis=0))
    assert o.mean >= max(o.system_means.values())
    assert o.qids == tuple(invented.query_ids[q] for q in invented.evaluated)
    with pytest.raises(InputError):
        tuning.oracle_of(ev, "ndcg@7")


@pytest.mark.parametrize("kind", ["weighted", "rrf"])
def test_fusion_explanation_adds_up_and_follows_the_fused_list(invented, prep, kind):
    params = Params()
    fixed = tuning.fixed_parts(invented, params, prep)
    got = prep.rankings(params)
    w, r = got["weighted"], got["RRF"]
    fused = w if kind == "weighted" else r
    for q in range(invented.n_queries):
        rows = tuning.explain_fusion(invented, q, kind, params, prep, fixed)
        in_list = [row for row in rows if row["fused_rank"] is not None]
        assert [row["doc_id"] for row in in_list] == fused.top_ids(invented, q, params.fusion_depth)
        assert [row["fused_rank"] for row in in_list] == list(range(1, len(in_list) + 1))
        relevant = invented.relevant_of(q)
        assert {row["doc_id"] for row in rows if row["grade"] > 0} == set(relevant)
        for row in rows:
            c, rank = row["contributions"], row["ranks"]
            assert list(c) == list(rank) == ["BM25", "LSA"]
            assert row["total"] == c["BM25"] + c["LSA"]
            if kind == "rrf":
                for side in ("BM25", "LSA"):
                    expect = (
                        1 / (params.rrf_k + rank[side])
                        if rank[side] is not None and rank[side] <= params.fusion_depth
                        else 0.0
                    )
                    assert c[side] == pytest.approx(expect, abs=1e-15)
            else:
                assert 0 <= c["BM25"] <= params.alpha and 0 <= c["LSA"] <= 1 - params.alpha
            holders = tuple(m for m in ("BM25", "LSA") if rank[m] is not None and rank[m] <= params.fusion_depth)
            assert row["in_top"] == holders
            if row["fused_rank"] is None or row["grade"] == 0:
                assert row["rescued_by"] is None  # a relevant document left out, or one not relevant: rescued by nobody
            else:
                assert (
                    row["rescued_by"]
                    == {("BM25", "LSA"): "both", ("BM25",): "BM25", ("LSA",): "LSA", (): None}[holders]
                )


def test_fusion_explanation_tells_a_judged_zero_from_an_unjudged_document(invented):
    """Grade 0 is a judgement (not relevant); a document no judgement names is unjudged, whatever its grade reads."""
    rows = tuning.explain_fusion(invented, "q01", "weighted", Params())
    outside = [r["doc_id"] for r in rows if r["grade"] == 0]
    assert outside and not any(r["judged"] for r in rows if r["grade"] == 0)  # the invented judgements: relevant only
    assert all(r["judged"] for r in rows if r["grade"] > 0)
    graded = invented.with_judgements([("q01", outside[0], 0)])
    again = {r["doc_id"]: r for r in tuning.explain_fusion(graded, "q01", "weighted", Params())}
    assert again[outside[0]]["judged"] and again[outside[0]]["grade"] == 0
    assert not any(again[d]["judged"] for d in outside[1:])


def test_fusion_explanation_of_a_rescue(invented, prep):
    # q01: LSA ranks the relevant document second, BM25 first; weighted keeps it first with both contributing
    rows = tuning.explain_fusion(invented, "q01", "weighted", Params(), prep)
    top = rows[0]
    assert top["fused_rank"] == 1 and top["grade"] > 0 and top["rescued_by"] == "both"
    assert top["ranks"] == {"BM25": 1, "LSA": 2}
    assert top["contributions"]["BM25"] == pytest.approx(0.5) and top["contributions"]["LSA"] > 0
    with pytest.raises(InputError):
        tuning.explain_fusion(invented, "nope", "weighted", Params(), prep)
    with pytest.raises(InputError):
        tuning.explain_fusion(invented, 0, "max", Params(), prep)
    with pytest.raises(InputError, match="fixed parts are of BM25, LSA"):
        tuning.explain_fusion(
            invented, 0, "weighted", Params(members=("LSA", "BM25")), prep, tuning.fixed_parts(invented, Params(), prep)
        )


def test_weighted_contributions_are_min_max_scores(invented, prep):
    params = Params(alpha=0.3)
    fixed = tuning.fixed_parts(invented, params, prep)
    q = 4
    bm = prep.bm25_scores(params.k1, params.b)[q].toarray().ravel()
    f = prep.lsa_fit(params.dims)
    ls = next(c for s, c in lsa.score_chunks(f.model, f.qvec) if s <= q < s + c.shape[0])[q]
    assert np.array_equal(fixed.rows[0][q], bm) and np.allclose(fixed.rows[1][q], ls, rtol=0, atol=1e-12)
    rows = tuning.explain_fusion(invented, q, "weighted", params, prep, fixed)
    for row in rows:
        d = invented.doc_index[row["doc_id"]]
        assert row["contributions"]["BM25"] == 0.3 * fusion.minmax(bm[None, :])[0, d]
        assert row["contributions"]["LSA"] == 0.7 * fusion.minmax(fixed.rows[1][q][None, :])[0, d]


def test_rescuer_names_the_one_member_or_says_how_many():
    assert tuning.rescuer(("dense",), 2) == "dense"
    assert tuning.rescuer(("BM25", "dense"), 2) == "both"
    assert tuning.rescuer(("BM25", "LSA", "dense"), 3) == "all"
    assert tuning.rescuer(("BM25", "dense"), 3) == "both"
    assert tuning.rescuer(("a", "b", "c"), 4) == "several"
    assert tuning.rescuer((), 2) is None
    # only a relevant document is rescued: one that is not relevant is brought in, never rescued
    assert tuning.rescuer(("dense",), 2, relevant=False) is None
    assert tuning.rescuer(("BM25", "dense"), 2, relevant=False) is None


def test_only_relevant_documents_are_rescued(invented, prep):
    seen_irrelevant = seen_rescue = 0
    for q in range(invented.n_queries):
        for kind in ("weighted", "rrf"):
            for row in tuning.explain_fusion(invented, q, kind, Params(), prep):
                if row["grade"] == 0 and row["fused_rank"] is not None and len(row["in_top"]) == 1:
                    seen_irrelevant += 1
                    assert row["rescued_by"] is None, row
                if row["grade"] > 0 and row["fused_rank"] is not None and len(row["in_top"]) == 1:
                    seen_rescue += 1
                    assert row["rescued_by"] == row["in_top"][0], row
    assert seen_irrelevant and seen_rescue  # both cases occur on the invented corpus


# ------------------------------------------------------------------------------------------- any members


@pytest.fixture(scope="module")
def dense_source(invented):
    from retrieval.corpus import embeddings
    from retrieval.retrievers import dense

    return embeddings.align(dense.embeddings_of(invented), invented)


@pytest.fixture(scope="module")
def run_source(invented):
    """A TREC run over part of the corpus: scores with ties, a document outside the corpus, a question left out."""
    lines = []
    for q, qid in enumerate(invented.query_ids[:-1]):
        for i, did in enumerate(invented.doc_ids[q % 3 :: 2][:12]):
            lines.append(f"{qid} Q0 {did} {i + 1} {float((q * 7 + i * 3) % 5)} mine")
        lines.append(f"{qid} Q0 not-in-the-corpus 99 {2.5} mine")
    return dataset.parse_run("\n".join(lines).encode(), "mine.run", "my *run*")


def _per_query(ds, ranking, metric):
    return metrics.per_query(ds.qrels, ds.n_queries, ranking.judged_rank, metric)[ds.evaluated]


def _sweeps_equal_the_engine(ds, engine, base, sources, metric):
    rrf = tuning.sweep_rrf_k(ds, metric, [0.0, 1.0, 2.0, 7.5, 60.0, 200.0], engine, base, sources=sources)
    for i, k in enumerate(rrf.axes[0]):
        want = engine.rankings(replace(base, rrf_k=float(k)), sources)["RRF"]
        assert np.array_equal(rrf.values[i], _per_query(ds, want, metric)), (base.members, k)
    if len(base.members) == 2:
        alpha = tuning.sweep_alpha(ds, metric, tuning.ALPHA_GRID, engine, base, sources=sources)
        for i, a in enumerate(alpha.axes[0]):
            want = engine.rankings(replace(base, alpha=float(a)), sources)["weighted"]
            assert np.array_equal(alpha.values[i], _per_query(ds, want, metric)), (base.members, a)


@pytest.mark.parametrize("metric", ["ndcg@5", "mrr"])
def test_fusion_sweeps_of_bm25_and_dense_equal_the_engine(invented, prep, dense_source, metric):
    _sweeps_equal_the_engine(invented, prep, Params(members=("BM25", "dense")), (dense_source,), metric)
    _sweeps_equal_the_engine(
        invented, prep, Params(members=("dense", "LSA"), fusion_depth=20, dims=4), (dense_source,), metric
    )


@pytest.mark.parametrize("metric", ["ndcg@10", "recall@10"])
def test_fusion_sweeps_with_a_trec_run_member_equal_the_engine(invented, prep, run_source, dense_source, metric):
    assert any(-1 in r for r in [[invented.doc_index.get(d, -1) for d in ids] for ids in run_source.doc_ids])
    _sweeps_equal_the_engine(invented, prep, Params(members=("BM25", "my *run*")), (run_source,), metric)
    sources = (dense_source, run_source)
    _sweeps_equal_the_engine(
        invented, prep, Params(members=("my *run*", "dense", "LSA"), weights=(1.0, 1.0, 1.0)), sources, metric
    )


def test_the_alpha_sweep_needs_exactly_two_members(invented, prep, dense_source):
    three = Params(members=("BM25", "LSA", "dense"), weights=(0.2, 0.3, 0.5))
    with pytest.raises(InputError, match="weight is set in the sidebar"):
        tuning.sweep_alpha(invented, "ndcg@5", engine=prep, base=three, sources=(dense_source,))
    with pytest.raises(InputError, match="3 are fused"):
        tuning.tune(invented, "alpha", "ndcg@5", three, engine=prep, sources=(dense_source,))
    with pytest.raises(InputError, match="1 is fused"):
        tuning.sweep_alpha(invented, "ndcg@5", engine=prep, base=Params(members=("BM25",)))
    t = tuning.tune(invented, "rrf_k", "ndcg@5", three, engine=prep, sources=(dense_source,))  # RRF takes any members
    assert np.array_equal(t.current_values, prep.evaluate(three, ["ndcg@5"], (dense_source,)).values["RRF"]["ndcg@5"])


def test_fixed_parts_hold_each_members_ranking_and_scores(invented, prep, dense_source):
    params = Params(members=("BM25", "dense"))
    fixed = tuning.fixed_parts(invented, params, prep, (dense_source,))
    assert fixed.members == ("BM25", "dense") and fixed.answers.shape == (2, invented.n_queries)
    assert fixed.rankings[1] is prep.run("dense", params, (dense_source,)).ranking
    vectors = dense_source
    assert np.array_equal(fixed.rows[1], dense.reference_scores(vectors.query_vectors, vectors.doc_vectors))
    for q in range(invented.n_queries):
        for i in range(2):
            ranks = tuning.member_ranks(invented, fixed.rankings[i], fixed.rows[i][q], q)
            docs, _ = fixed.rankings[i].top(q)
            assert [int(ranks[d]) for d in docs] == list(range(1, docs.size + 1))  # its place in the list
            order = [
                d for d in sorted(range(invented.n_docs), key=lambda d: (-fixed.rows[i][q][d], invented.doc_ids[d]))
            ]
            n = int(fixed.rankings[i].n_results[q])
            assert [int(ranks[d]) for d in order] == [r if r <= n else 0 for r in range(1, invented.n_docs + 1)]


@pytest.mark.parametrize("depth", [3, 10, 1000])
def test_fusion_sweeps_equal_the_plain_definitions_over_the_members_rows(invented, prep, depth):
    """The alpha sweep (the weighted tick's pass over the members' best lists) equals fusion.weighted_dense over the
    members' whole score rows, and the RRF sweep a plain sum of 1 / (k + rank) over each member's top `depth`
    ordered by points then document id: with a list cut short and with every document listed."""
    base = Params(fusion_depth=depth)
    fixed = tuning.fixed_parts(invented, base, prep)
    rows = [np.asarray(r) for r in fixed.rows]
    assert all(r.shape == (invented.n_queries, invented.n_docs) for r in rows)
    assert all(np.array_equal(rows[i][q], fixed.rows[i][q]) for i in range(2) for q in range(invented.n_queries))
    with pytest.raises(IndexError):
        fixed.rows[0][invented.n_queries]
    metric = "ndcg@5"
    per_query = lambda r: metrics.per_query(invented.qrels, invented.n_queries, r, metric)[invented.evaluated]  # noqa: E731
    alphas, ks = [0.0, 0.3, 0.5, 1.0], [0.0, 1.0, 60.0]
    alpha = tuning.sweep_alpha(invented, metric, alphas, prep, base, fixed)
    for i, a in enumerate(alphas):
        ref = fusion.weighted_dense(invented, rows, fixed.answers, (a, 1.0 - a), depth)
        assert np.array_equal(alpha.values[i], per_query(ref.judged_rank)), a
    rrf = tuning.sweep_rrf_k(invented, metric, ks, prep, base, fixed)
    for i, k in enumerate(ks):
        docs = []
        for q in range(invented.n_queries):
            points: dict[int, float] = {}
            for r in fixed.rankings:
                for rank, d in enumerate(r.top(q, depth)[0].tolist(), start=1):
                    points[d] = points.get(d, 0.0) + 1.0 / (k + rank)
            docs.append(sorted(points, key=lambda d: (-points[d], invented.tie_key[d])))
        judged = np.zeros(len(invented.qrels), dtype=np.int64)
        for j, (q, d) in enumerate(zip(invented.qrels.query, invented.qrels.doc)):
            judged[j] = docs[q].index(d) + 1 if d in docs[q] else 0
        assert np.array_equal(rrf.values[i], per_query(judged)), k


@pytest.mark.parametrize("kind", ["weighted", "rrf"])
def test_fusion_explanation_of_any_members_follows_the_engine(invented, prep, dense_source, run_source, kind):
    sources = (dense_source, run_source)
    for params in (
        Params(members=("BM25", "dense"), alpha=0.4),
        Params(members=("dense", "my *run*", "BM25"), weights=(0.5, 0.25, 1.0), rrf_k=5.0),
    ):
        fused = prep.rankings(params, sources)["weighted" if kind == "weighted" else "RRF"]
        fixed = tuning.fixed_parts(invented, params, prep, sources)
        for q in range(invented.n_queries):
            rows = tuning.explain_fusion(invented, q, kind, params, prep, fixed)
            in_list = [r for r in rows if r["fused_rank"] is not None]
            listed = [d for d in fused.top(q, params.fusion_depth)[0].tolist()]
            assert [invented.doc_index[r["doc_id"]] for r in in_list] == [d for d in listed if d >= 0]
            assert [r["fused_rank"] for r in in_list] == [i + 1 for i, d in enumerate(listed) if d >= 0]
            for r in rows:
                c = r["contributions"]
                assert list(c) == list(params.members)
                total = 0.0
                for m in params.members:
                    total = total + c[m]
                assert r["total"] == total
                if kind == "rrf":
                    for m in params.members:
                        rank = r["ranks"][m]
                        assert c[m] == (
                            1 / (params.rrf_k + rank) if rank is not None and rank <= params.fusion_depth else 0.0
                        )
                if r["fused_rank"] is None or r["grade"] == 0:
                    assert r["rescued_by"] is None
                elif len(r["in_top"]) == 1:
                    assert r["rescued_by"] == r["in_top"][0]
                elif len(r["in_top"]) == len(params.members):
                    assert r["rescued_by"] == ("both" if len(params.members) == 2 else "all")


# ------------------------------------------------------------------------------------------- bad input


def test_sweeps_reject_bad_input(invented, prep):
    with pytest.raises(InputError):
        tuning.sweep(invented, "k2", "ndcg@5", engine=prep)
    with pytest.raises(InputError):
        tuning.sweep_bm25(invented, "ndcg@5", [-1.0], engine=prep)
    with pytest.raises(InputError):
        tuning.sweep_bm25(invented, "ndcg@5", bs=[1.5], engine=prep)
    with pytest.raises(InputError):
        tuning.sweep_alpha(invented, "ndcg@5", [2.0], engine=prep)
    with pytest.raises(InputError):
        tuning.sweep_dims(invented, "ndcg@5", [0], engine=prep)
    with pytest.raises(InputError):
        tuning.sweep_bm25(invented, "ndcg", engine=prep)
    with pytest.raises(InputError):
        tuning.cross_validate(np.zeros((3, 4)), folds=5)


# ------------------------------------------------------------------------------------------- command line


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "retrieval", *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


@pytest.mark.slow
def test_tune_cli_json_has_the_grid_the_best_and_the_cv():
    out = _cli("tune", "--params", "k1,b", "--metric", "ndcg@5", "--folds", "5", "--seed", "0", "--json")
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert r["dataset"] == {"name": "invented", "questions": 14}
    assert r["system"] == "BM25" and r["metric"] == "ndcg@5" and r["params"] == ["k1", "b"]
    g = r["grid"]
    assert len(g["k1"]) == 16 and len(g["b"]) == 11 and g["k1"][0] == 0.0 and g["b"][-1] == 1.0
    assert len(g["mean"]) == 16 and all(len(row) == 11 for row in g["mean"])
    flat = [x for row in g["mean"] for x in row]
    assert r["best"]["mean"] == max(flat)
    assert set(r["best"]["setting"]) == {"k1", "b"}
    assert 1 <= r["ties"]["count"] <= 176 and r["ties"]["of"] == 176
    cv = r["cv"]
    assert cv["folds"] == 5 and cv["seed"] == 0 and len(cv["chosen"]) == 5
    assert cv["in_sample"] == r["best"]["mean"]
    assert cv["cross_validated"] <= cv["in_sample"]
    assert sum(c["questions"] for c in cv["chosen"]) == 14
    assert r["current"]["setting"] == {"k1": 1.2, "b": 0.75}
    assert round(r["current"]["mean"], 6) == 0.691171


@pytest.mark.slow
def test_tune_cli_text_and_the_other_parameters():
    out = _cli("tune", "--metric", "ndcg@5", "--folds", "3")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "k1 \\ b" in text and "best: k1=" in text and "tie region:" in text
    assert "3-fold cross-validation (seed 0): in-sample best" in text and "cross-validated" in text
    # the verdict is tuning.verdict's, the Tuning page's: Holm over the comparisons with the best, and cross-validation
    verdict = tuning.tune(dataset.load("invented"), "k1,b", "ndcg@5", folds=3).verdict
    assert f"\nverdict: {verdict.plain}\n" in text and "Holm-adjusted p = " in text
    for params, system, n in (("dims", "LSA", 27), ("rrf_k", "RRF", 200), ("alpha", "weighted", 21)):
        out = _cli("tune", "--params", params, "--metric", "ndcg@5", "--json")
        assert out.returncode == 0, out.stderr
        r = json.loads(out.stdout)
        assert r["system"] == system and len(r["grid"][params]) == n and len(r["grid"]["mean"]) == n


@pytest.mark.slow
@pytest.mark.parametrize(
    "args, needle",
    [
        (["--params", "k3"], "unknown parameters"),
        (["--folds", "1"], "--folds"),
        (["--folds", "15"], "folds"),
        (["--metric", "ndcg"], "ndcg"),
        (["--data", "/no/such/place"], "/no/such/place"),
        (["--k1", "-1"], "k1"),
    ],
)
def test_tune_cli_bad_input_exits_2_with_one_line(args, needle):
    out = _cli("tune", *args)
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("retrieval: error:") and needle in lines[0]


def test_versus_best_is_the_permutation_test_with_holm():
    from retrieval.evaluation import significance

    rng = np.random.default_rng(2)
    base = rng.random(12)
    v = np.stack([base, base + 0.1, base + 0.1 - np.abs(rng.normal(0, 0.05, 12)), base + 0.1])
    p, adjusted = tuning.versus_best(v)
    assert p[1] == 1.0 and adjusted[1] == 1.0  # the best
    assert p[3] == 1.0  # identical to the best
    for i in (0, 2):
        assert p[i] == significance.paired_permutation(v[i], v[1]).p_value
    assert adjusted[[0, 2, 3]] == pytest.approx(significance.holm(p[[0, 2, 3]]))
    assert p[0] == pytest.approx(2 / 2**12)  # worse by 0.1 on every question


# ------------------------------------------------------------------------------------------- joint sweeps


def test_thin_keeps_short_grids_and_both_ends():
    assert tuning.thin(np.arange(1.0, 22.0)).tolist() == list(range(1, 22))  # 21 values: kept whole
    d = tuning.thin(np.arange(1.0, 201.0))
    assert d.size <= tuning.JOINT_POINTS and d[0] == 1 and d[-1] == 200 and np.all(np.diff(d) > 0)
    # geometric positions: the gaps never shrink (dense at the start)
    assert np.all(np.diff(np.diff(d)) >= 0)
    assert tuning.thin(np.arange(1.0, 201.0), 3).tolist() == [1.0, 14.0, 200.0]  # positions 1, sqrt(200) = 14.1, 200


def _engine_values(ds, engine, system, params, metric, sources=()):
    ranking = engine.rankings(params, sources)[system]
    return metrics.per_query(ds.qrels, ds.n_queries, ranking.judged_rank, metrics.parse(metric))[ds.evaluated]


@pytest.mark.slow
@pytest.mark.parametrize("key", list(tuning.JOINT))
def test_a_joint_sweep_equals_the_engine_at_every_cell(invented, prep, key):
    sw = tuning.sweep(invented, key, "ndcg@5", Params(), prep)
    first, system = tuning.JOINT[key]
    assert sw.system == system == tuning.SYSTEM_OF[key] and sw.names == (first, "dims")
    want_first, want_dims = tuning.thin(tuning.grid_for(first)), tuning.thin(tuning.dims_axis(prep))
    assert [a.tolist() for a in sw.axes] == [want_first.tolist(), want_dims.tolist()]
    assert sw.values.shape == (want_first.size * want_dims.size, invented.evaluated.size)
    for i in range(sw.values.shape[0]):
        setting = sw.setting(i)
        assert setting == {first: float(want_first[i // want_dims.size]), "dims": int(want_dims[i % want_dims.size])}
        want = _engine_values(invented, prep, system, replace(Params(), **setting), "ndcg@5")
        assert np.array_equal(sw.values[i], want), setting


def test_joint_sweeps_of_other_members_equal_the_engine(invented, prep, dense_source, run_source):
    sources = (dense_source, run_source)
    cases = [
        ("alpha,dims", Params(members=("dense", "LSA"), fusion_depth=20)),
        ("rrf_k,dims", Params(members=("my *run*", "LSA", "BM25"), weights=(1.0, 1.0, 1.0), rrf_k=5.0)),
        ("k1,dims", Params(members=("LSA", "dense", "BM25"), weights=(0.5, 0.25, 1.0), b=0.4)),
        ("k1,dims", Params(alpha=0.3)),
    ]
    for key, base in cases:
        first, system = tuning.JOINT[key]
        sw = tuning.sweep_joint(
            invented,
            key,
            "recall@10",
            [0.0, 0.6, 1.0] if first != "rrf_k" else [1.0, 60.0],
            [1, 5, 27],
            prep,
            base,
            sources,
        )
        for i in range(sw.values.shape[0]):
            p = replace(base, **sw.setting(i))
            assert np.array_equal(sw.values[i], _engine_values(invented, prep, system, p, "recall@10", sources)), (
                key,
                p,
            )
        # the current setting of a joint sweep is the engine's value at the base parameters
        assert np.array_equal(
            tuning.current_values(invented, key, "recall@10", base, prep, sources=sources),
            _engine_values(invented, prep, system, base, "recall@10", sources),
        )


def test_joint_sweeps_need_their_members(invented, prep, dense_source):
    with pytest.raises(InputError, match="LSA is not fused"):
        tuning.sweep_joint(
            invented,
            "alpha,dims",
            "ndcg@5",
            engine=prep,
            base=Params(members=("BM25", "dense")),
            sources=(dense_source,),
        )
    with pytest.raises(InputError, match="BM25 is not fused"):
        tuning.sweep_joint(
            invented, "k1,dims", "ndcg@5", engine=prep, base=Params(members=("dense", "LSA")), sources=(dense_source,)
        )
    with pytest.raises(InputError, match="3 are fused"):
        tuning.sweep_joint(
            invented,
            "alpha,dims",
            "ndcg@5",
            engine=prep,
            base=Params(members=("BM25", "LSA", "dense"), weights=(1.0, 1.0, 1.0)),
            sources=(dense_source,),
        )
    with pytest.raises(InputError, match="dims"):
        tuning.sweep_joint(invented, "alpha,dims", "ndcg@5", dims=[1, 500], engine=prep)
    with pytest.raises(InputError, match="unknown joint sweep"):
        tuning.sweep_joint(invented, "b,dims", "ndcg@5", engine=prep)
    # either order names the same joint sweep
    assert np.array_equal(
        tuning.current_values(invented, "dims,alpha", "ndcg@5", Params(), prep),
        tuning.current_values(invented, "alpha,dims", "ndcg@5", Params(), prep),
    )
