"""The tokeniser: the index's fast byte tokens against the article's regex, on every kind of text."""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest

from retrieval import text

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
    (got,) = text._byte_tokens([t])
    assert [w.decode("ascii") for w in got] == regex_tokens(t)


def test_byte_tokens_equal_the_regex_on_random_unicode():
    rng = np.random.default_rng(7)
    pools = [range(0x20, 0x7F), range(0x80, 0x250), range(0x370, 0x400), range(0x2000, 0x2200), range(0x1F600, 0x1F650),
             [0x130, 0x212A, 0x1E9E, 0xFB01, 0x0307, 0x00DF]]
    chars = [chr(c) for pool in pools for c in pool]
    texts = ["".join(rng.choice(chars, size=rng.integers(0, 80))) for _ in range(2000)]
    got = text._byte_tokens(texts)
    assert [[w.decode("ascii") for w in ws] for ws in got] == [regex_tokens(t) for t in texts]


def test_the_index_counts_the_regex_tokens_minus_stop_words():
    """build_index's count matrix, vocabulary and lengths are the plain per-document counts of `tokenize`."""
    docs = VARIED + ["the of a", "Straße STRASSE strasse", "9 9 9 nine"]
    idx = text.build_index(docs)
    counts = [Counter(text.tokenize(d)) for d in docs]
    vocab = sorted(set().union(*counts))
    assert idx.terms.tolist() == vocab and idx.vocabulary == {t: i for i, t in enumerate(vocab)}
    want = np.array([[c[t] for t in vocab] for c in counts])
    assert np.array_equal(idx.counts.toarray(), want) and idx.counts.dtype == np.int32
    assert idx.doc_len.tolist() == [float(sum(c.values())) for c in counts]
    assert "the" not in idx.vocabulary and "strasse" in idx.vocabulary and "stra" in idx.vocabulary


def test_an_index_of_empty_documents_has_an_empty_vocabulary():
    idx = text.build_index(["", "  ", "the of"])
    assert idx.counts.shape == (3, 0) and idx.vocabulary == {} and idx.doc_len.tolist() == [0.0, 0.0, 0.0]
