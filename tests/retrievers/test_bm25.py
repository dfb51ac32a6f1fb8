"""BM25 against the formula written out as plain loops (the article's listing), term by term and end to end."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from retrieval.core.errors import InputError
from retrieval.corpus.dataset import assemble
from retrieval.corpus.text import STOP_WORDS, build_index, query_counts, tokenize
from retrieval.retrievers import bm25

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "42",
    "x9",
    "the",
    "of",
    "and",
]


def naive_tokens(text: str) -> list[str]:
    return [t for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in STOP_WORDS]


def naive_bm25(docs: list[str], question: str, k1: float, b: float) -> list[float]:
    """The article's BM25, loop by loop: Lucene idf, distinct question terms."""
    tok = [naive_tokens(d) for d in docs]
    n = len(tok)
    df: dict[str, int] = {}
    for doc in tok:
        for t in set(doc):
            df[t] = df.get(t, 0) + 1
    avg = sum(len(d) for d in tok) / n
    scores = [0.0] * n
    for t in set(naive_tokens(question)):
        if t not in df:
            continue
        idf = math.log((n - df[t] + 0.5) / (df[t] + 0.5) + 1)
        for j, doc in enumerate(tok):
            f = doc.count(t)
            if f:
                scores[j] += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * len(doc) / avg))
    return scores


def random_corpus(seed: int, n_docs: int = 25, n_q: int = 8) -> tuple[list[str], list[str]]:
    rng = np.random.default_rng(seed)

    def text(lo, hi):
        words = rng.choice(WORDS, size=int(rng.integers(lo, hi)))
        return " ".join(w.upper() if rng.random() < 0.2 else w for w in words) + "."

    docs = [text(1, 30) for _ in range(n_docs)]
    questions = [text(1, 6) for _ in range(n_q)] + ["nothing known here", "alpha alpha ALPHA beta"]
    return docs, questions


def ours(docs: list[str], questions: list[str], k1: float, b: float) -> np.ndarray:
    index = build_index(docs)
    return bm25.score(bm25.prepare(index), query_counts(index, questions), k1, b).toarray()


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("k1, b", [(1.2, 0.75), (0.0, 0.5), (2.0, 0.0), (0.9, 1.0), (1e-3, 0.3), (10.0, 0.75)])
def test_scores_equal_the_formula_in_loops(seed, k1, b):
    docs, questions = random_corpus(seed)
    got = ours(docs, questions, k1, b)
    want = np.array([naive_bm25(docs, q, k1, b) for q in questions])
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_a_question_with_no_known_term_scores_nothing():
    docs, _ = random_corpus(0)
    got = ours(docs, ["nothing known here", "the of and"], 1.2, 0.75)
    assert not got.any()


def test_repeating_a_question_word_changes_nothing():
    docs, _ = random_corpus(1)
    got = ours(docs, ["alpha beta", "alpha alpha beta beta beta"], 1.2, 0.75)
    np.testing.assert_array_equal(got[0], got[1])


def test_reweighting_needs_no_new_index():
    docs, questions = random_corpus(2)
    index = build_index(docs)
    prepared = bm25.prepare(index)
    qc = query_counts(index, questions)
    for k1, b in [(0.5, 0.2), (1.2, 0.75), (0.5, 0.2)]:
        want = np.array([naive_bm25(docs, q, k1, b) for q in questions])
        np.testing.assert_allclose(bm25.score(prepared, qc, k1, b).toarray(), want, rtol=1e-12, atol=1e-12)


def test_index_tokens_are_the_article_tokeniser():
    docs, _ = random_corpus(3)
    docs.append("Sign-on, SSO & 2FA: the user's e-mail (x9)!")
    index = build_index(docs)
    assert set(index.vocabulary) == {t for d in docs for t in naive_tokens(d)}
    assert index.doc_len.tolist() == [len(naive_tokens(d)) for d in docs]
    assert tokenize("The user's e-mail, SSO & 2FA") == ["user", "e", "mail", "sso", "2fa"]


# ------------------------------------------------------------------ one function per term


@pytest.mark.parametrize("n, df", [(28, 1), (28, 14), (28, 28), (1000, 3), (1, 1)])
def test_idf_is_lucene(n, df):
    assert bm25.idf(np.array([df]), n)[0] == pytest.approx(math.log(1 + (n - df + 0.5) / (df + 0.5)), rel=1e-15)
    assert bm25.idf(np.array([df]), n)[0] > 0  # every matching term adds, even in every document


def test_idf_decreases_with_document_frequency():
    v = bm25.idf(np.arange(1, 50), 50)
    assert np.all(np.diff(v) < 0)


def test_length_norm_formula():
    doc_len = np.array([2.0, 10.0, 6.0])
    got = bm25.length_norm(doc_len, 6.0, 1.2, 0.75)
    np.testing.assert_allclose(
        got, [1.2 * (1 - 0.75 + 0.75 * 2 / 6), 1.2 * (1 - 0.75 + 0.75 * 10 / 6), 1.2], rtol=1e-15
    )
    np.testing.assert_allclose(bm25.length_norm(doc_len, 6.0, 1.2, 0.0), [1.2, 1.2, 1.2])  # b = 0: length ignored


@pytest.mark.parametrize("k1", [0.5, 1.2, 2.0])
def test_saturation_tends_to_k1_plus_one(k1):
    tf = np.array([1.0, 2.0, 5.0, 50.0, 1e9])
    s = bm25.saturation(tf, np.float64(k1), k1)
    np.testing.assert_allclose(s, tf * (k1 + 1) / (tf + k1), rtol=1e-15)
    assert np.all(np.diff(s) > 0) and np.all(s < k1 + 1)
    assert s[-1] == pytest.approx(k1 + 1, rel=1e-8)
    assert s[0] == pytest.approx(1.0)  # f = 1 in a document of average length: weight 1


def test_k1_zero_is_binary():
    s = bm25.saturation(np.array([1.0, 3.0, 100.0]), np.float64(0.0), 0.0)
    assert s.tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize(
    "k1, b",
    [(-0.1, 0.75), (-1, 0.5), (1.2, -0.01), (1.2, 1.5), (float("nan"), 0.5), (1.2, float("nan")), (float("inf"), 0.5)],
)
def test_check_params_rejects_naming_the_parameter(k1, b):
    bad = "k1" if not (math.isfinite(k1) and k1 >= 0) else "b"
    with pytest.raises(InputError, match=rf"^{bad}\b"):
        bm25.check_params(k1, b)
    docs, questions = random_corpus(0)
    index = build_index(docs)
    with pytest.raises(InputError):
        bm25.score(bm25.prepare(index), query_counts(index, questions), k1, b)


@pytest.mark.parametrize("k1, b", [(0.0, 0.0), (0.0, 1.0), (1e6, 1.0)])
def test_check_params_accepts_the_edges(k1, b):
    bm25.check_params(k1, b)


# ------------------------------------------------------------------ explain


@pytest.mark.parametrize("k1, b", [(1.2, 0.75), (0.0, 1.0), (2.0, 0.0)])
def test_explain_contributions_sum_to_the_score(k1, b):
    docs, questions = random_corpus(4)
    index = build_index(docs)
    prepared = bm25.prepare(index)
    scores = bm25.score(prepared, query_counts(index, questions), k1, b).toarray()
    for qi, q in enumerate(questions):
        for d in range(len(docs)):
            rows = bm25.explain(prepared, index, tokenize(q), d, k1, b)
            assert sum(r["score"] for r in rows) == pytest.approx(scores[qi, d], rel=1e-12, abs=1e-12)
            assert [r["term"] for r in rows] == list(dict.fromkeys(tokenize(q)))
            for r in rows:
                assert r["score"] == pytest.approx(r["idf"] * r["saturation"], rel=1e-15)
                assert r["tf"] == naive_tokens(docs[d]).count(r["term"])


def test_explain_marks_unknown_terms():
    index = build_index(["alpha beta", "beta gamma"])
    rows = bm25.explain(bm25.prepare(index), index, ["beta", "omega"], 0, 1.2, 0.75)
    assert rows[0]["in_vocabulary"] and rows[0]["df"] == 2 and rows[0]["tf"] == 1
    assert rows[1] == {**rows[1], "in_vocabulary": False, "df": 0, "score": 0.0}


# ------------------------------------------------------------------ ranking


def test_search_ranks_positive_scores_ties_by_doc_id():
    # two identical documents tie: the smaller id comes first, whatever their order in the corpus
    docs = [("z2", "apple pie"), ("a1", "apple pie"), ("m", "pear tart"), ("k", "apple apple crumble with pie")]
    ds = assemble("t", docs, [("q", "apple pie")], [("q", "a1", 1)])
    index = build_index(ds.doc_texts)
    scores = bm25.score(bm25.prepare(index), query_counts(index, ds.query_texts))
    r = bm25.search(ds, scores)
    ids = r.top_ids(ds, 0)
    assert "m" not in ids  # zero is not a result
    assert ids.index("a1") + 1 == ids.index("z2")
    s = dict(zip(ds.doc_ids, scores.toarray()[0]))
    assert ids == sorted((d for d in s if s[d] > 0), key=lambda d: (-s[d], d))


def test_the_kept_list_grows_with_the_corpus_between_100_and_1000(monkeypatch):
    monkeypatch.setattr(bm25, "KEEP_DEFAULT", None)
    assert [bm25.keep_for(n) for n in (0, 1400, 10_000, 250_000, 10**6, 10**8)] == [100, 100, 100, 500, 1000, 1000]
    monkeypatch.setattr(bm25, "KEEP_DEFAULT", 7)
    assert bm25.keep_for(10**6) == 7


def test_layout_regroups_each_questions_postings_by_document():
    # postings by term: u0 in documents 0 2 5 9 (postings 0-3), u1 nowhere, u2 in 3 4 8 (4-6), u3 in 2 3 (7-8)
    u_ptr = np.array([0, 4, 4, 7, 9])
    u_docs = np.array([0, 2, 5, 9, 3, 4, 8, 2, 3], dtype=np.int32)
    q_ptr = np.array([0, 3, 4, 6])  # q0: u0 u2 u3; q1: u1; q2: u0 u3
    q_u = np.array([0, 2, 3, 1, 0, 3])
    u_f = np.array([1, 2, 1, 1, 1, 1, 1, 3, 4], dtype=np.float64)  # the counts of postings 0-8
    got = {k: v.tolist() for k, v in bm25.layout(q_ptr, q_u, u_ptr, u_docs, u_f, 10).items()}
    # q0: one term in 0 4 5 8 9 (postings 0 5 2 6 3); two in 2 (u0 then u3: postings 1 7) and 3 (u2 then u3: 4 8)
    # q1: nothing; q2: one term in 0 3 5 9 (0 8 2 3), two in 2 (u0 then u3: 1 7)
    assert got == {
        "s_ptr": [0, 5, 5, 9],
        "s_up": [0, 5, 2, 6, 3, 0, 8, 2, 3],
        "m_ptr": [0, 2, 2, 3],
        "m_start": [0, 2, 4, 6],
        "m_term": [0, 3, 2, 3, 0, 3],
        "m_count": [2, 3, 1, 4, 2, 3],
        "m_doc": [2, 3, 2],
    }
    g = bm25.term_groups(u_ptr, np.ones(9), u_docs, np.ones(10))  # one count, one length: the id order stays
    assert g["g_doc"].tolist() == u_docs.tolist() and g["g_ptr"].tolist() == [0, 1, 1, 2, 3]
    plan = bm25.QuestionPlan(
        q_ptr,
        q_u,
        np.arange(4),
        u_ptr,
        u_docs,
        u_f,
        np.ones(4),
        10,
        **bm25.layout(q_ptr, q_u, u_ptr, u_docs, u_f, 10),
        **g,
    )
    assert plan.entries == 15 and plan.n_touched().tolist() == [7, 0, 5]
    # positions: singles first, then the multis
    docs = np.array([[3, 9, 7, -1], [0, 2, 3, 9], [2, 3, 8, 0]])
    for per_doc in (0, 1, 10**9):  # binary searches, then passes over the layouts (q0's and q2's from per_doc = 2)
        pos = bm25.locate(plan, docs, per_doc=per_doc)
        assert pos.tolist() == [[6, 4, -1, -1], [-1, -1, -1, -1], [4, 1, -1, 0]]
        assert plan.docs_at(pos).tolist() == np.where(pos >= 0, docs, -1).tolist()
        # the judgements' flat layout: q0 judged 9 and 1, q1 none, q2 judged 3
        assert bm25.locate(plan, np.array([9, 1, 3]), np.array([0, 2, 2, 3]), per_doc=per_doc).tolist() == [4, -1, 1]
    assert bm25.locate_lists(plan, docs, np.array([1, 4, 2])).tolist() == [
        [6, -1, -1, -1],
        [-1, -1, -1, -1],
        [4, 1, -1, -1],
    ]
    # the sites: q0's document 3 and q2's document 2 hold several terms; q2's document 3 holds u3 only (posting 8,
    # count 4); the rows beyond n_top are left out
    sites = bm25.probe_sites(plan, docs, np.array([1, 4, 2]))
    assert sites.pos.tolist() == [[6, -1, -1, -1], [-1, -1, -1, -1], [4, 1, -1, -1]]
    assert sites.term.tolist() == [[-1] * 4, [-1] * 4, [-1, 3, -1, -1]]
    assert sites.count.tolist() == [[0] * 4, [0] * 4, [0, 4, 0, 0]]
    every = bm25.probe_sites(plan, docs)  # q0's documents 9 (u0, posting 3, count 1) and 7 (none)
    assert every.term[0].tolist() == [-1, 0, -1, -1] and every.count[0].tolist() == [0, 1, 0, 0]
    assert every.term[2].tolist() == [-1, 3, -1, 0] and every.count[2].tolist() == [0, 4, 0, 1]
