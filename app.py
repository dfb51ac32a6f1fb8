"""The retriever lab: the router and the frame (page config, shared state, navigation, the shared sidebar)."""

import streamlit as st

from ui import router, sidebar, state

st.set_page_config(page_title="The retriever lab", page_icon=":mag:", layout="wide")
state.begin_frame()
try:
    state.init_state()
    page = st.navigation(router.pages())
    sidebar.render()
    page.run()
finally:
    state.end_frame()
