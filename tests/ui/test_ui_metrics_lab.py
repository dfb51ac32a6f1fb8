"""ui/metrics_lab.py: the Metrics lab's pure helpers, with the values their definitions give."""

from __future__ import annotations

import math

import pandas as pd

from ui import metrics_lab as ui

NAN = float("nan")


def test_fmt_six_decimals_or_a_dash():
    assert ui.fmt(0.5) == "0.500000" and ui.fmt(1) == "1.000000"
    assert ui.fmt(None) == "—" and ui.fmt(NAN) == "—"


def test_blank_cells():
    assert ui.blank(None) and ui.blank(NAN) and ui.blank(pd.NA)
    assert not ui.blank(0) and not ui.blank("") and not ui.blank("a")


def test_editor_tables_round_trip_with_blanks_as_none():
    rows = [{"document": "a", "grade": 2.0}, {"document": "x", "grade": None}]
    df = ui.frame(rows)
    assert df["grade"].dtype == "float64" and df["document"].dtype == object
    assert math.isnan(df.loc[1, "grade"])
    assert ui.rows_of(df) == rows
    assert ui.rows_of(ui.frame([])) == []


def test_shuffle_delta():
    assert ui.shuffle_delta(0.5, None) == {}
    assert ui.shuffle_delta(NAN, 0.5) == {} and ui.shuffle_delta(0.5, NAN) == {}
    assert ui.shuffle_delta(0.5, 0.5000001) == {
        "delta": "unchanged by the shuffle",
        "delta_color": "gray",
        "delta_arrow": "off",
    }
    assert ui.shuffle_delta(0.25, 0.5) == {"delta": "-0.250000", "delta_description": "since the shuffle"}


def test_versus_ours():
    assert ui.versus_ours(NAN, 0.5) == {} and ui.versus_ours(0.5, NAN) == {}
    assert ui.versus_ours(0.5, 0.5) == {"delta": "agrees with ours", "delta_color": "green", "delta_arrow": "off"}
    assert ui.versus_ours(0.75, 0.5) == {"delta": "+0.250000", "delta_color": "red", "delta_description": "vs ours"}


def test_shuffle_table_says_what_moved():
    before = {"RR": 1 / 3, "context recall": 0.5}
    now = {"RR": 1.0, "context recall": 0.5, "nDCG@5 (linear gain)": 0.9}
    table = ui.shuffle_table(before, now, ["RR", "context recall", "nDCG@5 (linear gain)"])
    assert table.to_dict("records") == [
        {"metric": "RR", "before": "0.333333", "now": "1.000000", "moved": "yes"},
        {"metric": "context recall", "before": "0.500000", "now": "0.500000", "moved": "no"},
        {"metric": "nDCG@5 (linear gain)", "before": "—", "now": "0.900000", "moved": "yes"},
    ]


def test_ndcg_line():
    assert ui.ndcg_line("nDCG@5", 1.5, 3.0, 0.5) == "nDCG@5 = 1.500000 / 3.000000 = **0.500000**"
    assert ui.ndcg_line("nDCG@5", 0.0, 0.0, NAN) == "nDCG@5: the ideal DCG is 0, nothing to normalise by."
