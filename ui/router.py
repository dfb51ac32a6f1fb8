"""The app's pages, in navigation order: what app.py routes between (and what a page run alone hands back to)."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

ROOT = Path(__file__).resolve().parent.parent
# Each page's icon is an emoji, never a ":material/...:" icon: the browser shows the current page's icon as the tab's
# favicon until app.py's own (set_page_config) arrives, and Streamlit's frontend fetches a Material icon's favicon from
# fonts.gstatic.com (an emoji's is drawn in place, a data: URL). The app makes no request beyond its own server
# (tests/test_browser.py opens every page cold and fails on any other origin); Material icons inside a page are drawn
# with the font Streamlit serves itself.
PAGES = (  # file, title, icon; the first is the landing page
    ("pages/tour.py", "Tour", "🧭"),
    ("pages/overview.py", "Overview", "📊"),
    ("pages/per_question.py", "Per question", "🔢"),
    ("pages/playground.py", "Playground", "📝"),
    ("pages/diagnosis.py", "Diagnosis", "🩺"),
    ("pages/compare.py", "Compare", "⚖️"),
    ("pages/tuning.py", "Tuning", "🎛️"),
    ("pages/metrics_lab.py", "Metrics lab", "🎓"),
    ("pages/judge.py", "Judge", "✅"),
    ("pages/experiments.py", "Experiments", "🧪"),
    ("pages/data.py", "Data", "🗂️"),
)


def pages() -> list:
    """The st.Page objects of every page (paths from the project root, so any working folder will do)."""
    return [st.Page(str(ROOT / path), title=title, icon=icon, default=i == 0) for i, (path, title, icon) in enumerate(PAGES)]
