"""Per question: the rank heatmap (question x system, first relevant document), then one question's rankings side by side.
The parts are in ui/per_question.py."""

from __future__ import annotations

import streamlit as st

from ui import cache, state
from ui import per_question as page

state.init_state()

ds = cache.current_dataset()
k = state.cutoff()
p = cache.current_params()
ev = cache.evaluation([state.metric_name()])
page.header(ds, k)

first = page.first_ranks(ev)
rows = page.chosen_rows(first, k)
left, right = st.columns([3, 2], gap="large")
with left:
    page.heatmap(ds, rows, k)
with right:
    page.counts(first, k, p.fusion_depth)

one = page.choose_question(ds, ev)
page.side_by_side(one, k, p)
page.judged_documents(one, k)
page.full_text(one, k)
