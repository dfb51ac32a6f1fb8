"""A deterministic synthetic corpus for the speed benchmark: Zipfian vocabulary, realistic lengths, graded judgements.

The model (every number below is a module constant, the seed fixes everything else):

* **Vocabulary.** Content words are pronounceable pseudo-words (consonant-vowel syllables, a bijective
  numbering, so every rank has its own word and none is a stop word). A content token's rank r follows a
  Zipf-Mandelbrot law, P(r) proportional to (r + 2.7)^-1.2 over 2 million ranks, drawn by the inverse of the
  continuous law. The vocabulary a corpus shows then grows with its size as Heaps' law says (about 60k terms at
  10k documents, 1.3M at 1M).
* **Documents.** Lengths are log-normal (median 80 tokens, sigma 0.6, clipped to [8, 2000]); a third of the
  tokens are the tokeniser's stop words (so tokenising does the work it does on real text), the rest content
  tokens. About 55 tokens remain per document after the stop words (MS MARCO passages: about 56 words).
* **Questions.** 1,000 by default: 2 to 6 content words drawn from the same law restricted to ranks >= 100
  (content words), and with probability 0.6 one common word (ranks 10 to 99), wrapped in stop words
  ("what is the ... of ..."). A question then matches about 15% of the corpus (BM25 touches every posting of
  its terms), in the range of general-domain collections; Cranfield's questions match 56% of its documents.
* **Judgements.** Per question, 1 + Poisson(3) relevant documents (at most 15) drawn at random, graded
  1, 2 or 3 (probabilities 0.5, 0.3, 0.2); a grade-g document receives g/3 of the question's content words
  (at least one; grade 3: every word of the question), each 1 to 3 times. Three more documents are judged 0
  and receive one content word (near misses, as pooled judgements hold documents that matched the distinctive
  words). So BM25 finds most relevant documents near the top, not all.

`generate(n_docs)` returns a `retrieval.corpus.dataset.Dataset` built from arrays (no per-line parsing); `load(n_docs)`
caches it as a pickle under bench/out/ so repeated benchmark runs skip the generation.
"""

from __future__ import annotations

import argparse
import pickle
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from retrieval.corpus.dataset import Dataset, Qrels  # noqa: E402
from retrieval.corpus.text import STOP_WORDS  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"

VOCAB_SPACE = 2_000_000
ZIPF_S = 1.2
ZIPF_Q = 2.7
LEN_MEDIAN = 80
LEN_SIGMA = 0.6
LEN_MIN, LEN_MAX = 8, 2000
STOP_SHARE = 1 / 3
CONTENT_MIN_RANK = 100
COMMON_RANKS = (10, 100)
COMMON_P = 0.6
TERMS_PER_QUESTION = (2, 6)
REL_MEAN, REL_MAX = 3, 15
GRADE_P = (0.5, 0.3, 0.2)
NEAR_MISSES = 3
CHUNK = 100_000

_CONSONANTS = "bcdfghjklmnpqrstvwxz"
_VOWELS = "aeiouy"
_SYLLABLES = np.array([c + v for c in _CONSONANTS for v in _VOWELS])


def words(n: int) -> np.ndarray:
    """The first `n` content words, rank order: fewer syllables first, stop words skipped (bijective numbering)."""
    base = len(_SYLLABLES)
    syl = _SYLLABLES.astype(object)
    out: list[str] = []
    start = 1
    while len(out) < n:
        m = n - len(out) + 64
        x = np.arange(start, start + m, dtype=np.int64)
        w = np.full(m, "", dtype=object)
        alive = np.ones(m, dtype=bool)
        while alive.any():  # n -> (n - 1) // base, digit (n - 1) % base, most significant digit ends up first
            x1 = np.where(alive, x - 1, 0)
            w = np.where(alive, syl[x1 % base] + w, w)
            x = np.where(alive, x1 // base, 0)
            alive = x > 0
        out.extend(t for t in w.tolist() if t not in STOP_WORDS)
        start += m
    return np.array(out[:n], dtype=object)


def _zipf_ranks(rng: np.random.Generator, size: int, lo: int = 1, hi: int = VOCAB_SPACE) -> np.ndarray:
    """0-based ranks in [lo-1, hi-1] from the continuous Zipf-Mandelbrot law (inverse CDF), int64."""
    e = 1.0 - ZIPF_S
    a, b = (lo + ZIPF_Q) ** e, (hi + 1 + ZIPF_Q) ** e
    x = (a + (b - a) * rng.random(size)) ** (1.0 / e) - ZIPF_Q
    return np.clip(np.floor(x).astype(np.int64), lo, hi) - 1


def _join(codes: np.ndarray, bounds: np.ndarray, table: np.ndarray) -> list[str]:
    """Documents as strings: `codes[bounds[i]:bounds[i+1]]` looked up in `table`, joined by spaces."""
    n = bounds.size - 1
    sep = np.full(n, -1, dtype=np.int64)
    # insert a separator code after each document and join everything at once, then split
    pos = bounds[1:]
    allc = np.insert(codes, pos, sep)
    tab = np.append(table, "\n").astype(object)
    text = " ".join(tab[allc].tolist())
    docs = text.split(" \n")
    docs = [d.lstrip(" ") for d in docs[:n]]
    return docs


def generate(n_docs: int, n_queries: int = 1000, seed: int = 0) -> Dataset:
    """The synthetic collection with `n_docs` documents and `n_queries` questions (deterministic in `seed`)."""
    t0 = time.perf_counter()
    root = np.random.SeedSequence([seed, n_docs, n_queries])
    q_seq, *chunk_seqs = root.spawn(1 + (n_docs + CHUNK - 1) // CHUNK)
    qrng = np.random.default_rng(q_seq)
    stop = np.array(sorted(STOP_WORDS), dtype=object)
    stop_p = 1.0 / np.arange(1, stop.size + 1)
    stop_p /= stop_p.sum()

    # ---- questions and their judgements (decided first: they say which words go into which documents)
    k = qrng.integers(TERMS_PER_QUESTION[0], TERMS_PER_QUESTION[1] + 1, n_queries)
    qterms = [np.unique(_zipf_ranks(qrng, int(n), lo=CONTENT_MIN_RANK)) for n in k]
    content = list(qterms)
    common = qrng.random(n_queries) < COMMON_P
    for q in np.flatnonzero(common):
        c = _zipf_ranks(qrng, 1, lo=COMMON_RANKS[0], hi=COMMON_RANKS[1] - 1)
        qterms[q] = np.unique(np.concatenate([qterms[q], c]))
    inj_doc, inj_rank, qr_q, qr_d, qr_g = [], [], [], [], []
    for q in range(n_queries):
        n_rel = int(min(REL_MAX, 1 + qrng.poisson(REL_MEAN)))
        picked = qrng.choice(n_docs, size=min(n_docs, n_rel + NEAR_MISSES), replace=False)
        grades = np.concatenate(
            [
                qrng.choice([1, 2, 3], size=picked.size - NEAR_MISSES, p=GRADE_P) if picked.size > NEAR_MISSES else [],
                np.zeros(min(NEAR_MISSES, picked.size), dtype=np.int64),
            ]
        ).astype(np.int64)
        terms = content[q]  # documents are judged for sharing the question's distinctive words
        for d, g in zip(picked, grades):
            share = max(1, int(np.ceil(len(terms) * g / 3))) if g > 0 else 1
            chosen = qrng.choice(terms, size=min(share, len(terms)), replace=False)
            if g == 3:
                chosen = qterms[q]  # a complete answer holds every word of the question
            reps = qrng.integers(1, 4, chosen.size)
            inj_doc.append(np.full(int(reps.sum()), d, dtype=np.int64))
            inj_rank.append(np.repeat(chosen, reps))
        order = np.argsort(picked, kind="stable")
        qr_q.append(np.full(picked.size, q, dtype=np.int64))
        qr_d.append(picked[order].astype(np.int64))
        qr_g.append(grades[order])
    inj_doc = np.concatenate(inj_doc)
    inj_rank = np.concatenate(inj_rank)
    io = np.argsort(inj_doc, kind="stable")
    inj_doc, inj_rank = inj_doc[io], inj_rank[io]

    # ---- the word table: content ranks that occur anywhere, plus the stop words (negative codes)
    table = words(VOCAB_SPACE)

    # ---- documents, in chunks of CHUNK (each chunk has its own random stream)
    doc_texts: list[str] = []
    for c, seq in enumerate(chunk_seqs):
        rng = np.random.default_rng(seq)
        lo, hi = c * CHUNK, min(n_docs, (c + 1) * CHUNK)
        n = hi - lo
        lens = np.clip(np.round(rng.lognormal(np.log(LEN_MEDIAN), LEN_SIGMA, n)), LEN_MIN, LEN_MAX).astype(np.int64)
        total = int(lens.sum())
        codes = _zipf_ranks(rng, total)
        is_stop = rng.random(total) < STOP_SHARE
        codes[is_stop] = VOCAB_SPACE + rng.choice(stop.size, size=int(is_stop.sum()), p=stop_p)
        # injected question words, appended to their documents
        a, b = np.searchsorted(inj_doc, [lo, hi])
        extra = np.bincount(inj_doc[a:b] - lo, minlength=n)
        bounds = np.concatenate(([0], np.cumsum(lens + extra)))
        allcodes = np.empty(int(bounds[-1]), dtype=np.int64)
        own_start = bounds[:-1]
        within = np.arange(total) - np.repeat(np.cumsum(lens) - lens, lens)
        allcodes[np.repeat(own_start, lens) + within] = codes
        if b > a:
            d = inj_doc[a:b] - lo
            first = np.searchsorted(d, d)  # index of the doc's first injected word
            allcodes[own_start[d] + lens[d] + (np.arange(d.size) - first)] = inj_rank[a:b]
        full = np.concatenate([table, stop])
        texts = _join(allcodes, bounds, full)
        # a capital letter and a full stop, as in prose (the tokeniser lower-cases and drops punctuation)
        doc_texts.extend(t[:1].upper() + t[1:] + "." for t in texts)

    # ---- question texts
    q_texts = []
    for q in range(n_queries):
        ws = table[qterms[q]].tolist()
        qrng.shuffle(ws)
        half = (len(ws) + 1) // 2
        tail = " of the " + " ".join(ws[half:]) if ws[half:] else ""
        q_texts.append("What is the " + " ".join(ws[:half]) + tail + "?")

    width = len(str(n_docs - 1))
    doc_ids = tuple(f"d{i:0{width}d}" for i in range(n_docs))
    query_ids = tuple(f"q{i:04d}" for i in range(n_queries))
    qq, qd, qg = np.concatenate(qr_q), np.concatenate(qr_d), np.concatenate(qr_g)
    qrels = Qrels(query=qq, doc=qd, doc_id=np.array(doc_ids, dtype=object)[qd], grade=qg)
    ds = Dataset(f"synthetic-{n_docs}", doc_ids, tuple(doc_texts), query_ids, tuple(q_texts), qrels)
    ds.__dict__["generation_seconds"] = time.perf_counter() - t0
    return ds


def load(n_docs: int, n_queries: int = 1000, seed: int = 0, cache: bool = True) -> Dataset:
    """`generate`, cached as a pickle in bench/out/ (regenerated when missing)."""
    path = OUT / f"synthetic-{n_docs}-{n_queries}-{seed}.pkl"
    if cache and path.exists():
        with open(path, "rb") as f:
            return pickle.load(f)
    ds = generate(n_docs, n_queries, seed)
    if cache:
        OUT.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        with open(tmp, "wb") as f:
            pickle.dump(ds, f, protocol=pickle.HIGHEST_PROTOCOL)
        tmp.replace(path)
    return ds


def main(argv: list[str] | None = None) -> int:
    """Generate (and cache) corpora, printing their size."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default="10000", help="comma-separated document counts")
    p.add_argument("--queries", type=int, default=1000)
    p.add_argument("--no-cache", action="store_true")
    a = p.parse_args(argv)
    for n in (int(x) for x in a.sizes.split(",")):
        t = time.perf_counter()
        ds = load(n, a.queries, cache=not a.no_cache)
        print(
            f"{ds.name}: {ds.n_docs} documents, {ds.n_queries} questions, {len(ds.qrels)} judgements, "
            f"{sum(map(len, ds.doc_texts)) / ds.n_docs:.0f} characters per document, {time.perf_counter() - t:.1f} s"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
