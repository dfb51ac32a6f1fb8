"""The tokeniser: the index's fast byte tokens against the article's regex, on every kind of text."""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest

from retrieval.corpus import text

VARIED = [
    "",
    "   ",
    "The cat sat on the mat.",
    "ÉCOLE été Straße ǅemal ﬁne café naïve",  # accents, ß, a titlecase digraph, a ligature
    "İstanbul KELVIN \u212a 100\u212a",  # lower-cased to ASCII plus a combining dot; the Kelvin sign to k
    "x²+y³=z¹ ½ ① ٣ ૭ 12,345.67 0xFF 1e-9",  # digits beyond ASCII are no [0-9]
    "ΣΊΣΥΦΟΣ ОДИН 中文字符 한국어 עברית العربية",  # other scripts: separators
    "emoji 😀😃 in\tside\nnew\r\nlines\x00nul\x1fctl\x7fdel\u200bzero-width\u00a0nbsp",
    "don't co-operate e-mail a.b.c (x) [y] {z} <tag> \"q\" 'q' #hash @at $5 50% a&b a|b a~b a^b",
    "lone \ud800 surrogate \udfff here",
    "MiXeD CaSe ABC123def 9lives",
    "-" * 50 + "a" + "." * 50,
    "word " * 200,
]


def regex_tokens(t: str) -> list[str]:
    """The article's tokeniser before any optimisation: `[a-z0-9]+` over the lower-cased text."""
    return re.findall(r"[a-z0-9]+", t.lower())


@pytest.mark.parametrize("t", VARIED)
def test_byte_tokens_equal_the_regex(t):
    (got,) = text.byte_tokens([t])
    assert [w.decode("ascii") for w in got] == regex_tokens(t)


def test_byte_tokens_equal_the_regex_on_random_unicode():
    rng = np.random.default_rng(7)
    pools = [
        range(0x20, 0x7F),
        range(0x80, 0x250),
        range(0x370, 0x400),
        range(0x2000, 0x2200),
        range(0x1F600, 0x1F650),
        [0x130, 0x212A, 0x1E9E, 0xFB01, 0x0307, 0x00DF],
    ]
    chars = [chr(c) for pool in pools for c in pool]
    texts = ["".join(rng.choice(chars, size=rng.integers(0, 80))) for _ in range(2000)]
    got = text.byte_tokens(texts)
    assert [[w.decode("ascii") for w in ws] for ws in got] == [regex_tokens(t) for t in texts]


@pytest.mark.parametrize("method", ["python", "compiled"])
def test_the_index_counts_the_regex_tokens_minus_stop_words(method):
    """build_index's count matrix, vocabulary and lengths are the plain per-document counts of `tokenize`, whichever
    way the tokens are looked up."""
    docs = VARIED + ["the of a", "Straße STRASSE strasse", "9 9 9 nine"]
    idx = text.build_index(docs, method=method)
    counts = [Counter(text.tokenize(d)) for d in docs]
    vocab = sorted(set().union(*counts))
    assert idx.terms.tolist() == vocab and idx.vocabulary == {t: i for i, t in enumerate(vocab)}
    want = np.array([[c[t] for t in vocab] for c in counts])
    assert np.array_equal(idx.counts.toarray(), want) and idx.counts.dtype == np.int32
    assert idx.doc_len.tolist() == [float(sum(c.values())) for c in counts]
    assert "the" not in idx.vocabulary and "strasse" in idx.vocabulary and "stra" in idx.vocabulary


@pytest.mark.parametrize("method", ["python", "compiled"])
def test_an_index_of_empty_documents_has_an_empty_vocabulary(method):
    idx = text.build_index(["", "  ", "the of"], method=method)
    assert idx.counts.shape == (3, 0) and idx.vocabulary == {} and idx.doc_len.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.slow
def test_the_compiled_tokeniser_equals_the_dictionary_one_on_a_growing_vocabulary():
    """The compiled table starts small (256 terms, 4 KB of bytes) and grows mid-batch, across batches and for one
    document longer than everything before it; its ids, counts and terms equal the dictionary path's, and the
    hash collisions of a 32-bit FNV-1a (equal hashes, other bytes) are told apart by the bytes."""
    rng = np.random.default_rng(11)
    words = ["".join(rng.choice(list("abcdefghij0123456789"), size=rng.integers(1, 9))) for _ in range(5000)]
    docs = [
        " ".join(rng.choice(words, size=rng.integers(0, 40))) + " É " + ("of the " * int(rng.integers(0, 3)))
        for _ in range(3000)
    ]
    docs.append(" ".join(words) + " " + "x" * 70_000)  # a long document, and a term of 70,000 bytes
    collide = ["costarring", "liquid", "declinate", "macallums"]  # pairs with one FNV-1a 32-bit hash
    assert text_hash(collide[0]) == text_hash(collide[1]) and text_hash(collide[2]) == text_hash(collide[3])
    docs += [" ".join(collide), "liquid costarring liquid"]
    small = text.Batching(max_docs=700, max_chars=60_000)
    assert len(list(text.batches(docs, small))) > 4
    a, b = (
        text.build_index(docs, method="compiled", batching=small),
        text.build_index(docs, method="python", batching=small),
    )
    assert a.vocabulary == b.vocabulary and a.terms.tolist() == b.terms.tolist()
    assert (a.counts != b.counts).nnz == 0 and a.counts.has_sorted_indices and a.counts.dtype == np.int32
    np.testing.assert_array_equal(a.doc_len, b.doc_len)
    row = a.counts[len(docs) - 1]
    assert {a.terms[j]: int(c) for j, c in zip(row.indices, row.data)} == {"liquid": 2, "costarring": 1}


@pytest.mark.slow
def test_a_batch_tokenised_in_two_halves_equals_one_pass(monkeypatch):
    """Above batching.split_above bytes a batch's halves are tokenised at once (the second, on a worker thread, into a
    table of its own, merged after): the index equals one pass's and the dictionary path's, across batches whose table
    grows, with hash collisions, a long document, halves of stop words or nothing at all."""
    from retrieval.core import workers

    rng = np.random.default_rng(12)
    words = ["".join(rng.choice(list("abcdefghij0123456789"), size=rng.integers(1, 9))) for _ in range(4000)]
    docs = [" ".join(rng.choice(words, size=rng.integers(0, 40))) + " of the" for _ in range(2500)]
    docs[1200:1260] = ["liquid costarring"] * 30 + ["declinate macallums"] * 30  # FNV-1a collisions, both halves
    docs += ["the of a", "", "x" * 5000 + " new words here", "of", ""]  # a last batch: stop words, empty texts
    monkeypatch.setattr(workers, "threads", lambda: 2)
    halves = []
    real = workers.submit
    monkeypatch.setattr(workers, "submit", lambda *a: halves.append(1) or real(*a))
    whole = text.Batching(max_docs=900, max_chars=50_000, split_above=10**12)
    one = text.build_index(docs, method="compiled", batching=whole)
    assert halves == []
    two = text.build_index(docs, method="compiled", batching=whole._replace(split_above=0))
    assert len(halves) == len(list(text.batches(docs, whole)))  # every batch split
    for a in (two, text.build_index(docs, method="python", batching=whole)):
        assert a.vocabulary == one.vocabulary and a.terms.tolist() == one.terms.tolist()
        assert (a.counts != one.counts).nnz == 0 and a.counts.has_sorted_indices
        np.testing.assert_array_equal(a.doc_len, one.doc_len)


def text_hash(word: str) -> int:
    """FNV-1a, 32 bits, written out: h = (h xor byte) * 16777619 mod 2**32 from 2166136261."""
    h = 2166136261
    for c in word.encode("ascii"):
        h = ((h ^ c) * 16777619) % 2**32
    return h


def test_auto_takes_the_compiled_tokeniser_only_where_it_pays(monkeypatch):
    """ "auto" (`text.method_for`): the dictionary path for a small corpus, and for a mid-size one while the compiled
    kernel is not loaded in this process (loading it from numba's cache costs about 0.4 s); the compiled path once
    it is, or for a corpus large enough to pay for loading it; never with the JIT off (it would run as plain
    Python). Both give the same index."""
    monkeypatch.setattr(text, "COMPILED_ABOVE", 100)
    monkeypatch.setattr(text, "LOAD_PAYS_ABOVE", 10_000)
    small, mid, large = ["a b c"] * 10, ["alpha beta gamma"] * 20, ["alpha beta gamma"] * 700
    assert [text.method_for(t, "on disk") for t in (small, mid, large)] == ["python", "python", "compiled"]
    assert [text.method_for(t, "loaded") for t in (small, mid, large)] == ["python", "compiled", "compiled"]
    assert [text.method_for(t, "") for t in (small, mid, large)] == ["python", "python", "python"]
    for texts in (small, mid, large):
        auto, python = text.build_index(texts), text.build_index(texts, method="python")
        assert auto.vocabulary == python.vocabulary and (auto.counts != python.counts).nnz == 0
