"""Playground: type any question (or start from a dataset question, with its judgements) and see every system's
top 10 for it, the metrics for the typed text beside the original's, documents judged on the fly, and each list up
close. The parts are in ui/playground.py; the scoring is the engine's (retrieval/adhoc.py)."""

from __future__ import annotations

from ui import cache, no_documents, state
from ui import playground as page

state.init_state()

ds = cache.current_dataset()
if not no_documents.page_needs_documents(
    ds, "Playground", "The Playground (a typed question scored by BM25, LSA and dense)"
):
    page.init(ds)
    message = page.apply_edits(ds)  # the judging table's edits first: the metrics above it follow them
    p = cache.ranking_params(ds)
    sources = cache.current_sources(ds)
    page.header(ds, p, any(x.name == "dense" for x in sources))

    origin = page.start_from(ds)
    text = page.question_input()
    result = page.scored(ds, text, p, sources, origin)  # None: empty or refused, said why
    if result is not None:
        one, ranks, scores = result
        page.words(scores)
        grades = dict(zip(one.qrels.doc_id.tolist(), one.qrels.grade.tolist()))
        page.measures(one, ranks, ds, origin, page.metric_names(state.metric_name(), state.cutoff()))
        page.top_lists(one, ranks, grades, p)
        page.judge(ds, one, ranks, grades, p, message)
        page.judged_ranks(one, ranks, ds, origin)  # under the judging table: a tick moves nothing above it
        page.up_close(cache.engine(ds), one, scores, ranks, grades, p)
