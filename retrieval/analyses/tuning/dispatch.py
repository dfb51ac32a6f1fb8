"""A sweep by its `--params` name (`sweep`), and the current setting's per-question values on the same footing."""

from __future__ import annotations

import numpy as np

from ...core.errors import InputError
from ...core.params import Params
from ...corpus.dataset import Dataset
from ...engine.engine import Engine
from ...evaluation import metrics
from ...retrievers.systems import Sources
from .analysis import sweep_analysis
from .dims import sweep_dims
from .fused import Fixed, sweep_alpha, sweep_rrf_k
from .joint import JOINT, sweep_joint
from .sweep import PARAMS, PARAMS_FORMS, Sweep, engine_for, sweep_bm25


def sweep(
    dataset: Dataset,
    params: str,
    metric: str | metrics.Metric,
    base: Params = Params(),
    engine: Engine | None = None,
    fixed: Fixed | None = None,
    sources: Sources = (),
) -> Sweep:
    """The default sweep of `params` ('k1,b', 'dims', 'rrf_k', 'alpha' or a joint one of JOINT: 'alpha,dims',
    'rrf_k,dims', 'k1,dims'), the other parameters at `base`; the fusion sweeps fuse `base.members` (`sources`: the
    sources among them that are not registered retrievers)."""
    key = _params_key(params)
    engine = engine_for(dataset, base, engine)
    if key == "k1,b":
        return sweep_bm25(dataset, metric, engine=engine, base=base)
    if key == "analysis":
        return sweep_analysis(dataset, metric, engine=engine, base=base)
    if key == "dims":
        return sweep_dims(dataset, metric, engine=engine, base=base)
    if key == "rrf_k":
        return sweep_rrf_k(dataset, metric, engine=engine, base=base, fixed=fixed, sources=sources)
    if key in JOINT:
        return sweep_joint(dataset, key, metric, engine=engine, base=base, sources=sources)
    return sweep_alpha(dataset, metric, engine=engine, base=base, fixed=fixed, sources=sources)


def _params_key(params: str) -> str:
    """Normalise a --params value, or an error listing the valid ones."""
    key = ",".join(p.strip().lower().replace("-", "_") for p in params.split(","))
    key = {"b,k1": "k1,b", "dims,alpha": "alpha,dims", "dims,rrf_k": "rrf_k,dims", "dims,k1": "k1,dims"}.get(key, key)
    if key not in PARAMS:
        raise InputError(f"unknown parameters {params!r}: valid are {PARAMS_FORMS}")
    return key


def current_values(
    dataset: Dataset,
    params: str,
    metric: str | metrics.Metric,
    base: Params = Params(),
    engine: Engine | None = None,
    fixed: Fixed | None = None,
    sources: Sources = (),
) -> np.ndarray:
    """Per-question values of the swept system at the current setting `base` (which need not be a grid point)."""
    key = _params_key(params)
    engine = engine_for(dataset, base, engine)
    if key in ("k1,b", "analysis"):
        s = sweep_bm25(dataset, metric, [base.k1], [base.b], engine, base)
    elif key == "dims":
        s = sweep_dims(dataset, metric, [base.dims], engine, base, refit=True)
    elif key == "rrf_k":
        s = sweep_rrf_k(dataset, metric, [base.rrf_k], engine, base, fixed, sources)
    elif key in JOINT:
        s = sweep_joint(dataset, key, metric, [getattr(base, JOINT[key][0])], [base.dims], engine, base, sources)
    else:
        s = sweep_alpha(dataset, metric, [base.alpha], engine, base, fixed, sources)
    return s.values[0]
