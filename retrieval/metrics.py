"""Retrieval metrics computed from the ranks of the judged documents, for all questions at once.

Names follow ranx and trec_eval: ``hit@k`` (trec_eval's success_k), ``recall@k``, ``precision@k`` (P_k),
``mrr`` (recip_rank; ``mrr@k`` cuts the list at k), ``ndcg@k`` (ndcg_cut_k, linear gain) and ``ndcg_exp@k``
(gain 2^g - 1, declared by its name). A question with no relevant document has no value (NaN) and is left
out of every mean; a question a system does not answer scores zero.

nDCG@k = DCG@k / IDCG@k, DCG@k = sum over ranks r <= k of gain(grade at r) / log2(r + 1), and the ideal DCG
comes from *all* the question's judged grades, retrieved or not (Järvelin & Kekäläinen, ACM TOIS 2002).

Worked example (the article's): relevant {a: 2, b: 1, c: 1}, ranking x y a b z:
hit@3 = 1, recall@5 = 2/3, RR = 1/3, nDCG@5 = (2/log2(4) + 1/log2(5)) / (2 + 1/log2(3) + 1/log2(4)) = 0.457.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .dataset import Qrels
from .errors import InputError

KINDS = ("hit", "recall", "precision", "mrr", "ndcg", "ndcg_exp")
DEFAULT_METRICS = ("hit@3", "recall@5", "mrr", "ndcg@5")
_NAME = re.compile(r"^(hit|recall|precision|mrr|ndcg|ndcg_exp)(?:@(\d+))?$")


@dataclass(frozen=True)
class Metric:
    """A parsed metric name: its kind and cutoff (None = the whole list, for mrr only)."""

    kind: str
    k: int | None

    @property
    def name(self) -> str:
        """The canonical name, e.g. ``ndcg@5``."""
        return self.kind if self.k is None else f"{self.kind}@{self.k}"


def parse(name: str) -> Metric:
    """A metric from its name, or an error listing the valid forms."""
    m = _NAME.match(name.strip().lower())
    if not m:
        raise InputError(
            f"unknown metric {name!r}: valid are hit@k, recall@k, precision@k, mrr, mrr@k, ndcg@k, ndcg_exp@k (k >= 1)"
        )
    kind, k = m.group(1), m.group(2)
    if k is None and kind != "mrr":
        raise InputError(f"metric {name!r} needs a cutoff, e.g. {kind}@10")
    if k is not None and int(k) < 1:
        raise InputError(f"metric {name!r}: the cutoff must be >= 1")
    return Metric(kind, None if k is None else int(k))


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


def per_query(qrels: Qrels, n_queries: int, judged_rank: np.ndarray, metric: Metric | str,
              ideal: np.ndarray | None = None) -> np.ndarray:
    """One metric for every question (NaN for a question without a relevant document). For nDCG, `ideal` is
    `ideal_dcg(qrels, n_queries, k, exponential)` if already computed."""
    m = parse(metric) if isinstance(metric, str) else metric
    rel = qrels.relevant
    n_rel = np.bincount(qrels.query[rel], minlength=n_queries).astype(np.float64)
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
