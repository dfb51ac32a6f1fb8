"""The joint sweeps: a fusion's own parameter (or BM25's k1) and LSA's d varied together (`JOINT`)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ...core.errors import InputError
from ...core.params import Params, grid_for
from ...corpus.dataset import Dataset
from ...engine.engine import Engine
from ...evaluation import metrics
from ...retrievers import lsa
from ...retrievers.base import Member
from ...retrievers.systems import Sources
from .dims import dims_axis
from .fused import _combine, _member_part, _weighted_values, check_alpha_members, sweep_alpha, sweep_rrf_k
from .sweep import Sweep, _axis, _start

# ------------------------------------------------------------------------------------------- joint sweeps

JOINT = {  # a joint sweep: (its first parameter, the fusion it scores); the second parameter is always LSA's d
    "alpha,dims": ("alpha", "weighted"),
    "rrf_k,dims": ("rrf_k", "RRF"),
    "k1,dims": ("k1", "weighted"),
}
JOINT_POINTS = (
    21  # at most this many values per axis of a joint sweep (each d is one LSA fit): alpha's and k1's grids whole
)
_NEEDS = {"alpha": None, "rrf_k": None, "k1": "BM25"}  # the member a joint sweep's first parameter is read by


def thin(axis: np.ndarray, points: int = JOINT_POINTS) -> np.ndarray:
    """At most `points` values of a tuning grid, both ends kept: the whole grid when it is short enough, else
    values at geometrically spaced positions (dense at the start, where d and RRF's k change the most)."""
    a = np.asarray(axis, dtype=np.float64)
    if a.size <= points:
        return a
    at = np.unique(np.round(np.geomspace(1, a.size, points)).astype(np.int64) - 1)
    return a[at]


def joint_axes(key: str, engine: Engine) -> tuple[np.ndarray, np.ndarray]:
    """The default axes of a joint sweep: its first parameter's grid (params.grid_for) and d's up to what the
    corpus allows, each thinned to at most JOINT_POINTS values."""
    first, _ = JOINT[key]
    return thin(grid_for(first)), thin(dims_axis(engine))


def check_joint_members(key: str, members: tuple[str, ...]) -> None:
    """A joint sweep varies LSA's d inside a fusion: LSA must be fused; k1 needs BM25 fused; alpha two members."""
    first, _ = JOINT[key]
    if "LSA" not in members:
        raise InputError(
            f"the {first} x d sweep varies LSA's dimensions inside the fusion, and LSA is not fused "
            f"(the fused systems are {', '.join(members)})"
        )
    if _NEEDS[first] and _NEEDS[first] not in members:
        raise InputError(
            f"the k1 x d sweep varies BM25's k1 inside the fusion, and BM25 is not fused "
            f"(the fused systems are {', '.join(members)})"
        )
    if first == "alpha":
        check_alpha_members(members)


def sweep_joint(
    dataset: Dataset,
    key: str,
    metric: str | metrics.Metric,
    firsts=None,
    dims=None,
    engine: Engine | None = None,
    base: Params = Params(),
    sources: Sources = (),
) -> Sweep:
    """A fusion's per-question metric over (its first parameter x LSA's d), the other parameters at `base`.

    Settings are in row-major order (first parameter, then d). Each d is one LSA fit and its run from the engine
    (so every cell is what `Engine.rankings` gives at that setting, exactly); the BM25 member of the k1 x d
    sweep is the engine's run at each k1. The fusion itself goes through the one-parameter sweeps' exact fast
    paths: `sweep_alpha` and `sweep_rrf_k` over the members fixed at each d (and k1).
    """
    if key not in JOINT:
        raise InputError(f"unknown joint sweep {key!r}: valid are {' | '.join(JOINT)}")
    m, engine, qids = _start(dataset, metric, engine)
    first, system = JOINT[key]
    check_joint_members(key, base.members)
    default_first, default_dims = joint_axes(key, engine)
    spec_lo = {"alpha": (0.0, 1.0), "rrf_k": (0.0, None), "k1": (0.0, None)}[first]
    fa = default_first if firsts is None else _axis(firsts, first, *spec_lo)
    limit = lsa.max_dims(engine.index)
    if limit < 1:
        raise InputError(
            f"LSA needs at least 2 documents and 2 terms; {dataset.name} has {engine.index.n_docs} and "
            f"{len(engine.index.vocabulary)}"
        )
    da = default_dims if dims is None else _axis(dims, "dims", 1.0, float(limit), integer=True)
    members = tuple(base.members)
    parts: dict[tuple, Member] = {}  # (member, the value it reads) -> its run as the fusions read it, each once

    def part(name: str, p: Params) -> Member:
        k = (name, p.dims if name == "LSA" else p.k1 if name == "BM25" else None)
        if k not in parts:
            parts[k] = _member_part(name, p, engine, sources)
        return parts[k]

    values = np.zeros((fa.size, da.size, len(qids)))
    for j, d in enumerate(da):
        for k in [k for k in parts if k[0] == "LSA"]:  # an LSA run is read at one d only: the lists kept stay few
            del parts[k]
        if first == "k1":
            for i, k1 in enumerate(fa):
                p = replace(base, k1=float(k1), dims=int(d))
                fixed = _combine(dataset, members, [part(n, p) for n in members])
                values[i, j] = _weighted_values(dataset, m, p, fixed)
            continue
        p = replace(base, dims=int(d))
        fixed = _combine(dataset, members, [part(n, p) for n in members])
        one = (
            sweep_alpha(dataset, m, fa, engine, p, fixed, sources)
            if first == "alpha"
            else sweep_rrf_k(dataset, m, fa, engine, p, fixed, sources)
        )
        values[:, j] = one.values
    return Sweep(system, m.name, (first, "dims"), (fa, da), values.reshape(fa.size * da.size, len(qids)), qids, base)
