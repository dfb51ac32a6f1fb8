"""The fusion sweeps over fixed member lists: RRF's k and the weighted fusion's alpha."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

import retrieval.fusion as fusion

from ...core.errors import InputError
from ...core.params import Params
from ...corpus.dataset import Dataset
from ...engine.engine import Engine
from ...evaluation import metrics
from ...retrievers.base import Member
from ...retrievers.ranking import Ranking
from ...retrievers.systems import Sources
from .sweep import ALPHA_GRID, RRF_K_GRID, Sweep, _axis, _start, _values, engine_for


class MemberRows:
    """One member's score of every document, a question at a time (`rows[q]`: the member's `row(q)`, bit-identical to
    what the fused ranking reads), computed on demand: no questions x documents matrix is held. `np.asarray(rows)`
    builds the whole matrix for a caller that asks for it."""

    def __init__(self, member: Member, n_queries: int, n_docs: int):
        self._member = member
        self.shape = (n_queries, n_docs)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, q: int) -> np.ndarray:
        if not 0 <= int(q) < self.shape[0]:
            raise IndexError(f"question {q} out of range (0..{self.shape[0] - 1})")
        return np.asarray(self._member.row(int(q)), dtype=np.float64).reshape(self.shape[1])

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = np.array([self[q] for q in range(self.shape[0])], dtype=np.float64).reshape(self.shape)
        return out if dtype is None else out.astype(dtype)


@dataclass(frozen=True, eq=False)
class Fixed:
    """What a fusion sweep holds fixed: the members (`params.members`, any systems, extra sources included) at the
    base parameters, each as the fusions read it (`parts`: its run's best lists and look-ups), with its ranking, its
    scores of every document question by question (`rows[i][q]`, on demand) and whether it answers each question."""

    members: tuple[str, ...]
    rankings: tuple[Ranking, ...]  # per member: its ranking (what RRF fuses)
    rows: tuple[MemberRows, ...]  # per member: its scores of every document, one question at a time
    answers: np.ndarray  # members x questions: the member answers the question
    parts: tuple[Member, ...] = ()  # per member: its run as the weighted fusion reads it

    @cached_property
    def lists(self) -> fusion.FusionLists:
        """The members' best lists and each member's scores of the others' (`fusion.gather`), gathered once for
        every weighted setting over these members (what the engine keeps per member runs, `Engine.weighted`)."""
        return fusion.gather(self.parts)

    def member(self, name: str) -> int:
        """A member's position, or an error naming the members."""
        if name not in self.members:
            raise InputError(f"{name!r} is not a fused member: the members are {', '.join(self.members)}")
        return self.members.index(name)


def _member_part(name: str, params: Params, engine: Engine, sources: Sources) -> Member:
    """One member at `params` as the fusions read it: the engine's own run (its ranking, best lists and
    look-ups), no dense scores."""
    run = engine.run(name, params, sources)
    return engine.system(name, sources).member(run)


def _combine(dataset: Dataset, members: tuple[str, ...], parts: list[Member]) -> Fixed:
    """A Fixed from each member's part (`_member_part`), in member order."""
    nq, nd = dataset.n_queries, dataset.n_docs
    return Fixed(
        tuple(members),
        tuple(p.run.ranking for p in parts),
        tuple(MemberRows(p, nq, nd) for p in parts),
        np.array([np.asarray(p.answers, dtype=bool) for p in parts], dtype=bool).reshape(len(parts), nq),
        tuple(parts),
    )


def fixed_parts(dataset: Dataset, params: Params, engine: Engine | None = None, sources: Sources = ()) -> Fixed:
    """The members of `params.members` at `params` (their runs the engine's own, `sources` holding the sources
    that are not registered retrievers: TREC runs, dense vectors), for the fusion sweeps and explanations."""
    engine = engine_for(dataset, params, engine)
    parts = [_member_part(name, params, engine, sources) for name in params.members]
    return _combine(dataset, tuple(params.members), parts)


def _fixed_for(dataset: Dataset, base: Params, engine: Engine, fixed: Fixed | None, sources: Sources) -> Fixed:
    """The given fixed parts (which must be of base's members), or those of `base`."""
    if fixed is None:
        return fixed_parts(dataset, base, engine, sources)
    if fixed.members != tuple(base.members):
        raise InputError(
            f"the fixed parts are of {', '.join(fixed.members)}, the parameters fuse {', '.join(base.members)}"
        )
    return fixed


def _cut(judged_rank: np.ndarray, m: metrics.Metric) -> np.ndarray:
    """A fused ranking's judged ranks as deep as the metric looks (a rank beyond its k is 0, as `_ranks` cuts)."""
    r = np.asarray(judged_rank, dtype=np.int64)
    return r if m.k is None else np.where(r <= m.k, r, 0)


def sweep_rrf_k(
    dataset: Dataset,
    metric: str | metrics.Metric,
    ks=RRF_K_GRID,
    engine: Engine | None = None,
    base: Params = Params(),
    fixed: Fixed | None = None,
    sources: Sources = (),
) -> Sweep:
    """RRF's per-question metric over its constant k, fusing the fixed members' lists (top fusion_depth of each).

    Each k is `fusion.rrf`, the compiled pass an RRF tick runs (`Engine.rrf`), over the members' rankings: memory
    bounded by the members' lists, no questions x documents matrix; the same ranks as the engine's at every k."""
    m, engine, qids = _start(dataset, metric, engine)
    ks = _axis(ks, "rrf_k", 0.0, None)
    fixed = _fixed_for(dataset, base, engine, fixed, sources)
    rankings = list(fixed.rankings)
    ranks = np.zeros((ks.size, len(dataset.qrels)), dtype=np.int64)
    for i, k in enumerate(ks):
        ranks[i] = _cut(fusion.rrf(dataset, rankings, float(k), base.fusion_depth).judged_rank, m)
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
    """The weighted fusion's per-question metric over alpha, over exactly two fixed members: alpha x min-max(first)
    + (1 - alpha) x min-max(second), what `Engine.rankings` gives at that alpha without `weights`. Each alpha is the
    weighted tick's compiled pass over the members' best lists (`_weighted_ranks`), no dense fused row."""
    m, engine, qids = _start(dataset, metric, engine)
    alphas = _axis(alphas, "alpha", 0.0, 1.0)
    check_alpha_members(base.members)
    fixed = _fixed_for(dataset, base, engine, fixed, sources)
    ranks = np.zeros((alphas.size, len(dataset.qrels)), dtype=np.int64)
    for i, a in enumerate(alphas):
        ranks[i] = _weighted_ranks(dataset, m, fixed, (float(a), 1.0 - float(a)), base.fusion_depth)
    return Sweep("weighted", m.name, ("alpha",), (alphas,), _values(dataset, ranks, m), qids, base)


def _weighted_ranks(
    dataset: Dataset, m: metrics.Metric, fixed: Fixed, weights: tuple[float, ...], depth: int
) -> np.ndarray:
    """The weighted fusion's judged ranks with these weights over fixed members: `fusion.weighted`, the compiled
    pass a weighted tick runs (`Engine.weighted`), from the members' best lists gathered once (`Fixed.lists`):
    memory bounded by the lists, no questions x documents matrix; the engine's ranking, to the last bit."""
    run = fusion.weighted(dataset, fixed.parts, weights, depth, fixed.lists)
    return _cut(run.ranking.judged_rank, m)


def _weighted_values(dataset: Dataset, m: metrics.Metric, p: Params, fixed: Fixed) -> np.ndarray:
    """The weighted fusion's per-question metric at `p` over fixed members, with the fusion's weights (alpha and
    1 - alpha, or each member's): what the engine's weighted ranking gives, to the last bit."""
    return _values(dataset, _weighted_ranks(dataset, m, fixed, p.fusion_weights(), p.fusion_depth), m)[0]
