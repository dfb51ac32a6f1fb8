"""Compare: two systems on the sidebar's metric, the paired bootstrap of their per-question difference and a
plain verdict; then every system at once, the significant differences marked. The parts are in ui/compare.py."""

from __future__ import annotations

import streamlit as st

from ui import cache, no_documents, state
from ui import compare as page
from ui.markdown import escape_markdown as plain

state.init_state()

ds = cache.current_dataset()
if not no_documents.page_needs_runs(ds, "Compare"):
    metric = state.metric_name()
    label = state.metric_label(metric)
    page.header(ds, label)
    ev = cache.evaluation([metric])
    a, b = page.choose_pair(ev.systems)
    if a == b:
        st.info(
            f"Choose two different systems: {plain(a)} compared with itself differs by zero on every question.",
            icon=":material/info:",
        )
    elif ds.evaluated.size == 0:
        st.info("No question has a relevant document, so there is nothing to compare.", icon=":material/info:")
    else:
        page.comparison(ds, ev, metric, label, a, b)
    if ds.evaluated.size:
        page.every_system(ds, metric)
