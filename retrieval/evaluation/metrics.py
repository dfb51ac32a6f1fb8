"""Retrieval metrics computed from the ranks of the judged documents, for all questions at once.

Names follow ranx and trec_eval: ``hit@k`` (trec_eval's success_k), ``recall@k``, ``precision@k`` (P_k),
``mrr`` (recip_rank; ``mrr@k`` cuts the list at k), ``ndcg@k`` (ndcg_cut_k, linear gain), ``ndcg_exp@k``
(gain 2^g - 1, declared by its name), ``map`` (map; ``map@k`` is map_cut_k), ``rprec`` (Rprec), ``bpref``
(bpref) and ``judged@k`` (the share of the top k that carries a judgement, any grade; P_k's denominator).
A question with no relevant document has no value (NaN) and is left out of every mean; a question a system
does not answer scores zero.

A grade of 0 or less is a judgement of "not relevant" everywhere here. trec_eval reads a negative grade as
"in the pool, not judged" instead: bpref (and only bpref) then differs, since trec_eval leaves such a document
out of the non-relevant ones (tests/evaluation/test_metrics.py shows the case).

nDCG@k = DCG@k / IDCG@k, DCG@k = sum over ranks r <= k of gain(grade at r) / log2(r + 1), and the ideal DCG
comes from *all* the question's judged grades, retrieved or not (Järvelin & Kekäläinen, ACM TOIS 2002).

Worked example (the article's): relevant {a: 2, b: 1, c: 1}, ranking x y a b z:
hit@3 = 1, recall@5 = 2/3, RR = 1/3, nDCG@5 = (2/log2(4) + 1/log2(5)) / (2 + 1/log2(3) + 1/log2(4)) = 0.457.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..core.errors import InputError
from ..corpus.dataset import Qrels

KINDS = ("hit", "recall", "precision", "mrr", "ndcg", "ndcg_exp", "map", "rprec", "bpref", "judged")
CUTOFF_OPTIONAL = ("mrr", "map")  # without a cutoff: the whole list
NO_CUTOFF = ("rprec", "bpref")  # their depth is set by the question's judgements, never by k
DEFAULT_METRICS = ("hit@3", "recall@5", "mrr", "ndcg@5")
LABELS = {
    "ndcg": "nDCG",
    "ndcg_exp": "nDCG_exp",
    "mrr": "MRR",
    "precision": "P",
    "map": "MAP",
    "rprec": "R-prec",
}  # the others as named
_NAME = re.compile(r"^(" + "|".join(KINDS) + r")(?:@(\d+))?$")


def _forms(kind: str) -> tuple[str, ...]:
    """How a kind may be named: rprec; mrr and mrr@k; hit@k."""
    return (kind,) if kind in NO_CUTOFF else (kind, f"{kind}@k") if kind in CUTOFF_OPTIONAL else (f"{kind}@k",)


VALID_FORMS = (
    ", ".join(form for kind in KINDS for form in _forms(kind)) + " (k >= 1)"
)  # for the error messages and help


@dataclass(frozen=True)
class Metric:
    """A parsed metric name: its kind and cutoff (None = the whole list: mrr and map, and always rprec and bpref)."""

    kind: str
    k: int | None

    @property
    def name(self) -> str:
        """The canonical name, e.g. ``ndcg@5``."""
        return self.kind if self.k is None else f"{self.kind}@{self.k}"

    @property
    def label(self) -> str:
        """The name as a sentence writes it, e.g. ``nDCG@5``, ``MRR``, ``P@10`` (the app's labels)."""
        return LABELS.get(self.kind, self.kind) + ("" if self.k is None else f"@{self.k}")


def parse(name: str) -> Metric:
    """A metric from its name, or an error listing the valid forms."""
    m = _NAME.match(name.strip().lower())
    if not m:
        raise InputError(f"unknown metric {name!r}: valid are {VALID_FORMS}")
    kind, k = m.group(1), m.group(2)
    if k is not None and kind in NO_CUTOFF:
        raise InputError(
            f"metric {name!r} takes no cutoff (its depth is the question's number of relevant documents): write {kind}"
        )
    if k is None and kind not in CUTOFF_OPTIONAL + NO_CUTOFF:
        raise InputError(f"metric {name!r} needs a cutoff, e.g. {kind}@10")
    if k is not None and int(k) < 1:
        raise InputError(f"metric {name!r}: the cutoff must be >= 1")
    return Metric(kind, None if k is None else int(k))


def names_at(cutoffs) -> list[str]:
    """Every metric name `parse` takes at these cutoffs, in KINDS order, each kind's cutoffs ascending: a kind
    without a cutoff once (rprec), one whose cutoff is optional also whole-list (mrr, mrr@5, ...).

    >>> names_at([10, 5])[:4], names_at([5])[-3:]
    (['hit@5', 'hit@10', 'recall@5', 'recall@10'], ['rprec', 'bpref', 'judged@5'])
    """
    cuts = sorted({int(k) for k in cutoffs})
    out = []
    for kind in KINDS:
        if kind in CUTOFF_OPTIONAL + NO_CUTOFF:
            out.append(kind)
        if kind not in NO_CUTOFF:
            out.extend(f"{kind}@{k}" for k in cuts if k >= 1)
    return out


def parse_list(names: str | list[str] | tuple[str, ...]) -> list[Metric]:
    """Metrics from a comma-separated string or a list, duplicates removed, order kept."""
    items = names.split(",") if isinstance(names, str) else list(names)
    items = [s for s in (x.strip() for x in items) if s]
    if not items:
        raise InputError("metrics: the list is empty")
    out: dict[str, Metric] = {}
    for s in items:
        m = parse(s)
        out.setdefault(m.name, m)
    return list(out.values())


def gain(grade: np.ndarray, exponential: bool = False) -> np.ndarray:
    """Gain of a grade: the grade itself (linear) or 2^grade - 1; grades at or below 0 gain nothing."""
    g = np.maximum(np.asarray(grade, dtype=np.float64), 0.0)
    return np.exp2(g) - 1.0 if exponential else g


def discount(rank: np.ndarray) -> np.ndarray:
    """The DCG discount of a 1-based rank, 1 / log2(rank + 1)."""
    return 1.0 / np.log2(np.asarray(rank, dtype=np.float64) + 1.0)


def _sum_by_query(values: np.ndarray, query: np.ndarray, n_queries: int) -> np.ndarray:
    """Sum of per-judgement values per question."""
    return np.bincount(query, weights=values, minlength=n_queries)


def ideal_dcg(qrels: Qrels, n_queries: int, k: int, exponential: bool = False) -> np.ndarray:
    """The best DCG@k a question can reach: its judged gains sorted, best first, discounted by position.

    It depends on the judgements only: `per_query` takes it precomputed (`ideal`), so that every system of one
    evaluation shares it.
    """
    g = gain(qrels.grade, exponential)
    order = np.lexsort((-g, qrels.query))
    q, g = qrels.query[order], g[order]
    first = np.searchsorted(q, q)  # index of the question's first judgement
    position = np.arange(q.size) - first + 1
    keep = position <= k
    return _sum_by_query(g[keep] * discount(position[keep]), q[keep], n_queries)


def first_relevant_rank(qrels: Qrels, n_queries: int, judged_rank: np.ndarray) -> np.ndarray:
    """Rank of each question's first relevant document, 0 when none is retrieved."""
    hit = qrels.relevant & (judged_rank > 0)
    best = np.full(n_queries, np.iinfo(np.int64).max)
    np.minimum.at(best, qrels.query[hit], judged_rank[hit])
    return np.where(best == np.iinfo(np.int64).max, 0, best)


def _relevant_count(qrels: Qrels, n_queries: int) -> np.ndarray:
    """R per question: the judgements with a positive grade, as floats."""
    return np.bincount(qrels.query[qrels.relevant], minlength=n_queries).astype(np.float64)


def _over_relevant(total: np.ndarray, n_rel: np.ndarray) -> np.ndarray:
    """total / R per question; NaN for a question without a relevant document (no value, as every metric here)."""
    return np.where(n_rel > 0, total / np.where(n_rel > 0, n_rel, 1.0), np.nan)


def _in_rank_order(query: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """The order that lists the given judgements question by question, each question's by rank (best first)."""
    return np.lexsort((rank, query))


def _running_count(query: np.ndarray, flag: np.ndarray) -> np.ndarray:
    """Along judgements sorted by question then rank: how many of the question's flagged ones come at or before each."""
    c = np.cumsum(flag, dtype=np.int64)
    first = np.searchsorted(query, query)  # index of the question's first entry
    return c - (c[first] - flag[first]) if c.size else c


def average_precision(qrels: Qrels, n_queries: int, judged_rank: np.ndarray, k: int | None = None) -> np.ndarray:
    """Average precision per question, trec_eval's ``map`` (and, with `k`, its ``map_cut_k``):

    AP@k = (1 / R) * sum over the relevant documents d retrieved at rank r_d <= k of P@r_d,
    P@r_d = (relevant documents at ranks <= r_d) / r_d, R = the question's number of relevant documents (all of
    them, retrieved or not: an unretrieved one adds 0 to the sum and 1 to R).

    Worked example: relevant {a, b, c}, ranking x a y b z: a at 2 (P = 1/2), b at 4 (P = 2/4), c not retrieved:
    AP = (1/2 + 2/4) / 3 = 1/3; AP@3 = (1/2) / 3 = 1/6.
    """
    n_rel = _relevant_count(qrels, n_queries)
    cut = np.iinfo(np.int64).max if k is None else k
    sel = qrels.relevant & (judged_rank > 0) & (judged_rank <= cut)
    q, r = qrels.query[sel], judged_rank[sel]
    order = _in_rank_order(q, r)
    q, r = q[order], r[order]
    above = _running_count(q, np.ones(q.size, dtype=np.int64))  # relevant documents at ranks <= r, r included
    return _over_relevant(_sum_by_query(above / r, q, n_queries), n_rel)


def r_precision(qrels: Qrels, n_queries: int, judged_rank: np.ndarray) -> np.ndarray:
    """R-precision per question, trec_eval's ``Rprec``: (relevant documents in the top R) / R, R = the question's
    number of relevant documents. At R it equals both precision@R and recall@R.

    Worked example: relevant {a, b, c} (R = 3), ranking a x b c: the top 3 holds a and b, Rprec = 2/3.
    """
    n_rel = _relevant_count(qrels, n_queries)
    sel = qrels.relevant & (judged_rank > 0) & (judged_rank <= n_rel[qrels.query])
    return _over_relevant(np.bincount(qrels.query[sel], minlength=n_queries).astype(np.float64), n_rel)


def bpref(qrels: Qrels, n_queries: int, judged_rank: np.ndarray) -> np.ndarray:
    """Binary preference per question, trec_eval's ``bpref`` (Buckley & Voorhees, SIGIR 2004):

    bpref = (1 / R) * sum over the retrieved relevant documents d of (1 - min(n_d, R) / min(N, R)),
    n_d = the judged non-relevant documents (grade <= 0) retrieved above d, N = the question's judged non-relevant
    documents (retrieved or not), R = its relevant ones. Only judgements count: a document no judgement names
    neither helps nor hurts. A term with n_d = 0 is 1 (so N = 0 gives the recall of the whole list); when
    R > N the denominator is N, as trec_eval's min(N, R).

    Worked example: relevant {a, b} (R = 2), judged non-relevant {n, m, o} (N = 3), ranking n a u m b (u unjudged):
    a has 1 judged non-relevant above it, b has 2: bpref = ((1 - 1/2) + (1 - 2/2)) / 2 = 1/4.
    """
    n_rel = _relevant_count(qrels, n_queries)
    n_nonrel = np.bincount(qrels.query[~qrels.relevant], minlength=n_queries).astype(np.float64)
    ret = judged_rank > 0
    q, r, rel = qrels.query[ret], judged_rank[ret], qrels.relevant[ret]
    order = _in_rank_order(q, r)
    q, rel = q[order], rel[order]
    above = _running_count(q, (~rel).astype(np.int64))[rel].astype(np.float64)  # a relevant one adds nothing to it
    q = q[rel]
    r_of, n_of = n_rel[q], n_nonrel[q]
    term = np.where(above > 0, 1.0 - np.minimum(above, r_of) / np.maximum(np.minimum(n_of, r_of), 1.0), 1.0)
    return _over_relevant(_sum_by_query(term, q, n_queries), n_rel)


def judged_at(qrels: Qrels, n_queries: int, judged_rank: np.ndarray, k: int) -> np.ndarray:
    """judged@k per question: (documents in the top k that carry a judgement, any grade, 0 and below included) / k,
    divided by k even when fewer than k were retrieved, as trec_eval's P_k (it is P_k with every judged document
    counted relevant). It measures the judgements, not the system: below 1, the other metrics count the unjudged
    documents of the top k as not relevant and so understate the system if some of them are relevant. Like every
    metric here it has no value (NaN) for a question without a relevant document, left out of the means.

    Worked example: judged {a: 2, n: 0}, ranking a u n v (u, v unjudged): judged@4 = 2/4, judged@1 = 1/1,
    judged@10 = 2/10.
    """
    n_rel = _relevant_count(qrels, n_queries)
    within = (judged_rank > 0) & (judged_rank <= k)
    found = np.bincount(qrels.query[within], minlength=n_queries).astype(np.float64)
    return np.where(n_rel > 0, found / k, np.nan)


def per_query(
    qrels: Qrels, n_queries: int, judged_rank: np.ndarray, metric: Metric | str, ideal: np.ndarray | None = None
) -> np.ndarray:
    """One metric for every question (NaN for a question without a relevant document). For nDCG, `ideal` is
    `ideal_dcg(qrels, n_queries, k, exponential)` if already computed."""
    m = parse(metric) if isinstance(metric, str) else metric
    if m.kind == "map":
        return average_precision(qrels, n_queries, judged_rank, m.k)
    if m.kind == "rprec":
        return r_precision(qrels, n_queries, judged_rank)
    if m.kind == "bpref":
        return bpref(qrels, n_queries, judged_rank)
    if m.kind == "judged":
        return judged_at(qrels, n_queries, judged_rank, m.k)
    rel = qrels.relevant
    n_rel = _relevant_count(qrels, n_queries)
    k = m.k if m.k is not None else np.iinfo(np.int64).max
    within = rel & (judged_rank > 0) & (judged_rank <= k)
    if m.kind in ("hit", "recall", "precision"):
        found = np.bincount(qrels.query[within], minlength=n_queries).astype(np.float64)
        if m.kind == "hit":
            value = (found > 0).astype(np.float64)
        elif m.kind == "recall":
            value = found / np.where(n_rel > 0, n_rel, 1.0)
        else:
            value = found / m.k
    elif m.kind == "mrr":
        first = first_relevant_rank(qrels, n_queries, np.where(within, judged_rank, 0))
        value = np.where(first > 0, 1.0 / np.maximum(first, 1), 0.0)
    else:
        exponential = m.kind == "ndcg_exp"
        g = gain(qrels.grade[within], exponential) * discount(judged_rank[within])
        dcg = _sum_by_query(g, qrels.query[within], n_queries)
        idcg = ideal if ideal is not None else ideal_dcg(qrels, n_queries, m.k, exponential)
        value = np.where(idcg > 0, dcg / np.where(idcg > 0, idcg, 1.0), 0.0)
    return np.where(n_rel > 0, value, np.nan)


def mean(values: np.ndarray) -> float:
    """Mean over the questions that have a value (at least one relevant document)."""
    v = values[~np.isnan(values)]
    return float(v.mean()) if v.size else float("nan")


def judged_ranks_from_list(ranking: list[str], judged: dict[str, int]) -> tuple[Qrels, np.ndarray]:
    """Qrels and judged ranks of a single toy ranking (ids), for teaching: every metric then applies unchanged."""
    ids = list(judged)
    pos = {d: r for r, d in enumerate(ranking, 1)}
    qrels = Qrels(
        query=np.zeros(len(ids), dtype=np.int64),
        doc=np.arange(len(ids), dtype=np.int64),
        doc_id=np.array(ids, dtype=object),
        grade=np.array([judged[d] for d in ids], dtype=np.int64),
    )
    return qrels, np.array([pos.get(d, 0) for d in ids], dtype=np.int64)


# ------------------------------------------------------------------------------ where a metric means nothing


def without_non_relevant(qrels: Qrels, n_queries: int) -> tuple[int, int]:
    """(questions with a relevant document but no judgement of a non-relevant one (grade <= 0), questions with a
    relevant document): on the first, bpref is the whole list's recall and judged@k is precision@k."""
    has_rel = _relevant_count(qrels, n_queries) > 0
    has_non = np.bincount(qrels.query[~qrels.relevant], minlength=n_queries) > 0
    return int((has_rel & ~has_non).sum()), int(has_rel.sum())


def meaning_warnings(qrels: Qrels, n_queries: int, names) -> list[str]:
    """One warning per metric kind among `names` that cannot mean what it says on these judgements, in KINDS order:

    * bpref, on the questions no judgement says *not relevant* for: every listed relevant document counts 1 wherever
      it is listed, so bpref is the recall of the whole list and rewards ranking anything (a system that lists every
      document scores 1 there);
    * judged@k, on the same questions: every judged document is relevant, so judged@k is precision@k and cannot
      show a hole in the judgements.

    Worked example: relevant-only judgements of 225 questions (Cranfield's) give both warnings, "225 of the 225
    questions ..."; a question with a grade-0 judgement is left out of the count, and none left gives no warning.
    """
    kinds = {parse(n).kind if isinstance(n, str) else n.kind for n in names}
    if not kinds & {"bpref", "judged"}:
        return []
    bare, total = without_non_relevant(qrels, n_queries)
    if not bare:
        return []
    which = f"{bare:,} of the {total:,} questions with a relevant document have no document judged not relevant"
    out = []
    if "bpref" in kinds:
        out.append(
            f"bpref: {which}. There bpref counts each relevant document listed, wherever it is listed (the recall "
            "of the whole list), so it rewards ranking anything: a system that lists every document scores 1. "
            "Read nDCG or recall@k instead."
        )
    if "judged" in kinds:
        out.append(
            f"judged@k: {which}. There every judged document is relevant, so judged@k equals precision@k and "
            "cannot show a hole in the judgements."
        )
    return out
