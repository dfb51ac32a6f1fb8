"""The app's way into `retrieval`: the dataset in use, its engine, and the uploads parsed once per content.

Every computed result lives in the dataset's engine (retrieval.engine), keyed by content and parameter values,
bounded; Streamlit's own caches hold only shared objects (the invented corpus, the store) and pure functions of the
values they hash (parsed uploads, keyed on their bytes): docs/architecture.md, "One way to cache".
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from retrieval.core.params import Params
from retrieval.corpus.dataset import Dataset
from retrieval.corpus.judged import has_documents
from retrieval.evaluation import metrics
from retrieval.evaluation.experiment import Evaluation, score
from retrieval.retrievers.listed import from_run
from retrieval.retrievers.ranking import Ranking
from retrieval.retrievers.systems import REGISTRY, Sources

from . import dense, state
from .in_use import (  # noqa: F401 - the dataset in use and its engine, part of this module's interface
    base_dataset,
    current_dataset,
    current_runs,
    dataset_label,
    engine,
    invented,
    max_dims,
    new_judgements,
    parse_beir_zip,
    parse_files,
    parse_qrels,
    parse_run,
)


def current_sources(ds: Dataset | None = None) -> Sources:
    """What the engine ranks beside its registered retrievers: the dense vectors (if any), then the runs."""
    ds = ds or current_dataset()
    if not has_documents(ds):  # judgements alone: the runs are the only systems
        return current_runs()
    vectors = dense.source(ds)
    return ((vectors,) if vectors is not None else ()) + current_runs()


def current_params(ds: Dataset | None = None) -> Params:
    """The sidebar's parameters, the fusion members among the systems there are."""
    return state.params(systems(ds))


def systems(ds: Dataset | None = None) -> list[str]:
    """The systems a fusion can take as members: the registered retrievers, dense if present, the runs (the runs
    alone on judgements alone)."""
    ds = ds or current_dataset()
    if not has_documents(ds):
        return [r.name for r in current_runs()]
    return [*REGISTRY, *(x.name for x in current_sources(ds))]


def ranking_params(ds: Dataset, params: Params | None = None) -> Params:
    """The current (or given) parameters as the systems rank with them: d no higher than the dataset allows."""
    p = params or current_params(ds)
    return replace(p, dims=min(p.dims, max_dims(ds)))


def fitting_text(ds: Dataset, dims: int) -> str:
    """What a page says while it waits for LSA's slow fit (a large corpus's first at a d's block)."""
    return (
        f"Fitting LSA's SVD at d = {dims} on {ds.n_docs:,} documents (once: every d up to its block then comes "
        f"from this fit)"
    )


def rankings(ds: Dataset | None = None, params: Params | None = None, spinner: bool = True) -> dict[str, Ranking]:
    """Every system's ranking at the current (or given) parameters: BM25, LSA, weighted, RRF, then the runs. While
    LSA's SVD is slow to fit (`waiting`), a spinner says so (`spinner`: a page that says it otherwise turns it off).
    At the sidebar's parameters, on a corpus where a d step is slow, the steps next to d are then computed in the
    background (`Engine.prefetch`): the d slider's next step reads them."""
    ds = ds or current_dataset()
    if not has_documents(ds):
        return run_rankings(ds)
    p, e, sources = ranking_params(ds, params), engine(ds), current_sources(ds)
    if not spinner or not e.waiting(p):
        out = e.rankings(p, sources)
    else:
        with st.spinner(fitting_text(ds, p.dims) + "…"):
            out = e.rankings(p, sources)
    if params is None:
        e.prefetch(p, sources)
    return out


def run_rankings(ds: Dataset) -> dict[str, Ranking]:
    """On judgements alone (no documents, no engine): each uploaded run aligned with the judgements by id, as
    `evaluate --qrels` aligns it; kept in the session for the runs and judgements it was made of."""
    runs = current_runs()
    held = st.session_state.get(state.JUDGED_RANKINGS)  # (fingerprint, the runs themselves, their rankings)
    if held is not None and held[0] == ds.fingerprint and len(held[1]) == len(runs):
        if all(a is b for a, b in zip(held[1], runs)):
            return dict(held[2])
    out = {r.name: from_run(r, ds) for r in runs}
    st.session_state[state.JUDGED_RANKINGS] = (ds.fingerprint, runs, out)
    return dict(out)


def evaluation(
    metric_names: list[str] | tuple[str, ...],
    ds: Dataset | None = None,
    params: Params | None = None,
    spinner: bool = True,
) -> Evaluation:
    """Per-question values of the given metrics for every system (cheap once the rankings are cached)."""
    ds = ds or current_dataset()
    return _scored(ds, rankings(ds, params, spinner), metric_names)


def _scored(ds: Dataset, ranks: dict[str, Ranking], metric_names) -> Evaluation:
    """The metrics of these rankings, with their warnings as the evaluation's notes."""
    notes = tuple(w for r in ranks.values() for w in r.warnings)
    return score(ds, ranks, metrics.parse_list(list(metric_names)), notes)


def waiting(ds: Dataset | None = None, params: Params | None = None) -> tuple[str, ...]:
    """The systems that wait on a slow fit at the current (or given) parameters (LSA while its SVD is fitted on a
    large corpus, and the fusions of it); empty on a small corpus, or once fitted."""
    ds = ds or current_dataset()
    if not has_documents(ds):
        return ()
    return engine(ds).waiting(ranking_params(ds, params))


def fit_in_background(ds: Dataset | None = None, params: Params | None = None) -> bool:
    """Start LSA's slow fit at the current (or given) d in the engine's thread; whether one was started."""
    ds = ds or current_dataset()
    if not has_documents(ds):
        return False
    return engine(ds).fit_in_background(ranking_params(ds, params).dims) is not None


def first_rankings(ds: Dataset | None = None, params: Params | None = None) -> dict[str, Ranking]:
    """The rankings of the systems that do not wait (`waiting`): what a page shows while LSA is fitted."""
    ds = ds or current_dataset()
    if not has_documents(ds):
        return run_rankings(ds)
    return engine(ds).first_rankings(ranking_params(ds, params), current_sources(ds))


def first_evaluation(
    metric_names: list[str] | tuple[str, ...], ds: Dataset | None = None, params: Params | None = None
) -> Evaluation:
    """`evaluation` of the systems that do not wait (`waiting`): what a page shows while LSA is fitted."""
    ds = ds or current_dataset()
    return _scored(ds, first_rankings(ds, params), metric_names)
