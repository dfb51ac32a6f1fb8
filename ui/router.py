"""The app's pages, in navigation order: what app.py routes between (and what a page run alone hands back to)."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

ROOT = Path(__file__).resolve().parent.parent
PAGES = (  # file, title, icon; the first is the landing page
    ("pages/tour.py", "Tour", ":material/route:"),
    ("pages/overview.py", "Overview", ":material/leaderboard:"),
    ("pages/per_question.py", "Per question", ":material/grid_on:"),
    ("pages/playground.py", "Playground", ":material/edit_note:"),
    ("pages/diagnosis.py", "Diagnosis", ":material/troubleshoot:"),
    ("pages/compare.py", "Compare", ":material/compare_arrows:"),
    ("pages/tuning.py", "Tuning", ":material/tune:"),
    ("pages/metrics_lab.py", "Metrics lab", ":material/school:"),
    ("pages/judge.py", "Judge", ":material/rule:"),
    ("pages/experiments.py", "Experiments", ":material/history:"),
    ("pages/data.py", "Data", ":material/database:"),
)


def pages() -> list:
    """The st.Page objects of every page (paths from the project root, so any working folder will do)."""
    return [st.Page(str(ROOT / path), title=title, icon=icon, default=i == 0) for i, (path, title, icon) in enumerate(PAGES)]
