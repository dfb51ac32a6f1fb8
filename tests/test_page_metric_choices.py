"""Every page, entered through app.py, with each of the new metrics chosen in the sidebar (MAP@k, R-precision,
bpref, judged@k): no exception, no error, the chosen metric named where a page names it; and the Overview's
judged@k warning on the invented corpus, checked against a count of the judged documents in each top k."""

from __future__ import annotations

import re

import pytest

from apptest import move, open_app, shown
from retrieval.engine import Engine
from retrieval.params import Params
from ui import state

PAGES = ["pages/overview.py", "pages/per_question.py", "pages/diagnosis.py", "pages/compare.py", "pages/tuning.py",
         "pages/metrics_lab.py", "pages/data.py"]
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
    return " ".join(shown(str(el.value)) for kind in ("markdown", "caption", "subheader", "info", "warning", "title")
                    for el in at.get(kind))


@pytest.mark.parametrize("label", list(NEW))
def test_every_page_works_with_the_metric_chosen_in_the_url(label):
    name, pretty = NEW[label]
    at = open_app(query={"metric": label})
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
    at = open_app(query={"metric": "MAP (mean average precision)", "k": "10"})
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


def test_the_overview_warns_about_judged_at_k_on_the_invented_corpus_at_its_defaults(invented):
    """The invented judgements list only relevant documents (about two per question), so no system can have
    more than a few judged documents in its top 5: every system is named, with its share counted here."""
    at = open_app(query={"metric": "judged@k (coverage)"})
    notes = [shown(w.value) for w in at.warning if "judged@5" in w.value]
    assert len(notes) == 1, [w.value for w in at.warning]
    note, table = notes[0], at.dataframe[0].value
    ev = Engine(invented).evaluate(Params(), ["ndcg@5"])
    for system, ranking in ev.rankings.items():  # BM25, LSA and the fusions: counted by id, independently
        share = _judged_at(invented, ranking, 5)
        assert share < 0.8 and f"{system} {share:.3f}" in note, (system, share, note)
    for system in table.index:  # dense too: the warning's figures are the table's judged@5 column
        assert f"{system} {table.loc[system, 'judged@5']:.3f}" in note, system
    assert _named(note) == set(table.index) and "understate" in note

    # at k = 1 the top result is often relevant, hence judged: only the systems below 0.8 are named
    move(at, state.K, 1)
    ones = {s: _judged_at(invented, r, 1) for s, r in ev.rankings.items()}
    table = at.dataframe[0].value
    assert table.loc["dense", "MRR"] == 1.0 and table.loc["dense", "judged@1"] == 1.0  # dense: a relevant document first, always
    notes = [shown(w.value) for w in at.warning if "judged@1" in w.value]
    below = {s for s, v in ones.items() if v < 0.8}
    assert below == {"BM25", "LSA"}, ones  # 11 of 14 top results judged: 0.786; the fusions 12 of 14: 0.857
    assert len(notes) == 1 and _named(notes[0]) == below
    for s in below:
        assert f"{s} {ones[s]:.3f}" in notes[0]
