"""What BM25's counts would cost from each question term's postings sorted by (count, document length).

Not the product's path: a measurement for issue 15's k1 tick, the next lever after bench/RESULTS.md's tenth round.

For one count f, a term's weight idf * (f * (k1 + 1)) / (f + norm) only falls as the document gets longer, at any
k1 >= 0 and b in [0, 1], and in floating point too: `length_norm` and `bm25_weight` are each a chain of operations
that rounding keeps monotone. So with a term's postings sorted by count, then by length, the postings weighing
more than a score s are, within each count, a prefix found by a binary search, whatever (k1, b). The script times,
on one thread, at k1 = 1.25, b = 0.75:

* the documents above each judged document below the cut (the 316th best), counted by binary searches, then the
  multi-term documents' postings taken off and their sums added (checked equal to the count over the reference's
  dense row);
* the postings at or above the cut found the same way (the candidates: prefixes);
* the sums of the multi-term documents, which no sort spares;
* beside them, today's `bm25.run` on one thread (the weights, then `bm25_rank`), hinted by the run before.

    .venv/bin/python bench/sorted_postings.py [--docs 100000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import synthetic  # noqa: E402

from retrieval import _kernels as K  # noqa: E402
from retrieval import bm25  # noqa: E402
from retrieval.engine import Engine  # noqa: E402
from retrieval.ranking import THRESHOLD  # noqa: E402


@njit(inline="always")
def _above(s, strict, u, g_lo, g_hi, f, s_doc, idf, norm, k1p1):
    """The postings of group [g_lo, g_hi) (term u, count f, lengths ascending) weighing more than s (at least s
    when not strict): a binary search, the weight computed as bm25.bm25_weight does."""
    lo, hi = g_lo, g_hi
    while lo < hi:
        mid = (lo + hi) >> 1
        x = idf[u] * ((f * k1p1) / (f + norm[s_doc[mid]]))
        if x > s or (not strict and x == s):
            lo = mid + 1
        else:
            hi = mid
    return lo - g_lo


@njit
def counts_above(jq, js, q_ptr, q_u, t_gptr, g_start, g_end, g_f, s_doc, idf, norm, k1p1, msum, m_ptr, m_start, wm,
                 out):
    """Per judged document (question jq, ascending; score js): the documents scoring more than it. Every posting
    of the question's terms above js (binary searches), less the multi-term documents' postings above it, plus
    those documents whose sum (msum) is above it (wm: their postings' weights, as `multi_sums` gathered them)."""
    i = 0
    while i < jq.size:
        q = jq[i]
        k = i
        while k < jq.size and jq[k] == q:
            k += 1
        for r in range(i, k):
            c = 0
            for a in range(q_ptr[q], q_ptr[q + 1]):
                u = q_u[a]
                for g in range(t_gptr[u], t_gptr[u + 1]):
                    c += _above(js[r], True, u, g_start[g], g_end[g], g_f[g], s_doc, idf, norm, k1p1)
            out[r] = c
        e0, e1 = m_start[m_ptr[q]], m_start[m_ptr[q + 1]]
        j0, j1 = m_ptr[q], m_ptr[q + 1]
        for r in range(i, k):
            c = 0
            for e in range(e0, e1):
                c += wm[e] > js[r]
            d = 0
            for j in range(j0, j1):
                d += msum[j] > js[r]
            out[r] += d - c
        i = k


@njit
def postings_at_least(cut, q_ptr, q_u, t_gptr, g_start, g_end, g_f, s_doc, idf, norm, k1p1):
    """How many postings of each question's terms weigh at least its cut (binary searches; the candidates' prefixes)."""
    total = 0
    for q in range(cut.size):
        for a in range(q_ptr[q], q_ptr[q + 1]):
            u = q_u[a]
            for g in range(t_gptr[u], t_gptr[u + 1]):
                total += _above(cut[q], False, u, g_start[g], g_end[g], g_f[g], s_doc, idf, norm, k1p1)
    return total


@njit
def multi_sums(m_start, m_up, w, out, wm):
    """Each multi-term document's score: its postings' weights summed in term order (the pass's order); the
    weights gathered into wm on the way, in m_up's order."""
    for j in range(out.size):
        e0 = m_start[j]
        x = w[m_up[e0]]
        wm[e0] = x
        for e in range(e0 + 1, m_start[j + 1]):
            y = w[m_up[e]]
            wm[e] = y
            x += y
        out[j] = x


def best_of(fn, *args, n: int = 11) -> float:
    """The fastest of n calls, in seconds (after one call that compiles)."""
    fn(*args)
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=100_000, help="synthetic corpus size (bench/synthetic.py)")
    a = ap.parse_args()
    k1, b, m = 1.25, 0.75, 316
    ds = synthetic.load(a.docs)
    eng = Engine(ds)
    p, bmi = eng.plan, eng.bm25
    run = bm25.run(bmi, p, ds, k1, b, 100, keep=m)
    norm = bm25.length_norm(bmi.doc_len, bmi.avg_len, k1, b)
    w = np.empty(p.u_docs.size)
    K.bm25_weights(np.arange(p.terms.size), p.by_term, norm, k1 + 1.0, w, p.g_post, np.empty(p.u_docs.size))

    # each term's postings by count (descending), then length (ascending): groups of one count
    term_of = np.repeat(np.arange(p.terms.size), np.diff(p.u_ptr))
    order = np.lexsort((bmi.doc_len[p.u_docs], -p.u_f, term_of))
    s_doc, s_f, s_term = p.u_docs[order].astype(np.int64), p.u_f[order], term_of[order]
    g_start = np.flatnonzero(np.r_[True, (s_term[1:] != s_term[:-1]) | (s_f[1:] != s_f[:-1])])
    g_end = np.r_[g_start[1:], s_doc.size]
    t_gptr = np.searchsorted(s_term[g_start], np.arange(p.terms.size + 1))
    g_f = s_f[g_start]
    groups = (t_gptr[p.q_u + 1] - t_gptr[p.q_u]).sum()
    terms = (p.q_ptr, p.q_u, t_gptr, g_start, g_end, g_f, s_doc, p.idf_u, norm, k1 + 1.0)

    msum, wm = np.empty(p.m_start.size - 1), np.empty(p.m_up.size)
    t_msum = best_of(multi_sums, p.m_start, p.m_up, w, msum, wm)
    cut = np.where(run.n_top >= m, run.top_s[:, m - 1], -np.inf)  # with fewer kept, every document is kept
    qr = ds.qrels
    ok = qr.doc >= 0
    js_all = np.zeros(qr.doc.size)
    js_all[ok] = run.at(qr.query[ok], qr.doc[ok])
    low = ok & (js_all > THRESHOLD) & (js_all < cut[qr.query])
    order_q = np.argsort(qr.query[low], kind="stable")
    jq, js = qr.query[low].astype(np.int64)[order_q], js_all[low][order_q]
    out = np.zeros(jq.size, dtype=np.int64)
    t_judged = best_of(counts_above, jq, js, *terms, msum, p.m_ptr, p.m_start, wm, out)
    for q in np.unique(jq):  # the reference: the dense row of every question with such a judged document
        row = run.row(int(q))
        sel = jq == q
        want = (row[None, :] > js[sel][:, None]).sum(axis=1)
        assert np.array_equal(out[sel], want), (q, out[sel], want)
    found = postings_at_least(cut, *terms)
    t_found = best_of(postings_at_least, cut, *terms)

    one = []
    os.environ["RETRIEVAL_THREADS"] = "1"  # kernels.threads() reads it at each call
    prev = run
    for i in range(7):  # k1 steps of 0.05, each run hinted by the one before, as the app's
        t = time.perf_counter()
        prev = bm25.run(bmi, p, ds, round(k1 + 0.05 * (i + 1), 2), b, 100, keep=m, hint=prev)
        one.append(time.perf_counter() - t)
    del os.environ["RETRIEVAL_THREADS"]

    print(f"{ds.n_docs:,} documents, {ds.n_queries:,} questions; k1 = {k1}, b = {b}; one thread, best of 11")
    print(f"postings of the question terms {p.u_docs.size:,}; read by today's pass a tick {p.entries:,}; groups of one "
          f"count over the questions' terms {groups:,} ({groups / ds.n_queries:.1f} a question)")
    rows = [
        ("today: `bm25.run` (weights, then `bm25_rank`), one thread, median of 7", statistics.median(one)),
        (f"the multi-term documents' sums, their weights kept in order ({p.m_start.size - 1:,} documents, "
         f"{p.m_up.size:,} postings)", t_msum),
        (f"the {jq.size:,} judged documents below the cut: the documents above each (equal to the dense rows' counts)",
         t_judged),
        (f"the postings at or above each question's cut ({found:,}): found by binary searches", t_found),
    ]
    print()
    print("| what | time |")
    print("|---|---|")
    for what, seconds in rows:
        print(f"| {what} | {1000 * seconds:.2f} ms |")

if __name__ == "__main__":
    main()
