"""Judgements alone in the app: a qrels file and run files uploaded with no documents (retrieval.corpus.judged).
The pages that need only judgements and runs (Overview, Compare, Per question by rank) score the runs; a page or part
that reads text (BM25, LSA, dense, the Playground, the lexical diagnosis, the Tour, Judge, Tuning) says in one
sentence that it needs documents instead of failing."""

from __future__ import annotations

import streamlit as st

from retrieval.corpus.dataset import Dataset
from retrieval.corpus.judged import has_documents

from .format import plural
from .in_use import current_runs
from .markdown import escape_markdown as plain


def sentence(ds: Dataset, what: str) -> str:
    """What a part that reads text says on judgements alone: what it is, the dataset in use and how to give texts."""
    n_runs = len(current_runs())
    return (
        f"{what} needs documents: the dataset in use, {plain(ds.name)}, is judgements alone "
        f"({plural(ds.n_queries, 'question')}, {plural(len(ds.qrels), 'judgement')}, {plural(n_runs, 'run')}); "
        "upload a corpus (a BEIR zip or three files) on the Data page to use it."
    )


def no_runs_sentence(ds: Dataset) -> str:
    """What a page that scores runs says on judgements alone before any run is uploaded."""
    return (
        f"The dataset in use, {plain(ds.name)}, is judgements alone ({plural(ds.n_queries, 'question')}): upload "
        "one or more run files on the Data page (Run files) to score them here."
    )


def needs_documents(ds: Dataset, what: str) -> bool:
    """On judgements alone, say that `what` needs documents and return True; with documents, False (nothing shown)."""
    if has_documents(ds):
        return False
    st.info(sentence(ds, what), icon=":material/description:")
    return True


def page_needs_documents(ds: Dataset, title: str, what: str) -> bool:
    """A page that reads text: on judgements alone, its title and the sentence, and True (the page draws nothing
    else; not `st.stop`, which would end the run before app.py's frame closes)."""
    if has_documents(ds):
        return False
    st.title(title)
    return needs_documents(ds, what)


def page_needs_runs(ds: Dataset, title: str) -> bool:
    """A page that scores systems: on judgements alone with no run uploaded yet, its title and what to upload, and
    True (the page draws nothing else)."""
    if has_documents(ds) or current_runs():
        return False
    st.title(title)
    st.info(no_runs_sentence(ds), icon=":material/upload_file:")
    return True
