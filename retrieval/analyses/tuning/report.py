"""One call (`tune`): a sweep with its best, tie region, cross-validation and verdict; and its JSON (`to_json`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ...core.params import Params
from ...corpus.dataset import Dataset
from ...engine.engine import Engine
from ...evaluation import metrics, stats
from ...retrievers.systems import Sources
from .crossval import CrossValidation, cross_validate, fold_assignment
from .dispatch import _params_key, current_values, sweep
from .edges import Edge, edge_findings
from .fused import check_alpha_members, fixed_parts
from .sweep import FOLDS, SEED, Sweep, _num, engine_for
from .ties import TieRegion, best_setting, sign_vectors_for, tie_region, versus_best
from .verdict import ALPHA_LEVEL, Verdict, verdict

# ------------------------------------------------------------------------------------------- one call


@dataclass(frozen=True, eq=False)
class Tuning:
    """A sweep with its analysis: best setting, tie region, cross-validation and the current setting's score."""

    dataset: str
    sweep: Sweep
    best: int
    ties: TieRegion
    cv: CrossValidation
    current: dict[str, float]  # the current setting (base params) of the swept parameters
    current_values: np.ndarray  # per question at the current setting
    current_tied: bool  # whether the current setting can't be told apart from the best (bootstrap, alone)
    p: np.ndarray  # per setting: permutation p against the best (`versus_best`)
    p_holm: np.ndarray  # ... Holm-adjusted over the comparisons with the best
    sign_vectors: int  # the random sign vectors the permutation tests drew (when not exact: `sign_vectors_for`)
    verdict: Verdict  # the current setting against the best (`verdict`: what the Tuning page says)
    edges: tuple[Edge, ...] = ()  # the best at an open edge of the range searched (`edge_findings`)


def tune(
    dataset: Dataset,
    params: str,
    metric: str | metrics.Metric,
    base: Params = Params(),
    folds: int = FOLDS,
    seed: int = SEED,
    engine: Engine | None = None,
    resamples: int = stats.RESAMPLES,
    sources: Sources = (),
    label: str | None = None,
) -> Tuning:
    """Sweep `params`, find the best setting and its tie region, cross-validate the choice, score the current setting
    and say the verdict on it (`verdict`: the permutation test against the best with Holm's correction, and the
    cross-validated gain; `label` names the metric in its text, default its name). A fusion sweep fuses
    `base.members` (`sources`: the sources among them that are not registered retrievers)."""
    key = _params_key(params)
    engine = engine_for(dataset, base, engine)
    if key == "alpha":
        check_alpha_members(base.members)
    fixed = fixed_parts(dataset, base, engine, sources) if key in ("rrf_k", "alpha") else None
    sw = sweep(dataset, key, metric, base, engine, fixed, sources)
    fold_assignment(sw.values.shape[1], folds, seed)  # fail early on bad folds
    best = best_setting(sw.values)
    ties = tie_region(sw.values, best, resamples, seed)
    sign_vectors = sign_vectors_for(sw.means.size, ALPHA_LEVEL)
    p, p_holm = versus_best(sw.values, best, sign_vectors, seed)
    cv = cross_validate(sw.values, folds, seed)
    cur = current_values(dataset, key, metric, base, engine, fixed, sources)
    current = current_setting(sw.names, base)
    said = verdict(sw, best, ties, p, p_holm, current, cur, cv, label, sign_vectors, seed)
    edges = edge_findings(sw, best, engine.max_dims())
    return Tuning(
        dataset.name, sw, best, ties, cv, current, cur, said.signals.current_tied, p, p_holm, sign_vectors, said, edges
    )


def current_setting(names: tuple[str, ...], base: Params) -> dict:
    """The current values of the swept parameters: {'k1': 1.2, 'b': 0.75}, {'analysis': 'none/article', ...}."""
    return {n: "/".join(base.analysis) if n == "analysis" else _num(getattr(base, n), n) for n in names}


class AnalysisRow(NamedTuple):
    """One text analysis in the analysis sweep: its best (k1, b) on every question, that mean, and tuning k1 and
    b for it by cross-validation: the held-out mean and its gain over the current setting."""

    analysis: str
    best: dict
    best_mean: float
    cross_validated: float
    gain: float  # cross_validated - the current setting's mean


def analysis_rows(sw: Sweep, current_values: np.ndarray, folds: int = FOLDS, seed: int = SEED) -> list[AnalysisRow]:
    """Per analysis of an analysis sweep, its best (k1, b) and its k1 x b tuning cross-validated (`folds`, `seed`),
    against the current setting (its per-question values): what stemming or a stop list is worth once k1 and b are
    tuned for it without seeing the held-out questions."""
    if sw.names[0] != "analysis":
        return []
    per = int(np.prod(sw.shape[1:]))
    now = float(np.mean(current_values))
    rows = []
    for i, name in enumerate(sw.choices):
        block = sw.values[i * per : (i + 1) * per]
        best = best_setting(block)
        cv = cross_validate(block, folds, seed)
        setting = {n: v for n, v in sw.setting(i * per + best).items() if n != "analysis"}
        rows.append(AnalysisRow(name, setting, float(block[best].mean()), cv.cross_validated, cv.cross_validated - now))
    return rows


def to_json(t: Tuning) -> dict:
    """The tuning report as JSON-ready data: grid, best, tie region, cross-validation, current setting."""
    sw = t.sweep
    means = sw.means
    grid: dict = {
        n: list(sw.choices) if n == "analysis" else [_num(x, n) for x in a] for n, a in zip(sw.names, sw.axes)
    }
    shape = sw.shape
    grid["mean"] = means.reshape(shape).tolist()
    grid["tied"] = t.ties.tied.reshape(shape).tolist()
    return {
        "dataset": {"name": t.dataset, "questions": len(sw.qids)},
        "system": sw.system,
        "metric": sw.metric,
        "params": list(sw.names),
        "base": sw.base.to_json(),
        "grid": grid,
        "best": {"setting": sw.setting(t.best), "mean": float(means[t.best])},
        "ties": {
            "count": t.ties.size,
            "of": int(means.size),
            "settings": [sw.setting(i) for i in np.flatnonzero(t.ties.tied)],
            "resamples": t.ties.resamples,
            "seed": t.ties.seed,
            "confidence": t.ties.confidence,
        },
        "cv": {
            "folds": t.cv.folds,
            "seed": t.cv.seed,
            "in_sample": t.cv.in_sample,
            "cross_validated": t.cv.cross_validated,
            "optimism": t.cv.optimism,
            "chosen": [
                {
                    "fold": f,
                    "setting": sw.setting(c),
                    "questions": t.cv.fold_sizes[f],
                    "train_mean": t.cv.train_means[f],
                    "test_mean": t.cv.test_means[f],
                }
                for f, c in enumerate(t.cv.chosen)
            ],
        },
        "current": {
            "setting": t.current,
            "mean": float(t.current_values.mean()),
            "tied_with_best": t.current_tied,
            "on_grid": t.verdict.on_grid,
            "p": t.verdict.versus.p,
            "p_holm": t.verdict.versus.p_holm,
            "comparisons": t.verdict.versus.family,
            "sign_vectors": t.sign_vectors,
        },
        "verdict": {"kind": t.verdict.kind, "text": t.verdict.plain},
        "notes": list(sw.notes),
        "edges": [e.to_json() for e in t.edges],
        "signals": t.verdict.signals._asdict(),
        **(
            {"analyses": [r._asdict() for r in analysis_rows(sw, t.current_values, t.cv.folds, t.cv.seed)]}
            if sw.names[0] == "analysis"
            else {}
        ),
    }
