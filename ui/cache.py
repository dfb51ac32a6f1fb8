"""Cached calls into `retrieval`, keyed on the dataset's content (its fingerprint or the uploaded bytes), bounded.

A k1 change recomputes BM25 and the fusions, never the LSA; an alpha change recomputes only the weighted fusion:
the per-parameter results live in the bounded caches of the dataset's `Prepared` object.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import replace

import streamlit as st

from retrieval import dataset as datasets
from retrieval import experiment, lsa, metrics
from retrieval.dataset import Dataset, TrecRun
from retrieval.experiment import Evaluation, Params, Prepared
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


PREPARED_ENTRIES = 4


@st.cache_resource(show_spinner=False)
def _prepared_store() -> tuple[OrderedDict, threading.Lock]:
    """The server-wide store of prepared datasets, most recently used last, and its lock."""
    return OrderedDict(), threading.Lock()


def prepared(ds: Dataset, fingerprint: str, _progress=None) -> Prepared:
    """Tokenised corpus and questions, once per dataset (keyed on its content), at most PREPARED_ENTRIES kept.

    The `Prepared` object also holds the library's own bounded caches (BM25 per (k1, b), LSA per d, the weighted
    fusion per alpha), so a slider change recomputes only what depends on it. `_progress(stage, fraction)` is
    called while preparing (the Data page's progress bar draws with it, which is why this is not an
    `st.cache_resource` function: those record and replay the elements drawn inside them).
    """
    store, lock = _prepared_store()
    with lock:
        if fingerprint in store:
            store.move_to_end(fingerprint)
            return store[fingerprint]
    prep = experiment.prepare(ds, progress=_progress)
    with lock:
        store[fingerprint] = prep
        while len(store) > PREPARED_ENTRIES:
            store.popitem(last=False)
    return prep


def max_dims(ds: Dataset) -> int:
    """The largest LSA dimension the dataset allows, capped at the slider's 200."""
    return max(1, min(int(state.SLIDERS[state.DIMS].hi), lsa.max_dims(prepared(ds, ds.fingerprint).index)))


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
    p = replace(p, dims=min(p.dims, max_dims(ds))).check()
    prep = prepared(ds, ds.fingerprint)
    out = experiment.rankings(ds, p, (), prep)
    for run in current_runs():
        out[run.name] = run_ranking(ds, ds.fingerprint, run, _run_key(run))
    return out


def evaluation(metric_names: list[str] | tuple[str, ...], ds: Dataset | None = None, params: Params | None = None) -> Evaluation:
    """Per-question values of the given metrics for every system (cheap once the rankings are cached)."""
    ds = ds or current_dataset()
    ranks = rankings(ds, params)
    notes = tuple(w for r in ranks.values() for w in r.warnings)
    return experiment.score(ds, ranks, metrics.parse_list(list(metric_names)), notes)
