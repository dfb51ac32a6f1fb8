"""One question's fusion explained: each document's members' ranks and contributions."""

from __future__ import annotations

import numpy as np

import retrieval.fusion as fusion

from ...core.errors import InputError
from ...core.params import Params
from ...corpus.dataset import Dataset
from ...engine.engine import Engine
from ...retrievers.ranking import Ranking, order_by_score
from ...retrievers.systems import Sources
from .fused import Fixed, _fixed_for
from .sweep import engine_for

# ------------------------------------------------------------------------------------------- fusion explained


def _row_ranks(row: np.ndarray, key: np.ndarray, threshold: float) -> np.ndarray:
    """Rank of every document in one score row (score descending, ties by id); 0 when not a result."""
    res = np.flatnonzero(row > threshold)
    order = res[order_by_score(row[res], key[res])]
    out = np.zeros(row.size, dtype=np.int64)
    out[order] = np.arange(1, order.size + 1)
    return out


def member_ranks(dataset: Dataset, ranking: Ranking, row: np.ndarray, q: int) -> np.ndarray:
    """Rank of every document in a member's ranking for question q (0 = not a result): its place in the list the
    ranking keeps (a run's documents outside the corpus keep their places); beyond that list, from the member's
    scores, in the order its list follows, as far as it has results."""
    docs, _ = ranking.top(q)
    out = np.zeros(dataset.n_docs, dtype=np.int64)
    pos = np.arange(1, docs.size + 1)
    inside = docs >= 0
    out[docs[inside][::-1]] = pos[inside][::-1]  # a document listed twice keeps its first place
    n_results = int(ranking.n_results[q])
    if n_results > docs.size:
        rest = np.flatnonzero(out == 0)
        full = _row_ranks(row, dataset.tie_key, -np.inf)[rest]
        out[rest] = np.where(full <= n_results, full, 0)
    return out


def _question(dataset: Dataset, question: int | str) -> int:
    """A question's index from its index or id."""
    if isinstance(question, str):
        if question not in dataset.query_index:
            raise InputError(f"unknown question {question!r}")
        return dataset.query_index[question]
    if not 0 <= int(question) < dataset.n_queries:
        raise InputError(f"question index {question} out of range (0..{dataset.n_queries - 1})")
    return int(question)


def rescuer(holders: tuple[str, ...], n_members: int, relevant: bool = True) -> str | None:
    """Who brought a relevant document of the fused list in from their own top fusion_depth: the one member that
    alone had it there, "both" (two of them), "all" (every one of more than two), "several" (some), None (none).
    Only a relevant document is rescued: for any other (`relevant` False) the answer is None."""
    if not relevant or not holders:
        return None
    if len(holders) == 1:
        return holders[0]
    if len(holders) == n_members and n_members > 2:
        return "all"
    return "both" if len(holders) == 2 else "several"


def explain_fusion(
    dataset: Dataset,
    question: int | str,
    kind: str = "weighted",
    params: Params = Params(),
    engine: Engine | None = None,
    fixed: Fixed | None = None,
    top: int | None = None,
    sources: Sources = (),
) -> list[dict]:
    """Each document's contribution from each member of `params.members` to one question's fused list, best first.

    Rows: the fused top `top` (default: the fusion depth) and every relevant document. Columns: ``doc_id``,
    ``grade`` (0 = not judged relevant), ``judged`` (a judgement of this question names the document: a grade 0
    of an unjudged document is no judgement), ``ranks`` ({member: its rank, None = not a result}), ``contributions``
    ({member: value}: w x min-max score in the weighted fusion, w its weight (alpha and 1 - alpha for two);
    1 / (k + rank) for a document in the member's top fusion_depth in RRF, else 0), ``total`` (their sum, in
    member order, as the fusion adds), ``fused_rank`` (None = not in the fused list), ``in_top`` (the members
    whose top fusion_depth holds the document) and ``rescued_by`` (only for a relevant document of the fused list;
    see `rescuer`: the member that alone had it in its top fusion_depth, "both", "all", or None).
    """
    if kind not in ("weighted", "rrf", "RRF"):
        raise InputError(f"fusion kind must be 'weighted' or 'rrf', got {kind!r}")
    q = _question(dataset, question)
    engine = engine_for(dataset, params, engine)
    fixed = _fixed_for(dataset, params, engine, fixed, sources)
    names, depth, n = fixed.members, params.fusion_depth, dataset.n_docs
    top = depth if top is None else int(top)
    key = dataset.tie_key
    rows = [r[q] for r in fixed.rows]
    ranks = [member_ranks(dataset, rk, row, q) for rk, row in zip(fixed.rankings, rows)]
    in_top = np.array([(r > 0) & (r <= depth) for r in ranks]).reshape(len(names), n)
    if kind == "weighted":
        weights = params.fusion_weights()
        parts = [w * fusion.minmax(row[None, :])[0] for w, row in zip(weights, rows)]
        total = fusion.fuse_rows(weights, [row[None, :] for row in rows])[0]
        fused = _row_ranks(total, key, -1.0) if fixed.answers[:, q].any() else np.zeros(n, dtype=np.int64)
    else:
        k = params.rrf_k
        points = lambda r: fusion.rrf_points(np.maximum(r, 1).astype(np.float64), k)  # noqa: E731
        parts = [np.where(t, points(r), 0.0) for t, r in zip(in_top, ranks)]
        total = parts[0]
        for p in parts[1:]:
            total = total + p
        # a run's documents outside the corpus are fused as one candidate (the fused list's -1): it takes a place
        outside = 0.0
        for rk in fixed.rankings:
            docs, _ = rk.top(q, depth)
            for r in np.flatnonzero(docs < 0):
                outside = outside + float(fusion.rrf_points(r + 1.0, k))
        candidates = in_top.any(axis=0)
        scored = np.append(np.where(candidates, total, -1.0), outside if outside > 0 else -1.0)
        fused = _row_ranks(scored, np.append(key, key[-1]), -0.5)[:n]
    fused[fused > depth] = 0
    relevant = dataset.relevant_of(q)
    judged = set(dataset.qrels.doc_id[dataset.qrels.query == q].tolist())
    docs = set(np.flatnonzero((fused > 0) & (fused <= top)).tolist())
    docs |= {dataset.doc_index[d] for d in relevant if d in dataset.doc_index}
    out = []
    for d in docs:
        holders = tuple(m for i, m in enumerate(names) if in_top[i, d])
        grade = int(relevant.get(dataset.doc_ids[d], 0))
        out.append(
            {
                "doc_id": dataset.doc_ids[d],
                "grade": grade,
                "judged": dataset.doc_ids[d] in judged,
                "ranks": {m: int(ranks[i][d]) or None for i, m in enumerate(names)},
                "contributions": {m: float(parts[i][d]) for i, m in enumerate(names)},
                "total": float(total[d]),
                "fused_rank": int(fused[d]) or None,
                "in_top": holders,
                "rescued_by": rescuer(holders, len(names), grade > 0) if fused[d] > 0 else None,
            }
        )
    big = np.iinfo(np.int64).max
    out.sort(key=lambda r: (r["fused_rank"] or big, -r["total"], key[dataset.doc_index[r["doc_id"]]]))
    return out
