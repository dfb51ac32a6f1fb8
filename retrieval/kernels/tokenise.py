"""The tokeniser's compiled pass (numba) and, beside it, the plain reference it equals: each document's
`[a-z0-9]+` tokens (lower-cased) numbered in the order terms are first seen, stop words dropped, batch by batch.

| kernel | reference |
|---|---|
| `index_compiled`: `_intern` over each batch's bytes, an open-addressing table of the terms (`Vocab`) | `index_python`: a dictionary over each batch's `byte_tokens` |

Both give the same terms, ids and counts per document (tests/corpus/test_text.py, also with NUMBA_DISABLE_JIT=1, where
`_intern` runs as the plain Python it is written in); `retrieval.corpus.text.method_for` chooses between them, and
`retrieval.corpus.text.build_index` turns their ids into the document x term count matrix.
"""

from __future__ import annotations

from collections import defaultdict
from itertools import chain, count
from typing import NamedTuple

import numpy as np
from numba import njit

from ..core import workers

SOURCE_DIGEST = "50417322ef711f3d"  # of the project files imported above (kernels/__init__.py: numba's cache)

# ---------------------------------------- LOW LEVEL: the compiled kernels

FNV_OFFSET, FNV_PRIME, HASH_MASK = 2166136261, 16777619, 0xFFFFFFFF  # FNV-1a, 32 bits (kept below 2**32 at each step,
# so the plain-Python run of the kernel computes the same hashes with Python integers)


class Vocab(NamedTuple):
    """The compiled tokeniser's open-addressing table of the terms seen so far (stop words first, as terms
    0..n_stop-1): each term's bytes lie in `store`, its hash beside them; `sizes` holds the counts."""

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


@njit(cache=True, nogil=True)
def _fill_fixed(store, starts, lens, table):
    """Term t's bytes into table[t] (a row as wide as the longest term, NUL-padded)."""
    for t in range(starts.shape[0]):
        table[t, : lens[t]] = store[starts[t] : starts[t] + lens[t]]


KERNELS = ("_intern", "_rehash", "_merge", "_fill_fixed")  # compiled by engine.warm_up (build_index "compiled")


def dispatchers() -> dict:
    """The compiled tokeniser's numba dispatchers (empty with NUMBA_DISABLE_JIT=1)."""
    from numba.core.dispatcher import Dispatcher

    return {n: globals()[n] for n in KERNELS if isinstance(globals()[n], Dispatcher)}


def compiled_state() -> str:
    """ "loaded": the compiled tokeniser is compiled or loaded in this process; "on disk": not yet (numba may load it
    from its cache, or compile it); "": the JIT is off (it would run as plain Python)."""
    if not hasattr(_intern, "signatures"):
        return ""
    return "loaded" if _intern.signatures else "on disk"


# ---------------------------------------- HIGH LEVEL: the batches, the compiled pass and its plain reference


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
    tokens (tests/corpus/test_text.py compares them on Unicode, digits, punctuation and empty texts)."""
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


def _new_vocab(stop_words: frozenset[str]) -> Vocab:
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
    (tests/corpus/test_text.py)."""
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


MAX_TERM_TABLE_BYTES = 256 * 2**20  # beyond this (terms x longest term x 5 bytes), the terms are Python strings


def index_compiled(
    texts, progress, batching: Batching, stop_words: frozenset[str]
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


def index_python(
    texts, progress, batching: Batching, stop_words: frozenset[str]
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
