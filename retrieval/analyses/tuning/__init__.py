"""Tuning without fooling yourself: metric landscapes over parameter grids, the region tied with the best, cross-validation.

A sweep evaluates one metric for one system at every setting of a grid and keeps the *per-question* values
(settings x questions), so that every later question is answered on the same matrix:

- the best setting (highest mean; exact ties go to the first setting in grid order);
- the settings that can't be told apart from it: those whose paired bootstrap interval of (setting - best)
  over questions holds zero (the article's bootstrap, the same resamples for every setting, all at once);
- k-fold cross-validation: the questions are split into k folds by a seeded permutation; for each fold the
  best setting on the other folds is measured on the held-out fold. The cross-validated mean (over all
  questions, each measured by a setting chosen without it) beside the in-sample best mean shows how much of
  a tuned gain is over-fitting;
- the verdict on the current setting (`verdict`, one rule for the Tuning page and `python -m retrieval tune`):
  the paired permutation test against the best with Holm's correction over every comparison with the best,
  read together with the cross-validated gain over the current setting.

The four sweeps, each reusing what the others keep fixed:

- ``k1,b``: BM25 over a k1 x b grid (k1 0..3 in 16 steps, b 0..1 in 11 steps), re-weighting the count matrix
  built once (never re-tokenising);
- ``dims``: LSA over 1..min(max allowed, 200) dimensions;
- ``rrf_k``: RRF's constant 1..200 over the fixed lists of the fused members (``Params.members``: the article's
  BM25 and LSA, or any systems, TREC runs and dense vectors included);
- ``alpha``: the weighted fusion's weight 0..1 over the fixed scores of exactly two members (alpha weighs the
  first); more members each have their own weight, which is set, not swept.

Three joint sweeps vary a fusion's own parameter and LSA's d together (``alpha,dims``, ``rrf_k,dims``, ``k1,dims``,
see JOINT): each axis is the parameter's tuning grid (params.grid_for) thinned to at most JOINT_POINTS values, d
at geometric positions; each d is one LSA fit and run from the engine, the fusion goes through the one-parameter
sweeps' fast paths, so every cell is exact.

Every sweep gives exactly what ``experiment.evaluate`` gives at the same setting (ties by document id
included); the tests check it point by point. The only exception, stated in the sweep's notes: a dims curve
of more than ``REFIT_UP_TO`` points truncates one SVD instead of fitting one per d, which is the same
mathematics and differs only in the last digits.

Speed: the BM25 grid scores every question densely per setting with bm25.score's own sums (listed once,
re-weighted per setting with bm25.bm25_weight; tests/kernels/test_kernels.py checks them against bm25.score to the
last bit), and a metric cut at k only needs each row's top k (a partition, not a sort). The 176 settings take about 0.6 s of CPU on Cranfield (bench/tuning.py).


The package, a module per concept: sweep (the grids, `Sweep`, exact judged ranks, the k1 x b sweep), analysis
(the text analysis sweep), dims (LSA's d), fused (RRF's k, the weighted fusion's alpha), joint (a parameter and d
together), dispatch (a sweep by its name, the current setting's values), ties (the best and its tie region, p-values
against it), crossval, verdict (and its words: wording), edges (a best at the edge of its range), oracle, explain (one
question's fusion explained), report (`tune` and its JSON). Every public name is importable from here.
"""

from ...core.params import MAX_DIMS
from ...core.params import grid_for as grid_for
from .analysis import ANALYSES, ANALYSIS_POINTS, analysis_name, even, sweep_analysis
from .crossval import CrossValidation, cross_validate, fold_assignment
from .dims import dims_axis, sweep_dims
from .dispatch import _params_key as _params_key
from .dispatch import current_values, sweep
from .edges import EDGE_ZONE, Edge, bounds, edge_findings, edge_sides
from .explain import explain_fusion, member_ranks, rescuer
from .fused import Fixed, check_alpha_members, fixed_parts, sweep_alpha, sweep_rrf_k
from .joint import JOINT, JOINT_POINTS, check_joint_members, joint_axes, sweep_joint, thin
from .oracle import Oracle, oracle, oracle_of
from .report import AnalysisRow, Tuning, analysis_rows, current_setting, to_json, tune
from .sweep import (
    ALPHA_GRID,
    B_GRID,
    DIRECT_UP_TO,
    FOLDS,
    K1_GRID,
    PARAMS,
    PARAMS_FORMS,
    REFIT_UP_TO,
    RRF_K_GRID,
    SEED,
    SYSTEM_OF,
    THRESHOLD,
    Analysed,
    Bm25Grid,
    Sweep,
    bm25_grid,
    bm25_grid_scores,
    engine_for,
    judged_ranks,
    sweep_bm25,
)
from .ties import TieRegion, best_setting, sign_vectors_for, tie_region, versus_best
from .verdict import (
    ALPHA_LEVEL,
    GAIN_EPS,
    Signals,
    Verdict,
    Versus,
    offers_best,
    place,
    tied_with_best,
    verdict,
    verdict_kind,
    verdict_text,
    verdict_words,
    versus_current,
)
from .wording import MINUS, Piece, about, expectation_text, names_text, p_is, plain, setting_text, stress

__all__ = [
    "THRESHOLD",
    "about",
    "ALPHA_GRID",
    "ALPHA_LEVEL",
    "Analysed",
    "ANALYSES",
    "analysis_name",
    "ANALYSIS_POINTS",
    "analysis_rows",
    "AnalysisRow",
    "B_GRID",
    "best_setting",
    "bm25_grid",
    "bm25_grid_scores",
    "Bm25Grid",
    "bounds",
    "check_alpha_members",
    "check_joint_members",
    "cross_validate",
    "CrossValidation",
    "current_setting",
    "current_values",
    "dims_axis",
    "DIRECT_UP_TO",
    "Edge",
    "edge_sides",
    "EDGE_ZONE",
    "edge_findings",
    "engine_for",
    "even",
    "expectation_text",
    "explain_fusion",
    "Fixed",
    "fixed_parts",
    "fold_assignment",
    "FOLDS",
    "GAIN_EPS",
    "JOINT",
    "joint_axes",
    "JOINT_POINTS",
    "judged_ranks",
    "K1_GRID",
    "MAX_DIMS",
    "member_ranks",
    "MINUS",
    "names_text",
    "offers_best",
    "oracle",
    "Oracle",
    "oracle_of",
    "p_is",
    "PARAMS",
    "PARAMS_FORMS",
    "Piece",
    "place",
    "plain",
    "REFIT_UP_TO",
    "rescuer",
    "RRF_K_GRID",
    "SEED",
    "setting_text",
    "sign_vectors_for",
    "Signals",
    "stress",
    "Sweep",
    "sweep",
    "sweep_alpha",
    "sweep_analysis",
    "sweep_bm25",
    "sweep_dims",
    "sweep_joint",
    "sweep_rrf_k",
    "SYSTEM_OF",
    "thin",
    "tie_region",
    "tied_with_best",
    "TieRegion",
    "to_json",
    "tune",
    "Tuning",
    "verdict",
    "Verdict",
    "verdict_kind",
    "verdict_text",
    "verdict_words",
    "Versus",
    "versus_best",
    "versus_current",
]
