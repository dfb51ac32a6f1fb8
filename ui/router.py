"""The app's pages, in navigation order: what app.py routes between (and what a page run alone hands back to)."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

ROOT = Path(__file__).resolve().parent.parent
# Each page's icon is one of the Material Symbols that Streamlit serves itself (its bundled font), drawn the same on
# every machine (an emoji drew as an empty box without an emoji font). It marks the links to the page inside pages
# (the Tour's cards, page links), never the navigation: Streamlit 1.67's frontend makes the current page's st.Page
# icon the tab's favicon until app.py's arrives, and fetches a Material icon's from fonts.gstatic.com (measured:
# /tour requested .../materialsymbolsrounded/explore/default/24px.svg), so st.Page gets no icon. The tab's icon is
# app.py's own, FAVICON, an inline SVG (a data: URL). The app makes no request beyond its own server
# (tests/browser/test_browser.py opens every page cold and fails on any other origin).
PAGES = (  # file, title, icon; the first is the landing page
    ("pages/tour.py", "Tour", ":material/explore:"),
    ("pages/overview.py", "Overview", ":material/bar_chart:"),
    ("pages/per_question.py", "Per question", ":material/format_list_numbered:"),
    ("pages/playground.py", "Playground", ":material/edit_note:"),
    ("pages/diagnosis.py", "Diagnosis", ":material/stethoscope:"),
    ("pages/compare.py", "Compare", ":material/balance:"),
    ("pages/tuning.py", "Tuning", ":material/tune:"),
    ("pages/metrics_lab.py", "Metrics lab", ":material/school:"),
    ("pages/judge.py", "Judge", ":material/fact_check:"),
    ("pages/experiments.py", "Experiments", ":material/science:"),
    ("pages/data.py", "Data", ":material/database:"),
)
# The tab's icon: a magnifying glass drawn in SVG (no font needed), given to set_page_config as markup, which
# Streamlit turns into a data: URL.
FAVICON = (
    '<svg viewBox="0 0 64 64"><circle cx="26" cy="26" r="17" fill="none" stroke="#1c7ed6" stroke-width="7"/>'
    '<line x1="39" y1="39" x2="58" y2="58" stroke="#1c7ed6" stroke-width="9" stroke-linecap="round"/></svg>'
)


def pages() -> list:
    """The st.Page objects of every page (paths from the project root, so any working folder will do), without an
    icon (see PAGES)."""
    return [st.Page(str(ROOT / path), title=title, default=i == 0) for i, (path, title, _) in enumerate(PAGES)]
