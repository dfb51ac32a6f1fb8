"""The retriever lab: the router and the frame (page config, shared state, navigation, the shared sidebar)."""

import streamlit as st

from ui import rater, router, sidebar, state, workspace

st.set_page_config(page_title="The retriever lab", page_icon=router.FAVICON, layout="wide")
state.begin_frame()
try:
    state.init_state()
    workspace.follow_link()  # a session's first run opens what its link names
    rater.recall(workspace.proxy_user())  # and takes the rater's name kept in this browser (a proxy's header wins)
    page = st.navigation(router.pages())
    workspace.write_link()  # the link names the dataset and runs in use
    workspace.read_when_needed(page.title)  # grades once per dataset and on entering Judge; experiments on entering
    sidebar.render()
    workspace.say_link_problems()
    page.run()
finally:
    state.end_frame()
