"""Page parts that wait on work in the background: the rest of the page is drawn at once, and the page runs again
when the work is in."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

POLL_S = 1.0  # how often a waiting part looks whether its work is in


@st.fragment(run_every=POLL_S)
def rerun_when(ready: Callable[[], bool]) -> None:
    """Look every POLL_S seconds (a fragment: only this reruns, and draws nothing) and run the whole page again once
    `ready()` holds: for a part of a page drawn without what a background thread is making (LSA's SVD after an
    upload, the encoder's timing), so the page is there at once and complete a moment later. A page that no longer
    calls it stops looking."""
    if ready():
        st.rerun()
