"""The text analysis sweep: every stemmer and stop list, each with k1 and b on a coarse subset of the k1 x b grid."""

from __future__ import annotations

import numpy as np

from ...core.errors import InputError
from ...core.params import SPECS, Params
from ...corpus.dataset import Dataset
from ...corpus.text import Analysis, build_index, query_counts
from ...engine.engine import Engine
from ...evaluation import metrics
from ...retrievers import bm25
from .sweep import B_GRID, K1_GRID, Analysed, Sweep, _axis, _bm25_ranks, _start, _values

ANALYSES = tuple(Analysis(st, sw) for st in SPECS["stemmer"].options for sw in SPECS["stopwords"].options)
ANALYSIS_POINTS = 6  # k1 and b values per analysis in the analysis sweep: the k1 x b sweep's grid at evenly spaced
# positions (`even`: every third k1, 0, 0.6, ..., 3; every other b, 0, 0.2, ..., 1), a subset of it, and the base's
# values added: 9 x 6 x 7 settings at the article's k1 = 1.2, b = 0.75 (retrieval.analyses.grids says what it can't see)


def analysis_name(a: Analysis) -> str:
    """An analysis as a setting's value: 'snowball/lucene' (stemmer/stop words)."""
    return f"{a.stemmer}/{a.stopwords}"


def sweep_analysis(
    dataset: Dataset,
    metric: str | metrics.Metric,
    analyses: tuple[Analysis, ...] = ANALYSES,
    k1s=None,
    bs=None,
    engine: Engine | None = None,
    base: Params = Params(),
    progress=None,
) -> Sweep:
    """BM25's per-question metric over the text analyses (stemmer x stop words) jointly with k1 x b (each grid
    thinned to ANALYSIS_POINTS evenly spaced values of its own unless given: `even`), the repeated question words' rule at `base`. The analysis in
    `base` reuses its engine, and the axes hold base's k1 and b; every other one builds its BM25 columns once (one index build each, not kept: the
    engines' cache keeps serving the pages). `progress(analysis name, fraction)` after each analysis."""
    m, engine, qids = _start(dataset, metric, engine, base)
    k1s = _axis([*even(K1_GRID, ANALYSIS_POINTS), base.k1] if k1s is None else k1s, "k1", 0.0, None)
    bs = _axis([*even(B_GRID, ANALYSIS_POINTS), base.b] if bs is None else bs, "b", 0.0, 1.0)
    if not analyses or len(set(analyses)) != len(analyses):
        raise InputError("analyses: give distinct text analyses to compare")
    blocks = []
    for i, a in enumerate(analyses):
        if a == engine.analysis:
            corpus = engine
        else:
            index = build_index(dataset.doc_texts, analysis=a)
            corpus = Analysed(bm25.prepare(index), query_counts(index, dataset.query_texts))
        blocks.append(_bm25_ranks(dataset, m, corpus, base, k1s, bs))
        if progress is not None:
            progress(analysis_name(a), (i + 1) / len(analyses))
    values = _values(dataset, np.concatenate(blocks), m)
    axis = np.arange(len(analyses), dtype=np.float64)
    return Sweep(
        "BM25",
        m.name,
        ("analysis", "k1", "b"),
        (axis, k1s, bs),
        values,
        qids,
        base,
        choices=tuple(analysis_name(a) for a in analyses),
    )


def even(axis: np.ndarray, points: int) -> np.ndarray:
    """At most `points` values of a grid at evenly spaced positions, both ends kept: a subset of the grid with a
    coarser step (K1_GRID's 16 values to 6: every third, 0, 0.6, ..., 3; B_GRID's 11 to 6: every other)."""
    a = np.asarray(axis, dtype=np.float64)
    if a.size <= points:
        return a
    return a[np.unique(np.round(np.linspace(0, a.size - 1, points)).astype(np.int64))]
