"""The Experiments page, through app.py: save the view by name, find it in a fresh session, compare two saved
experiments with the paired bootstrap (the Compare page's verdict), follow a metric across them."""

from __future__ import annotations

import json
import re

import pytest

import retrieval
from apptest import move, open_app, outside_code, shown
from retrieval.analyses.experiments import record
from retrieval.evaluation import stats
from retrieval.retrievers.dense import MODEL
from retrieval.store.workspace import default_url, open_workspace

pytestmark = pytest.mark.app


def save(at, name: str):
    at.text_input(key="exp_name").set_value(name).run()
    at.button(key="exp_save").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_save_compare_and_follow_experiments_across_sessions():
    at = open_app("pages/experiments.py")
    assert any("No experiment of this dataset is saved yet" in shown(i.value) for i in at.info)
    assert at.button(key="exp_save").disabled  # a name first
    save(at, "article defaults")
    assert "Saved as experiment #1, article defaults." in [shown(s.value) for s in at.success]
    move(at, "k1", 0.5)
    save(at, "k1 = 0.5 <b>*bold*</b>")
    table = next(d.value for d in at.dataframe if "k1" in d.value.columns)
    assert list(table["name"]) == ["article defaults", "k1 = 0.5 <b>*bold*</b>"]  # as text, in a table
    assert list(table.columns) == ["#", "name", "saved", "by", "k1"]  # only what differs between the two
    assert any(
        "The 2 experiments differ in 1 setting of " in shown(c.value) and ": k1; the other" in shown(c.value)
        for c in at.caption
    )
    at.toggle(key="exp_every_setting").set_value(True).run()  # every setting, on request
    table = next(d.value for d in at.dataframe if "k1" in d.value.columns)
    assert list(table["k1"]) == [1.2, 0.5] and list(table["d"]) == [6, 6]
    assert list(table["stemmer"]) == ["none", "none"] and list(table["metric"]) == ["ndcg@5", "ndcg@5"]
    assert list(table["grades rule"]) == ["original", "original"] and list(table["embeddings"])[0].startswith(
        MODEL + " ("
    )
    at.toggle(key="exp_every_setting").set_value(False).run()
    table = next(d.value for d in at.dataframe if "BM25" in d.value.columns)

    ds = retrieval.load("invented")
    a = retrieval.evaluate(ds, retrieval.Params(), ["ndcg@5"]).values["BM25"]["ndcg@5"]
    b = retrieval.evaluate(ds, retrieval.Params(k1=0.5), ["ndcg@5"]).values["BM25"]["ndcg@5"]
    assert table["BM25"].tolist() == pytest.approx([a.mean(), b.mean()], abs=1e-12)
    iv = stats.paired_bootstrap(a, b)
    said = [shown(x.value) for x in (*at.info, *at.success)]
    if iv.holds_zero:
        assert any("BM25 in #1 and BM25 in #2 can't be told apart" in s for s in said), said
    else:
        assert any("is better than" in s for s in said), said
    assert any(f"A article defaults: {a.mean():.4f}; B k1 = 0.5" in shown(c.value) for c in at.caption)
    d = a - b
    wins_a, wins_b, ties = int((d > 0).sum()), int((d < 0).sum()), int((d == 0).sum())
    said = f"A is better on {wins_a} question{'s' if wins_a != 1 else ''}, B on {wins_b}, and {ties} tie{'s' if ties != 1 else ''}."
    assert any(said in shown(c.value) for c in at.caption), said
    assert at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart")  # the history
    assert any(
        "Each grey line is an experiment, #N its number in the table above" in shown(c.value) for c in at.caption
    )

    again = open_app("pages/experiments.py")  # another session, or after a restart
    table = next(d.value for d in again.dataframe if "k1" in d.value.columns)
    assert list(table["#"]) == [1, 2] and list(table["by"]) == ["anonymous", "anonymous"]


def test_the_page_says_when_nothing_can_be_saved(monkeypatch):
    monkeypatch.setenv("RETRIEVAL_LAB_DATABASE_URL", "postgresql+psycopg://nobody@127.0.0.1:1/none")
    at = open_app("pages/experiments.py")
    assert any("The workspace cannot be opened, so nothing can be saved" in shown(w.value) for w in at.warning)


def test_two_experiments_that_differ_by_the_stemmer_alone_say_so():
    at = open_app("pages/experiments.py")
    save(at, "plain")
    move(at, "stemmer", "snowball")
    save(at, "stemmed")
    table = next(d.value for d in at.dataframe if "name" in d.value.columns and "by" in d.value.columns)
    assert list(table.columns) == ["#", "name", "saved", "by", "stemmer"]
    assert list(table["stemmer"]) == ["none", "snowball"]
    assert any(
        "differ in 1 setting of " in shown(c.value) and ": stemmer; the other" in shown(c.value) for c in at.caption
    )


def test_a_stored_body_that_is_not_a_saved_view_is_named_and_left_out():
    """Two experiments of the invented corpus whose stored bodies are not saved views (one written by hand, one whose
    report lacks its per-question values), written through the store's public functions beside one saved on the
    page: the page runs without an exception, says of each in one warning which experiment it is and what is wrong
    (its name as text, not markup), and shows and compares the good ones."""
    at = open_app("pages/experiments.py")
    save(at, "kept")
    ws = open_workspace(default_url())
    ds = retrieval.load("invented")
    ws.save_experiment(ds.fingerprint, "by hand", {"x": 1}, "ana")
    p = retrieval.Params()
    older = json.loads(json.dumps(record(retrieval.evaluate(ds, p, ["ndcg@5"]), p)))
    del older["report"]["per_query"]
    ws.save_experiment(ds.fingerprint, "older *bold*", older, "ana")
    at.switch_page("pages/overview.py").run()
    at.switch_page("pages/experiments.py").run()  # entering the page reads the store again
    save(at, "kept again")
    assert not at.exception, [e.value for e in at.exception]
    warned = [shown(w.value) for w in at.warning]
    assert (
        "experiment #2 'by hand': not a saved experiment: no 'version' (it has x). It is left out of this page "
        "(saved by an older version or by hand)."
    ) in warned, warned
    assert any(
        w.startswith("experiment #3 'older *bold*': not a saved experiment: no report.'per_query'") for w in warned
    ), warned
    assert not any(re.search(r"(?<!\\)\*", outside_code(w.value)) for w in at.warning)  # no emphasis: the name as typed
    table = next(d.value for d in at.dataframe if "name" in d.value.columns and "by" in d.value.columns)
    assert list(table["name"]) == ["kept", "kept again"] and list(table["#"]) == [1, 4]
    assert any("BM25 in #1 and BM25 in #4 can't be told apart" in shown(i.value) for i in at.info)
