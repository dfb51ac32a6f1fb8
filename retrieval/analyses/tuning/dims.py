"""LSA's d sweep: one SVD per d up to `REFIT_UP_TO` points, one truncated SVD beyond."""

from __future__ import annotations

import numpy as np

from ...core.errors import InputError
from ...core.params import MAX_DIMS, Params
from ...corpus.dataset import Dataset
from ...engine.engine import Engine
from ...evaluation import metrics
from ...retrievers import lsa
from .sweep import DIRECT_UP_TO, REFIT_UP_TO, Sweep, _axis, _ranks, _start, _values


def dims_axis(engine: Engine, max_dims: int = MAX_DIMS) -> np.ndarray:
    """The dimensions a dims curve covers: 1 up to what the corpus allows, at most `max_dims`."""
    top = min(lsa.max_dims(engine.index), int(max_dims))
    return np.arange(1, top + 1, dtype=np.float64)


def sweep_dims(
    dataset: Dataset,
    metric: str | metrics.Metric,
    dims=None,
    engine: Engine | None = None,
    base: Params = Params(),
    refit: bool | None = None,
    max_dims: int = MAX_DIMS,
) -> Sweep:
    """LSA's per-question metric over its dimensions (default 1..min(allowed, 200)).

    With `refit` (the default up to REFIT_UP_TO points) one SVD is fitted per d, exactly as evaluate does;
    otherwise one SVD with the largest d is fitted and truncated, the same subspaces up to rounding.
    """
    m, engine, qids = _start(dataset, metric, engine)
    limit = lsa.max_dims(engine.index)
    if limit < 1:
        raise InputError(
            f"LSA needs at least 2 documents and 2 terms; {dataset.name} has {engine.index.n_docs} and {len(engine.index.vocabulary)}"
        )
    axis = dims_axis(engine, max_dims) if dims is None else _axis(dims, "dims", 1.0, None, integer=True)
    notes: list[str] = []
    if axis[-1] > limit:
        notes.append(f"dims above {limit} are lowered to {limit}, the most this corpus allows")
    used = np.minimum(axis, limit).astype(int)
    refit = axis.size <= REFIT_UP_TO if refit is None else refit
    ranks = np.zeros((axis.size, len(dataset.qrels)), dtype=np.int64)
    if refit:
        cache: dict[int, np.ndarray] = {}
        for i, d in enumerate(used):
            if d not in cache:  # the d tick's compiled pass (lsa.run): no questions x documents matrix
                f = engine.lsa_fit(int(d))
                r = lsa.run(dataset, f.model, f.qvec).ranking.judged_rank
                cache[d] = r if m.k is None else np.where(r <= m.k, r, 0)
            ranks[i] = cache[d]
    else:
        f = engine.lsa_fit(int(used.max()))
        model = f.model
        z = lsa.project(model, engine.index.counts)
        qz = lsa.project(model, engine.qcounts)
        notes.append(
            f"one {model.dims}-dimension SVD ({model.algorithm}) truncated to each d: same subspaces as a fit per d, up to rounding"
        )
        # the cosines at d from those at d - 1: add the new dimensions' products and squared norms
        dot = np.zeros((engine.qcounts.shape[0], z.shape[0]))
        zsq, qsq = np.zeros(z.shape[0]), np.zeros(qz.shape[0])
        done = 0
        for i, d in enumerate(used):
            if d <= DIRECT_UP_TO:  # few dimensions, many near-ties: normalise, then multiply, as lsa.search does
                zd, qd = z[:, :d], qz[:, :d]
                docs = zd / np.maximum(np.linalg.norm(zd, axis=1, keepdims=True), 1e-12)
                qn = np.linalg.norm(qd, axis=1, keepdims=True)
                ranks[i] = _ranks(dataset, np.where(qn > 1e-12, qd / np.where(qn > 1e-12, qn, 1.0), 0.0) @ docs.T, m)
                continue
            if d > done:
                dot += qz[:, done:d] @ z[:, done:d].T
                zsq += (z[:, done:d] ** 2).sum(axis=1)
                qsq += (qz[:, done:d] ** 2).sum(axis=1)
                done = d
            zn, qn = np.maximum(np.sqrt(zsq), 1e-12), np.sqrt(qsq)
            qinv = np.where(qn > 1e-12, 1.0 / np.where(qn > 1e-12, qn, 1.0), 0.0)
            ranks[i] = _ranks(dataset, dot * qinv[:, None] / zn[None, :], m)
    return Sweep("LSA", m.name, ("dims",), (axis,), _values(dataset, ranks, m), qids, base, tuple(notes))
