"""Cached calls into `retrieval`, each keyed on exactly what it depends on (dataset content + its own parameters).

A k1 change recomputes BM25 and the fusions, never the LSA; an alpha change recomputes only the weighted fusion.
Every cache is bounded.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from retrieval import dataset as datasets
from retrieval import bm25 as bm25_lib
from retrieval import experiment, lsa, metrics, stats
from retrieval.dataset import Dataset, TrecRun
from retrieval.experiment import Evaluation, LsaFit, Params, Prepared
from retrieval.ranking import Ranking, from_run

from . import state


@st.cache_resource(max_entries=2, show_spinner=False)
def invented() -> Dataset:
    """The shipped invented corpus."""
    return datasets.load("invented")


def current_dataset() -> Dataset:
    """The dataset in use: the uploaded one, else the invented corpus."""
    return st.session_state.get(state.DATASET) or invented()


def current_runs() -> tuple[TrecRun, ...]:
    """The uploaded run files, in upload order."""
    return tuple(st.session_state.get(state.RUNS, {}).values())


@st.cache_data(max_entries=8, show_spinner=False)
def parse_beir_zip(data: bytes, source: str) -> Dataset:
    """A BEIR zip parsed from its bytes (cached on the content, not the file object)."""
    return datasets.load_beir_zip(data, source)


@st.cache_data(max_entries=8, show_spinner=False)
def parse_files(docs: bytes, docs_name: str, queries: bytes, queries_name: str, qrels: bytes, qrels_name: str) -> Dataset:
    """A dataset from three uploaded files, cached on their bytes."""
    return datasets.from_files((docs, docs_name), (queries, queries_name), (qrels, qrels_name), name="uploaded")


@st.cache_data(max_entries=32, show_spinner=False)
def parse_run(data: bytes, source: str, name: str | None) -> TrecRun:
    """A TREC run file parsed from its bytes."""
    return datasets.parse_run(data, source, name)


@st.cache_resource(max_entries=4, show_spinner=False)
def prepared(_ds: Dataset, fingerprint: str) -> Prepared:
    """Tokenised corpus and questions, once per dataset."""
    return experiment.prepare(_ds)


@st.cache_resource(max_entries=16, show_spinner=False)
def bm25(_ds: Dataset, fingerprint: str, k1: float, b: float, depth: int) -> tuple:
    """BM25 scores (sparse) and ranking at (k1, b)."""
    prep = prepared(_ds, fingerprint)
    scores = experiment.bm25_scores(prep, k1, b)
    return scores, bm25_lib.search(_ds, scores, depth)


@st.cache_resource(max_entries=8, show_spinner=False)
def lsa_fit(_ds: Dataset, fingerprint: str, dims: int, depth: int) -> tuple[LsaFit, Ranking]:
    """LSA fitted with d dimensions and its ranking (refitted only when d changes)."""
    prep = prepared(_ds, fingerprint)
    fit = experiment.fit_lsa(prep, dims)
    return fit, lsa.search(_ds, fit.model, fit.qvec, depth)


def max_dims(ds: Dataset) -> int:
    """The largest LSA dimension the dataset allows, capped at the slider's 200."""
    return max(1, min(int(state.SLIDERS[state.DIMS].hi), lsa.max_dims(prepared(ds, ds.fingerprint).index)))


@st.cache_resource(max_entries=16, show_spinner=False)
def fused(_ds: Dataset, fingerprint: str, k1: float, b: float, dims: int, alpha: float, rrf_k: float, depth: int, fusion_depth: int) -> tuple[Ranking, Ranking]:
    """Weighted and RRF fusions at the given parameters."""
    scores, bm = bm25(_ds, fingerprint, k1, b, depth)
    fit, ls = lsa_fit(_ds, fingerprint, dims, depth)
    params = Params(k1=k1, b=b, dims=dims, rrf_k=rrf_k, alpha=alpha, fusion_depth=fusion_depth, depth=depth)
    return experiment.fused_rankings(_ds, scores, fit, bm, ls, params)


@st.cache_resource(max_entries=32, show_spinner=False)
def run_ranking(_ds: Dataset, fingerprint: str, _run: TrecRun, run_key: str) -> Ranking:
    """An uploaded run aligned with the dataset."""
    return from_run(_run, _ds)


def _run_key(run: TrecRun) -> str:
    """A content key of a parsed run."""
    return f"{run.name}:{len(run.query_ids)}:{hash((run.query_ids, run.doc_ids))}"


def rankings(ds: Dataset | None = None, params: Params | None = None) -> dict[str, Ranking]:
    """Every system's ranking at the current (or given) parameters: BM25, LSA, weighted, RRF, then the runs."""
    ds = ds or current_dataset()
    p = params or state.params()
    p.check()
    fp = ds.fingerprint
    depth = max(p.depth, p.fusion_depth)
    dims = min(p.dims, max_dims(ds))
    _, bm = bm25(ds, fp, p.k1, p.b, depth)
    _, ls = lsa_fit(ds, fp, dims, depth)
    w, r = fused(ds, fp, p.k1, p.b, dims, p.alpha, p.rrf_k, depth, p.fusion_depth)
    out = {"BM25": bm, "LSA": ls, "weighted": w, "RRF": r}
    for run in current_runs():
        out[run.name] = run_ranking(ds, fp, run, _run_key(run))
    return out


def evaluation(metric_names: list[str] | tuple[str, ...], ds: Dataset | None = None, params: Params | None = None) -> Evaluation:
    """Per-question values of the given metrics for every system (cheap once the rankings are cached)."""
    ds = ds or current_dataset()
    ranks = rankings(ds, params)
    notes = tuple(w for r in ranks.values() for w in r.warnings)
    return experiment.score(ds, ranks, metrics.parse_list(list(metric_names)), notes)


def intervals(values: np.ndarray) -> np.ndarray:
    """95% bootstrap intervals of the mean for each row (rows x questions), the article's procedure vectorised."""
    return stats.intervals(values)
