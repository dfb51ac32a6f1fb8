"""ui/compare.py and ui/overview.py: the verdict, the tally, the histogram, the tables, written from the definitions."""

from __future__ import annotations

import numpy as np
import pandas as pd

from apptest import outside_code
from retrieval.evaluation import stats
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
    assert compare.tally_text("A", "B", np.array([0.1, 0.0])).startswith(
        "A is better on 1 question, B on 0, and 1 is a tie"
    )


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
    from retrieval.core.params import Params
    from retrieval.engine.engine import Engine

    ev = Engine(invented).evaluate(Params(), ["hit@3", "mrr", "mrr@1", "mrr@2"])
    s = overview.summary(ev, ["hit@3", "mrr"])
    assert list(s.index) == ev.systems and list(s.columns) == ["hit@3", "MRR"]
    assert s.loc["BM25", "MRR"] == ev.mean("BM25", "mrr")
    c = overview.curve(ev, ["mrr@1", "mrr@2"])
    assert len(c) == 2 * len(ev.systems) and set(c["k"]) == {1, 2}
    assert isinstance(c, pd.DataFrame)


def test_the_means_table_shows_the_articles_six_decimals_and_bolds_each_columns_best(invented):
    from retrieval.core.params import Params
    from retrieval.engine.engine import Engine

    ev = Engine(invented).evaluate(Params(), ["hit@3", "mrr"])
    html = overview.means_table(ev, ["hit@3", "mrr"]).to_html()
    assert "0.821429" in html  # the article's BM25 MRR, to the digit
    assert f"{ev.mean('BM25', 'mrr'):.7f}" not in html
    assert "font-weight: bold" in html


# ------------------------------------------------------------------ the new metrics and the judged@k warning


def test_the_overview_curves_cut_map_and_judged_at_every_k_and_skip_metrics_without_a_cutoff():
    assert overview.curve_metrics("map")[:3] == ["map@1", "map@2", "map@3"] and len(overview.curve_metrics("map")) == 20
    assert overview.curve_metrics("judged")[-1] == "judged@20"
    assert overview.curve_metrics("rprec") == [] and overview.curve_metrics("bpref") == []
    assert overview.table_metrics(5, "bpref") == ["hit@5", "recall@5", "mrr", "ndcg@5", "bpref"]


HOSTILE = "**zz[run](http://x.y)**"


def _holey():
    """Six documents, two questions; the judgements name a few documents only (holes everywhere else)."""
    from retrieval.corpus.dataset import assemble

    docs = [(f"d{i}", f"text {i}") for i in range(1, 7)]
    qrels = [("q1", "d1", 1), ("q1", "d2", 0), ("q1", "d3", 0), ("q1", "d4", -1), ("q2", "d5", 2), ("q2", "d6", 0)]
    return assemble("holey", docs, [("q1", "one"), ("q2", "two")], qrels)


def _evaluation(ds, lists: dict[str, list[list[str]]]):
    from retrieval.evaluation.experiment import score
    from retrieval.evaluation.metrics import parse_list
    from retrieval.retrievers.ranking import from_lists

    rankings = {
        name: from_lists(
            name,
            ds,
            [np.array([ds.doc_index[d] for d in row]) for row in rows],
            [np.arange(len(row), 0, -1).astype(float) for row in rows],
        )
        for name, rows in lists.items()
    }
    return score(ds, rankings, parse_list(["ndcg@3"]))


def test_judged_shares_are_the_mean_share_of_the_top_k_that_the_judgements_name():
    ds = _holey()
    ev = _evaluation(
        ds,
        {
            "judged": [["d1", "d2", "d3", "d4"], ["d5", "d6"]],
            HOSTILE: [["d5", "d1", "d6", "d2"], ["d1", "d2", "d3", "d5"]],
        },
    )
    got = overview.judged_shares(ev, 4)
    # "judged": q1's top 4 all judged (grade 0 and -1 count), q2 has 2 results, both judged: (4/4 + 2/4) / 2
    assert got["judged"] == (4 / 4 + 2 / 4) / 2
    # the hostile one: q1 d1, d2 judged (d5, d6 belong to q2); q2 only d5: (2/4 + 1/4) / 2
    assert got[HOSTILE] == (2 / 4 + 1 / 4) / 2
    assert overview.judged_shares(ev, 1) == {"judged": 1.0, HOSTILE: (0 + 0) / 2}


def test_the_judged_warning_names_each_system_below_the_floor_escaped_with_its_share():
    from ui.markdown import escape_markdown

    ds = _holey()
    ev = _evaluation(
        ds,
        {
            "judged": [["d1", "d2", "d3", "d4"], ["d5", "d6"]],
            HOSTILE: [["d5", "d1", "d6", "d2"], ["d1", "d2", "d3", "d5"]],
        },
    )
    note = overview.judged_warning(ev, 4)
    assert f"{escape_markdown(HOSTILE)} {(2 / 4 + 1 / 4) / 2:.3f}" in note and HOSTILE not in outside_code(note)
    assert "`judged@4`" in note and "0.8" in note and "understate" in note and "not relevant" in note
    assert f"judged {(4 / 4 + 2 / 4) / 2:.3f}" in note
    # at k = 2 the first system's top 2 are judged for both questions (1.0): only the other is named
    note2 = overview.judged_warning(ev, 2)
    assert "judged 1.000" not in note2 and escape_markdown(HOSTILE) in note2 and "this system" in note2


def test_no_judged_warning_at_the_floor_one_just_below_it():
    from retrieval.corpus.dataset import assemble

    docs = [(f"d{i}", f"text {i}") for i in range(1, 7)]
    qrels = [
        ("q1", "d1", 1),
        ("q1", "d2", 0),
        ("q1", "d3", 0),
        ("q1", "d4", 0),
        ("q2", "d5", 1),
        ("q2", "d6", 0),
        ("q2", "d1", 0),
        ("q2", "d2", 0),
    ]
    ds = assemble("four each", docs, [("q1", "one"), ("q2", "two")], qrels)
    # "at": 4 of the top 5 judged for both questions (0.8, not below); "below": 3 of 5 for q1, 4 of 5 for q2 (0.7)
    ev = _evaluation(ds, {"at": [["d1", "d2", "d3", "d4", "d5"], ["d5", "d6", "d1", "d2", "d3"]]})
    assert overview.judged_shares(ev, 5) == {"at": (4 / 5 + 4 / 5) / 2}
    assert overview.judged_warning(ev, 5) is None
    ev = _evaluation(
        ds,
        {
            "at": [["d1", "d2", "d3", "d4", "d5"], ["d5", "d6", "d1", "d2", "d3"]],
            "below": [["d1", "d2", "d3", "d5", "d6"], ["d5", "d6", "d1", "d2", "d3"]],
        },
    )
    note = overview.judged_warning(ev, 5)
    assert f"below {(3 / 5 + 4 / 5) / 2:.3f}" in note and "at 0.800" not in note


def test_the_judged_warning_reads_judged_at_k_from_the_evaluation_when_it_holds_it(invented):
    from retrieval.core.params import Params
    from retrieval.engine.engine import Engine

    with_it = Engine(invented).evaluate(Params(), ["ndcg@5", "judged@5"])
    without = Engine(invented).evaluate(Params(), ["ndcg@5"])
    assert overview.judged_shares(with_it, 5) == overview.judged_shares(without, 5)
    assert overview.judged_shares(with_it, 5) == {s: with_it.mean(s, "judged@5") for s in with_it.systems}
