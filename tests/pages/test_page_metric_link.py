"""The sidebar's metric in the URL: kept there by its short name (``metric=bpref``, not the label
``bpref+%28judged+documents+only%29``) on every page, and an older link naming it by its label opens the same
metric (issue 43, §5)."""

from __future__ import annotations

import numpy as np
import pytest

from apptest import frame_with, move, open_app
from retrieval.core.params import Params
from retrieval.engine.engine import evaluate
from ui import state

pytestmark = pytest.mark.app

BPREF = "bpref (judged documents only)"


def linked(at) -> str | None:
    """The metric the session's URL names (AppTest keeps a parameter the script set as a list or as a string)."""
    value = at.query_params.get("metric")
    return value[-1] if isinstance(value, list) else value


def test_every_metric_has_one_short_name_and_one_label():
    assert len(state.METRIC_LABELS) == len(state.METRIC_KINDS)
    for label, kind in state.METRIC_KINDS.items():
        assert state.metric_of_link(kind) == label  # the short name, as the app writes it
        assert state.metric_of_link(label) == label  # the label, as older links carry it
        assert " " not in kind and kind.isascii()  # nothing for a URL to escape
    assert state.metric_of_link(["mrr", "bpref"]) == BPREF  # a repeated parameter: its last value
    for junk in (None, "", "ndcg@5", "<b>mrr</b>", "NDCG", []):
        assert state.metric_of_link(junk) is None


def test_a_link_with_the_short_name_opens_that_metric_and_keeps_it_on_every_page(invented):
    at = open_app("pages/overview.py", {"metric": "bpref"})
    assert not at.exception
    assert at.sidebar.selectbox(key=state.METRIC).value == BPREF
    assert linked(at) == "bpref"
    want = evaluate(invented, Params(), ["bpref"]).means()["BM25"]["bpref"]
    assert np.isclose(float(frame_with(at, "bpref").loc["BM25", "bpref"]), want, atol=5e-7)
    for page in ("pages/compare.py", "pages/tuning.py", "pages/judge.py"):
        at.switch_page(page).run()
        assert not at.exception, page
        assert linked(at) == "bpref", page
        assert at.sidebar.selectbox(key=state.METRIC).value == BPREF, page


def test_an_older_link_with_the_label_opens_the_same_metric_and_is_rewritten_to_its_short_name():
    new = open_app("pages/overview.py", {"metric": "bpref"})
    old = open_app("pages/overview.py", {"metric": BPREF})
    assert old.sidebar.selectbox(key=state.METRIC).value == BPREF
    assert linked(old) == "bpref"
    assert frame_with(old, "bpref").equals(frame_with(new, "bpref"))


def test_choosing_a_metric_writes_its_short_name_and_the_default_none():
    at = open_app("pages/overview.py")
    assert "metric" not in at.query_params  # the article's nDCG: nothing to say
    at = move(at, state.METRIC, "MRR")
    assert linked(at) == "mrr"
    at = move(at, state.METRIC, "judged@k (coverage)")
    assert linked(at) == "judged"
    at.sidebar.button[-1].click().run()  # Article defaults
    assert at.sidebar.selectbox(key=state.METRIC).value == state.METRIC_DEFAULT
    assert "metric" not in at.query_params


@pytest.mark.parametrize("raw", ["ndcg@5", "<b>mrr</b>", "nope"])
def test_a_link_with_an_unknown_metric_opens_the_default(raw):
    at = open_app("pages/overview.py", {"metric": raw})
    assert not at.exception
    assert at.sidebar.selectbox(key=state.METRIC).value == state.METRIC_DEFAULT
    assert "metric" not in at.query_params
