"""The Overview page's parts: the means of every system, bars with 95% bootstrap intervals, the metric versus k."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from retrieval import stats
from retrieval.dataset import Dataset
from retrieval.experiment import Evaluation
from retrieval.params import Params

from . import charts, state
from .markdown import escape_markdown

K_MAX = 20  # the curves run over k = 1..K_MAX


@st.cache_data(max_entries=64, show_spinner=False)
def intervals(values: np.ndarray) -> np.ndarray:
    """95% bootstrap intervals of each row's mean (cached on the values)."""
    return stats.intervals(values)


def table_metrics(k: int, chosen: str) -> list[str]:
    """The means table's columns: hit, recall, MRR and nDCG at k, then the sidebar's metric if it is another."""
    return list(dict.fromkeys([f"hit@{k}", f"recall@{k}", "mrr", f"ndcg@{k}", chosen]))


def curve_metrics(kind: str) -> list[str]:
    """The metric of the sidebar at every k = 1..K_MAX (MRR: cut at k)."""
    return [f"{kind}@{i}" for i in range(1, K_MAX + 1)]


def caption(ds: Dataset, p: Params, dims_used: int) -> str:
    """What is measured, with the parameters in force (the dataset's name escaped)."""
    return (f"**{escape_markdown(ds.name)}**: {ds.n_docs:,} documents, {ds.evaluated.size:,} questions with a relevant "
            f"document. BM25 k1 = {p.k1:g}, b = {p.b:g} · LSA d = {dims_used} · RRF k = {p.rrf_k:g} · weighted alpha = "
            f"{p.alpha:g}. nDCG uses linear gain unless marked _exp.")


def summary(ev: Evaluation, metrics: list[str]) -> pd.DataFrame:
    """Systems x metrics means, labelled for reading."""
    return pd.DataFrame({state.metric_label(m): [ev.mean(s, m) for s in ev.systems] for m in metrics},
                        index=pd.Index(ev.systems, name="system"))


def bars(ev: Evaluation, metrics: list[str]) -> pd.DataFrame:
    """One row per (metric, system): the mean and its 95% bootstrap interval over the questions."""
    rows = np.array([ev.values[s][m] for m in metrics for s in ev.systems])
    iv = intervals(rows)
    frame = pd.DataFrame([{"metric": state.metric_label(m), "system": s, "mean": ev.mean(s, m)}
                          for m in metrics for s in ev.systems])
    frame["low"], frame["high"] = iv[:, 0], iv[:, 1]
    return frame


def curve(ev: Evaluation, metrics: list[str]) -> pd.DataFrame:
    """The mean of each system at every k of the curve."""
    return pd.DataFrame([{"k": i + 1, "system": s, "value": ev.mean(s, m)} for i, m in enumerate(metrics) for s in ev.systems])


def warnings(ds: Dataset, ev: Evaluation) -> None:
    """The dataset's and the systems' warnings (they quote ids and run names: escaped)."""
    for note in list(ds.warnings) + list(ev.notes):
        st.warning(escape_markdown(note), icon=":material/warning:")


def means_table(ev: Evaluation, metrics: list[str]):
    """The means as shown: 6 decimals, as the article's tables print them (the table spans the page's width, so
    they fit), each column's best in bold (a Styler over `summary`)."""
    return summary(ev, metrics).style.format("{:.6f}").highlight_max(axis=0, props="font-weight: bold")


def means_and_intervals(ev: Evaluation, metrics: list[str]) -> None:
    """The means table across the page (every column readable at 1024 px with 6 systems), then the bars with their intervals."""
    st.subheader("Means")
    st.dataframe(means_table(ev, metrics), width="stretch")
    st.caption("Means over the questions that have at least one relevant document; a question a system does not answer scores 0.")
    st.subheader("With 95% bootstrap intervals")
    st.altair_chart(charts.bars_with_intervals(bars(ev, metrics)), width="stretch")
    st.caption(f"Percentile bootstrap over the questions, {stats.RESAMPLES} resamples, seed {stats.SEED}: overlapping "
               "intervals are a warning, not a verdict; the Compare page pairs the questions.")


def curves(ev: Evaluation, metrics: list[str], chosen: str, k: int) -> None:
    """The metric versus the cutoff k, the sidebar's k marked."""
    name = state.metric_label(chosen).split("@")[0]
    st.subheader(f"{name} versus the cutoff k")
    st.altair_chart(charts.curves(curve(ev, metrics), name + "@k", k), width="stretch")
