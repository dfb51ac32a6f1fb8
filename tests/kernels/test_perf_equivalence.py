"""The fast paths (compiled kernels, caches, the weighted fusion's bound) against plain reference code on random data.

Every ranking the sliders use must be exactly what the article's definition gives: positive scores only,
ties by document id, exact ranks of the judged documents however deep, the weighted fusion over every
document (threshold -1, top `fusion_depth`, nothing when neither retriever scores), RRF over the top lists.
The references below are written the slow, obvious way, on corpora small enough to check everything and
built so that ties are everywhere (duplicated documents, a vocabulary of a dozen words).
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest
from sklearn.feature_extraction.text import CountVectorizer

from retrieval import kernels as _kernels
from retrieval.core.params import Params
from retrieval.corpus import text
from retrieval.corpus.dataset import assemble
from retrieval.engine.engine import Engine
from retrieval.retrievers import bm25, lsa

WORDS = "apple pear tea cream lemon tart pie green data back money export plan cost the of".split()


@pytest.fixture(autouse=True)
def compiled():
    """The fast paths measured here are the compiled kernels: never their plain-Python twin."""
    with _kernels.compiled_here():
        yield


def random_dataset(seed: int, n_docs: int = 60, n_q: int = 12, dup: float = 0.25, vocab: int = 14):
    """Documents of 0 to 8 words from a small vocabulary (some duplicated), ids not in corpus order."""
    rng = np.random.default_rng(seed)
    words = WORDS[:vocab] + ["the", "of"]
    texts = []
    for _i in range(n_docs):
        if texts and rng.random() < dup:
            texts.append(texts[rng.integers(len(texts))])  # exact duplicates: equal scores everywhere
        else:
            texts.append(" ".join(rng.choice(words, size=rng.integers(0, 9))))
    ids = [f"d{i:03d}" for i in rng.permutation(n_docs)]
    questions = [" ".join(rng.choice(words, size=rng.integers(1, 4))) for _ in range(n_q - 1)] + ["zzz unknown"]
    judgements = []
    for q in range(n_q):
        for d in rng.choice(n_docs, size=6, replace=False):
            judgements.append((f"q{q}", ids[d], int(rng.integers(0, 4))))
    judgements.append(("q0", "ghost", 2))  # judged, not in the corpus
    judgements.append(("q1", ids[0], 3))
    judgements = list({(q, d): (q, d, g) for q, d, g in judgements}.values())
    return assemble("rand", list(zip(ids, texts)), [(f"q{q}", t) for q, t in enumerate(questions)], judgements)


def ordered(ds, row, threshold=1e-9):
    """Documents scoring above the threshold, by score descending then id ascending."""
    keep = [j for j in range(ds.n_docs) if row[j] > threshold]
    return sorted(keep, key=lambda j: (-row[j], ds.doc_ids[j]))


def judged_ranks(ds, lists):
    out = []
    for j in range(len(ds.qrels)):
        q, d = int(ds.qrels.query[j]), int(ds.qrels.doc[j])
        out.append(lists[q].index(d) + 1 if d in lists[q] else 0)
    return out


def minmax_row(x):
    lo, hi = x.min(), x.max()
    return (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x)


def reference(ds, prep, p: Params):
    """Every system's full lists, scores and judged ranks, computed densely the obvious way."""
    bm = bm25.score(prep.bm25, prep.qcounts, p.k1, p.b).toarray()  # the reference algebra (scipy)
    fit = lsa.fit(prep.index, p.dims)
    qv = lsa.query_vectors(fit, prep.qcounts)
    ls = np.vstack([c for _, c in lsa.score_chunks(fit, qv)]) if ds.n_queries else np.zeros((0, ds.n_docs))
    out = {}
    depth = max(p.depth, p.fusion_depth)  # what Engine.rankings lists
    for name, s in (("BM25", bm), ("LSA", ls)):
        full = [ordered(ds, s[q]) for q in range(ds.n_queries)]
        out[name] = (
            [f[:depth] for f in full],
            [[s[q, d] for d in f[:depth]] for q, f in enumerate(full)],
            judged_ranks(ds, full),
            [len(f) for f in full],
        )
    w_lists, w_scores = [], []
    for q in range(ds.n_queries):
        if bm[q].max() == 0 and ls[q].max() <= 0:
            w_lists.append([])
            w_scores.append([])
            continue
        fused = p.alpha * minmax_row(bm[q]) + (1.0 - p.alpha) * minmax_row(ls[q])
        top = sorted(range(ds.n_docs), key=lambda j: (-fused[j], ds.doc_ids[j]))[: p.fusion_depth]
        w_lists.append(top)
        w_scores.append([fused[j] for j in top])
    out["weighted"] = (w_lists, w_scores, judged_ranks(ds, w_lists), [len(x) for x in w_lists])
    r_lists, r_scores = [], []
    for q in range(ds.n_queries):
        pts: dict[int, float] = {}
        for name in ("BM25", "LSA"):
            for rank, d in enumerate(out[name][0][q][: p.fusion_depth], 1):
                pts[d] = pts.get(d, 0.0) + 1.0 / (p.rrf_k + rank)
        top = sorted(pts, key=lambda d: (-pts[d], ds.doc_ids[d]))
        r_lists.append(top)
        r_scores.append([pts[d] for d in top])
    out["RRF"] = (r_lists, r_scores, judged_ranks(ds, r_lists), [len(x) for x in r_lists])
    return out


def check(ds, got, want, systems=("BM25", "LSA", "weighted", "RRF")):
    for s in systems:
        lists, scores, ranks, n = want[s]
        r = got[s]
        for q in range(ds.n_queries):
            docs, sc = r.top(q)
            assert docs.tolist() == lists[q], (s, q)
            if s == "RRF":
                np.testing.assert_allclose(sc, scores[q], rtol=1e-15, atol=0)
            else:
                assert sc.tolist() == scores[q], (s, q)  # the same numbers to the last bit
        assert r.judged_rank.tolist() == ranks, s
        assert r.n_results.tolist() == n, s


PARAMS = [
    Params(),
    Params(k1=0.0, b=0.0, alpha=0.0, dims=2, depth=5, fusion_depth=3),
    Params(k1=2.5, b=1.0, alpha=1.0, dims=3, depth=7, fusion_depth=7, rrf_k=0.0),
    Params(k1=0.7, b=0.3, alpha=0.3, dims=5, depth=100, fusion_depth=10, rrf_k=5.0),
    Params(k1=1.2, b=0.75, alpha=0.85, dims=1, depth=2, fusion_depth=20),
]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("keep", [0, 1000])
def test_rankings_equal_the_dense_reference(seed, threads, keep, monkeypatch):
    monkeypatch.setenv("RETRIEVAL_THREADS", str(threads))
    monkeypatch.setattr(lsa, "KEEP_DEFAULT", keep)
    monkeypatch.setattr(bm25, "KEEP_DEFAULT", keep // 10)
    monkeypatch.setattr(_kernels, "PARALLEL_MIN_WORK", 0)  # exercise the threads even on tiny data
    ds = random_dataset(seed, n_docs=40 + 10 * seed, dup=0.1 + 0.1 * (seed % 3))
    prep = Engine(ds)
    for p in PARAMS:
        got = prep.rankings(p)  # the sliders' path, caches included
        check(ds, got, reference(ds, prep, p))


def test_slider_caches_recompute_only_what_changed():
    ds = random_dataset(7)
    prep = Engine(ds)
    a = prep.rankings(Params())
    b = prep.rankings(Params(alpha=0.2, rrf_k=10.0))
    assert a["BM25"] is b["BM25"] and a["LSA"] is b["LSA"]  # an alpha or RRF change touches neither retriever
    c = prep.rankings(Params(k1=1.5))
    assert c["LSA"] is a["LSA"] and c["BM25"] is not a["BM25"]  # a k1 change touches no LSA
    d = prep.rankings(Params(dims=3))
    assert d["BM25"] is a["BM25"] and d["LSA"] is not a["LSA"]  # a d change touches no BM25
    check(ds, d, reference(ds, prep, Params(dims=3)))  # the cached BM25 run meets a new LSA exactly


def test_weighted_bound_fallbacks_are_exercised_and_exact(monkeypatch):
    """Ties at the bound (a dead LSA, alpha 1) force the second and third tries: still the reference."""
    monkeypatch.setattr(lsa, "KEEP_DEFAULT", 0)  # LSA lists as short as the rankings: the bound is tested often
    seen = {"rescans": 0, "fallbacks": 0}
    for seed in range(8):
        ds = random_dataset(200 + seed, n_docs=120, n_q=10, dup=0.3, vocab=6)
        prep = Engine(ds)
        for p in (
            Params(alpha=1.0, depth=3, fusion_depth=3),
            Params(alpha=0.5, dims=1, depth=2, fusion_depth=4),
            Params(alpha=0.0, dims=1, depth=2, fusion_depth=5),
        ):
            check(ds, prep.rankings(p), reference(ds, prep, p), ("weighted",))
            w = prep.weighted(p)
            seen["rescans"] += w.rescans
            seen["fallbacks"] += w.fallbacks
    assert seen["rescans"] > 0 and seen["fallbacks"] > 0, seen


@pytest.mark.parametrize("method", ["python", "compiled"])
def test_fast_index_equals_countvectorizer(method):
    rng = np.random.default_rng(3)
    alphabet = list("abcXYZ019 .,;-'\u00e9\u0130\u00df\n\t") + ["the ", " of ", "ÉCOLE ", "ﬁne "]
    texts = ["".join(rng.choice(alphabet, size=rng.integers(0, 60))) for _ in range(300)] + ["", "the of a"]
    idx = text.build_index(texts, method=method)
    cv = CountVectorizer(
        lowercase=True, token_pattern=text.TOKEN_PATTERN, stop_words=sorted(text.STOP_WORDS), dtype=np.int32
    )
    want = cv.fit_transform(texts)
    assert idx.vocabulary == {t: int(i) for t, i in cv.vocabulary_.items()}
    assert (idx.counts != want).nnz == 0 and idx.counts.has_sorted_indices
    np.testing.assert_array_equal(idx.doc_len, np.asarray(want.sum(axis=1)).ravel())
    questions = texts[:40] + ["zzz", "École of ﬁne apple"]
    q = text.query_counts(idx, questions)
    assert (
        q
        != CountVectorizer(
            lowercase=True,
            token_pattern=text.TOKEN_PATTERN,
            stop_words=sorted(text.STOP_WORDS),
            vocabulary=idx.vocabulary,
            dtype=np.int32,
        ).transform(questions)
    ).nnz == 0


def test_index_build_reports_progress_by_stage():
    seen = []
    ds = random_dataset(5, n_docs=50)
    Engine(ds, progress=lambda stage, f: seen.append((stage, f)))
    fractions = [f for _, f in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0 and 0 <= fractions[0] <= 1
    assert {"tokenising documents", "tokenising questions"} <= {s for s, _ in seen}
    assert text.build_index([]).counts.shape == (0, 0)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("depth", [1, 3, 10])
@pytest.mark.parametrize("budget", [16, 0])
def test_bm25_selection_cut_never_changes_the_run(seed, depth, budget, monkeypatch):
    """The cut that spares sorting (a hint run's best, else a strided sample) leaves every output as the reference's,
    whatever the hint: a run at other parameters, one full of ties (k1 = b = 0), or arbitrary positions in any
    order; and so does settling the hint's order by insertion, or (budget 0) giving up on it for the full sort."""
    monkeypatch.setattr(bm25, "SORT_BUDGET", budget)
    ds = random_dataset(
        300 + seed, n_docs=400, n_q=10, dup=0.3, vocab=6
    )  # many more matches than `depth`: the cut is used
    prep = Engine(ds)
    plan = prep.plan
    rng = np.random.default_rng(seed)
    probe = np.stack([rng.permutation(ds.n_docs)[:7] for _ in range(ds.n_queries)])
    probe[0, :2] = -1
    probe_n = rng.integers(0, 8, size=ds.n_queries)  # rows scored only up to there (LSA's shorter lists)
    other = bm25.run(prep.bm25, plan, ds, 2.0, 0.9, depth, keep=0)
    ties = bm25.run(prep.bm25, plan, ds, 0.0, 0.0, depth, keep=0)
    touched = plan.n_touched()
    assert ((touched == 0) | (touched > 3 * depth)).all() and (touched > 0).sum() >= 5
    some = np.full((ds.n_queries, depth), -1)
    for q, n in enumerate(touched):
        some[q, : min(n, depth)] = rng.permutation(n)[:depth]
    arbitrary = replace(other, top_p=some, top_d=plan.docs_at(some))
    for (k1, b), hint in itertools.product(((1.1, 0.6), (0.0, 0.0)), (None, other, ties, arbitrary)):
        dense = bm25.score(
            prep.bm25, prep.qcounts, k1, b
        ).toarray()  # k1 = 0: a few distinct scores, long ties at the cut
        want_lists = [ordered(ds, dense[q]) for q in range(ds.n_queries)]
        got = bm25.run(prep.bm25, plan, ds, k1, b, depth, keep=0, probe=probe, hint=hint)
        short = bm25.run(prep.bm25, plan, ds, k1, b, depth, keep=0, probe=probe, probe_n=probe_n, hint=hint)
        for q in range(ds.n_queries):
            assert short.probe_scores[q].tolist() == [
                s if i < probe_n[q] else 0.0 for i, s in enumerate(got.probe_scores[q])
            ]
            docs, scores = got.ranking.top(q)
            assert docs.tolist() == want_lists[q][:depth]
            assert scores.tolist() == [dense[q, d] for d in want_lists[q][:depth]]
            row = dense[q]
            assert got.lo[q] == row.min() and got.hi[q] == row.max()
            assert got.probe_scores[q].tolist() == [row[d] if d >= 0 else 0.0 for d in probe[q]]
        assert got.ranking.judged_rank.tolist() == judged_ranks(ds, want_lists)
        assert got.ranking.n_results.tolist() == [len(x) for x in want_lists]
