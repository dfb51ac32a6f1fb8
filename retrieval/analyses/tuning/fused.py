"""The fusion sweeps over fixed member lists: RRF's k and the weighted fusion's alpha."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import retrieval.fusion as fusion

from ...core.errors import InputError
from ...core.params import Params
from ...corpus.dataset import Dataset
from ...engine.engine import Engine
from ...evaluation import metrics
from ...retrievers.ranking import Ranking
from ...retrievers.systems import Sources
from .sweep import ALPHA_GRID, RRF_K_GRID, Sweep, _axis, _ranks, _start, _values, engine_for


@dataclass(frozen=True, eq=False)
class Fixed:
    """What a fusion sweep holds fixed: the members (`params.members`, any systems, extra sources included) at the
    base parameters, each with its ranking, its score of every document (questions x documents, the member's
    `row`, bit-identical to what the fused ranking reads) and whether it answers each question."""

    members: tuple[str, ...]
    rankings: tuple[Ranking, ...]  # per member: its ranking (what RRF fuses)
    rows: tuple[np.ndarray, ...]  # per member: questions x documents scores (what the weighted fusion min-maxes)
    answers: np.ndarray  # members x questions: the member answers the question

    def member(self, name: str) -> int:
        """A member's position, or an error naming the members."""
        if name not in self.members:
            raise InputError(f"{name!r} is not a fused member: the members are {', '.join(self.members)}")
        return self.members.index(name)


def _member_part(
    dataset: Dataset, name: str, params: Params, engine: Engine, sources: Sources
) -> tuple[Ranking, np.ndarray, np.ndarray]:
    """One member at `params`: its ranking, its score of every document (questions x documents) and whether it
    answers each question, from the engine's own run."""
    run = engine.run(name, params, sources)
    member = engine.system(name, sources).member(run)
    rows = np.array([member.row(q) for q in range(dataset.n_queries)], dtype=np.float64).reshape(
        dataset.n_queries, dataset.n_docs
    )
    return run.ranking, rows, np.asarray(member.answers, dtype=bool)


def _combine(members: tuple[str, ...], parts: list[tuple[Ranking, np.ndarray, np.ndarray]], n_queries: int) -> Fixed:
    """A Fixed from each member's part (`_member_part`), in member order."""
    return Fixed(
        tuple(members),
        tuple(p[0] for p in parts),
        tuple(p[1] for p in parts),
        np.array([p[2] for p in parts], dtype=bool).reshape(len(parts), n_queries),
    )


def fixed_parts(dataset: Dataset, params: Params, engine: Engine | None = None, sources: Sources = ()) -> Fixed:
    """The members of `params.members` at `params` (their runs the engine's own, `sources` holding the sources
    that are not registered retrievers: TREC runs, dense vectors), for the fusion sweeps and explanations."""
    engine = engine_for(dataset, params, engine)
    parts = [_member_part(dataset, name, params, engine, sources) for name in params.members]
    return _combine(tuple(params.members), parts, dataset.n_queries)


def _fixed_for(dataset: Dataset, base: Params, engine: Engine, fixed: Fixed | None, sources: Sources) -> Fixed:
    """The given fixed parts (which must be of base's members), or those of `base`."""
    if fixed is None:
        return fixed_parts(dataset, base, engine, sources)
    if fixed.members != tuple(base.members):
        raise InputError(
            f"the fixed parts are of {', '.join(fixed.members)}, the parameters fuse {', '.join(base.members)}"
        )
    return fixed


def _outside_col(docs: np.ndarray, n_docs: int) -> np.ndarray:
    """A ranking's documents with a run's documents outside the corpus (-1) as column n_docs: RRF fuses all of a
    question's outside documents as one candidate (the fused list's -1) whose tie key is the last document's."""
    return np.where(docs >= 0, docs, n_docs)


def _rrf_entries(dataset: Dataset, rankings: tuple[Ranking, ...], depth: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each member's top `depth` as (question * (n_docs + 1) + document, rank) pairs, one array pair per round:
    a round holds at most one entry per candidate, so points added round by round add in the fusion's order."""
    nq, width = dataset.n_queries, dataset.n_docs + 1
    out = []
    for r in rankings:
        lens = np.minimum(np.diff(r.indptr), depth)
        q = np.repeat(np.arange(nq), lens)
        pos = np.arange(lens.sum()) - np.repeat(np.cumsum(lens) - lens, lens)
        keys = q * width + _outside_col(r.docs[np.repeat(r.indptr[:-1], lens) + pos], dataset.n_docs)
        order = np.argsort(keys, kind="stable")  # an entry's round: how many earlier entries share its candidate
        sk = keys[order]
        first = np.searchsorted(sk, sk, side="left")
        occurrence = np.empty(keys.size, dtype=np.int64)
        occurrence[order] = np.arange(keys.size) - first
        for rnd in range(int(occurrence.max()) + 1 if keys.size else 0):
            at = occurrence == rnd
            out.append((keys[at], pos[at] + 1.0))
    return out


def sweep_rrf_k(
    dataset: Dataset,
    metric: str | metrics.Metric,
    ks=RRF_K_GRID,
    engine: Engine | None = None,
    base: Params = Params(),
    fixed: Fixed | None = None,
    sources: Sources = (),
) -> Sweep:
    """RRF's per-question metric over its constant k, fusing the fixed members' lists (top fusion_depth of each)."""
    m, engine, qids = _start(dataset, metric, engine)
    ks = _axis(ks, "rrf_k", 0.0, None)
    fixed = _fixed_for(dataset, base, engine, fixed, sources)
    nq, width, depth = dataset.n_queries, dataset.n_docs + 1, base.fusion_depth
    lists = _rrf_entries(dataset, fixed.rankings, depth)
    keys = np.unique(np.concatenate([k for k, _ in lists])) if lists else np.zeros(0, dtype=np.int64)
    rank_in = np.zeros((len(lists), keys.size))  # each candidate's rank in each list (round), 0 = absent
    for i, (k, r) in enumerate(lists):
        rank_in[i, np.searchsorted(keys, k)] = r
    cq, cd = keys // width, keys % width
    start = np.searchsorted(cq, np.arange(nq + 1))
    slots = int(np.diff(start).max()) if keys.size else 0
    slot = np.arange(keys.size) - start[cq]
    tie_key = np.append(dataset.tie_key, dataset.tie_key[-1] if dataset.n_docs else 0)
    tk = np.full((nq, max(slots, 1)), np.iinfo(np.int64).max)
    tk[cq, slot] = tie_key[cd]
    # each judgement's candidate slot, if it is a candidate
    qrels = dataset.qrels
    jfound, jq, jslot = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if keys.size:
        jk = qrels.query * width + qrels.doc
        jpos = np.minimum(np.searchsorted(keys, jk), keys.size - 1)
        jfound = np.flatnonzero((qrels.doc >= 0) & (keys[jpos] == jk))
        jq, jslot = cq[jpos[jfound]], slot[jpos[jfound]]
    ranks = np.zeros((ks.size, len(qrels)), dtype=np.int64)
    step = max(1, 4_000_000 // max(nq * max(slots, 1) ** 2, 1))
    for lo in range(0, ks.size, step):
        kk = ks[lo : lo + step]
        total = np.zeros((kk.size, keys.size))
        for i in range(len(lists)):
            r = rank_in[i]
            total = total + np.where(r > 0, fusion.rrf_points(np.where(r > 0, r, 1.0)[None, :], kk[:, None]), 0.0)
        t = np.full((kk.size, nq, max(slots, 1)), -np.inf)
        t[:, cq, slot] = total
        ti, tj = t[:, :, :, None], t[:, :, None, :]
        before = (tj > ti) | ((tj == ti) & (tk[None, :, None, :] < tk[None, :, :, None]))
        rank = before.sum(axis=-1) + 1  # k x questions x slots
        ranks[lo : lo + kk.size, jfound] = rank[:, jq, jslot]
    return Sweep("RRF", m.name, ("rrf_k",), (ks,), _values(dataset, ranks, m), qids, base)


def check_alpha_members(members: tuple[str, ...]) -> None:
    """The alpha sweep needs exactly two fused systems: otherwise an error saying where the weights are set."""
    if len(members) != 2:
        raise InputError(
            f"the alpha sweep weighs two fused systems (alpha the first, 1 - alpha the second); {len(members)} "
            f"{'is' if len(members) == 1 else 'are'} fused ({', '.join(members)}): "
            + (
                "a single member has weight 1"
                if len(members) == 1
                else "with more than two, each member's weight is set in the sidebar (--weights on the command line) and alpha is not used"
            )
        )


def sweep_alpha(
    dataset: Dataset,
    metric: str | metrics.Metric,
    alphas=ALPHA_GRID,
    engine: Engine | None = None,
    base: Params = Params(),
    fixed: Fixed | None = None,
    sources: Sources = (),
) -> Sweep:
    """The weighted fusion's per-question metric over alpha, over the fixed scores of exactly two members: alpha x
    min-max(first) + (1 - alpha) x min-max(second), what `Engine.rankings` gives at that alpha without `weights`."""
    m, engine, qids = _start(dataset, metric, engine)
    alphas = _axis(alphas, "alpha", 0.0, 1.0)
    check_alpha_members(base.members)
    fixed = _fixed_for(dataset, base, engine, fixed, sources)
    first, second = (fusion.minmax(r) for r in fixed.rows)
    silent = ~fixed.answers.any(axis=0)
    ranks = np.zeros((alphas.size, len(dataset.qrels)), dtype=np.int64)
    for i, a in enumerate(alphas):
        fused = a * first + (1.0 - a) * second  # fusion.fuse_rows((a, 1 - a), rows), to the last bit
        fused[silent] = -np.inf
        ranks[i] = _ranks(dataset, fused, m, threshold=-1.0, depth=base.fusion_depth)
    return Sweep("weighted", m.name, ("alpha",), (alphas,), _values(dataset, ranks, m), qids, base)


def _weighted_values(dataset: Dataset, m: metrics.Metric, p: Params, fixed: Fixed) -> np.ndarray:
    """The weighted fusion's per-question metric at `p` over fixed members: fusion.fuse_rows with the fusion's
    weights (alpha and 1 - alpha, or each member's), what the engine's weighted ranking gives, to the last bit."""
    fused = np.array(fusion.fuse_rows(p.fusion_weights(), list(fixed.rows)), dtype=np.float64)
    fused[~fixed.answers.any(axis=0)] = -np.inf
    return _values(dataset, _ranks(dataset, fused, m, threshold=-1.0, depth=p.fusion_depth), m)[0]
