"""The per-question oracle: the best system on each question, the upper bound a router between them could reach."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...core.errors import InputError
from ...evaluation import metrics
from ...evaluation.experiment import Evaluation


@dataclass(frozen=True, eq=False)
class Oracle:
    """The per-question oracle: the best system on each question, the upper bound a router between them could reach."""

    systems: tuple[str, ...]
    qids: tuple[str, ...]
    best: tuple[str, ...]  # per question: the first system (in order) reaching the best value
    winners: tuple[tuple[str, ...], ...]  # per question: every system reaching it
    values: np.ndarray  # per question: the best value
    mean: float
    system_means: dict[str, float]

    def wins(self) -> dict[str, int]:
        """Questions on which each system is the oracle's choice (ties go to the first system)."""
        return {s: sum(1 for b in self.best if b == s) for s in self.systems}


def oracle(values: dict[str, np.ndarray], qids: tuple[str, ...] | None = None) -> Oracle:
    """The best system per question and the mean of the per-question maxima, from system -> per-question values."""
    if not values:
        raise InputError("oracle: no system to choose from")
    names = tuple(values)
    v = np.stack([np.asarray(values[s], dtype=np.float64) for s in names])
    if v.ndim != 2:
        raise InputError("oracle: every system needs one value per question")
    qids = tuple(qids) if qids is not None else tuple(str(i) for i in range(v.shape[1]))
    if len(qids) != v.shape[1]:
        raise InputError(f"oracle: {len(qids)} question ids for {v.shape[1]} values")
    top = v.max(axis=0)
    win = np.isclose(v, top[None, :], rtol=0, atol=1e-12)
    winners = tuple(tuple(names[i] for i in np.flatnonzero(win[:, j])) for j in range(v.shape[1]))
    best = tuple(names[int(np.argmax(win[:, j]))] for j in range(v.shape[1]))
    return Oracle(
        names,
        qids,
        best,
        winners,
        top,
        float(top.mean()) if top.size else math.nan,
        {s: float(v[i].mean()) for i, s in enumerate(names)},
    )


def oracle_of(evaluation: Evaluation, metric: str, systems: list[str] | None = None) -> Oracle:
    """The per-question oracle over an evaluation's systems (all by default) on one computed metric."""
    name = metrics.parse(metric).name
    systems = systems or evaluation.systems
    for s in systems:
        if s not in evaluation.values:
            raise InputError(f"unknown system {s!r}: known are {', '.join(evaluation.values)}")
        if name not in evaluation.values[s]:
            raise InputError(f"metric {name!r} was not computed: computed are {', '.join(evaluation.values[s])}")
    ds = evaluation.dataset
    return oracle({s: evaluation.values[s][name] for s in systems}, tuple(ds.query_ids[q] for q in ds.evaluated))
