"""ui.live: a part of a page that waits on background work runs the whole page again once the work is in."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _page():
    import streamlit as st

    from ui import live

    st.session_state["runs"] = st.session_state.get("runs", 0) + 1
    st.write(f"run {st.session_state['runs']}")
    if st.session_state.get("wait"):
        live.rerun_when(lambda: st.session_state["runs"] < st.session_state["ready_before"])


def test_a_waiting_part_reruns_the_page_once_its_work_is_in_and_stops_looking_when_the_page_drops_it():
    at = AppTest.from_function(_page, default_timeout=30)
    at.session_state["wait"], at.session_state["ready_before"] = True, 3
    at.run()  # runs 1 and 2 find the work in (runs < 3): each runs the page again; run 3 finds it not in
    assert not at.exception and at.session_state["runs"] == 3 and at.markdown[0].value == "run 3"
    at.session_state["ready_before"] = 0
    at.run()  # never in: the page is drawn once, the part keeps looking (a timer, not a rerun)
    assert at.session_state["runs"] == 4
    at.session_state["wait"], at.session_state["ready_before"] = False, 10
    at.run()  # the page no longer asks: no rerun however ready
    assert at.session_state["runs"] == 5
