"""The article's tokeniser and the document-term count matrix every retriever is built on."""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from itertools import chain, count
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
import Stemmer
from numba import njit

from ..core import workers
from ..core.params import SPECS

TOKEN_PATTERN = r"[a-z0-9]+"

STOP_WORDS: frozenset[str] = frozenset(
    "the a an of to in on for and or but that this is are was be can i my me you your do does did how what "
    "where when which much many it its with at by from as if there not no s".split()
)

LUCENE_STOP_WORDS: frozenset[str] = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these they "
    "this to was will with".split()
)  # Lucene's English stop set (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET, Elasticsearch's `_english_`): 33 words

STOP_LISTS: dict[str, frozenset[str]] = {"article": STOP_WORDS, "lucene": LUCENE_STOP_WORDS, "none": frozenset()}
STEMMERS: dict[str, str | None] = {"none": None, "snowball": "english", "porter": "porter"}  # PyStemmer's names
assert tuple(STOP_LISTS) == SPECS["stopwords"].options and tuple(STEMMERS) == SPECS["stemmer"].options

_TOKEN_RE = re.compile(TOKEN_PATTERN)


@dataclass(frozen=True)
class Analysis:
    """What becomes of a text's `[a-z0-9]+` tokens (lower-cased) before they are counted, as in an Elasticsearch
    analyzer: the stop words of `stopwords` dropped, then each word stemmed by `stemmer`.

    * stopwords: "article" (the article's 45 words, the default), "lucene" (Lucene's English stop set, 33
      words) or "none";
    * stemmer: "none" (the default), "snowball" (Snowball's English stemmer, "Porter2") or "porter" (Porter's
      1980 algorithm), both Snowball's C stemmers through PyStemmer.

    The default is the article's analysis, so its tables stay exact.

    >>> Analysis("snowball").analyse("Refunds are refunded")
    ['refund', 'refund']
    >>> Analysis("none", "none").analyse("Refunds are refunded")
    ['refunds', 'are', 'refunded']
    """

    stemmer: str = "none"
    stopwords: str = "article"

    def __post_init__(self) -> None:
        for name in ("stemmer", "stopwords"):
            SPECS[name].check(getattr(self, name))

    @property
    def stop_words(self) -> frozenset[str]:
        """The stop words this analysis drops."""
        return STOP_LISTS[self.stopwords]

    @property
    def is_article(self) -> bool:
        """True for the article's analysis (no stemmer, its 45 stop words)."""
        return self == ARTICLE_ANALYSIS

    def stems(self, words: list[str]) -> list[str]:
        """Each word's stem (the words themselves without a stemmer)."""
        algorithm = STEMMERS[self.stemmer]
        return list(words) if algorithm is None else _stemmer(algorithm).stemWords(words)

    def analyse(self, text: str) -> list[str]:
        """The text's terms in text order: tokens, the stop words dropped, each one stemmed."""
        return self.stems([t for t in _TOKEN_RE.findall(text.lower()) if t not in self.stop_words])

    def origins(self, text: str) -> dict[str, tuple[str, ...]]:
        """Each of the text's terms (in text order) with the text's words it came from (a stem's words, else itself).

        >>> Analysis("snowball").origins("refunds and a refund")
        {'refund': ('refunds', 'refund')}
        """
        words = [t for t in _TOKEN_RE.findall(text.lower()) if t not in self.stop_words]
        out: dict[str, list[str]] = {}
        for word, term in zip(words, self.stems(words)):
            seen = out.setdefault(term, [])
            if word not in seen:
                seen.append(word)
        return {t: tuple(ws) for t, ws in out.items()}

    def describe(self) -> str:
        """'no stemmer, the article's stop words', 'Snowball English stemmer, Lucene's stop words'."""
        stem = {"none": "no stemmer", "snowball": "Snowball English stemmer", "porter": "Porter stemmer"}[self.stemmer]
        stop = {
            "article": "the article's 45 stop words",
            "lucene": "Lucene's 33 English stop words",
            "none": "no stop words",
        }[self.stopwords]
        return f"{stem}, {stop}"


ARTICLE_ANALYSIS = Analysis()


@functools.cache
def _stemmer(algorithm: str) -> Stemmer.Stemmer:
    """One PyStemmer stemmer per algorithm (it caches stems itself)."""
    return Stemmer.Stemmer(algorithm)


def tokenize(text: str, analysis: Analysis = ARTICLE_ANALYSIS) -> list[str]:
    """Lower-case `[a-z0-9]+` tokens minus the stop words, in text order (the article's `token`); another
    `analysis` drops its stop words and stems."""
    if analysis.is_article:
        return [t for t in _TOKEN_RE.findall(text.lower()) if t not in STOP_WORDS]
    return analysis.analyse(text)


class StemWords(NamedTuple):
    """With a stemmer, the corpus's words before stemming (sorted) and, per stem column j, its words:
    words[order[ptr[j]:ptr[j + 1]]]."""

    words: np.ndarray
    order: np.ndarray
    ptr: np.ndarray


@dataclass(frozen=True, eq=False)
class TermIndex:
    """Documents as a sparse document x term count matrix, built once so parameter changes never re-tokenise."""

    vocabulary: dict[str, int]
    terms: np.ndarray  # term strings, column order (sorted)
    counts: sp.csr_matrix  # documents x terms, int32 counts
    doc_len: np.ndarray  # tokens per document (after stop words), float64
    analysis: Analysis = ARTICLE_ANALYSIS  # how its terms came from the texts (and how a question's words must)
    sources: StemWords | None = None  # with a stemmer: each stem's words in the corpus

    def analyse(self, text: str) -> list[str]:
        """A text's terms as this index counts them (its analysis), in text order; unknown terms included."""
        return tokenize(text, self.analysis)

    def words_of(self, term: str) -> tuple[str, ...]:
        """The corpus's words a term stands for, sorted: the words a stem came from ((term,) without a stemmer, or
        for a term the corpus lacks)."""
        j = self.vocabulary.get(term)
        if self.sources is None or j is None:
            return (term,)
        s = self.sources
        return tuple(s.words[s.order[s.ptr[j] : s.ptr[j + 1]]].tolist())

    @property
    def n_docs(self) -> int:
        """Number of documents."""
        return self.counts.shape[0]

    @property
    def avg_len(self) -> float:
        """Mean document length in tokens (0 for an empty corpus)."""
        return float(self.doc_len.mean()) if self.doc_len.size else 0.0

    @property
    def doc_freq(self) -> np.ndarray:
        """Number of documents that hold each term."""
        return np.bincount(self.counts.indices, minlength=self.counts.shape[1]).astype(np.int64)


class Batching(NamedTuple):
    """How `build_index` cuts a corpus into batches, each tokenised at once (a progress report after each).

    max_chars bounds the tokeniser's memory whatever the corpus: a batch's tokens are Python objects (~60 bytes each)
    while it is counted; in one batch of 20,000 documents, 100 documents of 1 MB peaked at 128 bytes a token (2 GB).
    One document longer than max_chars is a batch of its own. Above split_above bytes, the compiled path tokenises a
    batch's two halves at once, on two threads (`_intern_batch`).
    """

    max_docs: int = 20_000
    max_chars: int = 4_000_000
    split_above: int = 1_000_000


BATCHING = Batching()


def _tokens(texts) -> list[list[str]]:
    """Every text's `[a-z0-9]+` tokens after lower-casing, stop words still in (C-speed map, no Python loop)."""
    return list(map(_TOKEN_RE.findall, map(str.lower, texts)))


_SPACES = bytes(c if c in b"abcdefghijklmnopqrstuvwxyz0123456789" else 32 for c in range(256))  # else a space


def _stop_bytes(stop_words: frozenset[str]) -> list[bytes]:
    """Stop words as sorted ASCII bytes, the order both tokenisers give them their first ids in."""
    return sorted(w.encode("ascii") for w in stop_words)


def _separated(lowered: str) -> bytes:
    """A lower-cased text as ASCII bytes with every character outside [a-z0-9] a space: a character beyond ASCII
    becomes '?' when encoded, then every byte outside [a-z0-9] a space (two C-level passes)."""
    return lowered.encode("ascii", "replace").translate(_SPACES)


def byte_tokens(texts) -> list[list[bytes]]:
    """`_tokens` as ASCII bytes, two to three times faster than the regex: the maximal runs of [a-z0-9] of the
    lower-cased text are the words `_separated` leaves between spaces, so a split finds exactly the regex's
    tokens (tests/test_text.py compares them on Unicode, digits, punctuation and empty texts)."""
    return list(map(bytes.split, map(_separated, map(str.lower, texts))))


def batches(texts, batching: Batching = BATCHING):
    """(start, stop) of consecutive batches of at most max_docs documents and, unless one document alone is
    longer, at most max_chars characters.

    >>> list(batches(["aaa", "bbb", "c" * 10, "d", "e", "f"], Batching(max_docs=4, max_chars=6)))
    [(0, 2), (2, 3), (3, 6)]
    """
    max_docs, max_chars = batching.max_docs, batching.max_chars
    start, n = 0, len(texts)
    while start < n:
        stop, chars = start, 0
        while stop < n and stop - start < max_docs and (stop == start or chars + len(texts[stop]) <= max_chars):
            chars += len(texts[stop])
            stop += 1
        yield start, stop
        start = stop


# ------------------------------------------------------------------------------------ the compiled tokeniser

FNV_OFFSET, FNV_PRIME, HASH_MASK = 2166136261, 16777619, 0xFFFFFFFF  # FNV-1a, 32 bits (kept below 2**32 at each step,
# so the plain-Python run of the kernel computes the same hashes with Python integers)
COMPILED_ABOVE = 1_000_000  # characters beyond which build_index tokenises in the compiled kernel once it is loaded
# in this process (below it the dictionary path costs milliseconds; a fresh clone compiles nothing for the invented
# corpus); Cranfield's 1.5 million characters: 40 ms against 130 ms
LOAD_PAYS_ABOVE = 8_000_000  # characters beyond which loading the kernels from numba's cache (about 0.4 s, once per
# process) pays for itself: the dictionary path takes about 85 ns a character


class Vocab(NamedTuple):
    """The compiled tokeniser's open-addressing table of the terms seen so far (stop words first, as terms
    0..len(STOP_WORDS)-1): each term's bytes lie in `store`, its hash beside them; `sizes` holds the counts."""

    slots: np.ndarray  # int64, a power of two long: a term number, or -1 (empty)
    hashes: np.ndarray  # int64 per term: FNV-1a of its bytes
    starts: np.ndarray  # int64 per term: where its bytes start in store
    lens: np.ndarray  # int64 per term: how many bytes
    store: np.ndarray  # uint8: every term's bytes, one after the other
    sizes: np.ndarray  # int64[3]: terms, bytes of store used, ids written


@njit(inline="always")
def _term(slots, hashes, starts, lens, store, src, i, n, h, n_terms, n_store):
    """The number of the term whose bytes are src[i:i + n] (FNV-1a hash h) in the table (slots, hashes, starts,
    lens, store: a `Vocab`'s arrays, n_terms terms and n_store bytes used), added as term n_terms when absent (the
    caller leaves room, and counts it: the number returned is then n_terms)."""
    mask = slots.shape[0] - 1
    s = h & mask
    while True:
        t = int(slots[s])
        if t < 0:  # a new term
            slots[s] = n_terms
            hashes[n_terms] = h
            starts[n_terms] = n_store
            lens[n_terms] = n
            store[n_store : n_store + n] = src[i : i + n]
            return n_terms
        if hashes[t] == h and lens[t] == n:
            a = starts[t]
            x = 0
            while x < n and store[a + x] == src[i + x]:
                x += 1
            if x == n:
                return t
        s = (s + 1) & mask


@njit(cache=True, nogil=True)
def _intern(buf, ends, doc0, v, n_stop, ids, per_doc):
    """Tokenise documents doc0, doc0 + 1, ... of `buf` (`_separated` bytes of the batch's texts one after the other,
    document i ending at ends[i]): each maximal run of non-space bytes is a token, looked up in (or added to) the
    table `v`; a token that is not a stop word gets its id (term number - n_stop) appended to `ids`, and per_doc[i]
    counts them. Stops before a document the table might not have room for, and returns its number (len(ends):
    every document done); the caller grows the table and calls again from there."""
    n_docs = ends.shape[0]
    slots, hashes, starts, lens, store, sizes = v.slots, v.hashes, v.starts, v.lens, v.store, v.sizes
    n_terms, n_store, w = sizes[0], sizes[1], sizes[2]
    d = doc0
    while d < n_docs:
        i = 0 if d == 0 else ends[d - 1]
        end = ends[d]
        # room for the worst case: every byte a new one-byte term, every other one a space
        if (
            (n_terms + (end - i) // 2 + 1) * 2 > slots.shape[0]
            or n_store + (end - i) > store.shape[0]
            or n_terms + (end - i) // 2 + 1 > hashes.shape[0]
        ):
            break
        kept = 0
        while i < end:
            if buf[i] == 32:
                i += 1
                continue
            j = i
            h = FNV_OFFSET
            while j < end and buf[j] != 32:
                h = ((h ^ int(buf[j])) * FNV_PRIME) & HASH_MASK
                j += 1
            t = _term(slots, hashes, starts, lens, store, buf, i, j - i, h, n_terms, n_store)
            if t == n_terms:  # a new term
                n_terms += 1
                n_store += j - i
            if t >= n_stop:
                ids[w] = t - n_stop
                w += 1
                kept += 1
            i = j
        per_doc[d] = kept
        d += 1
    sizes[0], sizes[1], sizes[2] = n_terms, n_store, w
    return d


@njit(cache=True, nogil=True)
def _rehash(v, slots):
    """Every term of `v` placed again in the (larger, all -1) `slots`."""
    mask = slots.shape[0] - 1
    for t in range(v.sizes[0]):
        s = v.hashes[t] & mask
        while slots[s] >= 0:
            s = (s + 1) & mask
        slots[s] = t


@njit(cache=True, nogil=True)
def _merge(v, other, n_stop, remap):
    """The terms of `other` (a table begun from the same stop words, `_new_vocab`) added to `v` in other's order,
    each one v lacks as a new term, as if other's documents had been tokenised after v's; remap[t - n_stop] = the
    term's number in v minus n_stop, for each of other's terms t from n_stop on. v must have room (`_grown`)."""
    n_terms, n_store = v.sizes[0], v.sizes[1]
    for t in range(n_stop, other.sizes[0]):
        g = _term(
            v.slots,
            v.hashes,
            v.starts,
            v.lens,
            v.store,
            other.store,
            other.starts[t],
            other.lens[t],
            other.hashes[t],
            n_terms,
            n_store,
        )
        if g == n_terms:  # a term v lacked
            n_terms += 1
            n_store += other.lens[t]
        remap[t - n_stop] = g - n_stop
    v.sizes[0], v.sizes[1] = n_terms, n_store


def _grown(v: Vocab, terms: int, chars: int) -> Vocab:
    """The table with room for at least `terms` terms and `chars` bytes (each doubled as needed), same contents."""
    cap = v.hashes.shape[0]
    while cap < terms:
        cap *= 2
    size = v.slots.shape[0]
    while size < 2 * terms:
        size *= 2
    store_cap = v.store.shape[0]
    while store_cap < chars:
        store_cap *= 2

    def longer(a, n):
        if a.shape[0] == n:
            return a
        out = np.zeros(n, dtype=a.dtype)
        out[: min(a.shape[0], n)] = a[:n]
        return out

    v2 = Vocab(
        np.full(size, -1, dtype=np.int64) if size != v.slots.shape[0] else v.slots,
        longer(v.hashes, cap),
        longer(v.starts, cap),
        longer(v.lens, cap),
        longer(v.store, store_cap),
        v.sizes,
    )
    if size != v.slots.shape[0]:
        _rehash(v2, v2.slots)
    return v2


def _new_vocab(stop_words: frozenset[str] = STOP_WORDS) -> Vocab:
    """An empty table holding the stop words as terms 0..len(stop_words)-1."""
    v = Vocab(
        np.full(1024, -1, dtype=np.int64),
        np.zeros(256, dtype=np.int64),
        np.zeros(256, dtype=np.int64),
        np.zeros(256, dtype=np.int64),
        np.zeros(4096, dtype=np.uint8),
        np.zeros(3, dtype=np.int64),
    )
    if not stop_words:
        return v
    buf = np.frombuffer(b" ".join(_stop_bytes(stop_words)), dtype=np.uint8)
    return _intern_all(
        buf, np.array([buf.size], dtype=np.int64), v, 0, np.zeros(buf.size, dtype=np.int32), np.zeros(1, dtype=np.int64)
    )


def _intern_all(buf, ends, v: Vocab, n_stop: int, ids: np.ndarray, per_doc: np.ndarray) -> Vocab:
    """`_intern` over every document of the batch, growing the table whenever it stops for room; the table
    afterwards (sizes[2]: the ids written)."""
    v.sizes[2] = 0
    d = 0
    while (d := _intern(buf, ends, d, v, n_stop, ids, per_doc)) < ends.size:
        size = int(ends[d] - (ends[d - 1] if d else 0))
        v = _grown(v, int(v.sizes[0]) + size // 2 + 2, int(v.sizes[1]) + size + 1)
    return v


def _intern_batch(
    buf, ends, v: Vocab, stop_words: frozenset[str], per_doc: np.ndarray, split_above: int
) -> tuple[Vocab, np.ndarray]:
    """A batch's ids (`_intern_all`) and the table after it. Above split_above bytes, with two threads or more, the
    first half of its documents goes into `v` while one of the kernels' worker threads (`workers.submit`)
    tokenises the other half into a table of its own; `_merge` then adds that table's new terms to v in their
    first-seen order, so the terms, their numbers and the ids are those of one pass over the whole batch
    (tests/test_text.py)."""
    n_stop = len(stop_words)
    if buf.size <= split_above or ends.size < 2 or workers.threads() < 2:
        out = np.empty(buf.size // 2 + 1, dtype=np.int32)
        v = _intern_all(buf, ends, v, n_stop, out, per_doc)
        return v, out[: int(v.sizes[2])].copy()
    m = min(max(int(np.searchsorted(ends, buf.size // 2)) + 1, 1), ends.size - 1)  # documents in the first half
    cut = int(ends[m - 1])
    second = _new_vocab(stop_words)
    out_b = np.empty((buf.size - cut) // 2 + 1, dtype=np.int32)
    job = workers.submit(_intern_all, buf[cut:], ends[m:] - cut, second, n_stop, out_b, per_doc[m:])
    out_a = np.empty(cut // 2 + 1, dtype=np.int32)
    try:
        v = _intern_all(buf[:cut], ends[:m], v, n_stop, out_a, per_doc[:m])
    finally:
        second = job.result()
    ids_a = out_a[: int(v.sizes[2])]
    v = _grown(v, int(v.sizes[0] + second.sizes[0]), int(v.sizes[1] + second.sizes[1]) + 1)
    remap = np.empty(max(int(second.sizes[0]) - n_stop, 0), dtype=np.int32)
    _merge(v, second, n_stop, remap)
    return v, np.concatenate([ids_a, remap[out_b[: int(second.sizes[2])]]])


def _index_compiled(
    texts, progress, batching: Batching, stop_words: frozenset[str] = STOP_WORDS
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The compiled pass over every batch: (terms in first-seen order, tokens kept per document, their ids)."""
    n = len(texts)
    v = _new_vocab(stop_words)
    n_stop = int(v.sizes[0])
    per_doc, ids = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int32)]
    for start, stop in batches(texts, batching):
        lowered = list(map(str.lower, texts[start:stop]))
        ends = np.cumsum(np.fromiter(map(len, lowered), dtype=np.int64, count=len(lowered)))
        buf = np.frombuffer(_separated("".join(lowered)), dtype=np.uint8)  # one '?' per character beyond ASCII:
        del lowered  # the bytes are as long as the lower-cased text, so `ends` marks each document in them
        per_doc.append(np.zeros(ends.size, dtype=np.int64))
        v, batch_ids = _intern_batch(buf, ends, v, stop_words, per_doc[-1], batching.split_above)
        ids.append(batch_ids)
        if progress is not None:
            progress("tokenising documents", min(1.0, stop / max(n, 1)))
    n_terms = int(v.sizes[0]) - n_stop
    starts, lens = v.starts[n_stop : n_stop + n_terms], v.lens[n_stop : n_stop + n_terms]
    width = int(lens.max()) if n_terms else 1
    if n_terms * width * 5 <= MAX_TERM_TABLE_BYTES:  # the terms as one fixed-width array, built in C
        table = np.zeros((n_terms, width), dtype=np.uint8)
        _fill_fixed(v.store, starts, lens, table)
        first_seen = table.view(f"S{width}").ravel().astype(f"U{width}")
    else:
        raw = v.store[: int(v.sizes[1])].tobytes().decode("ascii")
        first_seen = np.array([raw[a : a + b] for a, b in zip(starts.tolist(), lens.tolist())], dtype=object)
    return first_seen, np.concatenate(per_doc), np.concatenate(ids)


@njit(cache=True, nogil=True)
def _fill_fixed(store, starts, lens, table):
    """Term t's bytes into table[t] (a row as wide as the longest term, NUL-padded)."""
    for t in range(starts.shape[0]):
        table[t, : lens[t]] = store[starts[t] : starts[t] + lens[t]]


MAX_TERM_TABLE_BYTES = 256 * 2**20  # beyond this (terms x longest term x 5 bytes), the terms are Python strings


def _index_python(
    texts, progress, batching: Batching, stop_words: frozenset[str] = STOP_WORDS
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The reference pass, a dictionary mapping each token to an id in one C-level pass per batch: (terms in
    first-seen order, tokens kept per document, their ids)."""
    n = len(texts)
    ids: defaultdict[bytes, int] = defaultdict(count().__next__)
    ids.update(dict.fromkeys(_stop_bytes(stop_words), -1))
    per_doc, kept = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int32)]
    for start, stop in batches(texts, batching):
        lists = byte_tokens(texts[start:stop])
        lens = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
        flat = np.fromiter(map(ids.__getitem__, chain.from_iterable(lists)), dtype=np.int64, count=int(lens.sum()))
        keep = flat >= 0
        per_doc.append(np.bincount(np.repeat(np.arange(len(lists), dtype=np.int64), lens)[keep], minlength=len(lists)))
        kept.append(flat[keep].astype(np.int32))
        if progress is not None:
            progress("tokenising documents", min(1.0, (start + len(lists)) / max(n, 1)))
    first_seen = np.array([t.decode("ascii") for t in list(ids)[len(stop_words) :]], dtype=object)  # insertion
    return first_seen, np.concatenate(per_doc), np.concatenate(kept)  # order = id order (stop words went in first)


METHODS = ("auto", "python", "compiled")


def _compiled_state() -> str:
    """ "loaded": the compiled tokeniser is compiled or loaded in this process; "on disk": not yet (numba may load it
    from its cache, or compile it); "": the JIT is off (it would run as plain Python)."""
    if not hasattr(_intern, "signatures"):
        return ""
    return "loaded" if _intern.signatures else "on disk"


KERNELS = ("_intern", "_rehash", "_merge", "_fill_fixed")  # compiled by engine.warm_up (build_index "compiled")


def dispatchers() -> dict:
    """The compiled tokeniser's numba dispatchers (empty with NUMBA_DISABLE_JIT=1)."""
    from numba.core.dispatcher import Dispatcher

    return {n: globals()[n] for n in KERNELS if isinstance(globals()[n], Dispatcher)}


def method_for(texts: list[str] | tuple[str, ...], state: str | None = None) -> str:
    """The way `build_index(texts)` ("auto") tokenises: "compiled" where it pays, else "python" (the same ids).

    The compiled kernel pays above COMPILED_ABOVE characters once it is loaded in this process, and above
    LOAD_PAYS_ABOVE while it is not (loading it from numba's cache costs about 0.4 s); with the JIT off it would
    run as plain Python, so it is never chosen. `state`: "loaded", "on disk" or "" (the JIT off); None: this
    process's.

    >>> method_for(["a b c"] * 10, "loaded"), method_for(["a b c"] * 2_000_000, "on disk"), method_for(["a"] * 10**7, "")
    ('python', 'compiled', 'python')
    """
    state = _compiled_state() if state is None else state
    chars = sum(map(len, texts))
    pays = chars > LOAD_PAYS_ABOVE or (state == "loaded" and chars > COMPILED_ABOVE)
    return "compiled" if state and pays else "python"


def build_index(
    texts: list[str] | tuple[str, ...],
    progress: Callable[[str, float], None] | None = None,
    method: str = "auto",
    batching: Batching = BATCHING,
    analysis: Analysis = ARTICLE_ANALYSIS,
) -> TermIndex:
    """Tokenise every document once into a sparse count matrix (terms in sorted order).

    Exactly what scikit-learn's CountVectorizer gives with `tokenize`'s rules, faster: each token gets an id
    (stop words none) in the order terms are first seen, then the columns are renumbered in sorted term order
    and each document's ids counted (scipy sums the duplicates of each row in place, as fast as a compiled loop:
    0.2-0.28 s at 100,000 documents). Two ways to the same ids (tests/test_text.py): "python", a dictionary over
    each batch's `byte_tokens`, ~1 us a token; "compiled", `_intern` over each batch's bytes (no Python object
    per token), ~0.15 us a token, a batch's two halves at once above batching.split_above bytes, used by
    "auto" above COMPILED_ABOVE characters once loaded in this process (the warm-up loads it), else above
    LOAD_PAYS_ABOVE.
    `batching` (`Batching`) cuts the corpus into batches (the same index however it is cut).
    `analysis` (`Analysis`): the stop words both ways drop as they tokenise (the article's by default); with a
    stemmer, the words' columns are then merged by stem (`stemmed`).
    `progress(stage, fraction)` is called after each batch of documents and at the end of each stage.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    n = len(texts)
    if method == "auto":
        method = method_for(texts)
    first_seen, per_doc, ids = (_index_compiled if method == "compiled" else _index_python)(
        texts, progress, batching, analysis.stop_words
    )
    n_terms = len(first_seen)
    if n_terms == 0:  # no document holds a single token: an index with an empty vocabulary
        counts = sp.csr_matrix((n, 0), dtype=np.int32)
        return TermIndex({}, np.array([], dtype=object), counts, np.zeros(n), analysis)
    order = np.argsort(first_seen, kind="stable")  # ASCII sorts as its code points: as CountVectorizer's sorted()
    renumber = np.empty(n_terms, dtype=np.int32)
    renumber[order] = np.arange(n_terms, dtype=np.int32)
    idx_dtype = np.int32 if ids.size < 2**31 else np.int64
    indptr = np.zeros(n + 1, dtype=idx_dtype)
    np.cumsum(per_doc, out=indptr[1:])
    counts = sp.csr_matrix(
        (np.ones(ids.size, dtype=np.int32), renumber[ids].astype(idx_dtype, copy=False), indptr), shape=(n, n_terms)
    )
    counts.sum_duplicates()  # each row's columns sorted and their repeats counted, in place
    terms = first_seen[order].astype(object)
    vocabulary = dict(zip(terms.tolist(), range(n_terms)))
    index = TermIndex(vocabulary, terms, counts, per_doc.astype(np.float64), analysis)
    if analysis.stemmer != "none":
        index = stemmed(index, analysis)
    if progress is not None:
        progress("building the term matrix", 1.0)
    return index


def stemmed(index: TermIndex, analysis: Analysis) -> TermIndex:
    """The index with the columns of the words that share a stem added into one column per stem (in sorted
    order, as every index's terms), each stem's words kept (`TermIndex.words_of`).

    The stemmer runs once per distinct word, not per token (Snowball's C stemmer: about 1.7 us a word); the counts
    are then one sparse renumbering whose duplicates scipy adds in place. Document lengths do not change: a stemmer
    maps each word to one stem.

    >>> ix = stemmed(build_index(["refunds refund", "refunded"]), Analysis("snowball"))
    >>> ix.terms.tolist(), ix.counts.toarray().tolist(), ix.words_of("refund")
    (['refund'], [[2], [1]], ('refund', 'refunded', 'refunds'))
    """
    words = index.terms
    stems = analysis.stems(words.tolist())
    width = max(map(len, stems), default=1)
    fixed = len(stems) * width * 4 <= MAX_TERM_TABLE_BYTES  # a fixed-width array sorts in C, about 3x faster
    unique, column = np.unique(np.array(stems, dtype=f"U{width}" if fixed else object), return_inverse=True)
    c = index.counts
    counts = sp.csr_matrix(
        (c.data, column.astype(c.indices.dtype, copy=False)[c.indices], c.indptr), shape=(index.n_docs, unique.size)
    )
    counts.sum_duplicates()
    terms = unique.astype(object)
    order = np.argsort(column, kind="stable")  # each stem's words, in the words' (sorted) order
    ptr = np.searchsorted(column[order], np.arange(unique.size + 1))
    return TermIndex(
        dict(zip(terms.tolist(), range(terms.size))),
        terms,
        counts,
        index.doc_len,
        analysis,
        StemWords(words, order, ptr),
    )


def query_counts(index: TermIndex, texts: list[str] | tuple[str, ...]) -> sp.csr_matrix:
    """Questions as a questions x terms count matrix over the index's vocabulary (unknown words dropped), each
    question's words analysed as the index's (`TermIndex.analysis`): its stop words dropped, then stemmed."""
    if not index.vocabulary:
        return sp.csr_matrix((len(texts), 0), dtype=np.int32)
    lists = _tokens(texts) if index.analysis.is_article else list(map(index.analyse, texts))
    lens = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    get = index.vocabulary.get
    flat = np.array([get(t, -1) for t in chain.from_iterable(lists)], dtype=np.int64)
    rows = np.repeat(np.arange(len(lists), dtype=np.int64), lens)
    keep = flat >= 0
    counts = sp.csr_matrix(
        (np.ones(int(keep.sum()), dtype=np.int32), (rows[keep], flat[keep])),
        shape=(len(texts), len(index.vocabulary)),
        dtype=np.int32,
    )
    counts.sum_duplicates()
    counts.sort_indices()
    return counts
