"""Diagnosis: the failing questions of every system (first relevant document not in the sidebar's top k) with the
words they share and their class, what the dense retriever fixes and breaks relative to BM25 (or how to add it) and
what a stemmer fixes and breaks,
the texts with the shared words highlighted, and BM25's per-term contributions for a chosen question and documents
at the current k1/b. The parts are in ui/diagnosis.py."""

from __future__ import annotations

from ui import cache, no_documents, state
from ui import diagnosis as page

state.init_state()

ds = cache.current_dataset()
if not no_documents.page_needs_documents(
    ds, "Diagnosis", "The diagnosis by words (the words a question shares with its documents, BM25's terms)"
):
    p = cache.current_params(ds)
    k = state.cutoff()
    page.header(ds, k, p.fusion_depth)
    ranks = cache.rankings(ds)
    cases = page.diagnose_all(ds, ranks, k, p)
    page.failing_questions(ds, cases, k, p.fusion_depth)
    page.dense_changes(ds, ranks, cases, k)
    page.stemmer_changes(ds, k, p)
    q = page.choose_question(ds, cases)
    if q is not None:
        answers = page.question_up_close(ds, ranks, q, page.fusion_depths(ranks, p), p.members)
        page.bm25_terms(ds, ranks, q, answers, p)
