"""Judge: the unjudged documents in any system's top k, graded 0, 1 or 2 here by several raters; every page then
measures with their grades combined by the chosen rule (ui.cache.current_dataset). The parts are in ui/judge.py."""

from __future__ import annotations

from ui import cache, state
from ui import judge as page

state.init_state()

base = cache.base_dataset()
ds = cache.current_dataset()
k = state.cutoff()
grades = cache.new_judgements(base)
ranks = cache.rankings()
holes = page.find_holes(base, ranks, k)
page.header(base, k, holes, grades)
order = page.question_order(holes)
if order:
    page.summary(holes, list(ranks), page.graded_pairs(base, grades), k)
    q = page.choose_question(base, holes, order)
    page.grade_documents(base, holes, q, grades)
else:
    page.nothing_to_judge(base, k)
page.raters(base)
page.means(base, ds, state.metric_name(), k)
page.downloads(ds, grades)
