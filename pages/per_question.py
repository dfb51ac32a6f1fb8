"""Per question: the rank heatmap (question x system, first relevant document) across the page, its counts, then
one question's rankings side by side; a click on a cell opens that question in a dialog over the heatmap.
The parts are in ui/per_question.py."""

from __future__ import annotations

from ui import cache, no_documents, state
from ui import per_question as page

state.init_state()

ds = cache.current_dataset()
if not no_documents.page_needs_runs(ds, "Per question"):
    k = state.cutoff()
    p = cache.current_params()
    page.header(ds, k)
    ev = cache.evaluation([state.metric_name()])

    first = page.first_ranks(ev)
    depths = page.fusion_depths(first.columns, p)
    found = page.found_by_members(first, p.members)
    rows = page.chosen_rows(first, k)
    picked = page.heatmap(ds, rows, k, depths, found)
    page.counts(first, k, depths, found)
    if picked is not None:
        page.question_dialog(ds, ev, picked, k, p)

    one = page.choose_question(ds, ev, depths, p.members)
    page.side_by_side(one, k, p)
    page.judged_documents(one, k, p.fusion_depth)
    if not no_documents.needs_documents(ds, "Reading a document in full"):
        page.full_text(one, k)
