"""LSA against the article's pipeline built directly with scikit-learn (TfidfVectorizer + TruncatedSVD)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import TfidfVectorizer

from retrieval.core.errors import InputError
from retrieval.corpus.dataset import assemble
from retrieval.corpus.text import build_index, query_counts, tokenize
from retrieval.retrievers import lsa


def article_lsa(docs, questions, dims):
    """The article's listing: TF-IDF with its tokeniser, arpack SVD with seed 0, unit rows, cosine."""
    tf = TfidfVectorizer(tokenizer=tokenize, lowercase=False, token_pattern=None)
    x = tf.fit_transform(docs)
    svd = TruncatedSVD(n_components=dims, random_state=0, algorithm="arpack")
    z = svd.fit_transform(x)
    zn = z / np.maximum(np.linalg.norm(z, axis=1, keepdims=True), 1e-12)
    out = []
    for question in questions:
        q = svd.transform(tf.transform([question]))
        n = np.linalg.norm(q)
        out.append(zn @ (q[0] / n) if n > 1e-12 else np.zeros(len(docs)))
    return np.array(out)


def ours(docs, questions, dims, algorithm="auto"):
    index = build_index(docs)
    model = lsa.fit(index, dims, algorithm)
    qv = lsa.query_vectors(model, query_counts(index, questions))
    return model, np.vstack([c for _, c in lsa.score_chunks(model, qv, size=3)])


@pytest.mark.parametrize("dims", [2, 6, 12])
def test_invented_corpus_matches_the_article_pipeline(invented, dims):
    docs, questions = list(invented.doc_texts), list(invented.query_texts)
    model, got = ours(docs, questions, dims)
    assert (model.dims, model.requested_dims, model.algorithm, model.note) == (dims, dims, "arpack", "")
    want = article_lsa(docs, questions, dims)
    np.testing.assert_allclose(got, want, atol=1e-9, rtol=0)


def test_invented_q01_top3_and_q02_nothing(invented):
    index = build_index(invented.doc_texts)
    model = lsa.fit(index)
    r = lsa.search(invented, model, lsa.query_vectors(model, query_counts(index, invented.query_texts)))
    assert r.top_ids(invented, 0, 3) == ["sso1", "pricing1", "pricing2"]
    assert r.top_ids(invented, 1) == []
    assert r.warnings == ()


def test_cosines_are_bounded_and_document_vectors_unit():
    docs = ["apple pie with cream", "pear tart", "apple crumble", "cream tea", "green tea and lemon", "lemon tart"]
    model, got = ours(docs, ["apple tart", "tea", "lemon cream pie"], 3)
    assert np.all(np.abs(got) <= 1 + 1e-12)
    norms = np.linalg.norm(model.doc_vectors, axis=1)
    np.testing.assert_allclose(norms[norms > 0], 1.0, atol=1e-12)


def test_dims_above_the_maximum_are_lowered_with_a_note(invented):
    index = build_index(invented.doc_texts)
    top = min(index.n_docs, len(index.vocabulary)) - 1
    assert lsa.max_dims(index) == top == 27
    model = lsa.fit(index, 500)
    assert (model.dims, model.requested_dims) == (top, 500)
    assert "500" in model.note and str(top) in model.note
    qv = lsa.query_vectors(model, query_counts(index, invented.query_texts))
    r = lsa.search(invented, model, qv)
    assert len(r.warnings) == 1 and "500" in r.warnings[0]
    # the lowered model is the article's pipeline at the largest allowed d
    got = np.vstack([c for _, c in lsa.score_chunks(model, qv)])
    np.testing.assert_allclose(got, article_lsa(list(invented.doc_texts), list(invented.query_texts), top), atol=1e-9)


def test_small_corpus_limit_is_documents_minus_one():
    docs = ["apple pie", "pear tart", "cream tea"]  # 3 documents, 6 terms: at most 2 dimensions
    model, _ = ours(docs, ["apple"], 6)
    assert model.dims == 2 and model.note


def test_corpus_too_small_for_lsa_returns_nothing_and_says_so():
    ds = assemble("one", [("d1", "apple pie")], [("q", "apple")], [("q", "d1", 1)])
    index = build_index(ds.doc_texts)
    model = lsa.fit(index, 6)
    assert model.dims == 0 and model.note
    r = lsa.search(ds, model, lsa.query_vectors(model, query_counts(index, ds.query_texts)))
    assert r.top_ids(ds, 0) == [] and r.warnings


def test_question_without_known_term_scores_nothing(invented):
    index = build_index(invented.doc_texts)
    model = lsa.fit(index)
    qv = lsa.query_vectors(model, query_counts(index, ["zzzz qqqq", "the of and", "how much does the Pro plan cost"]))
    assert not qv[0].any() and not qv[1].any()
    assert np.linalg.norm(qv[2]) == pytest.approx(1.0)
    scores = np.vstack([c for _, c in lsa.score_chunks(model, qv)])
    assert not scores[0].any() and not scores[1].any()


@pytest.mark.parametrize("dims", [0, -1, 2.5, True])
def test_bad_dims_rejected_naming_the_parameter(invented, dims):
    with pytest.raises(InputError, match="dims"):
        lsa.fit(build_index(invented.doc_texts), dims)


def test_bad_algorithm_rejected(invented):
    with pytest.raises(InputError, match="algorithm"):
        lsa.fit(build_index(invented.doc_texts), 6, "lanczos")


def test_randomized_solver_is_seeded(invented):
    index = build_index(invented.doc_texts)
    a = lsa.fit(index, 6, "randomized")
    b = lsa.fit(index, 6, "randomized")
    assert a.algorithm == "randomized"
    np.testing.assert_array_equal(a.doc_vectors, b.doc_vectors)


@pytest.mark.parametrize("by_term", [False, True])
@pytest.mark.parametrize("n_docs, dims", [(300, 6), (300, 1), (900, 8)])
def test_the_randomized_fit_is_scikit_learn_s_to_the_last_bit(mid_corpus, n_docs, dims, by_term):
    """lsa.fit's randomized solver runs scikit-learn's randomized SVD over `Tfidf`, whose products are the compiled
    kernel's over threads: the components and the projected documents equal TruncatedSVD(randomized)'s exactly
    (both products, X @ Q and X.T @ Q, and Q.T @ X, in scipy's order of additions), its TF-IDF made from the counts
    (by column from BM25's columns, or transposed)."""
    from retrieval.retrievers import bm25

    index = build_index(mid_corpus.doc_texts[:n_docs])
    got = lsa.fit(index, dims, "randomized", block=True, by_term=bm25.prepare(index).counts if by_term else None)
    x = lsa.TfidfTransformer().fit_transform(index.counts)
    svd = TruncatedSVD(n_components=dims, algorithm="randomized", random_state=0)
    z = svd.fit_transform(x)
    assert got.algorithm == "randomized"
    np.testing.assert_array_equal(got.components, svd.components_)
    np.testing.assert_array_equal(got.raw, z)
    np.testing.assert_array_equal(lsa.project(got, index.counts[:7]), svd.transform(x[:7]))


@pytest.mark.parametrize("shape, dims", [((400, 150), 5), ((120, 500), 7), ((90, 90), 1)])
def test_the_written_out_randomized_svd_is_truncated_svd_s_to_the_last_bit(shape, dims):
    """lsa.randomized against TruncatedSVD(randomized) on matrices taller than wide (no transpose), wider than tall
    (scikit-learn takes the transpose) and square: components and projected documents equal exactly."""
    import scipy.sparse as sp

    x = sp.random(*shape, density=0.08, random_state=shape[0], format="csr")
    x.data = np.round(x.data * 9) / 3 + 0.25  # some equal values: pivots decided by ties
    vt, z = lsa.randomized(x, dims, 0)
    svd = TruncatedSVD(n_components=dims, algorithm="randomized", random_state=0)
    want = svd.fit_transform(x)
    np.testing.assert_array_equal(vt, svd.components_)
    np.testing.assert_array_equal(z, want)


@pytest.mark.parametrize("m, n", [(500, 18), (40, 40), (18, 30), (1, 1)])
def test_lu_permute_l_is_scipy_s_to_the_last_bit(m, n):
    """The normaliser of the power iterations: LAPACK's getrf on a column-major copy, the unit lower rows put back
    in pivot order, equal to scipy.linalg.lu(permute_l=True) (which a wide or row-major input falls back to)."""
    import scipy.linalg as sl

    rng = np.random.default_rng(m * 100 + n)
    a = rng.standard_normal((m, n))
    a[rng.integers(0, m, size=m // 3)] *= 50  # large rows: pivoting moves many of them
    want = sl.lu(a, permute_l=True, check_finite=False)[0]
    got = lsa.lu_permute_l(np.asfortranarray(a))
    assert got.flags.c_contiguous and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(lsa.lu_permute_l(a.copy()), want)


def test_the_operator_s_products_are_scipy_s_to_the_last_bit():
    """Tfidf @ Q, Tfidf.T @ Q and Q.T @ Tfidf against scipy's sparse products, with signed zeros, empty rows and
    columns, unsorted stored entries, rows longer than eight entries and a single column."""
    import scipy.sparse as sp

    rng = np.random.default_rng(5)
    x = sp.random(60, 45, density=0.1, random_state=6, format="csr") * 3 - sp.random(
        60, 45, density=0.05, random_state=7
    )
    keep = np.ones(60)
    keep[5] = 0.0  # an empty row
    x = sp.csr_matrix(sp.diags(keep) @ x)
    x.eliminate_zeros()
    x.data[::5] = -0.0
    perm = sp.csr_matrix((x.data[::-1].copy(), x.indices[::-1].copy(), x.indptr.copy()), shape=x.shape)  # the entries
    # reversed end to end: other rows, unsorted, a column twice in a row (scipy adds both, in stored order)
    long_rows = sp.csr_matrix(
        sp.random(60, 45, density=0.3, random_state=8) - 0.5 * sp.random(60, 45, density=0.15, random_state=9)
    )
    lengths = np.diff(long_rows.indptr)  # rows of 11 to 27 entries: sparse_dense adds eight at a time, then the rest
    assert set(lengths // 8) == {1, 2, 3} and set(lengths % 8) == set(range(8))  # one by one, in the same order
    for m in (x, perm, long_rows):
        a = lsa.Tfidf.of(m)
        for cols in (1, 4, 18):
            q = rng.normal(size=(45, cols))
            q[3] = -0.0
            q2 = rng.normal(size=(60, cols))
            for got, want in ((a @ q, m @ q), (a.T @ q2, m.T @ q2), (q2.T @ a, q2.T @ m)):
                np.testing.assert_array_equal(got, want)
                assert np.array_equal(np.signbit(got), np.signbit(want))


def test_the_operator_of_counts_is_the_transformer_s_tf_idf_to_the_last_bit():
    """Tfidf.of_counts (TF-IDF by the threads, by row and by column) against Tfidf.of(TfidfTransformer's
    fit_transform): the same arrays, bit for bit, with an empty row, a term in no document, unsorted stored
    entries, counts up to 40 and the columns given or transposed."""
    import scipy.sparse as sp
    from sklearn.feature_extraction.text import TfidfTransformer

    rng = np.random.default_rng(11)
    dense = rng.integers(0, 41, size=(70, 50)) * (rng.random((70, 50)) < 0.15)
    dense[9] = 0  # an empty row
    dense[:, 7] = 0  # a term in no document
    c = sp.csr_matrix(dense.astype(np.int32))
    order = np.concatenate([np.arange(a, b)[::-1] for a, b in zip(c.indptr[:-1], c.indptr[1:])])
    shuffled = sp.csr_matrix((c.data[order], c.indices[order], c.indptr), shape=c.shape)  # each row's entries reversed
    assert not shuffled.has_sorted_indices and (shuffled.toarray() == dense).all()
    for counts in (c, shuffled):
        transformer = TfidfTransformer()
        want = lsa.Tfidf.of(transformer.fit_transform(counts))
        columns = sp.csc_matrix(counts)
        columns.sort_indices()
        for by_term in (None, columns):
            got = lsa.Tfidf.of_counts(counts, transformer.idf_, by_term)
            assert got.shape == want.shape
            for g, w in ((got.rows, want.rows), (got.cols, want.cols)):
                for a, b in zip(g, w):
                    np.testing.assert_array_equal(a, b)


def test_search_ties_by_doc_id_and_positive_only():
    # duplicated documents have equal cosines: the smaller id first, whatever the corpus order
    docs = [
        ("zz", "apple pie cream"),
        ("aa", "apple pie cream"),
        ("mm", "green tea lemon"),
        ("bb", "pear tart"),
        ("cc", "lemon tart"),
    ]
    ds = assemble("t", docs, [("q", "apple pie")], [("q", "aa", 1)])
    index = build_index(ds.doc_texts)
    model = lsa.fit(index, 3)
    qv = lsa.query_vectors(model, query_counts(index, ds.query_texts))
    r = lsa.search(ds, model, qv)
    ids = r.top_ids(ds, 0)
    assert ids[:2] == ["aa", "zz"]
    cos = dict(zip(ds.doc_ids, (qv @ model.doc_vectors.T)[0]))
    assert ids == sorted((d for d in cos if cos[d] > 1e-9), key=lambda d: (-cos[d], d))


# ------------------------------------------------------------------------------------------- d as a prefix


def test_small_corpora_keep_one_direct_fit_per_d_bit_for_bit(invented):
    """Below PREFIX_ABOVE (the article's corpus, Cranfield) the engine fits each d directly: the document vectors
    and question vectors are, to the last bit, scikit-learn's TF-IDF + arpack SVD (seed 0) made unit rows."""
    from sklearn.feature_extraction.text import TfidfTransformer

    from retrieval.engine.engine import Engine

    e = Engine(invented)
    assert e.index.counts.nnz <= lsa.PREFIX_ABOVE
    for d in (1, 6, 12):
        assert lsa.block_for(e.index, d) is None
        f = e.lsa_fit(d)
        tf = TfidfTransformer()
        svd = TruncatedSVD(n_components=d, algorithm="arpack", random_state=0)
        z = svd.fit_transform(tf.fit_transform(e.index.counts))
        want = z / np.maximum(np.linalg.norm(z, axis=1, keepdims=True), 1e-12)
        assert np.array_equal(f.model.doc_vectors, want) and f.model.note == ""
        q = svd.transform(tf.transform(e.qcounts))
        n = np.linalg.norm(q, axis=1, keepdims=True)
        assert np.array_equal(f.qvec, np.where(n > 1e-12, q / np.where(n > 1e-12, n, 1.0), 0.0))


@pytest.fixture(scope="module")
def mid_corpus():
    """A mid-size synthetic corpus (bench/synthetic.py: Zipfian words, 1,500 documents, 40 questions)."""
    import sys

    from conftest import ROOT

    sys.path.insert(0, str(ROOT / "bench"))
    import synthetic

    return synthetic.generate(1500, n_queries=40)


def test_a_large_corpus_serves_every_d_as_a_prefix_of_one_fit(mid_corpus, monkeypatch):
    """With the prefix path on (PREFIX_ABOVE lowered to this corpus), d = 6, 1, 8 all come from one arpack fit
    at 8 dimensions, and each agrees with a direct fit at d: every component to a cosine above 0.99999 (the
    module's stated tolerance), every document's unit vector too; d = 9 and 16 from the next block's fit."""
    from retrieval.engine.engine import Engine

    monkeypatch.setattr(lsa, "PREFIX_ABOVE", 0)
    e = Engine(mid_corpus)
    fits = []
    monkeypatch.setattr(lsa, "fit", _recording(lsa.fit, fits))
    for d in (6, 1, 8, 9, 16):
        block_dims = 8 if d <= 8 else 16
        assert lsa.block_for(e.index, d) == block_dims
        got = e.lsa_fit(d).model
        direct = lsa.TruncatedSVD(n_components=d, algorithm="arpack", random_state=0).fit(
            lsa.TfidfTransformer().fit_transform(e.index.counts)
        )
        block = e.memo.get("block", block_dims, lambda: None)
        assert got.dims == d and got.doc_vectors.shape == (mid_corpus.n_docs, d)
        assert np.abs((block.components[:d] * direct.components_).sum(axis=1)).min() > 0.99999
        z = direct.transform(lsa.TfidfTransformer().fit_transform(e.index.counts))
        want = z / np.maximum(np.linalg.norm(z, axis=1, keepdims=True), 1e-12)
        assert np.abs((got.doc_vectors * want).sum(axis=1)).min() > 0.99999
        assert f"first {d} component{'s' * (d != 1)} of one {block_dims}-dimension SVD" in got.note
        # the questions: the block's projection, cut at d, is the truncated model's own, to the last bit
        assert np.array_equal(e.lsa_fit(d).qvec, lsa.query_vectors(got, e.qcounts))
    assert fits == [8, 16]  # one SVD for each block
    assert lsa.block_for(e.index, 17) == 32 and lsa.block_for(e.index, 200) == 200


def _recording(fit, seen):
    def wrapped(index, dims, *args, **kw):
        seen.append(dims)
        return fit(index, dims, *args, **kw)

    return wrapped
