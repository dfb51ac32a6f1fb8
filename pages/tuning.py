"""Tuning: the sidebar's metric over a grid of one parameter or of two together (a fusion with LSA's d), one
verdict weighing the corrected test against cross-validation, the settings that can't be told apart from the best,
held-out validation, the permutation test with Holm's correction, the per-question oracle and one question's fusion
explained. The parts are in ui/tuning.py."""

from __future__ import annotations

from ui import cache, no_documents, state
from ui import tuning as page

state.init_state()

ds = cache.current_dataset()
if not no_documents.page_needs_documents(ds, "Tuning", "Tuning (BM25's k1 and b, LSA's d, the fusions swept)"):
    view = page.choose_view(ds) if page.header(ds, state.metric_label(state.metric_name())) else None
    if view is not None:
        page.headline(view)
        page.landscape_chart(view)
        page.significance_section(view)
        page.validation_section(view)
        page.oracle_section(view)
        page.fusion_section(view)
