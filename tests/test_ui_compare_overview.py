"""ui/compare.py and ui/overview.py: the verdict, the tally, the histogram, the tables, written from the definitions."""

from __future__ import annotations

import numpy as np
import pandas as pd

from retrieval import stats
from ui import compare, overview


def test_the_verdict_says_cant_be_told_apart_when_the_interval_holds_zero():
    kind, text = compare.verdict(stats.Interval(0.01, -0.02, 0.04, 5000, 0, 0.95), "BM25", "LSA", "nDCG@5")
    assert kind == "info" and text.startswith("**BM25 and LSA can't be told apart** on nDCG@5")
    assert "[\u22120.020, +0.040], holds zero" in text


def test_the_verdict_names_the_better_system_whichever_side_it_is_on():
    kind, text = compare.verdict(stats.Interval(-0.05, -0.08, -0.02, 5000, 0, 0.95), "a*b", "LSA", "MRR")
    assert kind == "success" and text.startswith("**LSA is better than a\\*b** on MRR, by 0.050 on average")
    assert "a\\*b \u2212 LSA" in text  # the run name is escaped, never bold


def test_the_tally_counts_wins_and_ties():
    diff = np.array([0.5, -0.25, 0.0, 0.0, 1.0])
    assert compare.tally(diff) == (2, 1, 2)
    assert compare.tally_text("A", "B", np.array([0.1, 0.0])).startswith("A is better on 1 question, B on 0, and 1 is a tie")


def test_the_histogram_bins_every_resample_once_and_leaves_empty_bins_out():
    means = np.array([0.0, 0.0, 0.1, 1.0])
    h = compare.histogram(means, bins=10)
    assert h["count"].sum() == 4 and (h["count"] > 0).all()
    assert h["start"].iloc[0] == 0.0 and np.isclose(h["end"].iloc[-1], 1.0)
    one = compare.histogram(np.array([0.3, 0.3]), bins=4)  # a single value: one bar 0.01 wide around it
    assert one["count"].tolist() == [2] and np.isclose(one["end"].iloc[0] - one["start"].iloc[0], 0.0025)


def test_the_overview_table_has_hit_recall_mrr_ndcg_at_k_then_the_chosen_metric():
    assert overview.table_metrics(5, "ndcg@5") == ["hit@5", "recall@5", "mrr", "ndcg@5"]
    assert overview.table_metrics(3, "precision@3") == ["hit@3", "recall@3", "mrr", "ndcg@3", "precision@3"]
    assert overview.curve_metrics("mrr")[:2] == ["mrr@1", "mrr@2"] and len(overview.curve_metrics("hit")) == 20


def test_the_overview_frames_hold_every_system_and_metric(invented):
    from retrieval.engine import Engine
    from retrieval.params import Params

    ev = Engine(invented).evaluate(Params(), ["hit@3", "mrr", "mrr@1", "mrr@2"])
    s = overview.summary(ev, ["hit@3", "mrr"])
    assert list(s.index) == ev.systems and list(s.columns) == ["hit@3", "MRR"]
    assert s.loc["BM25", "MRR"] == ev.mean("BM25", "mrr")
    c = overview.curve(ev, ["mrr@1", "mrr@2"])
    assert len(c) == 2 * len(ev.systems) and set(c["k"]) == {1, 2}
    assert isinstance(c, pd.DataFrame)


def test_the_means_table_shows_the_articles_six_decimals_and_bolds_each_columns_best(invented):
    from retrieval.engine import Engine
    from retrieval.params import Params

    ev = Engine(invented).evaluate(Params(), ["hit@3", "mrr"])
    html = overview.means_table(ev, ["hit@3", "mrr"]).to_html()
    assert "0.821429" in html  # the article's BM25 MRR, to the digit
    assert f"{ev.mean('BM25', 'mrr'):.7f}" not in html
    assert "font-weight: bold" in html
