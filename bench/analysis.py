"""The text analysis's cost and effect: the index build per analysis, the k1 tick under a stemmed index, and (on a
real collection) BM25's nDCG@10 per analysis and repeated-words rule beside bm25s's, measured in the same run.

    .venv/bin/python bench/analysis.py                       # 100,000 synthetic documents (bench/synthetic.py)
    .venv/bin/python bench/analysis.py --docs 20000 --ticks 5
    .venv/bin/python bench/analysis.py --data PATH           # a BEIR folder or zip: quality beside bm25s too

Each index is built twice and the faster kept (the first build of a process also loads the compiled tokeniser);
a tick is `Engine.run("BM25", ...)` at a new k1 (the slider's step, 0.05), the median of `--ticks`. bm25s (Lucene's
method and idf) gets the lab's tokens, so the comparison is BM25's, not the tokenisers'; its scores lack Lucene's
constant factor k1 + 1, which changes no ranking.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
import synthetic  # noqa: E402

from retrieval.core.params import Params  # noqa: E402
from retrieval.corpus import dataset as datasets  # noqa: E402
from retrieval.corpus.text import Analysis, build_index  # noqa: E402
from retrieval.engine.engine import Engine, warm_up  # noqa: E402
from retrieval.evaluation import metrics  # noqa: E402
from retrieval.retrievers import bm25  # noqa: E402

ANALYSES = (
    Analysis(),
    Analysis("none", "lucene"),
    Analysis("none", "none"),
    Analysis("snowball"),
    Analysis("porter"),
    Analysis("snowball", "lucene"),
)


def build_times(ds, analyses=ANALYSES) -> list[tuple[str, float, int]]:
    """(analysis, the faster of two index builds in seconds, terms) per analysis."""
    out = []
    for a in analyses:
        times = []
        for _ in range(2):
            t = time.perf_counter()
            ix = build_index(ds.doc_texts, analysis=a)
            times.append(time.perf_counter() - t)
        out.append((f"{a.stemmer}/{a.stopwords}", min(times), int(ix.terms.size)))
    return out


def tick_times(ds, analysis: Analysis, ticks: int) -> float:
    """The median seconds of a k1 step of BM25 (the first run not counted)."""
    e = Engine(ds, analysis=analysis)
    p = Params(stemmer=analysis.stemmer, stopwords=analysis.stopwords)
    e.run("BM25", p)
    times = []
    for i in range(ticks):
        t = time.perf_counter()
        e.run("BM25", replace(p, k1=round(1.25 + 0.05 * i, 2)))
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def quality(ds, analyses=ANALYSES) -> list[tuple[str, str, float, float]]:
    """(analysis, rule, the lab's BM25 nDCG@10, bm25s's on the lab's tokens) per analysis and rule."""
    import bm25s

    out = []
    m = metrics.parse("ndcg@10")
    for a in analyses:
        e = Engine(ds, analysis=a)
        docs = [e.index.analyse(x) or ["\u0000"] for x in ds.doc_texts]
        r = bm25s.BM25(k1=1.2, b=0.75, method="lucene", idf_method="lucene")
        r.index(docs, show_progress=False)
        for rule in ("once", "each"):
            p = Params(stemmer=a.stemmer, stopwords=a.stopwords, query_words=rule)
            ours = float(np.nanmean(e.evaluate(p, ["ndcg@10"]).values["BM25"]["ndcg@10"]))
            scores = np.zeros((ds.n_queries, ds.n_docs))
            for q, text in enumerate(ds.query_texts):
                terms = [t for t in e.index.analyse(text) if t in e.index.vocabulary]
                if terms:
                    scores[q] = r.get_scores(list(dict.fromkeys(terms)) if rule == "once" else terms)
            ranking = bm25.search(ds, sp.csr_matrix(scores), 100)
            theirs = float(
                np.nanmean(metrics.per_query(ds.qrels, ds.n_queries, ranking.judged_rank, m.name)[ds.evaluated])
            )
            out.append((f"{a.stemmer}/{a.stopwords}", rule, ours, theirs))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--ticks", type=int, default=9)
    ap.add_argument("--data", default=None, help="a BEIR folder or zip: quality per analysis beside bm25s")
    args = ap.parse_args(argv)
    warm_up()
    if args.data:
        ds = datasets.load(args.data)
        print(f"{ds.name}: {ds.n_docs:,} documents, {ds.n_queries:,} questions\n")
        print("| analysis | repeated words | nDCG@10, the lab | nDCG@10, bm25s (the lab's tokens) |\n|---|---|---|---|")
        for a, rule, ours, theirs in quality(ds):
            print(f"| {a} | {rule} | {ours:.4f} | {theirs:.4f} |")
        print()
    else:
        ds = synthetic.load(args.docs)
    print(f"{ds.name}: {ds.n_docs:,} documents\n\n| analysis | index build (s) | terms |\n|---|---|---|")
    for a, s, n in build_times(ds):
        print(f"| {a} | {s:.2f} | {n:,} |")
    print("\n| index | BM25 k1 tick (median, ms) |\n|---|---|")
    for a in (Analysis(), Analysis("snowball")):
        print(f"| {a.stemmer}/{a.stopwords} | {tick_times(ds, a, args.ticks) * 1e3:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
