"""Overview: the summary table of every system, bars with 95% bootstrap intervals, metric-versus-k curves."""

import numpy as np
import pandas as pd
import streamlit as st

from retrieval import stats
from ui import cache, charts, state
from ui.markdown import escape_markdown

state.init_state()

K_MAX = 20


@st.cache_data(max_entries=64, show_spinner=False)
def _intervals(values: np.ndarray) -> np.ndarray:
    """95% bootstrap intervals of each row's mean (cached on the values)."""
    return stats.intervals(values)


ds = cache.current_dataset()
k = state.cutoff()
chosen = state.metric_name()
table_metrics = list(dict.fromkeys([f"hit@{k}", f"recall@{k}", "mrr", f"ndcg@{k}", chosen]))
curve_metrics = [state.metric_name(i) for i in range(1, K_MAX + 1)] if state.metric_kind() != "mrr" else [f"mrr@{i}" for i in range(1, K_MAX + 1)]

st.title("Overview")
p = state.params()
st.caption(
    f"**{escape_markdown(ds.name)}**: {ds.n_docs:,} documents, {ds.evaluated.size:,} questions with a relevant document. "
    f"BM25 k1 = {p.k1:g}, b = {p.b:g} · LSA d = {min(p.dims, cache.max_dims(ds))} · "
    f"RRF k = {p.rrf_k:g} · weighted alpha = {p.alpha:g}. nDCG uses linear gain unless marked _exp."
)

ev = cache.evaluation(list(dict.fromkeys(table_metrics + curve_metrics)))
for note in list(ds.warnings) + list(ev.notes):
    st.warning(note, icon=":material/warning:")

summary = pd.DataFrame(
    {state.metric_label(m): [ev.mean(s, m) for s in ev.systems] for m in table_metrics}, index=pd.Index(ev.systems, name="system")
)
left, right = st.columns([2, 3], gap="large")
with left:
    st.subheader("Means")
    st.dataframe(summary.style.format("{:.6f}").highlight_max(axis=0, props="font-weight: bold"), width="stretch")
    st.caption("Means over the questions that have at least one relevant document; a question a system does not answer scores 0.")

rows = np.array([ev.values[s][m] for m in table_metrics for s in ev.systems])
iv = _intervals(rows)
bars = pd.DataFrame(
    [{"metric": state.metric_label(m), "system": s, "mean": ev.mean(s, m)} for m in table_metrics for s in ev.systems]
)
bars["low"], bars["high"] = iv[:, 0], iv[:, 1]
with right:
    st.subheader("With 95% bootstrap intervals")
    st.altair_chart(charts.bars_with_intervals(bars), width="stretch")
    st.caption(f"Percentile bootstrap over the questions, {stats.RESAMPLES} resamples, seed {stats.SEED}: overlapping intervals are a warning, not a verdict; the Compare page pairs the questions.")

st.subheader(f"{state.metric_label(state.metric_name(1)).split('@')[0]} versus the cutoff k")
curve = pd.DataFrame(
    [{"k": i + 1, "system": s, "value": ev.mean(s, m)} for i, m in enumerate(curve_metrics) for s in ev.systems]
)
st.altair_chart(charts.curves(curve, state.metric_label(chosen).split("@")[0] + "@k", k), width="stretch")
