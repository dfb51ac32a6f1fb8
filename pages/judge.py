"""Judge: the unjudged documents in any system's top k, graded 0, 1 or 2 here by several raters; every page then
measures with their grades combined by the chosen rule (ui.cache.current_dataset). The parts are in ui/judge.py."""

from __future__ import annotations

from ui import cache, no_documents, state
from ui import judge as page

state.init_state()

base = cache.base_dataset()
ds = cache.current_dataset()
if not no_documents.page_needs_documents(ds, "Judge", "Judging (a question and its documents read side by side)"):
    k = state.cutoff()
    grades = cache.new_judgements(base)
    ranks = cache.rankings()
    pool = page.find_pool(base, ranks, k)
    page.header(base, pool, grades)
    order = pool.question_order()
    if order:
        page.summary(pool, page.graded_pairs(base, grades))
        q = page.choose_question(base, pool, order)
        page.grade_documents(base, pool, q, grades)
    else:
        page.nothing_to_judge(pool)
    page.raters(base)
    page.means(base, ds, state.metric_name(), k)
    page.downloads(ds, grades)
