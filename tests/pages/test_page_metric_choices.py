"""Every page, entered through app.py, with each of the new metrics chosen in the sidebar (MAP@k, R-precision,
bpref, judged@k): no exception, no error, the chosen metric named where a page names it; and the Overview's
judged@k warning on the invented corpus, checked against a count of the judged documents in each top k."""

from __future__ import annotations

import re

import pytest

from apptest import move, open_app, shown
from retrieval.core.params import Params
from retrieval.engine.engine import Engine
from ui import state

pytestmark = pytest.mark.app

PAGES = [
    "pages/tour.py",
    "pages/overview.py",
    "pages/per_question.py",
    "pages/playground.py",
    "pages/diagnosis.py",
    "pages/compare.py",
    "pages/tuning.py",
    "pages/metrics_lab.py",
    "pages/judge.py",
    "pages/data.py",
]
NEW = {  # sidebar label -> (the metric's name at the sidebar's k = 5, the label the pages show)
    "MAP (mean average precision)": ("map@5", "MAP@5"),
    "R-precision": ("rprec", "R-prec"),
    "bpref (judged documents only)": ("bpref", "bpref"),
    "judged@k (coverage)": ("judged@5", "judged@5"),
}


def test_the_new_labels_are_the_sidebars_choices():
    for label, (name, _) in NEW.items():
        assert label in state.METRIC_KINDS
        assert state.METRIC_KINDS[label] == name.split("@")[0]


def _texts(at) -> str:
    return " ".join(
        shown(str(el.value))
        for kind in ("markdown", "caption", "subheader", "info", "warning", "title")
        for el in at.get(kind)
    )


@pytest.mark.slow
@pytest.mark.parametrize("label", list(NEW))
def test_every_page_works_with_the_metric_chosen_in_the_url(label):
    name, pretty = NEW[label]
    at = open_app("pages/overview.py", query={"metric": label})
    assert at.sidebar.selectbox(key=state.METRIC).value == label
    table = at.dataframe[0].value
    assert pretty in table.columns, list(table.columns)
    if name in ("rprec", "bpref"):
        assert any("takes no cutoff" in c.value for c in at.caption)
        assert len(at.get("vega_lite_chart")) == 1  # the bars; no curve over k
    else:
        assert len(at.get("vega_lite_chart")) == 2
    for page in PAGES:
        at.switch_page(page).run()
        assert not at.exception, (page, [e.value for e in at.exception])
        assert not at.error, (page, [e.value for e in at.error])
        assert at.sidebar.selectbox(key=state.METRIC).value == label, page
    at.switch_page("pages/compare.py").run()
    assert pretty in _texts(at)
    assert any(m.label.startswith("A: ") for m in at.metric)


def test_the_means_table_shows_the_chosen_new_metric_as_computed(invented):
    at = open_app("pages/overview.py", query={"metric": "MAP (mean average precision)", "k": "10"})
    table = at.dataframe[0].value
    ev = Engine(invented).evaluate(Params(), ["map@10"])
    for system in ev.systems:
        assert table.loc[system, "MAP@10"] == pytest.approx(ev.mean(system, "map@10"), abs=1e-12), system
    move(at, state.METRIC, "bpref (judged documents only)")
    assert not at.exception and "bpref" in at.dataframe[0].value.columns


def _judged_at(invented, ranking, k: int) -> float:
    """Mean over the evaluated questions of (documents of the top k that a judgement names) / k, counted by id."""
    judged = {(int(q), d) for q, d in zip(invented.qrels.query, invented.qrels.doc_id)}
    shares = [sum((int(q), d) in judged for d in ranking.top_ids(invented, int(q), k)) / k for q in invented.evaluated]
    return sum(shares) / len(shares)


def _named(note: str) -> set[str]:
    """The systems a judged@k warning names, as `name 0.123` pairs."""
    return set(re.findall(r"(\w+) \d\.\d{3}", note))


def test_on_judgements_of_relevant_documents_only_judged_at_k_is_precision_and_no_warning(invented):
    """The invented judgements name relevant documents only (about two per question): a document they leave out
    is not relevant, so judged@5 is precision@5 (counted here by id) and the Overview says so, with no warning."""
    at = open_app("pages/overview.py", query={"metric": "judged@k (coverage)"})
    assert not [w.value for w in at.warning if "judged@5" in w.value]
    assert any("equals `precision@5`" in c.value for c in at.caption), [c.value for c in at.caption]
    table = at.dataframe[0].value
    ev = Engine(invented).evaluate(Params(), ["precision@5"])
    for system, ranking in ev.rankings.items():
        assert table.loc[system, "judged@5"] == pytest.approx(_judged_at(invented, ranking, 5), abs=5e-7)
        assert table.loc[system, "judged@5"] == pytest.approx(ev.mean(system, "precision@5"), abs=5e-7)


def test_once_non_relevant_documents_are_judged_the_overview_warns_below_the_floor(invented):
    """Grade 0 for every document of BM25's top 2 that the judgements leave out: judged@5 is then a coverage, and
    every system below 0.8 (counted here by id) is named with its share, the others not."""
    bm25 = Engine(invented).evaluate(Params(), ["ndcg@5"]).rankings["BM25"]
    judged = {(int(q), d) for q, d in zip(invented.qrels.query, invented.qrels.doc_id)}
    zeros = [
        (invented.query_ids[int(q)], d, 0)
        for q in invented.evaluated
        for d in bm25.top_ids(invented, int(q), 2)
        if (int(q), d) not in judged
    ]
    graded = invented.with_judgements(zeros)
    at = open_app(
        "pages/overview.py",
        query={"metric": "judged@k (coverage)"},
        before=lambda a: (a.session_state.__setitem__(state.DATASET, graded), a.run()),
    )
    ev = Engine(graded).evaluate(Params(), ["ndcg@5"])
    shares = {s: _judged_at(graded, r, 5) for s, r in ev.rankings.items()}
    below = {s for s, v in shares.items() if v < 0.8}
    notes = [shown(w.value) for w in at.warning if "judged@5" in w.value]
    assert below and len(notes) == 1 and "understate" in notes[0], (shares, [w.value for w in at.warning])
    assert _named(notes[0]) - {"dense"} == below - {"dense"}
    for s in below:
        assert f"{s} {shares[s]:.3f}" in notes[0]
