"""Helpers for AppTest: open the app through app.py, as a person does."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from conftest import ROOT

APP = str(ROOT / "app.py")


def open_app(page: str | None = None, query: dict[str, str] | None = None) -> AppTest:
    """Run app.py (optionally with URL query parameters), then switch to `page` (e.g. 'pages/compare.py')."""
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()
    if page:
        at.switch_page(page).run()
    return at


def move(at: AppTest, key: str, value) -> AppTest:
    """Set a sidebar control as a person would, through its widget, and rerun.

    After its first run AppTest renders a multipage app's pages without app.py (Streamlit's legacy pages mode,
    as the issue notes), so the sidebar widgets are then absent from the tree: their values live on in session
    state (persist_state="session"), which is where the change goes in that case.
    """
    for widget in (*at.sidebar.slider, *at.sidebar.selectbox):
        if widget.key == key:
            return widget.set_value(value).run()
    at.session_state[key] = value
    return at.run()
