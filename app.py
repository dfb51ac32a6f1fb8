"""The retriever lab: the router and the frame (page config, shared state, navigation, the shared sidebar)."""

import streamlit as st

from ui import sidebar
from ui.state import init_state

st.set_page_config(page_title="The retriever lab", page_icon=":mag:", layout="wide")
init_state()

PAGES = [
    st.Page("pages/overview.py", title="Overview", icon=":material/leaderboard:", default=True),
    st.Page("pages/per_question.py", title="Per question", icon=":material/grid_on:"),
    st.Page("pages/diagnosis.py", title="Diagnosis", icon=":material/troubleshoot:"),
    st.Page("pages/compare.py", title="Compare", icon=":material/compare_arrows:"),
    st.Page("pages/tuning.py", title="Tuning", icon=":material/tune:"),
    st.Page("pages/metrics_lab.py", title="Metrics lab", icon=":material/school:"),
    st.Page("pages/data.py", title="Data", icon=":material/database:"),
]
page = st.navigation(PAGES)
sidebar.render()
page.run()
