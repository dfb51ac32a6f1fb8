"""Overview: the summary table of every system, bars with 95% bootstrap intervals, metric-versus-k curves.
The parts are in ui/overview.py."""

import streamlit as st

from ui import cache, no_documents, state
from ui import overview as page

state.init_state()

ds = cache.current_dataset()
if not no_documents.page_needs_runs(ds, "Overview"):
    k = state.cutoff()
    chosen = state.metric_name()
    table = page.table_metrics(k, chosen)
    curve = page.curve_metrics(state.metric_kind())
    p = cache.current_params()

    st.title("Overview")
    dims = cache.ranking_params(ds, p).dims
    st.caption(page.caption(ds, p, dims))
    if note := page.workspace_note(ds):
        st.caption(note)
    ev = page.evaluation(ds, list(dict.fromkeys(table + curve)), table, dims)
    page.warnings(ds, ev, k)
    page.means_and_intervals(ev, table)
    page.curves(ev, curve, chosen, k)
