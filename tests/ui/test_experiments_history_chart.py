"""The Experiments page's history chart: a UTC time axis whose labels read as times (never ".500 .500 :52") and
never repeat, whatever the experiments' span, and every experiment named (its number on the chart where there is
room, its name in the tooltip)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pandas as pd
import pytest

from ui import experiments as page

T0 = datetime(2026, 12, 7, 17, 22, 52, 500_000, tzinfo=UTC)
SPANS = [
    timedelta(0),
    timedelta(seconds=1.5),
    timedelta(seconds=3),
    timedelta(seconds=50),
    timedelta(minutes=4),
    timedelta(minutes=50),
    timedelta(hours=5),
    timedelta(hours=20),
    timedelta(hours=30),
    timedelta(days=3),
    timedelta(days=20),
    timedelta(days=100),
    timedelta(days=400),
    timedelta(days=3000),
]


@pytest.mark.parametrize("span", SPANS, ids=str)
def test_the_time_axis_labels_are_few_distinct_and_read_as_times(span):
    times = [T0, T0 + span / 3, T0 + span]
    domain, at, fmt = page.time_axis(times)
    assert domain[0] <= T0 and domain[1] >= T0 + span
    assert all(domain[0] <= t <= domain[1] for t in at) and at == sorted(at)
    labels = [t.strftime(fmt) for t in at]
    assert 1 <= len(labels) <= page.MAX_TICKS + 1, labels
    assert len(set(labels)) == len(labels), labels  # no two ticks read the same
    assert all(not lab.startswith(".") and not lab.startswith(":") for lab in labels), labels
    if span < timedelta(minutes=1) and span > timedelta(0):
        assert fmt == "%H:%M:%S"


def test_a_single_experiment_gets_a_minute_either_side():
    (lo, hi), at, fmt = page.time_axis([T0])
    assert (hi - lo) == timedelta(minutes=2) and fmt == "%H:%M:%S"
    assert 2 <= len(at) <= page.MAX_TICKS + 1


def test_ticks_are_round_times():
    lo = datetime(2026, 12, 7, 17, 22, 52, 500_000, tzinfo=UTC)
    assert page.ticks(lo, lo + timedelta(seconds=31), "second", 10) == [
        datetime(2026, 12, 7, 17, 23, s, tzinfo=UTC) for s in (0, 10, 20)
    ]
    day = datetime(2026, 11, 30, 12, tzinfo=UTC)
    assert page.ticks(day, day + timedelta(days=20), "day", 7) == [
        datetime(2026, 12, d, tzinfo=UTC) for d in (1, 8, 15)
    ]
    assert page.ticks(day, day + timedelta(days=200), "month", 3) == [datetime(2027, m, 1, tzinfo=UTC) for m in (1, 4)]


def test_hours_across_midnight_carry_the_day():
    late = datetime(2026, 12, 7, 23, 0, tzinfo=UTC)
    assert page.time_axis([late, late + timedelta(hours=3)])[2] == "%b %d %H:%M"
    assert page.time_axis([late - timedelta(hours=3), late])[2] == "%H:%M"


def test_numbers_written_on_the_chart_never_crowd():
    times = [
        T0,
        T0 + timedelta(seconds=1),
        T0 + timedelta(minutes=10),
        T0 + timedelta(minutes=10, seconds=2),
        T0 + timedelta(minutes=20),
    ]
    domain = page.time_axis(times)[0]
    assert page.labelled(times, domain) == [True, False, True, False, True]


def frame(times: list[datetime]) -> pd.DataFrame:
    rows = [
        {
            "saved": t,
            "experiment": f"#{i + 1} run <b>{i}</b>",
            "number": f"#{i + 1}",
            "system": s,
            "mean": 0.5 + i / 100,
            "at": f"{t:%Y-%m-%d %H:%M:%S} UTC",
        }
        for i, t in enumerate(times)
        for s in ("BM25", "LSA")
    ]
    out = pd.DataFrame(rows)
    out["saved"] = pd.to_datetime(out["saved"], utc=True)
    return out


def test_the_chart_is_on_a_utc_time_axis_and_names_each_experiment():
    times = [T0, T0 + timedelta(seconds=1), T0 + timedelta(seconds=40)]
    spec = page.history_chart(frame(times), "ndcg@5").to_dict()
    rules, lines, numbers = spec["layer"]
    x = lines["encoding"]["x"]
    assert x["type"] == "temporal" and x["scale"]["type"] == "utc" and x["axis"]["format"] == "%H:%M:%S"
    assert x["axis"]["values"] == [
        {"year": 2026, "month": 12, "date": 7, "hours": 17, "minutes": 23, "seconds": s, "milliseconds": 0, "utc": True}
        for s in (0, 10, 20, 30)
    ]
    assert x["scale"]["domain"][0] == {
        "year": 2026,
        "month": 12,
        "date": 7,
        "hours": 17,
        "minutes": 22,
        "seconds": 50,
        "milliseconds": 500,
        "utc": True,
    }  # 5% of the 40 s span before the first
    assert x["title"] == "saved (UTC)"
    tips = [t if isinstance(t, str) else t["field"] for t in lines["encoding"]["tooltip"]]
    assert tips == ["experiment", "system", "mean", "at"]
    data = spec["datasets"]
    written = [r["label"] for r in data[numbers["data"]["name"]]]
    assert written == ["#1", "", "#3"]  # #2, a second after #1, only in its tooltip
    assert [r["experiment"] for r in data[rules["data"]["name"]]] == [f"#{i} run <b>{i - 1}</b>" for i in (1, 2, 3)]
    assert page.history_note(frame(times)) == (
        "Each grey line is an experiment, #N its number in the table above; "
        "1 number of experiments saved close to another is left out: hover a "
        "line or a point for its name."
    )
    assert page.history_note(frame(times[:1])).endswith("above; hover a line or a point for its name.")
