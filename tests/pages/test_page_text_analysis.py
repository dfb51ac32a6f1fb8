"""The sidebar's Text analysis group, as a person uses it: the stemmer, the stop words and the rule for repeated
question words reach the URL, every page's numbers follow them (as the library computes them at those parameters),
and the Tuning page sweeps the analyses with k1 x b. Expected figures come from the library, computed here."""

from __future__ import annotations

import numpy as np
import pytest

from apptest import frame_with, move, open_app, shown
from retrieval.analyses import grids, stemming, tuning
from retrieval.core.params import Params
from retrieval.engine.engine import evaluate

pytestmark = pytest.mark.app


def test_the_stemmer_reaches_the_overview(invented):
    at = open_app("pages/overview.py")
    at = move(at, "stemmer", "snowball")
    assert not at.exception
    want = evaluate(invented, Params(stemmer="snowball"), ["ndcg@5"]).means()["BM25"]["ndcg@5"]
    article = evaluate(invented, Params(), ["ndcg@5"]).means()["BM25"]["ndcg@5"]
    assert want != article  # the stemmer changes BM25 here (q02's "refunds" and "refund" merge, among others)
    assert np.isclose(float(frame_with(at, "nDCG@5").loc["BM25", "nDCG@5"]), want, atol=5e-7)


def test_a_link_with_an_analysis_opens_it(invented):
    at = open_app("pages/overview.py", {"stemmer": "porter", "stopwords": "lucene", "query_words": "k3", "k3": "2"})
    assert [s.value for s in at.sidebar.selectbox if s.key in ("stemmer", "stopwords", "query_words")] == [
        "porter",
        "lucene",
        "k3",
    ]
    assert next(s.value for s in at.sidebar.slider if s.key == "k3") == 2.0
    want = evaluate(invented, Params(stemmer="porter", stopwords="lucene", query_words="k3", k3=2.0), ["ndcg@5"])
    assert np.isclose(float(frame_with(at, "nDCG@5").loc["BM25", "nDCG@5"]), want.means()["BM25"]["ndcg@5"], atol=5e-7)


def test_a_hand_made_url_with_an_unknown_stemmer_falls_back_to_none():
    at = open_app("pages/overview.py", {"stemmer": "<b>lancaster</b>"})
    assert not at.exception
    assert next(s.value for s in at.sidebar.selectbox if s.key == "stemmer") == "none"


def test_k3_is_offered_only_for_its_rule():
    at = open_app("pages/overview.py")
    assert "k3" not in [s.key for s in at.sidebar.slider]
    at = move(at, "query_words", "k3")
    assert "k3" in [s.key for s in at.sidebar.slider]


def test_the_tuning_page_sweeps_the_analyses(invented):
    at = open_app("pages/tuning.py")
    at.segmented_control(key="tune_what").set_value("text analysis × k1 × b").run()
    assert not at.exception, [e.value for e in at.exception]
    table = frame_with(at, "stemmer / stop words")
    assert len(table) == len(tuning.ANALYSES) == 9
    t = tuning.tune(invented, "analysis", "ndcg@5", Params(), label="nDCG@5")
    rows = tuning.analysis_rows(t.sweep, t.current_values)
    assert np.allclose(table["best nDCG@5"].astype(float), [r.best_mean for r in rows])
    assert table["stemmer / stop words"].str.contains("(sidebar)", regex=False).sum() == 1
    assert table["stemmer / stop words"].str.contains("★").sum() == 1
    assert t.verdict.plain in shown(" ".join(m.value for m in at.markdown)).replace("**", "")  # the CLI's words


def test_the_tour_says_whether_a_stemmer_closes_q02s_gap(invented):
    at = open_app(query={"step": "5"})
    assert not at.exception
    effect = stemming.stemmer_effect(invented, Params(), 5)
    said = [shown(m.value) for m in at.markdown]
    assert "q02" in effect.gaps and "q02" not in effect.gaps_closed  # "money back" shares no stem with "refund"
    assert stemming.gap_sentence(effect, "q02") in said
    assert any(x.startswith(stemming.effect_sentence(effect)) for x in said)


def test_the_diagnosis_lists_what_a_stemmer_fixes_and_breaks(invented):
    at = open_app("pages/diagnosis.py")
    assert "What a stemmer changes" in [s.value for s in at.subheader]
    effect = stemming.stemmer_effect(invented, Params(), 5)
    assert stemming.effect_sentence(effect) in [shown(m.value) for m in at.markdown]


def test_the_analysis_sweep_tells_the_k1_b_sweep_s_story(invented):
    """Under the analysis table, the coarse grid's limits beside the finer k1 x b sweep, as the library says them; no
    edge warning of the coarse grid alone (its end is said there, as far as the finer sweep knows it)."""
    at = open_app("pages/tuning.py", {"stemmer": "snowball"})
    at.segmented_control(key="tune_what").set_value("text analysis × k1 × b").run()
    assert not at.exception, [e.value for e in at.exception]
    base = Params(stemmer="snowball")
    t = tuning.tune(invented, "analysis", "ndcg@5", base, label="nDCG@5")
    fine = tuning.sweep_bm25(invented, "ndcg@5", base=base)
    want = grids.compare(t.sweep, fine, t.current_values, tuning.FOLDS, tuning.SEED)
    assert want.analysis == "snowball/article"
    assert want.text in [shown(m.value) for m in at.markdown]
    assert not [w for w in at.warning if "edge of the range searched" in w.value]
