"""The engine and its one cache, the retriever interface, and fusions over any members, against plain definitions."""

from __future__ import annotations

import threading
import time
from dataclasses import replace

import numpy as np
import pytest
from test_perf_equivalence import minmax_row, ordered, random_dataset

from retrieval import fusion
from retrieval.core.errors import InputError
from retrieval.core.memo import Memo
from retrieval.core.params import Params
from retrieval.corpus.dataset import TrecRun, load, parse_run
from retrieval.engine import ahead, registry
from retrieval.engine import engine as engine_mod
from retrieval.engine.engine import Engine, for_dataset
from retrieval.retrievers import lsa, systems
from retrieval.retrievers.ranking import BestLists, rank_rows

# ------------------------------------------------------------------ the cache


def test_memo_keeps_each_kind_within_its_bound_least_recently_used_first():
    m = Memo({"a": 2})
    made = []
    get = lambda key: m.get("a", key, lambda: made.append(key) or key * 10)  # noqa: E731
    assert [get(1), get(2), get(1), get(3)] == [10, 20, 10, 30]  # 2 is the least recently used when 3 comes
    assert made == [1, 2, 3] and m.size("a") == 2
    assert get(1) == 10 and made == [1, 2, 3]  # still held
    assert get(2) == 20 and made == [1, 2, 3, 2]  # was dropped, made again
    assert m.latest("a") == 20 and m.latest("b") is None


def test_memo_gives_every_thread_the_same_value_for_a_key():
    m = Memo()
    barrier = threading.Barrier(8)
    seen = []

    def worker():
        barrier.wait()
        seen.append(m.get("k", ("same",), lambda: object()))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 8 and all(v is seen[0] for v in seen)


def test_memo_makes_a_key_once_while_other_threads_wait_for_it():
    """A slow make (an SVD) asked for by a background thread and then by a page: made once, both get it; when the
    first make fails, a waiting thread makes it itself; other keys never wait."""
    m = Memo()
    started, release = threading.Event(), threading.Event()
    calls = []

    def slow():
        calls.append("slow")
        started.set()
        release.wait(10)
        return "fitted"

    got = []
    first = threading.Thread(target=lambda: got.append(m.get("fit", 8, slow)))
    first.start()
    assert started.wait(10) and not m.ready("fit", 8)
    second = threading.Thread(target=lambda: got.append(m.get("fit", 8, lambda: calls.append("again") or "twice")))
    second.start()
    assert m.get("fit", 16, lambda: "other") == "other"  # another key: made at once
    time.sleep(0.3)  # the second thread is waiting by now
    release.set()
    first.join(10)
    second.join(10)
    assert got == ["fitted", "fitted"] and calls == ["slow"] and m.ready("fit", 8)

    started.clear()
    release.clear()

    def fails():
        started.set()
        release.wait(10)
        raise MemoryError("no room")

    errors = []
    first = threading.Thread(target=lambda: errors.append(_raised(lambda: m.get("fit", 32, fails))))
    first.start()
    assert started.wait(10)
    second = threading.Thread(target=lambda: got.append(m.get("fit", 32, lambda: "made here")))
    second.start()
    time.sleep(0.3)
    release.set()
    first.join(10)
    second.join(10)
    assert errors == ["MemoryError"] and got[-1] == "made here" and m.get("fit", 32, lambda: "no") == "made here"


def _raised(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__
    return None


def test_an_engine_is_shared_by_content_not_by_object():
    a, b = load("invented"), load("invented")
    assert a is not b and for_dataset(a) is for_dataset(b)
    changed = replace(a, query_texts=a.query_texts[:-1] + ("a different question",))
    assert for_dataset(changed) is not for_dataset(a)


def test_the_runs_cache_stays_within_its_bound_over_a_slider_walk(invented):
    e = Engine(invented)
    for k1 in np.linspace(0.0, 3.0, 31):
        e.rankings(Params(k1=float(k1)))
    assert e.memo.size("run") <= engine_mod.CACHE_SIZES["run"]
    assert e.memo.size("weighted") <= engine_mod.CACHE_SIZES["weighted"]


def _run(name: str, rows: dict[str, list[tuple[str, float]]]) -> TrecRun:
    """A run from per-question (document, score) lists already in its order (score descending, ties by id)."""
    qids = tuple(rows)
    return TrecRun.from_lists(
        name,
        qids,
        tuple(tuple(d for d, _ in rows[q]) for q in qids),
        tuple(np.array([s for _, s in rows[q]]) for q in qids),
    )


def test_two_runs_that_differ_only_in_their_scores_are_two_systems(invented):
    """Same name, questions and documents, other scores (a corrected re-upload, or another session's file):
    each is ranked by its own scores."""
    e = Engine(invented)
    first = parse_run(b"q01 Q0 pricing1 1 2.0 mine\nq01 Q0 refund1 2 1.0 mine\n", "a.run")
    second = parse_run(b"q01 Q0 pricing1 1 1.0 mine\nq01 Q0 refund1 2 2.0 mine\n", "b.run")
    assert first.fingerprint != second.fingerprint
    a = e.rankings(Params(), (first,))["mine"].top_ids(invented, 0)
    b = e.rankings(Params(), (second,))["mine"].top_ids(invented, 0)
    assert a == ["pricing1", "refund1"] and b == ["refund1", "pricing1"]


def test_a_run_cannot_take_a_built_in_systems_name(invented):
    with pytest.raises(InputError, match="'weighted' is already taken"):
        Engine(invented).rankings(Params(), (_run("weighted", {"q01": [("pricing1", 1.0)]}),))


def test_an_unknown_member_lists_the_known_systems(invented):
    with pytest.raises(InputError, match="unknown system 'dense': known are BM25, LSA"):
        Engine(invented).rankings(Params(members=("BM25", "dense")))


# ------------------------------------------------------------------ fusion of any members


def _run_from_rows(ds, name: str, scores: np.ndarray, n: int) -> TrecRun:
    """A TREC run listing each question's n best documents of a dense score matrix (ties by id)."""
    rows = {}
    for q in range(ds.n_queries):
        best = sorted(range(ds.n_docs), key=lambda d: (-scores[q, d], ds.doc_ids[d]))[:n]
        rows[ds.query_ids[q]] = [(ds.doc_ids[d], float(scores[q, d])) for d in best]
    return _run("ext", rows)


@pytest.mark.parametrize("seed", range(4))
def test_a_weighted_fusion_of_three_members_is_the_formula_over_every_document(seed):
    ds = random_dataset(300 + seed, n_docs=50, n_q=8, dup=0.3)
    e = Engine(ds)
    rng = np.random.default_rng(seed)
    ext_scores = np.round(rng.uniform(-1, 3, (ds.n_queries, ds.n_docs)), 1)  # rounded: ties everywhere
    ext = _run_from_rows(ds, "ext", ext_scores, 12)
    w = (0.5, 0.3, 0.2)
    p = Params(members=("BM25", "LSA", "ext"), weights=w, fusion_depth=7, dims=3)
    got = e.rankings(p, (ext,))["weighted"]
    bm = e.bm25_scores(p.k1, p.b).toarray()
    fit = e.lsa_fit(p.dims)
    ls = np.vstack([c for _, c in lsa.score_chunks(fit.model, fit.qvec)])  # cosines added left to right
    for q in range(ds.n_queries):
        listed = {ds.doc_index[d]: s for d, s in zip(ext.doc_ids[q], ext.scores[q])}
        ext_row = np.array([listed.get(d, min(listed.values())) for d in range(ds.n_docs)])  # unlisted: the lowest
        fused = w[0] * minmax_row(bm[q]) + w[1] * minmax_row(ls[q]) + w[2] * minmax_row(ext_row)
        want = sorted(range(ds.n_docs), key=lambda d: (-fused[d], ds.doc_ids[d]))[:7]
        docs, sc = got.top(q)
        assert docs.tolist() == want, q
        np.testing.assert_allclose(sc, fused[want], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_rrf_of_three_members_is_the_formula(seed):
    ds = random_dataset(400 + seed, n_docs=40, n_q=6)
    e = Engine(ds)
    rng = np.random.default_rng(seed)
    ext = _run_from_rows(ds, "ext", rng.uniform(0, 1, (ds.n_queries, ds.n_docs)), 9)
    p = Params(members=("LSA", "ext", "BM25"), weights=(1.0, 1.0, 1.0), fusion_depth=5, rrf_k=3.0)
    ranks = e.rankings(p, (ext,))
    for q in range(ds.n_queries):
        points: dict[int, float] = {}
        for name in p.members:
            for r, d in enumerate(ranks[name].top(q)[0][:5].tolist(), 1):
                points[d] = points.get(d, 0.0) + 1.0 / (3.0 + r)
        want = sorted(points, key=lambda d: (-points[d], ds.doc_ids[d]))
        docs, sc = ranks["RRF"].top(q)
        assert docs.tolist() == want
        np.testing.assert_allclose(sc, [points[d] for d in want], rtol=1e-15)


def test_the_articles_fusion_is_two_members_with_alpha(invented):
    e = Engine(invented)
    a = e.rankings(Params(alpha=0.3))
    b = e.rankings(Params(alpha=0.3, weights=(0.3, 0.7)))
    for q in range(invented.n_queries):
        assert a["weighted"].top_ids(invented, q) == b["weighted"].top_ids(invented, q)


# ------------------------------------------------------------------ a new retriever, registered


class Overlap:
    """A toy retriever: a document's score is how many distinct question terms it holds."""

    name = "overlap"
    params = ()

    def run(self, context, params: Params, depth: int) -> BestLists:
        ds = context.dataset
        s = np.asarray(
            (
                (context.question_counts > 0).astype(np.float64) @ (context.text.counts > 0).astype(np.float64).T
            ).todense()
        )
        self.full = s  # every document's score, which `member` reads
        ranking = rank_rows(self.name, ds, [(0, s)], depth)
        order = np.lexsort((np.broadcast_to(ds.tie_key, s.shape), -s), axis=1)[:, :depth]
        top_s = np.take_along_axis(s, order, axis=1)
        n = np.full(ds.n_queries, order.shape[1], dtype=np.int64)
        return BestLists(order, top_s, n, (s > 1e-9).sum(axis=1), s.min(axis=1), s.max(axis=1), ranking)

    def member(self, run: BestLists) -> fusion.Member:
        s, full = run.top_s, self.full  # the toy scores every document in its lists
        return fusion.Member(
            self.name,
            run,
            np.where(run.n_top == s.shape[1], s[:, -1], -np.inf),
            run.hi > 0,
            lambda top_d, n_top: np.take_along_axis(full, top_d, axis=1) * (np.arange(top_d.shape[1]) < n_top[:, None]),
            lambda q: full[q],
        )


@pytest.fixture
def overlap():
    r = systems.register(Overlap())
    registry._ENGINES.clear()
    yield r
    del systems.REGISTRY[r.name]
    registry._ENGINES.clear()


def test_a_registered_retriever_is_a_system_everywhere_and_a_fusion_member(invented, overlap):
    e = Engine(invented)
    ranks = e.rankings(Params())
    assert list(ranks) == ["BM25", "LSA", "overlap", "weighted", "RRF"]
    counts = np.asarray(((e.qcounts > 0).astype(int) @ (e.index.counts > 0).astype(int).T).todense())
    for q in range(invented.n_queries):
        assert ranks["overlap"].top(q)[0].tolist() == ordered(invented, counts[q].astype(float))[:100]
    fused = e.rankings(Params(members=("overlap", "LSA")))
    assert fused["weighted"].top(0)[0].size == 10


def test_a_registered_retriever_appears_on_the_overview_with_no_page_changed(overlap):
    from apptest import open_app

    at = open_app("pages/overview.py")
    assert not at.exception
    assert "overlap" in at.dataframe[0].value.index


# ------------------------------------------------------------------ an engine for other judgements


def _amended(ds, n=12, seed=3):
    """The dataset with n new judgements of unjudged (question, document) pairs, graded 0 to 2."""
    rng = np.random.default_rng(seed)
    judged = {(ds.query_ids[q], d) for q, d in zip(ds.qrels.query.tolist(), ds.qrels.doc_id.tolist())}
    pairs = [(q, d) for q in ds.query_ids for d in ds.doc_ids if (q, d) not in judged]
    picked = [pairs[i] for i in rng.choice(len(pairs), size=n, replace=False)]
    return ds.with_judgements((q, d, int(rng.integers(0, 3))) for q, d in picked)


def _same_rankings(a: dict, b: dict) -> None:
    assert list(a) == list(b)
    for name in a:
        for field in ("indptr", "docs", "scores", "judged_rank", "n_results"):
            np.testing.assert_array_equal(getattr(a[name], field), getattr(b[name], field), err_msg=f"{name}.{field}")


@pytest.mark.parametrize("seed", [0, 1])
def test_a_derived_engine_ranks_and_evaluates_as_one_built_from_scratch(seed):
    """Same documents and questions, more judgements: the engine derived from the base one gives every system's
    lists, judged ranks and metrics exactly as an engine built on the amended dataset, at several settings,
    with a run and the fusions over BM25 and the run."""
    base_ds = random_dataset(seed, n_docs=80, n_q=10)
    amended = _amended(base_ds, n=15, seed=seed)
    run = _run(
        "ext",
        {
            q: [(d, float(len(base_ds.doc_ids) - i)) for i, d in enumerate(base_ds.doc_ids[:25])]
            for q in base_ds.query_ids[:6]
        },
    )
    base = Engine(base_ds)
    for p in (Params(), Params(k1=0.4, b=0.2, dims=3, alpha=0.3), Params(members=("BM25", "ext"))):
        base.rankings(p, (run,))  # the base's caches filled first: none of its judged ranks may leak
        derived, scratch = Engine.derived(base, amended), Engine(amended)
        _same_rankings(derived.rankings(p, (run,)), scratch.rankings(p, (run,)))
        names = ["ndcg@5", "recall@10", "mrr", "hit@3", "ndcg_exp@10"]
        a, b = derived.evaluate(p, names, (run,)), scratch.evaluate(p, names, (run,))
        for s in b.systems:
            for m in names:
                np.testing.assert_array_equal(a.values[s][m], b.values[s][m])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_re_judged_runs_equal_runs_made_for_the_judgements_when_lists_are_short(monkeypatch, seed):
    """With lists of 3 raw scores, most new judgements lie beyond every list: their ranks come from the
    question's scores of every document, ties by id (random_dataset duplicates texts), and equal a full run's."""
    from retrieval.corpus.embeddings import align, from_arrays
    from retrieval.retrievers import dense as dense_mod

    monkeypatch.setattr(engine_mod.bm25, "KEEP_DEFAULT", 3)
    monkeypatch.setattr(lsa, "KEEP_DEFAULT", 3)
    monkeypatch.setattr(dense_mod, "KEEP", 3)
    base_ds = random_dataset(seed, n_docs=90, n_q=10)
    amended = _amended(base_ds, n=40, seed=seed)
    rng = np.random.default_rng(seed)
    vecs = np.round(rng.normal(size=(90, 4)), 1)  # rounded: equal cosines, ties by id
    emb = from_arrays("random", base_ds.doc_ids, vecs, base_ds.query_ids, np.round(rng.normal(size=(10, 4)), 1))
    p = Params(fusion_depth=3, depth=3, k1=0.9)
    base = Engine(base_ds)
    derived, scratch = Engine.derived(base, amended), Engine(amended)
    a = derived.rankings(p, (align(emb, base_ds),))
    b = scratch.rankings(p, (align(emb, amended),))
    _same_rankings(a, b)
    beyond = sum(int((b[s].judged_rank > 3).sum()) for s in ("BM25", "LSA", "dense"))
    assert beyond > 10  # the scores-of-every-document path was taken


def test_a_derived_engine_shares_the_corpus_side_and_tokenises_nothing(monkeypatch, invented):
    base = Engine(invented)
    fit = base.lsa_fit(6)
    base.rankings(Params())
    amended = _amended(invented)
    monkeypatch.setattr(engine_mod, "build_index", lambda *a, **k: pytest.fail("the corpus was tokenised again"))
    monkeypatch.setattr(engine_mod, "query_counts", lambda *a, **k: pytest.fail("the questions were tokenised again"))
    derived = Engine.derived(base, amended)
    assert derived.dataset is amended and derived.fingerprint == amended.fingerprint != base.fingerprint
    for part in ("index", "bm25", "qcounts", "plan"):
        assert getattr(derived, part) is getattr(base, part)
    assert derived.lsa_fit(6) is fit  # an LSA fit does not depend on the judgements
    again = Engine.derived(derived, invented)  # and back, from a derived one: the same shared store
    assert again.lsa_fit(6) is fit
    # a run's judged ranks depend on the judgements: each engine has its own, the lists are the root's
    monkeypatch.setattr(systems.Bm25, "run", lambda *a, **k: pytest.fail("BM25 ran again for a new judgement"))
    r_base = base.memo.get("run", base.key("BM25", Params()), lambda: pytest.fail("the base's run is cached"))
    r_derived = derived.run("BM25", Params())
    assert r_base is not r_derived and r_base.ranking.judged_rank.size + 12 == r_derived.ranking.judged_rank.size
    assert r_derived.top_d is r_base.top_d


def test_an_engine_is_derived_only_for_the_same_documents_and_questions(invented):
    other = replace(invented, query_texts=invented.query_texts[:-1] + ("another question",))
    with pytest.raises(ValueError, match="not the documents and questions"):
        Engine.derived(Engine(invented), other)


def test_for_dataset_derives_the_engine_of_new_judgements_from_the_one_alive(monkeypatch):
    base_ds = random_dataset(5)
    base = for_dataset(base_ds)
    built = []
    real = engine_mod.build_index
    monkeypatch.setattr(engine_mod, "build_index", lambda *a, **k: built.append(1) or real(*a, **k))
    amended = _amended(base_ds, n=4)
    derived = for_dataset(amended)
    assert derived.index is base.index and not built
    assert for_dataset(amended) is derived and for_dataset(base_ds) is base  # each kept by its whole content
    # another grade: derived again, still nothing tokenised; and the base keeps its place among the full engines
    more = amended.with_judgements([(q, d, 1) for q, d in [_unjudged_pair(amended)]])
    assert for_dataset(more).index is base.index and not built


def _unjudged_pair(ds):
    judged = set(zip(ds.qrels.query.tolist(), ds.qrels.doc_id.tolist()))
    return next((ds.query_ids[q], d) for q in range(ds.n_queries) for d in ds.doc_ids if (q, d) not in judged)


def test_dense_vectors_serve_the_same_corpus_under_other_judgements():
    """Vectors aligned with the base dataset rank the amended one (its documents and questions are the same),
    exactly as vectors aligned with the amended one; the system is shared, not copied."""
    from retrieval.corpus.embeddings import align, from_arrays

    base_ds = random_dataset(2, n_docs=50, n_q=8)
    rng = np.random.default_rng(0)
    emb = from_arrays("random", base_ds.doc_ids, rng.normal(size=(50, 8)), base_ds.query_ids, rng.normal(size=(8, 8)))
    amended = _amended(base_ds, n=10)
    base = Engine(base_ds)
    on_base, on_amended = align(emb, base_ds), align(emb, amended)
    assert on_base.corpus_fingerprint == on_amended.corpus_fingerprint
    derived = Engine.derived(base, amended)
    base.rankings(Params(), (on_base,))
    _same_rankings(derived.rankings(Params(), (on_base,)), Engine(amended).rankings(Params(), (on_amended,)))
    assert derived.system("dense", (on_base,)) is base.system("dense", (on_base,))
    other = random_dataset(9, n_docs=50, n_q=8)
    with pytest.raises(InputError, match="another dataset"):
        Engine(other).rankings(Params(), (align(emb, replace(base_ds, query_texts=other.query_texts)),))


def test_an_engine_whose_judgements_are_being_graded_stays_among_the_engines_kept(monkeypatch):
    """A derived engine shares its root's index: while it is in use the root counts among the ENGINES kept, so a
    server never holds more indexes than that (here 2: grading A, then B and C loaded, drops B, not A)."""
    monkeypatch.setattr(registry, "_ENGINES", Memo({"engine": 2, "derived": 4}))
    a, b, c = (random_dataset(seed) for seed in (41, 42, 43))
    graded = _amended(a, n=3)
    root = for_dataset(a)
    assert for_dataset(graded)._root is root
    for_dataset(b)
    for_dataset(graded)  # a person grades A again
    for_dataset(c)

    def rebuilt():
        raise AssertionError("dropped")

    assert registry._ENGINES.get("engine", a.fingerprint, rebuilt) is root
    with pytest.raises(AssertionError, match="dropped"):
        registry._ENGINES.get("engine", b.fingerprint, rebuilt)


# ------------------------------------------------------------------ a slow fit, shown after what needs none


def _same_ranking(a, b) -> bool:
    return all(
        np.array_equal(getattr(a, f), getattr(b, f)) for f in ("indptr", "docs", "scores", "judged_rank", "n_results")
    )


def test_while_lsa_is_fitted_the_runs_that_need_no_fit_come_first(monkeypatch):
    """On a large corpus (the prefix path: PREFIX_ABOVE lowered), LSA's first fit is slow: `waiting` names LSA and
    the fusions of it, `first_rankings` gives BM25 (and each uploaded source) without fitting anything, equal to what
    the full `rankings` gives afterwards; the background fit is the one the full rankings use (one SVD)."""
    monkeypatch.setattr(lsa, "PREFIX_ABOVE", 0)
    fits, asked_again = [], threading.Event()
    real = lsa.fit

    def fit(*a, **k):  # a fit that lasts until the test has asked for it again (a rerun while it fits)
        fits.append(a[1])
        asked_again.wait(60)
        return real(*a, **k)

    monkeypatch.setattr(lsa, "fit", fit)
    ds = random_dataset(7, n_docs=120, n_q=12)
    e = Engine(ds)
    run = parse_run(
        b"\n".join(f"{q} Q0 {d} 1 1.0 ext".encode() for q, d in zip(ds.query_ids, ds.doc_ids)), "x.trec", "ext"
    )
    p = Params(dims=3)
    assert e.slow_fit(3) and e.waiting(p) == ("LSA", "weighted", "RRF")
    assert e.waiting(replace(p, members=("BM25", "ext"))) == ("LSA",)
    first = e.first_rankings(p, (run,))
    assert list(first) == ["BM25", "ext"] and fits == []  # nothing fitted
    t = e.fit_in_background(3)
    assert t is not None and e.fit_in_background(3) is t  # a rerun while it fits: the same thread
    asked_again.set()
    full = e.rankings(p, (run,))  # waits for the background fit rather than fitting again
    t.join(60)
    assert fits == [8] and not e.slow_fit(5) and e.waiting(p) == () and e.fit_in_background(5) is None
    assert _same_ranking(first["BM25"], full["BM25"]) and _same_ranking(first["ext"], full["ext"])
    fresh = Engine(ds).rankings(p, (run,))  # an engine that fitted first and fused with BM25's probe
    assert all(_same_ranking(full[n], fresh[n]) for n in fresh)


def test_a_small_corpus_never_waits():
    e = Engine(load("invented"))
    assert not e.slow_fit(6) and e.waiting(Params()) == () and e.fit_in_background(6) is None
    assert list(e.first_rankings(Params())) == ["BM25", "LSA"]


def test_a_derived_engine_of_a_large_corpus_says_what_waits(monkeypatch):
    """A derived engine (other judgements, e.g. the Judge page's) asks its shared store whether LSA's block is
    fitted: waiting on the prefix path, then nothing once the base engine has fitted it."""
    monkeypatch.setattr(lsa, "PREFIX_ABOVE", 0)
    ds = random_dataset(8, n_docs=120, n_q=12)
    base = Engine(ds)
    other = ds.with_judgements([(ds.query_ids[0], ds.doc_ids[5], 2)])
    derived = Engine.derived(base, other)
    assert derived.waiting(Params(dims=3)) == ("LSA", "weighted", "RRF")
    base.lsa_fit(3)
    assert derived.waiting(Params(dims=3)) == () and derived.neighbours(Params(dims=3))


def test_the_d_steps_next_to_the_current_are_computed_ahead_where_a_step_is_slow(monkeypatch):
    """`prefetch` computes in one thread the rankings at d + 1 and d - 1, then d + 2 and d - 2, up to `reach` steps
    (never a new SVD block: d = 9 needs the 16-dimension block), so a slider's next d step, or a drag a few steps
    long, reads the cache; the rankings are those computed directly; a request made before the thread starts
    replaces the earlier one (the latest is computed); a small corpus (a step takes milliseconds) computes nothing
    ahead."""
    monkeypatch.setattr(lsa, "PREFIX_ABOVE", 0)
    ds = random_dataset(9, n_docs=150, n_q=12)
    e = Engine(ds)
    assert e.prefetch(Params(dims=3)) is None  # 150 x 12 is below PREFETCH_ABOVE
    monkeypatch.setattr(ahead, "PREFETCH_ABOVE", 0)
    e.rankings(Params(dims=8))
    assert e.reach() == ahead.PREFETCH_REACH == 3  # a small corpus: the budget allows every step
    assert [p.dims for p in e.neighbours(Params(dims=8))] == [7, 6, 5]  # 9 and on would fit the 16-dimension block
    assert [p.dims for p in e.neighbours(Params(dims=6), down_first=True)] == [5, 7, 4, 8, 3]
    assert not e.cached(Params(dims=7)) and not e.cached(Params(dims=5))
    t = e.prefetch(Params(dims=8))
    assert t is not None and e.prefetch(Params(dims=6)) is t  # the same thread, which computes d = 6's
    t.join(60)
    assert not t.is_alive()
    assert all(e.cached(Params(dims=d)) for d in (3, 4, 5, 7, 8))  # d = 6's neighbours, taken next
    assert not e.cached(Params(dims=2))  # beyond the reach
    assert e.prefetch(Params(dims=6)) is None  # every neighbour is there: no thread
    fresh = Engine(ds)
    for d in (3, 5, 7):
        early, direct = e.rankings(Params(dims=d)), fresh.rankings(Params(dims=d))
        assert list(early) == list(direct) and all(_same_ranking(early[n], direct[n]) for n in direct)
    monkeypatch.setattr(ahead, "PREFETCH_ABOVE", 20_000_000)
    monkeypatch.setattr(lsa, "PREFIX_ABOVE", 1_000_000)
    small = Engine(load("invented"))
    small.rankings(Params())
    assert not small.prefetch_pays() and small.neighbours(Params()) and small.prefetch(Params()) is None
    # the reach shrinks with the corpus: 3 steps a side at 100,000 x 1,000, 1 at 1M x 1,000 and beyond
    for n_docs, want in ((100_000, 3), (300_000, 1), (1_000_000, 1)):
        assert ahead.reach_for(n_docs, 1000) == want


@pytest.mark.slow
def test_after_a_step_of_another_slider_the_fusions_are_computed_ahead_only_once_the_sliders_rest(monkeypatch):
    """Computing ahead pays most for LSA's pass over every document (hundreds of ms at 100,000 documents). After a
    step of k1 (or b, alpha, RRF k), the neighbours' passes cached already, only the fusions are left: they wait
    PREFETCH_AFTER_OTHER, and the next step of a k1 walk replaces them before they start (computed at every step
    they held the interpreter the page's next step waited for). A d step's neighbours wait PREFETCH_DELAY."""
    monkeypatch.setattr(lsa, "PREFIX_ABOVE", 0)
    monkeypatch.setattr(ahead, "PREFETCH_ABOVE", 0)
    monkeypatch.setattr(ahead, "PREFETCH_AFTER_OTHER", 3.0)
    e = Engine(random_dataset(9, n_docs=150, n_q=12))
    e.rankings(Params(dims=6))
    e.prefetch(Params(dims=6)).join(60)  # the first request: LSA's passes at 7 and 5 missing, computed at once
    assert e.cached(Params(dims=7)) and e.cached(Params(dims=5))
    one, two = Params(dims=6, k1=1.5), Params(dims=6, k1=1.6)
    e.rankings(one)
    t = e.prefetch(one)
    time.sleep(0.3)
    assert t.is_alive() and not e.cached(replace(one, dims=7))  # waiting for the sliders to rest
    e.rankings(two)
    assert e.prefetch(two) is t  # the walk's next step replaces the request
    t.join(60)
    assert e.cached(replace(two, dims=7)) and e.cached(replace(two, dims=5))
    assert not e.cached(replace(one, dims=7)) and not e.cached(replace(one, dims=5))  # never computed
    assert e.cached(replace(two, dims=3)) and not e.cached(replace(two, dims=2))  # 3 steps a side, no more
    step = replace(two, dims=3)
    e.rankings(step)
    start = time.perf_counter()
    e.prefetch(step).join(60)  # d moved: its neighbours 2 and 1 at once (4, 5 and 6 are there)
    assert e.cached(replace(step, dims=2)) and e.cached(replace(step, dims=1)) and time.perf_counter() - start < 3.0


def test_intervals_ahead_makes_the_draws_for_the_evaluated_questions_in_a_thread(invented):
    from retrieval.evaluation import stats

    stats.indices.cache_clear()
    t = Engine(invented).intervals_ahead()
    t.join(30)
    assert t.name == "intervals-ahead" and not t.is_alive()
    assert stats.indices.cache_info().currsize == 1
    stats.intervals(np.zeros((1, invented.evaluated.size)))  # the 14 evaluated questions' draws: read, not made
    assert stats.indices.cache_info().hits == 1 and stats.indices.cache_info().misses == 1
