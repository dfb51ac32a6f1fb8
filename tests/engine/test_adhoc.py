"""A typed question (retrieval/adhoc.py, Engine.adhoc): every system's top list, scores and judged ranks equal
the engine's run of the same text as a dataset question, to the last bit; its BM25 equals the formula written
out; its judgements and its bad input."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from retrieval.core.errors import InputError
from retrieval.core.params import Params
from retrieval.corpus import embeddings
from retrieval.corpus.dataset import parse_run
from retrieval.corpus.text import tokenize
from retrieval.engine import adhoc, engine
from retrieval.evaluation import metrics
from retrieval.evaluation.experiment import score
from retrieval.retrievers import dense

SETTINGS = (
    Params(),
    Params(k1=0.3, b=0.1, dims=3, alpha=0.8, rrf_k=5.0),
    Params(members=("BM25", "dense")),
    Params(members=("dense", "LSA", "BM25"), weights=(0.2, 0.3, 0.5), fusion_depth=100, rrf_k=1.0),
)


@pytest.fixture(scope="module")
def eng(invented):
    return engine.Engine(invented)


@pytest.fixture(scope="module")
def vectors(invented):
    return embeddings.align(dense.embeddings_of(invented), invented)


def judged_slice(ds, q):
    lo, hi = np.searchsorted(ds.qrels.query, [q, q + 1])
    return slice(int(lo), int(hi))


@pytest.mark.parametrize("p", SETTINGS, ids=["article", "moved", "BM25+dense", "three members"])
def test_a_dataset_question_typed_verbatim_is_ranked_as_the_engine_ranks_it(eng, invented, vectors, p):
    sources = (vectors,)
    ranks = eng.rankings(p, sources)
    ev = eng.evaluate(p, ["hit@3", "recall@5", "mrr", "ndcg@5", "ndcg_exp@10", "precision@2"], sources)
    assert set(ranks) == {"BM25", "LSA", "dense", "weighted", "RRF"}
    for q in range(invented.n_queries):
        one, typed, _ = eng.adhoc(
            invented.query_texts[q], p, sources, adhoc.judgements_of(invented, q), invented.query_ids[q]
        )
        assert set(typed) == set(ranks)
        for name, r in ranks.items():
            d_engine, s_engine = r.top(q, 10)
            d_typed, s_typed = typed[name].top(0, 10)
            assert d_typed.tolist() == d_engine.tolist(), (q, name)
            assert s_typed.tobytes() == s_engine.tobytes(), (q, name)  # the same bits
            assert typed[name].judged_rank.tolist() == r.judged_rank[judged_slice(invented, q)].tolist(), (q, name)
        if q in invented.evaluated:
            typed_ev = adhoc.evaluate(one, typed, [m.name for m in ev.metrics])
            at = int(np.flatnonzero(invented.evaluated == q)[0])
            for name in ranks:
                for m in ev.metrics:
                    assert typed_ev.values[name][m.name][0] == ev.values[name][m.name][at], (q, name, m.name)


def test_a_dataset_question_typed_verbatim_is_ranked_as_the_engine_ranks_it_on_any_processor(
    eng, invented, vectors, monkeypatch
):
    """The bundled model's bits differ between processors: an encoder giving slightly other vectors (as another CPU's
    would) changes nothing for a dataset question's own text, whose vector is the one the dense system holds; a new
    text is encoded."""
    real = dense.encode_questions
    noisy = []

    def another_processor(texts):
        v = real(texts)
        noisy.append(texts)
        return v + np.float32(0.002) * np.sign(np.sin(np.arange(v.size, dtype=np.float32))).reshape(v.shape)

    monkeypatch.setattr(dense, "encode_questions", another_processor)
    p = Params(members=("BM25", "dense"))
    ranks = eng.rankings(p, (vectors,))
    for q in range(invented.n_queries):
        _, typed, _ = eng.adhoc(invented.query_texts[q], p, (vectors,))
        d_engine, s_engine = ranks["dense"].top(q, 10)
        d_typed, s_typed = typed["dense"].top(0, 10)
        assert d_typed.tolist() == d_engine.tolist() and s_typed.tobytes() == s_engine.tobytes(), q
    assert noisy == []  # no dataset question was encoded again
    eng.adhoc("a question no dataset holds", p, (vectors,))
    assert noisy == [["a question no dataset holds"]]


def bm25_by_hand(ds, text, k1, b):
    """BM25 with Lucene's idf written out over the tokenised texts, in plain Python (an independent reference)."""
    docs = [Counter(tokenize(t)) for t in ds.doc_texts]
    n = len(docs)
    avg = sum(sum(c.values()) for c in docs) / n
    out = []
    for c in docs:
        length = sum(c.values())
        s = 0.0
        for t in dict.fromkeys(tokenize(text)):
            df = sum(1 for d in docs if t in d)
            if c[t]:
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                s += idf * c[t] * (k1 + 1) / (c[t] + k1 * (1 - b + b * length / avg))
        out.append(s)
    return np.array(out)


def test_adding_refund_to_q02_closes_its_vocabulary_gap_as_bm25_s_formula_says(eng, invented):
    q = invented.query_index["q02"]
    base = invented.query_texts[q]
    assert base == "can I get my money back"
    judged = adhoc.judgements_of(invented, q)
    one, before, scores = eng.adhoc(base, Params(), (), judged, "q02")
    assert scores.unknown == ("get", "money", "back")  # every word of q02 is missing from the corpus: a vocabulary gap
    assert before["BM25"].top(0)[0].size == 0 and before["BM25"].judged_rank.tolist() == [0, 0, 0]
    one, after, scores = eng.adhoc(base + " refund", Params(), (), judged, "q02")
    expected = bm25_by_hand(invented, base + " refund", 1.2, 0.75)
    np.testing.assert_allclose(scores.rows["BM25"], expected, rtol=0, atol=1e-12)
    order = sorted(
        (i for i in range(invented.n_docs) if expected[i] > 0), key=lambda i: (-expected[i], invented.doc_ids[i])
    )
    assert after["BM25"].top_ids(one, 0) == [invented.doc_ids[i] for i in order] == ["refund1"]
    assert after["BM25"].judged_rank.tolist() == [1, 0, 0]  # refund1 first; refund2, refund3 share no word
    values = adhoc.evaluate(one, after, ["hit@3", "mrr", "recall@5", "ndcg@5"]).values["BM25"]
    ideal = 2 + 2 / math.log2(3) + 1 / math.log2(4)
    assert values["hit@3"][0] == 1.0 and values["mrr"][0] == 1.0
    assert values["recall@5"][0] == pytest.approx(1 / 3, abs=1e-15)
    assert values["ndcg@5"][0] == pytest.approx(2 / ideal, abs=1e-15)


def test_lsa_s_cosines_of_a_typed_question_are_the_projection_written_out(eng, invented):
    text = "refund of a laptop battery"
    _, _, scores = eng.adhoc(text, Params(dims=4))
    fit = eng.lsa_fit(4)
    from retrieval.corpus.text import query_counts

    x = fit.model.tfidf.transform(query_counts(eng.index, [text]))
    v = x.toarray() @ fit.model.components.T  # sklearn's TruncatedSVD.transform, in numpy
    v = v / np.linalg.norm(v)
    np.testing.assert_allclose(scores.rows["LSA"], fit.model.doc_vectors @ v[0], rtol=0, atol=1e-12)


def test_marking_a_document_relevant_changes_the_metrics_by_the_formula(eng, invented):
    text = "support order days"
    one, ranks, _ = eng.adhoc(text)
    top = ranks["BM25"].top_ids(one, 0, 3)
    assert len(top) == 3
    one, ranks, _ = eng.adhoc(text, judgements=((top[2], 1),))
    v = adhoc.evaluate(one, ranks, ["mrr", "ndcg@5", "hit@2"]).values["BM25"]
    assert v["mrr"][0] == pytest.approx(1 / 3, abs=1e-15) and v["hit@2"][0] == 0.0
    assert v["ndcg@5"][0] == pytest.approx((1 / math.log2(4)) / 1.0, abs=1e-15)
    one, ranks, _ = eng.adhoc(text, judgements=((top[2], 1), (top[0], 2)))
    v = adhoc.evaluate(one, ranks, ["mrr", "ndcg@5"]).values["BM25"]
    assert v["mrr"][0] == 1.0
    assert v["ndcg@5"][0] == pytest.approx((2 + 1 / math.log2(4)) / (2 + 1 / math.log2(3)), abs=1e-15)
    # no relevant judgement: the question has no value (it would be left out of a mean), as metrics.per_query says
    one, ranks, _ = eng.adhoc(text, judgements=((top[0], 0),))
    assert adhoc.evaluate(one, ranks, ["mrr"]).values["BM25"]["mrr"].size == 0


def test_an_unknown_or_empty_question_says_so_and_ranks_nothing(eng):
    _, ranks, scores = eng.adhoc("zyzzyva quux")
    assert scores.terms == ("zyzzyva", "quux") and scores.unknown == ("zyzzyva", "quux")
    assert all(r.top(0)[0].size == 0 for r in ranks.values())
    _, ranks, scores = eng.adhoc("what is it")  # stop words only
    assert scores.terms == () and all(r.top(0)[0].size == 0 for r in ranks.values())
    for bad in ("", "   \n"):
        with pytest.raises(InputError, match="question: the text is empty"):
            eng.adhoc(bad)
    with pytest.raises(InputError, match=f"at most|the most a typed question may have is {adhoc.MAX_CHARS:,}"):
        eng.adhoc("a" * (adhoc.MAX_CHARS + 1))


def test_hostile_text_is_only_text(eng, invented):
    text = "**refund** <script>alert(1)</script> \x1b[31m [x](http://e.vil) :material/home:"
    one, ranks, scores = eng.adhoc(text)
    assert "refund" in scores.terms and ranks["BM25"].top_ids(one, 0, 1) == ["refund1"]


def test_judgements_are_checked(eng):
    with pytest.raises(InputError, match="judged twice"):
        eng.adhoc("refund", judgements=(("refund1", 1), ("refund1", 2)))
    with pytest.raises(InputError, match="grade must be a whole number"):
        eng.adhoc("refund", judgements=(("refund1", 1.5),))
    with pytest.raises(InputError, match=f"at most {adhoc.MAX_JUDGEMENTS}"):
        eng.adhoc("refund", judgements=tuple((f"d{i}", 1) for i in range(adhoc.MAX_JUDGEMENTS + 1)))
    one, ranks, _ = eng.adhoc("refund", judgements=(("not-in-the-corpus", 2), ("refund1", 1)))
    assert ranks["BM25"].judged_rank.tolist() == [0, 1]  # kept, never retrieved (its ideal gain still counts)
    v = adhoc.evaluate(one, ranks, ["ndcg@5"]).values["BM25"]["ndcg@5"][0]
    assert v == pytest.approx(1 / (2 + 1 / math.log2(3)), abs=1e-15)


def test_uploaded_vectors_and_runs_cannot_score_a_typed_question_and_it_says_why(eng, invented, vectors):
    other = embeddings.align(
        embeddings.from_arrays(
            "my-model", invented.doc_ids, vectors.doc_vectors, invented.query_ids, vectors.query_vectors
        ),
        invented,
    )
    _, ranks, scores = eng.adhoc("refund", Params(members=("BM25", "dense")), (other,))
    assert "dense" not in ranks and "weighted" not in ranks and "RRF" not in ranks
    assert "my-model" in scores.skipped["dense"] and "dense" in scores.skipped["weighted"]
    run = parse_run(b"q01 Q0 refund1 1 3.0 es\n", "es.trec", "es")
    _, ranks, scores = eng.adhoc("refund", Params(members=("BM25", "es")), (run,))
    assert set(ranks) == {"BM25", "LSA"} and "uploaded run" in scores.skipped["RRF"]
    _, ranks, scores = eng.adhoc("refund", Params(), (vectors, run))  # the article's fusion is unaffected by them
    assert set(ranks) == {"BM25", "LSA", "dense", "weighted", "RRF"} and not scores.skipped


def test_a_typed_question_is_cached_in_the_engine_s_bounded_memo(eng):
    assert engine.CACHE_SIZES["adhoc"] > 0 and engine.CACHE_SIZES["adhoc ranks"] > 0
    first = eng.adhoc("refund within days", Params(k1=0.9))
    again = eng.adhoc("refund within days", Params(k1=0.9))
    assert again[2] is first[2] and again[1] is first[1]
    judged = eng.adhoc("refund within days", Params(k1=0.9), judgements=(("refund1", 1),))
    assert judged[2] is first[2] and judged[1] is not first[1]  # new judgements re-rank, never re-score
    for i in range(engine.CACHE_SIZES["adhoc"] + 2):
        eng.adhoc(f"refund {i}")
    assert eng.adhoc("refund within days", Params(k1=0.9))[2] is not first[2]  # evicted: the memo is bounded


def test_the_metrics_are_the_library_s(eng, invented):
    one, ranks, _ = eng.adhoc("password reset", judgements=(("pwd1", 2),))
    ms = metrics.parse_list(["ndcg@5", "mrr"])
    assert adhoc.evaluate(one, ranks, ["ndcg@5", "mrr"]).values == score(one, ranks, ms).values


def test_a_fusion_parameter_re_fuses_the_typed_question_without_re_scoring_it(eng):
    """alpha, RRF k and the members change the fusions only: the rows of scores are the same arrays (the fusions
    are checked against the engine's runs in the tests above); k1 scores again."""
    a = eng.adhoc("refund within days support", Params(alpha=0.3))[2]
    b = eng.adhoc("refund within days support", Params(alpha=0.8, rrf_k=5.0))[2]
    assert a.rows is b.rows and a.params.alpha == 0.3 and b.params.alpha == 0.8
    c = eng.adhoc("refund within days support", Params(k1=0.7))[2]
    assert c.rows is not a.rows and not np.array_equal(c.rows["BM25"], a.rows["BM25"])  # k1 re-scores BM25
    only_bm25 = eng.adhoc("refund within days support", Params(members=("BM25", "es")))[2]
    assert only_bm25.rows is a.rows and "uploaded run" in only_bm25.skipped["weighted"] and "weighted" not in a.skipped


def test_the_one_question_dataset_borrows_the_corpus_s_id_values(invented):
    """The typed question's dataset holds the corpus's documents: their id order and index are the corpus's own
    (not sorted again per text and per judgement), and equal what the dataset would compute."""
    one = adhoc.one_question(invented, "refund", (("refund1", 2),))
    assert one.tie_key is invented.tie_key and one.doc_index is invented.doc_index
    order = sorted(range(invented.n_docs), key=lambda i: invented.doc_ids[i])
    assert [int(one.tie_key[i]) for i in order] == list(range(invented.n_docs))
