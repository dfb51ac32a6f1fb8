"""The dataset in use in this session (uploaded, else the invented corpus, with the session's new judgements), its
runs, its engine, and uploads parsed once per content. `ui.cache` builds on it and hands all of it to the pages."""

from __future__ import annotations

import streamlit as st

from retrieval.corpus import dataset as datasets
from retrieval.corpus import runs
from retrieval.corpus.dataset import Dataset
from retrieval.corpus.judged import has_documents, parse_judgements
from retrieval.corpus.runs import TIES_DEFAULT, TrecRun
from retrieval.corpus.text import Analysis
from retrieval.engine.engine import (
    APP_MAX_CHARS,
    IDLE_HOOKS,
    Engine,
    built,
    check_size,
    for_dataset,
    max_chars,
    start_warm_up,
)
from retrieval.evaluation.agreement import RULES, combine
from retrieval.store.workspace import Grade

from . import state

DEFAULT_RULE = "original"  # by default the loaded judgements alone: the article's tables stay exact whatever the
# workspace holds; a session that grades counts the raters' grades (ui.judge switches it to "mean")


@st.cache_resource(max_entries=2, show_spinner=False)
def invented() -> Dataset:
    """The shipped invented corpus."""
    return datasets.load("invented")


def base_dataset() -> Dataset:
    """The dataset loaded: the uploaded one, else the invented corpus, without the session's new judgements."""
    return st.session_state.get(state.DATASET) or invented()


def rule() -> str:
    """The rule combining the workspace raters' grades into the one grade per pair the metrics use (the Judge
    page's choice, in the URL; retrieval.evaluation.agreement.RULES)."""
    chosen = st.session_state.get(state.RULE)
    return chosen if chosen in RULES else DEFAULT_RULE


def workspace_grades(base: Dataset | None = None) -> tuple[Grade, ...]:
    """The workspace raters' grades of the loaded dataset as this session last read them (ui.workspace keeps them:
    read when the dataset is opened or the Judge page entered, and after each grade given here)."""
    base = base or base_dataset()
    return st.session_state.get(state.GRADES, {}).get(base.fingerprint, ())


def new_judgements(base: Dataset | None = None) -> dict[tuple[str, str], int]:
    """The grades the metrics add to the loaded dataset's judgements: the workspace raters' grades, one per (question
    id, document id) by `rule()`, for the pairs the loaded judgements leave unjudged (a copy)."""
    base = base or base_dataset()
    grades = workspace_grades(base)
    if not grades:
        return {}
    held = st.session_state.get(state.COMBINED)  # one per grades read and rule: a tick recomputes nothing
    if held is not None and held[0] == base.fingerprint and held[1] is grades and held[2] == rule():
        return dict(held[3])
    combined = combine(((g.query_id, g.doc_id, g.rater, g.grade) for g in grades), rule())
    judged = set(zip((base.query_ids[q] for q in base.qrels.query.tolist()), base.qrels.doc_id.tolist()))
    out = {
        (q, d): g
        for (q, d), g in combined.items()
        if (q, d) not in judged and q in base.query_index and d in base.doc_index
    }
    st.session_state[state.COMBINED] = (base.fingerprint, grades, rule(), out)
    return dict(out)


def current_dataset() -> Dataset:
    """The dataset in use: the uploaded one, else the invented corpus, with the workspace raters' grades added
    (`new_judgements`; Dataset.with_judgements: the same texts, so its engine is derived from the loaded one's,
    nothing re-tokenised). Made once per set of grades and rule, and kept in the session."""
    base = base_dataset()
    grades = new_judgements(base)
    if not grades:
        return base
    held = st.session_state.get(state.JUDGED_DATASET)
    if held is not None and held[0] == base.fingerprint and held[1] == grades:
        return held[2]
    ds = base.with_judgements((q, d, g) for (q, d), g in sorted(grades.items()))  # one order: one fingerprint
    st.session_state[state.JUDGED_DATASET] = (base.fingerprint, dict(grades), ds)
    return ds


def edited_name(name: str, grades: int) -> str:
    """A dataset's name with the grades added to its loaded judgements: "invented · edited: 1 grade" (as it is
    with none)."""
    return f"{name} · edited: {grades:,} grade{'s' if grades != 1 else ''}" if grades else name


def dataset_label() -> str:
    """The dataset in use as every page names it (plain text: escape it for Markdown): its name, and "edited: N
    grades" when the workspace raters' grades add N judgements to the loaded ones (`new_judgements`)."""
    base = base_dataset()
    return edited_name(base.name, len(new_judgements(base)))


def current_runs() -> tuple[TrecRun, ...]:
    """The uploaded run files, in upload order."""
    return tuple(st.session_state.get(state.RUNS, {}).values())


def _within_limit(ds: Dataset) -> Dataset:
    """The dataset, or the refusal of one above the app's text limit (`check_size`, as its engine would refuse it),
    raised from the cached parse so that a refused upload leaves nothing in Streamlit's cache."""
    check_size(ds, max_chars(APP_MAX_CHARS))
    return ds


@st.cache_data(max_entries=8, show_spinner=False)
def parse_beir_zip(data: bytes, source: str) -> Dataset:
    """A BEIR zip parsed from its bytes (cached on the content, not the file object); one above the text limit is
    refused, not cached."""
    return _within_limit(datasets.load_beir_zip(data, source))


@st.cache_data(max_entries=8, show_spinner=False)
def parse_files(
    docs: bytes, docs_name: str, queries: bytes, queries_name: str, qrels: bytes, qrels_name: str
) -> Dataset:
    """A dataset from three uploaded files, cached on their bytes; one above the text limit is refused, not cached."""
    return _within_limit(
        datasets.from_files((docs, docs_name), (queries, queries_name), (qrels, qrels_name), name="uploaded")
    )


@st.cache_data(max_entries=32, show_spinner=False)
def parse_run(data: bytes, source: str, name: str | None, ties: str = TIES_DEFAULT) -> TrecRun:
    """A run file parsed from its bytes (TREC, plain or gzipped, or JSON), its ties ranked by `ties`."""
    return runs.parse_run(data, source, name, ties)


@st.cache_data(max_entries=8, show_spinner=False)
def parse_qrels(data: bytes, source: str) -> Dataset:
    """A qrels file uploaded alone, parsed from its bytes: judgements with no documents, which score run files."""
    return parse_judgements(data, source)


def clear_parses() -> None:
    """Drop the uploads parsed and cached here (each session keeps its own dataset): called when the server drops
    idle engines, so a heavy upload's parse does not outlive the work on it."""
    for parsed in (parse_beir_zip, parse_files, parse_qrels, parse_run):
        parsed.clear()


if clear_parses not in IDLE_HOOKS:  # once per process, however often this module is imported
    IDLE_HOOKS.append(clear_parses)


def engine(ds: Dataset, _progress=None, analysis: Analysis | None = None) -> Engine:
    """The dataset's engine for the sidebar's text analysis (or `analysis`), built once per content and analysis and
    shared by every session (retrieval.engine keeps at most ENGINES). It holds the index and every bounded cache of
    runs and fusions, so a slider change recomputes only what depends on it. `_progress(stage, fraction)` is called
    while it is built (the Data page's progress bar); without it, an index built for another analysis of a corpus
    above PROGRESS_ABOVE documents shows a progress bar where the page first needs it.
    The first call of the process starts the compiled kernels' warm-up in the background; until it is done a small
    corpus is served by their plain-Python twin (same numbers), so a first visit never waits for numba."""
    start_warm_up()
    analysis = analysis or state.analysis()
    limit = max_chars(APP_MAX_CHARS)
    if _progress is not None or built(ds, analysis) or ds.n_docs <= PROGRESS_ABOVE:
        return for_dataset(ds, _progress, limit, analysis, budgeted=True)  # refused above the limits, not built
    bar = st.progress(0.0, text=f"Indexing with {analysis.describe()}")
    try:
        return for_dataset(
            ds,
            lambda stage, f: bar.progress(min(max(f, 0.0), 1.0), text=f"Indexing with {analysis.describe()}: {stage}"),
            limit,
            analysis,
            budgeted=True,
        )
    finally:
        bar.empty()


PROGRESS_ABOVE = 20_000  # documents above which building an index for another analysis shows a progress bar (~0.3 s)


def max_dims(ds: Dataset) -> int:
    """The largest LSA dimension the dataset allows, capped at the slider's maximum (1 for judgements alone: no
    engine is built for a dataset with no documents)."""
    if not has_documents(ds):
        return 1
    return max(1, min(int(state.SLIDERS[state.DIMS].hi), engine(ds).max_dims()))
