"""Each compiled kernel beside the plain reference it must equal, and the two rules they share (bm25_weight,
ranks_before) written as arithmetic. The end-to-end comparisons (every system's rankings against a dense
reference) are in tests/kernels/test_perf_equivalence.py."""

from __future__ import annotations

import ast
import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from test_perf_equivalence import random_dataset

from conftest import ROOT
from retrieval import kernels as _kernels
from retrieval.analyses import tuning
from retrieval.cli import main as cli_main
from retrieval.core import thresholds, workers
from retrieval.core.errors import InputError
from retrieval.core.params import Params
from retrieval.corpus import text
from retrieval.engine.engine import Engine
from retrieval.kernels import bm25_pass, dense_pass, digest, dispatch, select
from retrieval.kernels.rules import bm25_weight, ranks_before
from retrieval.retrievers import bm25, lsa
from retrieval.retrievers.ranking import Csr, Judged, PassOutputs, Selection, from_csr, order_by_score, rank_rows


@pytest.fixture(autouse=True)
def compiled():
    """These tests are about the compiled kernels: never the plain-Python twin, whatever ran before them."""
    with _kernels.compiled_here():
        yield


@pytest.fixture(scope="module", params=[0, 1])
def rand(request):
    ds = random_dataset(request.param)
    prep = Engine(ds)
    return ds, prep, bm25.plan(prep.bm25, prep.qcounts)


# ------------------------------------------------------------------------------------------- the two rules


def test_bm25_weight_is_the_formula():
    # idf 1.5, count 2, norm 0.9, k1 = 1.2: 1.5 * (2 * 2.2) / (2 + 0.9)
    assert bm25_weight(2.0, 1.5, 0.9, 2.2) == 1.5 * ((2.0 * 2.2) / 2.9)
    assert bm25.saturation(np.float64(3.0), np.float64(0.5), 1.0) == 3.0 * 2.0 / 3.5
    f = np.array([1.0, 2.0, 5.0])
    assert np.array_equal(bm25_weight(f, 2.0, 1.0, 2.0), 2.0 * (f * 2.0 / (f + 1.0)))


@pytest.mark.parametrize(
    "s1, k1, s2, k2, before",
    [
        (2.0, 9, 1.0, 0, True),  # a higher score first, whatever the keys
        (1.0, 0, 2.0, 9, False),
        (1.0, 3, 1.0, 4, True),  # a tie: the smaller key first
        (1.0, 4, 1.0, 3, False),
        (1.0, 3, 1.0, 3, False),  # an entry does not rank before itself
    ],
)
def test_ranks_before_is_score_descending_then_key(s1, k1, s2, k2, before):
    assert bool(ranks_before(s1, k1, s2, k2)) is before
    assert bool(select.before(s1, k1, s2, k2)) is before  # the compiled kernels' inlined copy


def test_order_by_score_is_sorting_by_the_rule():
    rng = np.random.default_rng(0)
    s = rng.choice([0.0, 0.5, 1.0, 2.0], size=200)
    k = rng.permutation(200)
    want = sorted(range(200), key=lambda i: (-s[i], k[i]))
    assert order_by_score(s, k).tolist() == want
    o = order_by_score(s, k)  # every neighbour pair obeys the predicate, element-wise on arrays
    assert ranks_before(s[o[:-1]], k[o[:-1]], s[o[1:]], k[o[1:]]).all()


@pytest.mark.slow
@pytest.mark.parametrize("n, values", [(50, 3), (400, 2), (400, 400), (0, 1), (1, 1)])
def test_compiled_order_equals_order_by_score(n, values):
    """order_desc (argsort, then runs of ties by key: short runs by insertion, long ones by argsort)."""
    rng = np.random.default_rng(n + values)
    vals = rng.integers(0, values, size=n + 5).astype(np.float64)
    keys = rng.permutation(n + 5).astype(np.int64)
    assert select.order_desc(vals, keys, n).tolist() == order_by_score(vals[:n], keys[:n]).tolist()


@pytest.mark.slow
@pytest.mark.parametrize("nc, m", [(30, 10), (30, 30), (5, 10), (200, 7)])
def test_candidate_sorts_equal_order_by_score(nc, m):
    rng = np.random.default_rng(nc * m)
    key = rng.permutation(nc + 3).astype(np.int64)
    score = rng.choice([1.0, 2.0, 3.0], size=nc)
    docs = rng.permutation(nc + 3)[:nc].astype(np.int64)
    want = order_by_score(score, key[docs])[:m]
    cand = select.Candidates(score.copy(), docs.copy(), np.arange(nc, dtype=np.int64))
    top_s, top_d, top_p = np.zeros(m), np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.int64)
    scratch = (np.empty(nc, dtype=np.int64), np.empty(nc), np.empty(nc, dtype=np.int64))
    h = select.sorted_best(cand, nc, key, m, *scratch, top_s, top_d, top_p)
    assert h == min(m, nc) and top_p[:h].tolist() == want.tolist()
    assert np.array_equal(top_s[:h], score[want]) and np.array_equal(top_d[:h], docs[want])
    # the insertion sort of a nearly sorted list: the full order, or False past its budget of moves
    full = order_by_score(score, key[docs])
    near = full.copy()
    near[[0, 1]] = near[[1, 0]]
    cand = select.Candidates(score[near], docs[near], near.astype(np.int64))
    assert bm25_pass.settle_order(cand, nc, key, 10 * nc, np.empty(nc, dtype=np.int64))
    assert cand.pos.tolist() == full.tolist()
    shuffled = rng.permutation(nc)
    cand = select.Candidates(score[shuffled], docs[shuffled], shuffled.astype(np.int64))
    if nc > 5:
        assert not bm25_pass.settle_order(cand, nc, key, 0, np.empty(nc, dtype=np.int64))
        assert sorted(cand.pos.tolist()) == list(range(nc))  # given up, but every candidate still there


def test_lowest_bit_is_the_trailing_zeros_count():
    for k in range(64):
        b = np.uint64(1) << np.uint64(k)
        assert _kernels.lowest_bit(b) == k
        assert _kernels.lowest_bit(b | (np.uint64(1) << np.uint64(63))) == k
    assert _kernels.lowest_bit(np.uint64(0b101000)) == 3


# ------------------------------------------------------------------------------------------- BM25 kernels


@pytest.mark.parametrize("k1, b", [(1.2, 0.75), (0.0, 0.3), (3.0, 1.0)])
def test_bm25_weights_equal_term_weights(rand, k1, b):
    ds, prep, plan = rand
    norm = bm25.length_norm(prep.bm25.doc_len, prep.bm25.avg_len, k1, b)
    w = np.empty(plan.u_docs.size)
    _kernels.bm25_weights(np.arange(plan.terms.size), plan.by_term, norm, k1 + 1.0, w)
    assert np.array_equal(w, bm25.term_weights(prep.bm25, plan.terms, k1, b).data)


@pytest.mark.parametrize("k1, b", [(1.2, 0.75), (0.0, 0.3), (3.0, 1.0), (0.9, 0.0)])
def test_each_terms_postings_weigh_less_along_each_group_and_the_groups_are_the_counts(rand, k1, b):
    ds, prep, plan = rand
    w = bm25.term_weights(prep.bm25, plan.terms, k1, b).data
    term_of = np.repeat(np.arange(plan.terms.size), np.diff(plan.u_ptr))
    # the reference order: by term, count descending, length ascending, id ascending
    want = np.lexsort((plan.u_docs, prep.bm25.doc_len[plan.u_docs], -plan.u_f, term_of))
    assert np.array_equal(plan.g_doc, plan.u_docs[want])
    fg = np.repeat(plan.g_f, np.diff(plan.g_start))  # each posting's count: its group's
    assert np.array_equal(fg, plan.u_f[want])
    wg = w[want]
    for u in range(plan.terms.size):
        groups = plan.g_start[plan.g_ptr[u] : plan.g_ptr[u + 1] + 1]
        assert groups[0] == plan.u_ptr[u] and groups[-1] == plan.u_ptr[u + 1]
        for lo, hi in zip(groups[:-1], groups[1:]):
            assert hi > lo and np.unique(fg[lo:hi]).size == 1
            assert np.all(np.diff(wg[lo:hi]) <= 0)
        assert np.all(np.diff(fg[groups[:-1]]) < 0)


def test_term_groups_spelled_out():
    # one term in documents 0 1 2 3, counts 1 2 1 1, lengths 9 5 3 9: count 2 first, then lengths 3, 9, 9 (by id)
    g = bm25.term_groups(
        np.array([0, 4]), np.array([1.0, 2.0, 1.0, 1.0]), np.arange(4, dtype=np.int32), np.array([9.0, 5.0, 3.0, 9.0])
    )
    assert g["g_doc"].tolist() == [1, 2, 0, 3] and g["g_f"].tolist() == [2.0, 1.0]
    assert g["g_ptr"].tolist() == [0, 2] and g["g_start"].tolist() == [0, 1, 4]


@pytest.mark.parametrize("k1, b", [(1.2, 0.75), (0.5, 0.0)])
def test_bm25_at_rows_and_row_equal_score(rand, k1, b):
    ds, prep, plan = rand
    want = bm25.score(prep.bm25, prep.qcounts, k1, b).toarray()
    r = bm25.run(prep.bm25, plan, ds, k1, b, depth=5)
    qs, dd = np.divmod(np.arange(want.size), ds.n_docs)
    assert np.array_equal(r.at(qs, dd).reshape(want.shape), want)
    for q in range(ds.n_queries):
        assert np.array_equal(r.row(q), want[q])
    # another member's lists (any order, shorter than the width: 0 beyond, as LSA's best for the weighted fusion)
    rng = np.random.default_rng(5)
    lists = np.stack([rng.permutation(ds.n_docs) for _ in range(ds.n_queries)])
    n_top = rng.integers(0, ds.n_docs + 1, size=ds.n_queries)
    got = r.at_rows(lists, n_top)
    for q in range(ds.n_queries):
        assert np.array_equal(got[q, : n_top[q]], want[q, lists[q, : n_top[q]]])
        assert not got[q, n_top[q] :].any()


@pytest.mark.parametrize("keep", [3, 40])
def test_bm25_first_pass_from_a_sampled_cut_equals_the_reference(keep):
    """BM25's pass without a hint on questions touching thousands of documents (8 x keep and more: the cut
    comes from a sample): the raw best lists, counts, range and judged ranks equal the score matrix's."""
    ds = random_dataset(11, n_docs=3000, n_q=8, dup=0.3, vocab=8)
    prep = Engine(ds)
    plan = bm25.plan(prep.bm25, prep.qcounts)
    want = bm25.score(prep.bm25, prep.qcounts, 1.2, 0.75).toarray()
    r = bm25.run(prep.bm25, plan, ds, 1.2, 0.75, depth=keep, keep=keep)
    assert (plan.n_touched() > 8 * keep).sum() >= 4  # most questions are sampled
    ref = bm25.search(ds, bm25.score(prep.bm25, prep.qcounts, 1.2, 0.75), depth=keep)
    for q in range(ds.n_queries):
        best = order_by_score(want[q], ds.tie_key)
        assert r.top_d[q, : r.n_top[q]].tolist() == best[: r.n_top[q]].tolist()
        assert r.n_top[q] == min(keep, (want[q] > 0).sum()) or r.n_top[q] == keep
        assert r.top_s[q, : r.n_top[q]].tolist() == want[q, best[: r.n_top[q]]].tolist()
        assert r.n_res[q] == (want[q] > 1e-9).sum()
    assert r.ranking.judged_rank.tolist() == ref.judged_rank.tolist()


def _sparse_dataset(seed: int, n_docs: int, n_q: int, everywhere: str = ""):
    """Documents of 1 to 12 words drawn from 60 with Zipf-like odds (a few frequent terms, long runs of equal
    counts and lengths; some documents duplicated): each question touches a part of the corpus, some of its
    documents through one term, others through several. `everywhere`: a word put in every document and every
    question (then each question touches them all)."""
    from retrieval.corpus.dataset import assemble

    rng = np.random.default_rng(seed)
    words = [f"w{i:02d}" for i in range(60)]
    odds = 1.0 / np.arange(1, 61)
    odds /= odds.sum()
    texts = []
    for _ in range(n_docs):
        dup = texts and rng.random() < 0.2
        texts.append(
            texts[rng.integers(len(texts))] if dup else " ".join(rng.choice(words, size=rng.integers(1, 13), p=odds))
        )
    texts = [f"{everywhere} {t}" for t in texts] if everywhere else texts
    ids = [f"d{i:04d}" for i in rng.permutation(n_docs)]
    questions = [" ".join(rng.choice(words[:30], size=rng.integers(1, 4), replace=False)) for _ in range(n_q)]
    questions = [f"{everywhere} {t}" for t in questions] if everywhere else questions
    judgements = [
        (f"q{q}", ids[d], int(rng.integers(1, 3))) for q in range(n_q) for d in rng.choice(n_docs, 8, replace=False)
    ]
    return assemble("sparse", list(zip(ids, texts)), [(f"q{q}", t) for q, t in enumerate(questions)], judgements)


@pytest.mark.slow
@pytest.mark.parametrize("keep", [4, 20])
def test_bm25_hinted_pass_from_the_term_groups_equals_the_reference(keep, monkeypatch):
    """A hinted run reads the single-term documents off each term's groups of one count (bm25.term_groups)
    instead of scoring them all: compiled and as plain Python, the best lists, scores, counts, range, probed
    scores and judged ranks equal the score matrix's, at parameters near the hint's and far from it, and where
    weights tie along whole groups (k1 = 0: a term weighs its idf wherever it is; b = 0: lengths do not count).
    Each run says which pass settled each question: every question touching enough documents the grouped pass, a
    second try where the guess falls short, the others the hinted full pass."""
    ds = _sparse_dataset(7, n_docs=3000, n_q=12)
    prep = Engine(ds)
    plan = bm25.plan(prep.bm25, prep.qcounts)
    touched = plan.n_touched()
    grouped = int((touched >= bm25.GROUPED_SHARE * keep).sum())  # the others touch too few: the full pass
    assert (touched < ds.n_docs).all() and grouped >= 8
    rng = np.random.default_rng(keep)
    best = bm25.run(prep.bm25, plan, ds, 1.2, 0.75, keep, keep=keep).top_d[:, :5]  # singles among them, weighed from
    probe = np.hstack([best, np.stack([rng.permutation(ds.n_docs)[:5] for _ in range(ds.n_queries)])])  # their sites
    sites = bm25.probe_sites(plan, probe)
    assert (sites.term[touched >= bm25.GROUPED_SHARE * keep] >= 0).sum() >= 2 * grouped
    ns = np.diff(plan.s_ptr)[:, None]  # the sites' reference: a single's posting, the term whose postings hold it
    single = (sites.pos >= 0) & (sites.pos < ns)
    posting = plan.s_up[(plan.s_ptr[:-1, None] + np.where(single, sites.pos, 0))[single]]
    assert sites.term[single].tolist() == (np.searchsorted(plan.u_ptr, posting, side="right") - 1).tolist()
    assert sites.count[single].tolist() == plan.u_f[posting].tolist()
    assert (sites.term[~single] == -1).all() and (sites.count[~single] == 0).all()
    python = _kernels.bm25_rank.python
    second_tries = 0
    for (k1, b), (hk1, hb), backwards in [
        ((1.25, 0.75), (1.2, 0.75), False),
        ((0.0, 0.0), (1.2, 0.75), False),
        ((1.2, 0.0), (0.0, 0.0), False),
        ((3.0, 1.0), (0.5, 0.2), False),
        ((1.25, 0.75), (1.2, 0.75), True),
    ]:
        hint = bm25.run(prep.bm25, plan, ds, hk1, hb, keep, keep=keep)
        if backwards:  # the hint's best last: its guessed cut is too high, a second try takes the lowest of all m
            hint = replace(hint, top_p=hint.top_p[:, ::-1], top_d=hint.top_d[:, ::-1])
        want = bm25.score(prep.bm25, prep.qcounts, k1, b).toarray()
        ref = bm25.search(ds, bm25.score(prep.bm25, prep.qcounts, k1, b), depth=keep)
        for kernel in (_kernels.bm25_rank, python):
            monkeypatch.setattr(_kernels, "bm25_rank", kernel)
            r = bm25.run(prep.bm25, plan, ds, k1, b, keep, keep=keep, hint=hint, probe=probe)
            by = r.settled_by()  # every question it can take settled by the grouped pass, the others hinted
            assert by.get("grouped", 0) + by.get("grouped, second try", 0) == grouped
            assert by.get("hinted", 0) == ds.n_queries - grouped and "pending" not in by
            second_tries += by.get("grouped, second try", 0)
            at = plan.docs_at(r.top_p)  # the next hint's positions
            for q in range(ds.n_queries):
                best = order_by_score(want[q], ds.tie_key)[: min(keep, (want[q] > 0).sum())]
                assert r.n_top[q] == best.size
                assert r.top_d[q, : best.size].tolist() == best.tolist()
                assert r.top_s[q, : best.size].tolist() == want[q, best].tolist()
                assert at[q, : best.size].tolist() == best.tolist()
                assert r.n_res[q] == (want[q] > 1e-9).sum() and r.lo[q] == 0.0 and r.hi[q] == want[q].max()
                assert r.probe_scores[q].tolist() == want[q, probe[q]].tolist()
            assert r.ranking.judged_rank.tolist() == ref.judged_rank.tolist()
            monkeypatch.undo()
    # a guess from the hint's last GUESS falls short of m only when m is longer (m distinct documents reach their lowest)
    assert (second_tries > 0) is (keep > thresholds.GUESS)


@pytest.mark.parametrize("path", bm25.PATHS)
def test_every_bm25_path_gives_the_reference_s_lists_counts_and_judged_ranks(path):
    """Each of bm25.run's paths, chosen by name, on tie-heavy data (duplicated documents, a small vocabulary, an
    unknown word; questions touching a part of the corpus; questions touching all of it), at several (k1, b) with
    a hint at other parameters and LSA-like probes: the brute-force reference's best lists (bm25.score then
    order_by_score), result counts, range, probe scores and judged ranks (bm25.search of the score matrix)."""
    keep = 12
    for ds in (
        random_dataset(31, n_docs=400, n_q=12, dup=0.4, vocab=8),
        _sparse_dataset(9, n_docs=900, n_q=10),
        _sparse_dataset(10, n_docs=300, n_q=5, everywhere="omnia"),
    ):
        e = Engine(ds)
        rng = np.random.default_rng(ds.n_docs)
        probe = np.stack([rng.permutation(ds.n_docs)[:7] for _ in range(ds.n_queries)])
        hint = bm25.run(e.bm25, e.plan, ds, 0.9, 0.4, keep, keep=keep)
        for k1, b in ((1.2, 0.75), (0.0, 0.0), (2.5, 1.0)):
            scores = bm25.score(e.bm25, e.qcounts, k1, b)
            want, ref = scores.toarray(), bm25.search(ds, scores, depth=keep)
            r = bm25.run(e.bm25, e.plan, ds, k1, b, keep, keep=keep, hint=hint, probe=probe, path=path)
            for q in range(ds.n_queries):
                best = order_by_score(want[q], ds.tie_key)[: min(keep, (want[q] > 0).sum())]
                assert r.n_top[q] == best.size
                assert r.top_d[q, : best.size].tolist() == best.tolist()
                assert r.top_s[q, : best.size].tolist() == want[q, best].tolist()
                assert r.n_res[q] == (want[q] > 1e-9).sum()
                assert r.lo[q] == want[q].min() and r.hi[q] == want[q].max()
                assert r.probe_scores[q].tolist() == want[q, probe[q]].tolist()
            assert r.ranking.judged_rank.tolist() == ref.judged_rank.tolist()


@pytest.mark.parametrize("dims", [6, 40])
@pytest.mark.parametrize("path", lsa.PATHS)
def test_every_lsa_path_gives_the_reference_s_lists_counts_and_judged_ranks(path, dims):
    """Each of lsa.run's paths, chosen by name, below and above 16 dimensions, on vectors whose cosines tie
    (duplicated documents, rounded coordinates) over rows long enough to be sampled and streamed: the brute-force
    reference's best lists (lsa.cosines then order_by_score), result counts, range and judged ranks
    (ranking.rank_rows of the cosine rows)."""
    ds = random_dataset(41, n_docs=5000, n_q=20, dup=0.3, vocab=12)
    rng = np.random.default_rng(dims)
    raw = np.round(rng.standard_normal((ds.n_docs, dims)), 1)
    raw[rng.random(ds.n_docs) < 0.3] = raw[0]  # a tenth of the documents share one vector: ties at every cut
    vecs = raw / np.maximum(np.linalg.norm(raw, axis=1, keepdims=True), 1e-12)
    model = lsa.LsaModel(None, None, vecs, np.ascontiguousarray(vecs.T), dims, dims, "random", "")
    qvec = np.round(rng.standard_normal((ds.n_queries, dims)), 1)
    qvec /= np.linalg.norm(qvec, axis=1, keepdims=True)
    rows = lsa.cosines(qvec, model.vt)
    ref = rank_rows("LSA", ds, [(0, rows)], 100)
    r = lsa.run(ds, model, qvec, 100, keep=100, path=path)
    for q in range(ds.n_queries):
        best = order_by_score(rows[q], ds.tie_key)[:100]
        assert r.top_d[q, : r.n_top[q]].tolist() == best.tolist()
        assert r.top_s[q, : r.n_top[q]].tolist() == rows[q, best].tolist()
        assert r.n_res[q] == (rows[q] > 1e-9).sum() and r.lo[q] == rows[q].min() and r.hi[q] == rows[q].max()
    assert r.ranking.judged_rank.tolist() == ref.judged_rank.tolist()


def test_a_path_that_does_not_exist_is_refused_by_name(invented):
    e = Engine(invented)
    with pytest.raises(InputError, match="'fast'.*full, hinted, grouped"):
        bm25.run(e.bm25, e.plan, invented, path="fast")
    fit = e.lsa_fit(6)
    with pytest.raises(InputError, match="'fast'.*rows, stream"):
        lsa.run(invented, fit.model, fit.qvec, path="fast")


@pytest.mark.parametrize("keep", [4, 30])
def test_bm25_hinted_full_pass_where_a_question_touches_every_document(keep):
    """A question whose terms are in every document has no zero scores to spare: the grouped pass leaves it
    pending, and the full pass, hinted, gives the reference's lists, counts, range (its lowest score is no
    longer 0) and judged ranks."""
    ds = _sparse_dataset(8, n_docs=600, n_q=6, everywhere="omnia")
    prep = Engine(ds)
    plan = bm25.plan(prep.bm25, prep.qcounts)
    assert (plan.n_touched() == ds.n_docs).all()
    hint = bm25.run(prep.bm25, plan, ds, 1.2, 0.75, keep, keep=keep)
    for k1, b in ((1.25, 0.75), (0.0, 0.0)):
        want = bm25.score(prep.bm25, prep.qcounts, k1, b).toarray()
        ref = bm25.search(ds, bm25.score(prep.bm25, prep.qcounts, k1, b), depth=keep)
        r = bm25.run(prep.bm25, plan, ds, k1, b, keep, keep=keep, hint=hint)
        for q in range(ds.n_queries):
            best = order_by_score(want[q], ds.tie_key)[:keep]
            assert r.top_d[q, : r.n_top[q]].tolist() == best.tolist()
            assert r.top_s[q, : r.n_top[q]].tolist() == want[q, best].tolist()
            assert r.n_res[q] == (want[q] > 1e-9).sum() and r.lo[q] == want[q].min() > 0 and r.hi[q] == want[q].max()
        assert r.ranking.judged_rank.tolist() == ref.judged_rank.tolist()
        assert r.settled_by() == {"hinted": ds.n_queries}  # none by the grouped pass


def test_layout_lists_each_questions_documents_and_locate_undoes_it(rand):
    ds, prep, plan = rand
    holds = bm25.score(prep.bm25, prep.qcounts).toarray() > 0  # every question term has a positive weight
    n = plan.n_touched()
    width = int(n.max())
    pos = np.where(np.arange(width)[None, :] < n[:, None], np.arange(width)[None, :], -1)
    docs = plan.docs_at(pos)
    terms_of = [set(plan.q_u[plan.q_ptr[q] : plan.q_ptr[q + 1]]) for q in range(ds.n_queries)]
    for q in range(ds.n_queries):
        got = docs[q, : n[q]].tolist()
        assert sorted(got) == np.flatnonzero(holds[q]).tolist()
        held = [sum(d in plan.u_docs[plan.u_ptr[u] : plan.u_ptr[u + 1]] for u in terms_of[q]) for d in got]
        singles = [d for d, c in zip(got, held) if c == 1]
        multis = [d for d, c in zip(got, held) if c > 1]
        assert got == sorted(singles) + sorted(multis)  # one term first, then several, each in id order
    absent = np.array([[d for d in range(ds.n_docs) if not holds[q, d]][:1] or [-1] for q in range(ds.n_queries)])
    for per_doc in (0, 10**9):  # each question's documents by binary search, or by one pass over its layout
        assert np.array_equal(bm25.locate(plan, docs, per_doc=per_doc), pos)
        assert (bm25.locate(plan, absent, per_doc=per_doc) == -1).all()
        mixed = np.concatenate([docs[:, ::-1], absent, np.full((ds.n_queries, 1), ds.n_docs + 5)], axis=1)  # any order
        want = np.concatenate([pos[:, ::-1], np.full((ds.n_queries, 2), -1)], axis=1)
        assert np.array_equal(bm25.locate(plan, mixed, per_doc=per_doc), want)


# ------------------------------------------------------------------------------------------- LSA and generic rows


def test_lsa_at_and_rows_equal_score_chunks(rand):
    ds, prep, plan = rand
    model = lsa.fit(prep.index, 4)
    qv = lsa.query_vectors(model, prep.qcounts)
    r = lsa.run(ds, model, qv, depth=5)
    want = np.concatenate([c for _, c in lsa.score_chunks(model, qv)])
    qs, dd = np.divmod(np.arange(want.size), ds.n_docs)
    assert np.array_equal(r.at(qs, dd).reshape(want.shape), want)
    rows = r.at_rows(r.top_d, r.n_top)
    for q in range(ds.n_queries):
        assert np.array_equal(rows[q, : r.n_top[q]], want[q, r.top_d[q, : r.n_top[q]]])


@pytest.mark.parametrize("sparse", [False, True])
def test_rank_rows_kernels_keep_the_raw_best_in_ranking_order(rand, sparse):
    ds, _, _ = rand
    rng = np.random.default_rng(3)
    scores = rng.choice([-1.0, 0.0, 0.0, 0.5, 2.0], size=(ds.n_queries, ds.n_docs))
    m, thr = 7, 0.1
    o = PassOutputs.empty(ds, m)
    sel = Selection(ds.tie_key, thr, m)
    items = np.arange(ds.n_queries, dtype=np.int64)
    if sparse:
        c = sp.csr_matrix(scores)
        _kernels.rank_sparse(items, Csr(c.indptr.astype(np.int64), c.indices.astype(np.int64), c.data), 0, sel, o)
    else:
        _kernels.rank_dense(items, scores, 0, sel, o)
    for q in range(ds.n_queries):
        entries = np.flatnonzero(scores[q]) if sparse else np.arange(ds.n_docs)  # absent = not offered
        best = entries[order_by_score(scores[q, entries], ds.tie_key[entries])]
        assert o.top_d[q, : o.n_top[q]].tolist() == best[:m].tolist()
        assert o.n_res[q] == (scores[q] > thr).sum()
        assert (o.lo[q], o.hi[q]) == (scores[q, entries].min(), scores[q, entries].max())
        results = best[scores[q, best] > thr].tolist()
        j0, j1 = o.judged.ptr[q], o.judged.ptr[q + 1]
        for d, rank in zip(o.judged.doc[j0:j1], o.judged.rank[j0:j1]):
            assert rank == (results.index(d) + 1 if d in results else 0)


def _long_rows(kind: str, n: int, m: int) -> np.ndarray:
    """Rows long enough for the dense selection's sample (n >= 8 m), each built to test one of its paths."""
    rng = np.random.default_rng(7)
    if kind == "ties":  # a handful of values, zeros of both signs: ties everywhere, at the cut too
        return rng.choice(np.array([-1.0, -0.0, 0.0, 0.25, 0.5, 0.5000000000000001, 2.0]), size=(6, n))
    if kind == "zeros":  # nothing but zeros of both signs: the range must be the first zero met, as a plain loop's
        rows = np.zeros((4, n))
        rows[1] = -0.0
        rows[2, ::3] = -0.0
        rows[3, 1::2] = -0.0
        return rows
    if kind in ("sample misses", "sample low"):  # only the sampled entries score high (fewer than m reach the
        # sample's cut), or only they score low (nearly every entry reaches it)
        rows = rng.random((4, n)) * 0.01 + (0.0 if kind == "sample misses" else 10.0)
        stride = min(64, n // (thresholds.SAMPLE_SHARE * m))
        run = thresholds.SAMPLE_RUN
        sampled = 10.0 if kind == "sample misses" else 0.0
        for start in range(0, n, run * stride):
            rows[:, start : start + run] = sampled + rng.random((4, min(run, n - start)))
        return rows
    if kind == "distinct":  # no two values equal: nothing for a stream to give back
        return rng.standard_normal((6, n))
    return np.round(rng.standard_normal((6, n)), 3)  # "spread": distinct-ish values, some ties from rounding


def _judged_long(rows: np.ndarray, key: np.ndarray, m: int, rng) -> Judged:
    """Ten judged documents per row: the best, the m-th, the 3m-th (at the cut's region), six at random, and one
    outside the corpus (-1)."""
    n = rows.shape[1]
    j_docs = [np.concatenate((rng.choice(n, size=9, replace=False), [-1])) for _ in range(rows.shape[0])]
    for q in range(rows.shape[0]):
        order = order_by_score(rows[q], key)
        j_docs[q][:3] = order[[0, min(m, n - 1), min(3 * m, n - 1)]]
    j_ptr = np.concatenate(([0], np.cumsum([j.size for j in j_docs]))).astype(np.int64)
    return Judged(j_ptr, np.concatenate(j_docs).astype(np.int64), np.zeros(int(j_ptr[-1]), dtype=np.int64))


@pytest.mark.parametrize("kind", ["ties", "zeros", "sample misses", "sample low", "spread", "distinct"])
@pytest.mark.parametrize("m", [1, 20, 250])
@pytest.mark.parametrize("thr", [0.1, -5.0])
@pytest.mark.parametrize("kernel", ["rank_dense", *(f"lsa_rank {path}" for path in lsa.PATHS)])
def test_dense_rows_select_as_the_definition_says(kind, m, thr, kernel):
    """The dense selection on rows long enough to be sampled, given as rows (rank_dense: the dense retriever's
    stored scores) or made from vectors (lsa_rank: LSA's and the dense retriever's pass, on each of its paths,
    here with the rows as document vectors and the identity as questions, so that each question's cosines are its
    row, zeros' signs aside; at up to 16 dimensions "auto" streams): the best m by score descending then tie key,
    the results above the threshold, the range, and each judged document's rank (1 + the results that beat it) against the brute-force
    order, including the paths where fewer than m entries reach the sample's cut, where nearly all do, and where
    judged documents tie. A judged document outside the corpus (-1) is never retrieved, whatever the
    threshold."""
    n = 6000
    raw = _long_rows(kind, n, m)
    nq = raw.shape[0]
    rng = np.random.default_rng(m)
    key = rng.permutation(n).astype(np.int64)  # ids not in corpus order
    qvec = np.eye(nq)
    rows = raw if kernel == "rank_dense" else lsa.cosines(qvec, raw)
    judged = _judged_long(rows, key, m, rng)
    j_ptr = judged.ptr
    o = PassOutputs(
        judged,
        np.zeros((nq, m), dtype=np.int64),
        np.zeros((nq, m)),
        np.zeros(nq, dtype=np.int64),
        np.zeros(nq, dtype=np.int64),
        np.zeros(nq),
        np.zeros(nq),
    )
    items = np.arange(nq, dtype=np.int64)
    if kernel == "rank_dense":
        _kernels.rank_dense(items, np.ascontiguousarray(rows), 0, Selection(key, thr, m), o)
    else:
        path = lsa.PATHS[kernel.split()[1]]
        _kernels.lsa_rank(items, qvec, np.ascontiguousarray(raw), Selection(key, thr, m), o, path)
    for q in range(nq):
        best = order_by_score(rows[q], key)
        assert o.top_d[q, : o.n_top[q]].tolist() == best[:m].tolist()
        assert o.top_s[q, : o.n_top[q]].tolist() == rows[q, best[:m]].tolist()
        assert o.n_res[q] == (rows[q] > thr).sum()
        first = lambda x: rows[q, np.flatnonzero(rows[q] == x)[0]]  # noqa: E731 - the first of equal values met
        assert o.lo[q] == rows[q].min() and np.signbit(o.lo[q]) == np.signbit(first(rows[q].min()))
        assert o.hi[q] == rows[q].max() and np.signbit(o.hi[q]) == np.signbit(first(rows[q].max()))
        results = best[rows[q, best] > thr].tolist()
        for d, rank in zip(judged.doc[j_ptr[q] : j_ptr[q + 1]], judged.rank[j_ptr[q] : j_ptr[q + 1]]):
            assert rank == (results.index(d) + 1 if d in results else 0), (q, d)


@pytest.mark.slow
@pytest.mark.parametrize(
    "kind, streamed",
    [("distinct", [True] * 6), ("sample misses", [False] * 4), ("sample low", [False] * 4), ("ties", [False] * 6)],
)
def test_a_stream_gives_back_the_questions_it_cannot_settle_and_writes_nothing_for_them(kind, streamed):
    """`lsa_streamed` settles a question only when at least m documents reach the sample's cut, no more than
    its room holds (`_stream_room`), and no judged document below the cut ties with another: on distinct values
    it settles every one; where only the sampled entries score high (fewer than m reach the cut), where only they
    score low (nearly every document reaches it), or where a handful of values tie everywhere (each judged
    document below the cut ties with hundreds), it gives each back with its outputs untouched, for
    lsa_rank to select from the row."""
    n, m = 6000, 20
    raw = _long_rows(kind, n, m)
    nq = raw.shape[0]
    rng = np.random.default_rng(5)
    key = rng.permutation(n).astype(np.int64)
    qvec = np.eye(nq)
    judged = _judged_long(lsa.cosines(qvec, raw), key, m, rng)
    o = PassOutputs(
        judged,
        np.full((nq, m), -7, dtype=np.int64),
        np.zeros((nq, m)),
        np.full(nq, -7, dtype=np.int64),
        np.zeros(nq, dtype=np.int64),
        np.zeros(nq),
        np.zeros(nq),
    )
    sel = Selection(key, 0.1, m)
    done = np.zeros(thresholds.STREAM_GROUP, dtype=np.bool_)
    st = dense_pass.stream_state(n, m, int(np.diff(judged.ptr).max()))
    items = np.arange(nq, dtype=np.int64)
    dense_pass.lsa_streamed(items, 0, nq, qvec, np.ascontiguousarray(raw), sel, o, select.scratch(n, m), st, done)
    assert done[:nq].tolist() == streamed
    for q in np.flatnonzero(~done[:nq]):
        assert o.n_top[q] == -7 and (o.top_d[q] == -7).all()


def test_list_ranks_are_positions_in_the_lists(rand):
    ds, _, _ = rand
    rng = np.random.default_rng(4)
    lists = [rng.permutation(ds.n_docs)[: rng.integers(0, 12)] for _ in range(ds.n_queries)]
    indptr = np.concatenate(([0], np.cumsum([len(x) for x in lists])))
    r = from_csr("L", ds, indptr, np.concatenate(lists), np.zeros(indptr[-1]))
    for j, (q, d) in enumerate(zip(ds.qrels.query, ds.qrels.doc)):
        lst = lists[q].tolist()
        assert r.judged_rank[j] == (lst.index(d) + 1 if d in lst else 0)


# ------------------------------------------------------------------------------------------- the tuning grid


def test_tuning_grid_scores_equal_bm25_score_to_the_last_bit(rand, invented):
    """The BM25 grid's hoisted algebra against bm25.score at every setting of the default grid (this check ran
    at run time before; a difference in the last bit could break a tie differently)."""
    for _ds, prep in ((rand[0], rand[1]), (invented, Engine(invented))):
        g = tuning.bm25_grid(prep)
        for k1 in tuning.K1_GRID:
            for b in tuning.B_GRID:
                want = prep.bm25_scores(float(k1), float(b)).toarray()
                assert np.array_equal(tuning.bm25_grid_scores(g, prep, float(k1), float(b)), want), (k1, b)


# ------------------------------------------------------------------------------------------- without the compiler


@pytest.mark.slow
def test_the_kernels_as_plain_python_give_the_same_evaluation():
    """NUMBA_DISABLE_JIT=1 runs every kernel as the Python it is written in: the CLI's JSON must not change."""
    out = {}
    procs = {
        jit: subprocess.Popen(
            [sys.executable, "-m", "retrieval", "evaluate", "--json"],
            cwd=ROOT,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "NUMBA_DISABLE_JIT": "0" if jit else "1"},
        )
        for jit in (True, False)
    }
    for jit, p in procs.items():
        stdout, stderr = p.communicate(timeout=300)
        assert p.returncode == 0, stderr
        out[jit] = json.loads(stdout)
    assert out[False] == out[True]
    assert set(out[True]["systems"]) >= {"BM25", "LSA", "weighted", "RRF"}


# ------------------------------------------------------------------------------------------- compiled or plain Python


def _all_lists(ds, prep, params, sources=()):
    """Every system's best lists, rankings and judged ranks at `params`, as plain lists (for exact comparison)."""
    ranks = prep.rankings(params, sources)
    return {
        n: (r.indptr.tolist(), r.docs.tolist(), r.scores.tolist(), r.judged_rank.tolist(), r.n_results.tolist())
        for n, r in ranks.items()
    }


def test_the_python_twin_and_the_compiled_kernels_give_the_same_rankings(monkeypatch):
    """The switch serving small calls as plain Python before the compiled kernels are loaded: every system's
    lists, scores (to the last bit) and judged ranks equal the compiled ones, first runs and hinted runs alike."""
    ds = random_dataset(5, n_docs=150, n_q=12, dup=0.3, vocab=8)
    settings = (Params(), Params(k1=0.7, b=0.3), Params(alpha=0.2, rrf_k=5.0, dims=3, fusion_depth=100))
    _warm_up_done()
    monkeypatch.setattr(dispatch._LOCAL, "compiled", False)  # this test is about the switch itself
    monkeypatch.setattr(dispatch, "_READY", threading.Event())
    calls = {"python": 0}
    for name in _kernels.KERNELS:  # count the calls the twin serves
        monkeypatch.setattr(getattr(_kernels, name), "python", _counting(getattr(_kernels, name).python, calls))
    got = {}
    for python in (False, True):
        monkeypatch.setattr(dispatch, "_MODE", {"auto": python})
        before = calls["python"]
        prep = Engine(ds)
        got[python] = [_all_lists(ds, prep, p) for p in settings]
        assert (calls["python"] > before) is python, calls
    assert got[True] == got[False]


def _raw(run) -> tuple:
    """A run's raw best lists as plain lists (BM25's also its layout positions and probed scores)."""
    fields = [run.top_d, run.top_s, run.n_top, run.n_res, run.lo, run.hi]
    fields += [getattr(run, name) for name in ("top_p", "probe_scores") if getattr(run, name, None) is not None]
    return tuple(np.asarray(f).tolist() for f in fields)


@pytest.mark.parametrize("n_docs, dup, vocab", [(150, 0.3, 8), (700, 0.4, 14), (900, 0.05, 40)])
def test_the_numpy_twins_give_the_compiled_kernels_bits(monkeypatch, n_docs, dup, vocab):
    """A one-shot command while numba's cache lacks the kernels (`serve_uncompiled`): BM25's layout and pass and
    the dense pass run as whole-array numpy (kernels/vectorised.py), the others as plain Python, and every
    system's lists, raw best lists (scores to the last bit, lowest and highest, layout positions, LSA's documents
    scored by BM25 for the weighted fusion) and judged ranks equal the compiled kernels', first runs and runs
    after a slider step (BM25 hinted) alike; tie-heavy corpora (duplicates), rows long enough to be sampled."""
    ds = random_dataset(7, n_docs=n_docs, n_q=14, dup=dup, vocab=vocab)
    settings = (Params(), Params(k1=0.7, b=0.3), Params(alpha=0.2, rrf_k=5.0, dims=3, fusion_depth=100))
    _warm_up_done()
    monkeypatch.setattr(dispatch._LOCAL, "compiled", False)
    monkeypatch.setattr(dispatch, "_READY", threading.Event())
    calls = {"python": 0}
    for name in ("layout", "bm25_rank", "lsa_rank"):
        monkeypatch.setattr(getattr(_kernels, name), "vectorised", _counting(getattr(_kernels, name).vectorised, calls))
    got = {}
    for uncompiled in (False, True):
        monkeypatch.setattr(dispatch, "_MODE", {"auto": False, "uncompiled": uncompiled})
        for name in _kernels.KERNELS:
            monkeypatch.setattr(getattr(_kernels, name), "on_disk", not uncompiled)
        before = calls["python"]
        prep = Engine(ds)
        got[uncompiled] = [
            (_all_lists(ds, prep, p), _raw(prep.run("BM25", p)), _raw(prep.run("LSA", p))) for p in settings
        ]
        assert (calls["python"] - before >= 3) is uncompiled, calls
    assert got[True] == got[False]


def test_uncompiled_calls_go_to_a_twin_only_for_kernels_numba_has_not_cached(monkeypatch):
    """`serve_uncompiled`: a kernel numba's cache on disk lacks runs its numpy twin up to VECTORISED_MAX_WORK
    steps, else its plain-Python twin up to UNCOMPILED_PYTHON_MAX_WORK, else compiles; one on disk is loaded
    (compiled); the warm-up's thread, and every call once the kernels are ready, runs compiled."""
    _warm_up_done()
    monkeypatch.setattr(dispatch._LOCAL, "compiled", False)
    monkeypatch.setattr(dispatch, "_READY", threading.Event())
    monkeypatch.setattr(dispatch, "_MODE", {"auto": False, "uncompiled": True})
    lsa_rank, lsa_rows = _kernels.lsa_rank, _kernels.lsa_rows
    for k in (lsa_rank, lsa_rows):
        monkeypatch.setattr(k, "on_disk", False)
    assert (
        lsa_rank.pick(10) is lsa_rank.vectorised
        and lsa_rank.pick(thresholds.VECTORISED_MAX_WORK) is lsa_rank.vectorised
    )
    assert lsa_rank.pick(thresholds.VECTORISED_MAX_WORK + 1) is lsa_rank.compiled
    assert lsa_rows.vectorised is None and lsa_rows.pick(thresholds.UNCOMPILED_PYTHON_MAX_WORK) is lsa_rows.python
    assert lsa_rows.pick(thresholds.UNCOMPILED_PYTHON_MAX_WORK + 1) is lsa_rows.compiled
    monkeypatch.setattr(lsa_rank, "on_disk", True)
    assert lsa_rank.pick(10) is lsa_rank.compiled  # numba loads it from its cache: no compile to spare
    with _kernels.compiled_here():
        assert lsa_rows.pick(10) is lsa_rows.compiled
    _kernels.mark_ready()
    assert lsa_rows.pick(10) is lsa_rows.compiled


@pytest.mark.slow  # a kernel compiled into a fresh cache, in a fresh interpreter
@pytest.mark.skipif(not _kernels.dispatchers(), reason="numba is disabled: nothing is compiled or cached")
def test_on_disk_says_whether_numba_s_cache_holds_a_kernel(tmp_path):
    """A fresh cache folder holds nothing; after a call compiles a kernel there, it holds that one only."""
    script = (
        "import numpy as np; from retrieval import kernels as k; from retrieval.kernels import dispatch\n"
        "from retrieval.retrievers.ranking import Csr, Judged\n"
        "before = [dispatch.on_disk(k.list_ranks.compiled), dispatch.on_disk(k.lsa_rows.compiled)]\n"
        "z = np.zeros(1, dtype=np.int64)\n"
        "k.list_ranks.compiled(np.zeros(0, dtype=np.int64), Csr(z, z, np.zeros(1)), Judged(z, z, z))\n"
        "print(before, [dispatch.on_disk(k.list_ranks.compiled), dispatch.on_disk(k.lsa_rows.compiled)])\n"
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["[False,", "False]", "[True,", "False]"]


def _counting(fn, calls):
    def wrapped(*args):
        calls["python"] += 1
        return fn(*args)

    wrapped.__name__ = fn.__name__
    return wrapped


def _warm_up_done() -> None:
    """Wait for a warm-up thread an earlier test started (`engine.start_warm_up`): when it ends its compiling it
    marks the kernels ready, which would mark a test's own switch (a fresh `_READY`) in the middle of the test."""
    from retrieval.engine import engine as engine_mod

    for t in list(engine_mod._WARMING):
        t.join(300)


def test_the_switch_takes_small_calls_only_and_only_until_ready(monkeypatch):
    _warm_up_done()
    monkeypatch.setattr(dispatch._LOCAL, "compiled", False)
    monkeypatch.setattr(dispatch, "_READY", threading.Event())
    monkeypatch.setattr(dispatch, "_MODE", {"auto": False})
    k = _kernels.lsa_rank
    assert k.pick(10) is k.compiled  # the library's default: always compiled
    _kernels.serve_small_from_python()
    assert k.pick(10) is k.python and k.pick(_kernels.PYTHON_MAX_WORK) is k.python
    assert k.pick(_kernels.PYTHON_MAX_WORK + 1) is k.compiled  # a large call is worth the compiler
    with _kernels.compiled_here():
        assert k.pick(10) is k.compiled  # the warm-up's thread
    assert k.pick(10) is k.python
    _kernels.mark_ready()
    assert _kernels.ready() and k.pick(10) is k.compiled
    # a direct call's work is its arrays' elements, one level into named tuples
    assert dispatch.size_of((np.zeros(3), 4, Csr(np.zeros(2), np.zeros(5), np.zeros(5)))) == 15


@pytest.mark.slow
@pytest.mark.skipif(not _kernels.dispatchers(), reason="numba is disabled: nothing to compile")
def test_after_the_warm_up_the_app_s_paths_compile_nothing(tmp_path):
    """`python -m retrieval warmup` into an empty numba cache; then a new process's evaluations (the invented
    corpus, a tie-heavy corpus forcing the weighted fusion's second tries, a k1 move, dense vectors, a run file)
    load every kernel from that cache: no cache miss, so nothing is compiled at a first visit."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    warm = subprocess.run(
        [sys.executable, "-m", "retrieval", "warmup"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900
    )
    assert warm.returncode == 0, warm.stderr
    assert f"kernels ready: {len(_kernels.KERNELS) + len(text.KERNELS)} kernels" in warm.stdout
    # it said at once that it compiles, then each kernel as it went
    n = len(_kernels.KERNELS) + len(text.KERNELS)
    assert warm.stderr.startswith("compiling kernels with numba (once: they are cached on disk"), warm.stderr
    assert warm.stderr.count(" compiled in ") >= 1 and f"all {n} kernels ready: " in warm.stderr, warm.stderr
    script = (
        f"import json, sys; sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})\n"
        "from retrieval.corpus import dataset, text\n"
        "from retrieval import kernels as _kernels\n"
        "from retrieval.retrievers import lsa\n"
        "from retrieval.engine.engine import Engine\n"
        "from retrieval.core.params import Params\n"
        "from test_perf_equivalence import random_dataset\n"
        "e = Engine(dataset.load('invented'))\n"
        "text.build_index([f'a large corpus of {i} terms' for i in range(400)], method='compiled')  # the table grows\n"
        "text.build_index([f'{i} ' * 200 for i in range(text.BATCHING.split_above // 600)], method='compiled')  # two halves\n"
        "e.evaluate(Params()); e.evaluate(Params(k1=2.0)); e.evaluate(Params(dims=3, alpha=0.9))\n"
        "lsa.KEEP_DEFAULT = 0\n"
        "rescans = 0\n"
        "for seed in range(8):\n"
        "    ds = random_dataset(200 + seed, n_docs=120, n_q=10, dup=0.3, vocab=6)\n"
        "    e = Engine(ds)\n"
        "    for p in (Params(alpha=1.0, depth=3, fusion_depth=3), Params(alpha=0.5, dims=1, depth=2, fusion_depth=4),\n"
        "              Params(alpha=0.0, dims=1, depth=2, fusion_depth=5)):\n"
        "        e.evaluate(p); rescans += e.weighted(p).rescans\n"
        "ds = {**_kernels.dispatchers(), **text.dispatchers()}\n"
        "misses = {n: sum(d.stats.cache_misses.values()) for n, d in ds.items()}\n"
        "hits = sum(sum(d.stats.cache_hits.values()) for d in ds.values())\n"
        "print(json.dumps({'misses': misses, 'hits': hits, 'rescans': rescans}))\n"
    )
    used = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900
    )
    assert used.returncode == 0, used.stderr
    out = json.loads(used.stdout.splitlines()[-1])
    assert out["rescans"] > 0  # the rare second try was exercised
    assert out["hits"] >= 10 and not any(out["misses"].values()), out


def _real_shaped_beir(root: Path, n_docs: int = 2500, n_q: int = 120) -> Path:
    """A BEIR folder shaped like a real collection: documents of 20 to 80 words drawn from a Zipf-like vocabulary
    of 4,000, questions of 3 to 10 words, 6 graded judgements each."""
    rng = np.random.default_rng(3)
    vocab = [f"w{i}" for i in range(4000)]
    p = 1.0 / np.arange(1, len(vocab) + 1)
    p /= p.sum()
    root.mkdir(parents=True, exist_ok=True)
    (root / "corpus.jsonl").write_text(
        "".join(
            json.dumps({"_id": f"d{d}", "title": "", "text": " ".join(rng.choice(vocab, rng.integers(20, 80), p=p))})
            + "\n"
            for d in range(n_docs)
        )
    )
    (root / "queries.jsonl").write_text(
        "".join(
            json.dumps({"_id": f"q{q}", "text": " ".join(rng.choice(vocab[:1500], rng.integers(3, 11)))}) + "\n"
            for q in range(n_q)
        )
    )
    (root / "qrels").mkdir(exist_ok=True)
    lines = ["query-id\tcorpus-id\tscore"] + [
        f"q{q}\td{d}\t{rng.integers(1, 4)}" for q in range(n_q) for d in rng.choice(n_docs, 6, replace=False)
    ]
    (root / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n")
    return root


@pytest.mark.slow
@pytest.mark.skipif(not _kernels.dispatchers(), reason="numba is disabled: nothing is compiled or cached")
def test_a_first_evaluate_on_a_fresh_clone_compiles_nothing_and_prints_what_a_compiled_one_does(tmp_path, capsys):
    """On a fresh clone (numba's cache empty) `python -m retrieval evaluate` of a real-shaped collection of 2,500
    documents runs the kernels' twins: it compiles nothing (nothing said on stderr, nothing written to the cache)
    and prints, text and JSON, byte for byte what the compiled kernels print."""
    data = _real_shaped_beir(tmp_path / "beir")
    fresh = tmp_path / "fresh-numba-cache"
    fresh.mkdir()
    env = {**os.environ, "NUMBA_CACHE_DIR": str(fresh), "PYTHONPATH": str(ROOT)}
    for extra in ([], ["--json"]):
        args = ["evaluate", "--data", str(data), *extra]
        first = subprocess.run(
            [sys.executable, "-m", "retrieval", *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert first.returncode == 0 and first.stderr == "", first.stderr
        with _kernels.compiled_here():  # this thread: the compiled kernels only
            assert cli_main(args) == 0
        assert first.stdout == capsys.readouterr().out
    assert not list(fresh.rglob("*.nbi"))


def test_the_background_warm_up_starts_once_and_ends_ready():
    """engine.start_warm_up (what the app calls first): one thread per process, after which the compiled kernels
    serve every call (here without the child process: the kernels load from, or compile into, numba's cache)."""
    from retrieval.engine import engine

    t = engine.start_warm_up(background_process=False)
    assert engine.start_warm_up() is t  # once per process
    deadline = time.monotonic() + 600  # the thread goes on to time the encoder once the machine is idle
    while not _kernels.ready() and t.is_alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _kernels.ready()
    assert _kernels.lsa_rank.pick(1) is _kernels.lsa_rank.compiled


def kernel_imports(path: Path) -> list[Path]:
    """The project files a kernel file imports from (`from .name import ...` in the kernels, `from ..core.name
    import ...`), whose content its compiled code depends on."""
    tree = ast.parse(path.read_text())
    out = set()
    for n in tree.body:
        if isinstance(n, ast.ImportFrom) and n.module and n.level in (1, 2):
            folder = path.parent if n.level == 1 else path.parent.parent
            target = folder.joinpath(*n.module.split("."))
            if target.is_dir():  # `from ..core import workers`: the modules named
                out.update(target / f"{a.name}.py" for a in n.names)
            else:
                out.add(target.with_suffix(".py"))
    return sorted(out, key=lambda p: p.relative_to(path.parent.parent).as_posix())


@pytest.mark.parametrize("module", _kernels.MODULES, ids=lambda m: m.__name__.rpartition(".")[2])
def test_each_kernel_file_s_cache_key_covers_the_files_it_imports_from(module):
    """Numba keys its disk cache on a kernel's own file alone: a kernel file that calls or inlines another's
    functions, or reads the thresholds' table, carries the digest of those files (each carrying its own), so
    editing any of them forces an edit of this one (a fresh compile), and no stale compiled kernel outlives it."""
    path = Path(module.__file__)
    deps = kernel_imports(path)
    digest = hashlib.sha256(b"".join(d.read_bytes() for d in deps)).hexdigest()[:16]
    if not deps:
        assert not hasattr(module, "SOURCE_DIGEST")
    else:
        assert getattr(module, "SOURCE_DIGEST", None) == digest, (
            f"{path.name}'s SOURCE_DIGEST is stale: run python -m retrieval.kernels.digest"
        )


def test_the_digests_are_derived_by_the_command_and_follow_an_edit(tmp_path):
    """`python -m retrieval.kernels.digest` writes every digest: on a copy of the package, an edit of the thresholds'
    table makes the digest of each kernel file reading it (and of those importing these) stale, the command
    rewrites exactly those lines, and then nothing is stale; the files reading neither keep their bytes."""
    src = Path(_kernels.__file__).parent
    for sub in ("kernels", "core"):
        shutil.copytree(src.parent / sub, tmp_path / sub, ignore=shutil.ignore_patterns("__pycache__"))
    kernels_dir = tmp_path / "kernels"
    assert digest.stale(kernels_dir) == {}
    before = {p.name: p.read_text() for p in kernels_dir.glob("*.py")}
    with (tmp_path / "core" / "thresholds.py").open("a") as f:
        f.write("# an edit\n")
    readers = {p.name for p in digest.stale(kernels_dir)}
    assert {"select.py", "dense_pass.py", "bm25_pass.py"} <= readers
    written = {p.name for p in digest.write(kernels_dir)}
    assert digest.stale(kernels_dir) == {} and readers <= written
    for p in kernels_dir.glob("*.py"):
        changed = p.read_text() != before[p.name]
        assert changed == (p.name in written), p.name
        if changed:  # only the digest line
            assert [a for a in before[p.name].splitlines() if "SOURCE_DIGEST = " not in a] == [
                a for a in p.read_text().splitlines() if "SOURCE_DIGEST = " not in a
            ]
    assert "layout.py" not in written  # it reads neither


def test_work_done_in_the_background_runs_on_threads_of_the_lowest_priority():
    """In a background thread (`workers.background_thread`, as Engine.prefetch's), a kernel call large enough to
    be split runs on the background pool, whose worker threads are at nice 19 (Linux); elsewhere, on the app's
    pool. No caller's thread has its priority changed."""
    seen = {}

    def probe(items, tag):  # a kernel's shape: items, then its arguments
        t = threading.current_thread()
        seen.setdefault(tag, set()).add(
            (t.name.split("_")[0], os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        )

    def background():
        _kernels.parallel(probe, 4, _kernels.PARALLEL_MIN_WORK, "background")

    workers.background_thread(background, "probe").join(30)
    _kernels.parallel(probe, 4, _kernels.PARALLEL_MIN_WORK, "app")
    if workers.threads() > 1:
        assert {name for name, _ in seen["background"]} == {"retrieval-background"}
        assert {nice for _, nice in seen["background"]} == {19}
        assert {name for name, _ in seen["app"]} == {"retrieval"} and 19 not in {nice for _, nice in seen["app"]}
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) != 19  # the caller's own thread untouched


@pytest.mark.skipif(not _kernels.dispatchers(), reason="numba is disabled: it keeps no compiled cache to damage")
def test_a_damaged_numba_cache_is_cleared_and_compiled_again_with_a_warning(tmp_path):
    """An empty `.nbi` (numba's cache index, cut by a kill or a full disk) made the first call of the kernel end in
    EOFError; `repair_disk_cache` finds it, clears the kernel's cache files and says so naming the index file, and
    the kernel is compiled again."""
    import importlib.util

    from retrieval.kernels import dispatch

    source = tmp_path / "cached_twice.py"
    source.write_text("from numba import njit\n\n\n@njit(cache=True)\ndef twice(x):\n    return 2 * x\n")

    def fresh():  # the module as a new process imports it: a new dispatcher, which reads the cache on its first call
        spec = importlib.util.spec_from_file_location("cached_twice", source)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    assert fresh().twice(3) == 6  # compiled, and cached on disk
    (index,) = (tmp_path / "__pycache__").glob("cached_twice.twice-*.nbi")
    assert dispatch.repair_disk_cache(dispatch.cached_dispatchers([fresh()])) == []  # a whole cache is left alone
    index.write_bytes(b"")
    module = fresh()
    said = dispatch.repair_disk_cache(dispatch.cached_dispatchers([module]))
    assert len(said) == 1 and said[0].startswith(f"{index}: ") and "damaged" in said[0] and "compiled again" in said[0]
    assert not list((tmp_path / "__pycache__").glob("cached_twice.twice-*.nb[ic]"))
    assert module.twice(3) == 6
    assert index.stat().st_size > 0  # written anew
    data = next((tmp_path / "__pycache__").glob("cached_twice.twice-*.nbc"))
    data.write_bytes(data.read_bytes()[:10])  # a data file cut short: the same
    module = fresh()
    assert len(dispatch.repair_disk_cache(dispatch.cached_dispatchers([module]))) == 1 and module.twice(4) == 8


@pytest.mark.slow
@pytest.mark.skipif(not _kernels.dispatchers(), reason="numba is disabled: it keeps no compiled cache to damage")
def test_the_command_line_clears_a_damaged_kernel_cache_and_says_so_without_a_traceback(tmp_path):
    """`python -m retrieval evaluate` with an empty index file in place of a kernel's: one warning naming the file,
    the tables, exit 0 (it ended in EOFError). The kernel's cache files are put back afterwards."""
    import shutil

    from retrieval import kernels

    cache = Path(kernels.__file__).parent / "__pycache__"
    # the newest index: an older checkout's (the kernel defined at another line) may lie beside it, unread
    index = (
        max(cache.glob("layout.layout-*.nbi"), key=lambda f: f.stat().st_mtime, default=None)
        or cache / "layout.layout-57.py311.nbi"
    )
    saved = tmp_path / "saved"
    saved.mkdir()
    kept = [shutil.copy2(f, saved) for f in cache.glob(f"{index.stem}.*")] if cache.is_dir() else []
    cache.mkdir(exist_ok=True)
    try:
        index.write_bytes(b"")
        done = subprocess.run(
            [sys.executable, "-m", "retrieval", "evaluate"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        warned = [line for line in done.stderr.splitlines() if "damaged" in line]
        assert len(warned) == 1 and warned[0].startswith(f"warning: {index}: "), done.stderr
        assert "BM25" in done.stdout
    finally:
        for f in cache.glob(f"{index.stem}.*"):
            f.unlink()
        for f in kept:
            shutil.copy2(f, cache)
