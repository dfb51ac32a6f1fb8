"""The Experiments page's parts: save the current view as a named experiment (in the workspace), the dataset's
saved experiments with the settings that differ among them (every one on request), two of them compared question
by question (paired bootstrap, the Compare page's verdict), and a metric across them in time order, so a week of
tuning is one chart."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import altair as alt
import pandas as pd
import streamlit as st

from retrieval.analyses import experiments
from retrieval.core.errors import InputError
from retrieval.corpus.embeddings import Aligned
from retrieval.evaluation import report
from retrieval.store.workspace import ExperimentEntry

from . import cache, charts, in_use, state, workspace
from .compare import tally, verdict
from .format import plural
from .markdown import escape_markdown as plain

KEY_NAME, KEY_A, KEY_B = "exp_name", "exp_a", "exp_b"
KEY_SYSTEM_A, KEY_SYSTEM_B, KEY_METRIC, KEY_HISTORY = "exp_system_a", "exp_system_b", "exp_metric", "exp_history_metric"
KEY_EVERY = "exp_every_setting"  # the toggle: every setting in the table, not only those that differ
MESSAGE = "exp_message"


def label(entry: ExperimentEntry) -> str:
    """How an experiment is named in a selector: its name, number and time (the name is shown as text)."""
    return f"{entry.name} (#{entry.id}, {workspace.when(entry.created_at)})"


def settings(entries: list[ExperimentEntry], records: dict[int, dict]) -> experiments.Settings:
    """The listed experiments' settings and which of them differ (`analyses.experiments.compare_settings`)."""
    return experiments.compare_settings([records[e.id] for e in entries])


def saved_frame(entries: list[ExperimentEntry], records: dict[int, dict], every: bool = False) -> pd.DataFrame:
    """The saved experiments, oldest first: number, name, when (UTC), by whom, and the settings that differ among
    them (every setting with `every`, or when there is one experiment)."""
    rows = settings(entries, records).rows(every)
    return pd.DataFrame(
        [
            {"#": e.id, "name": e.name, "saved": workspace.when(e.created_at), "by": e.created_by, **row}
            for e, row in zip(entries, rows)
        ]
    )


def means_frame(entries: list[ExperimentEntry], records: dict[int, dict], metric: str) -> pd.DataFrame:
    """Each saved experiment's mean of the metric per system (empty where it did not measure it)."""
    systems = list(dict.fromkeys(s for e in entries for s in records[e.id]["report"]["systems"]))
    return pd.DataFrame(
        [
            {
                "#": e.id,
                "name": e.name,
                **{s: records[e.id]["report"]["systems"].get(s, {}).get(metric) for s in systems},
            }
            for e in entries
        ]
    )


def history_frame(entries: list[ExperimentEntry], records: dict[int, dict], metric: str) -> pd.DataFrame:
    """`analyses.experiments.history` as rows: time, experiment ("#3 name"), its number, system, mean, and the time
    as the tooltip says it."""
    points = experiments.history([(e.id, e.name, e.created_at.isoformat(), records[e.id]) for e in entries], metric)
    saved = pd.to_datetime([p.created_at for p in points], utc=True)
    return pd.DataFrame(
        {
            "saved": saved,
            "experiment": [f"#{p.experiment} {p.name}" for p in points],
            "number": [f"#{p.experiment}" for p in points],
            "system": [p.system for p in points],
            "mean": [p.mean for p in points],
            "at": [f"{t:%Y-%m-%d %H:%M:%S} UTC" for t in saved],
        }
    )


STEPS = (  # a time axis's tick intervals, finest first: (unit, step, seconds)
    *(("second", n, n) for n in (1, 2, 5, 10, 15, 30)),
    *(("minute", n, 60 * n) for n in (1, 2, 5, 10, 15, 30)),
    *(("hour", n, 3600 * n) for n in (1, 2, 3, 6, 12)),
    *(("day", n, 86400 * n) for n in (1, 2, 7, 14)),
    *(("month", n, 2_629_746 * n) for n in (1, 2, 3, 6)),
    *(("year", n, 31_556_952 * n) for n in (1, 2, 5, 10, 20, 50, 100)),
)
MAX_TICKS = 6  # a time axis's labels at most (plus one), so each is whole at 1024 pixels wide
_FREQ = {"second": "s", "minute": "min", "hour": "h"}


def ticks(lo: datetime, hi: datetime, unit: str, step: int) -> list[datetime]:
    """The round times from lo to hi every `step` units, in UTC: a multiple of step seconds, minutes or hours (of
    the day), a day of the month one more than a multiple of step (1, 8, 15, ...), a month or a year so counted."""
    a, b = pd.Timestamp(lo).tz_convert(UTC), pd.Timestamp(hi).tz_convert(UTC)
    if unit in _FREQ:
        f = f"{step}{_FREQ[unit]}"
        out = pd.date_range(a.ceil(f), b, freq=f)
    elif unit == "day":
        out = [t for t in pd.date_range(a.ceil("D"), b, freq="D") if (t.day - 1) % step == 0]
    elif unit == "month":
        out = [t for t in pd.date_range(a.ceil("D"), b, freq="MS") if (t.month - 1) % step == 0]
    else:
        out = [t for t in pd.date_range(a.ceil("D"), b, freq="YS") if t.year % step == 0]
    return [t.to_pydatetime() for t in out]


def time_axis(times: list[datetime]) -> tuple[tuple[datetime, datetime], list[datetime], str]:
    """How the history's time axis reads (UTC): its domain (the times padded by 5% of their span, or a minute
    either side of a single time), its ticks (round times, at most MAX_TICKS intervals across the domain: `ticks`)
    and the labels' strftime format, so that no two labels read the same: seconds for an axis of seconds, the day
    beside the hours when it spans two days, the year beside the days when it spans two years."""
    lo, hi = min(times), max(times)
    pad = timedelta(minutes=1) if hi == lo else (hi - lo) * 0.05
    lo, hi = lo - pad, hi + pad
    span = (hi - lo).total_seconds()
    unit, step, _ = next((x for x in STEPS if span / x[2] <= MAX_TICKS), STEPS[-1])
    a, b = lo.astimezone(UTC), hi.astimezone(UTC)
    if unit == "second":
        fmt = "%H:%M:%S"
    elif unit in ("minute", "hour"):
        fmt = "%H:%M" if a.date() == b.date() else "%b %d %H:%M"
    elif unit in ("day", "month") and a.year != b.year:
        fmt = "%b %d, %Y" if unit == "day" else "%b %Y"
    else:
        fmt = {"day": "%b %d", "month": "%b %Y", "year": "%Y"}[unit]
    return (lo, hi), ticks(lo, hi, unit, step), fmt


def vega_time(t: datetime) -> alt.DateTime:
    """A time as Vega-Lite's scale domain and axis values take it: a DateTime in UTC (a number there, read as a
    timestamp by the schema, draws nothing in Streamlit's Vega)."""
    t = t.astimezone(UTC)
    return alt.DateTime(
        year=t.year,
        month=t.month,
        date=t.day,
        hours=t.hour,
        minutes=t.minute,
        seconds=t.second,
        milliseconds=t.microsecond // 1000,
        utc=True,
    )


LABEL_GAP = 1 / 16  # the least gap between two experiments' numbers on the chart, as a share of the time axis


def labelled(times: list[datetime], domain: tuple[datetime, datetime]) -> list[bool]:
    """Which experiments' numbers the chart writes (times in order): each one at least LABEL_GAP of the axis after
    the last one written, so that no two overlap; the others are named in their tooltip."""
    gap = (domain[1] - domain[0]) * LABEL_GAP
    out, last = [], None
    for t in times:
        keep = last is None or t - last >= gap
        out.append(keep)
        last = t if keep else last
    return out


def history_chart(frame: pd.DataFrame, metric: str) -> alt.LayerChart:
    """The metric's mean per system across the saved experiments on a time axis in UTC (a point per system and
    experiment, each system in its colour on every page): each experiment a faint vertical line with its number
    ("#3") at the top where there is room, its name, system, mean and time in the tooltip."""
    systems = list(dict.fromkeys(frame["system"]))
    marks = frame.drop_duplicates("number")[["saved", "number", "experiment", "at"]].reset_index(drop=True)
    times = [t.to_pydatetime() for t in marks["saved"]]
    (lo, hi), at, fmt = time_axis(times or [datetime.now(UTC)])
    marks["label"] = [n if keep else "" for n, keep in zip(marks["number"], labelled(times, (lo, hi)))]
    x = alt.X(
        "saved:T",
        title="saved (UTC)",
        scale=alt.Scale(type="utc", domain=[vega_time(lo), vega_time(hi)]),
        axis=alt.Axis(format=fmt, values=[vega_time(t) for t in at], labelAngle=0, labelOverlap=True),
    )
    tip = ["experiment", alt.Tooltip("at:N", title="saved")]
    rules = alt.Chart(marks).mark_rule(color="#9e9e9e", opacity=0.35).encode(x=x, tooltip=tip)
    numbers = (
        alt.Chart(marks)
        .mark_text(baseline="top", dy=2, fontSize=11, color="#616161")
        .encode(x=x, y=alt.value(0), text="label:N", tooltip=tip)
    )
    lines = (
        alt.Chart(frame)
        .mark_line(point=True)
        .encode(
            x=x,
            y=alt.Y("mean:Q", title=state.metric_label(metric), scale=alt.Scale(zero=False, padding=20)),
            color=alt.Color(
                "system:N", sort=None, scale=charts.system_scale(systems), legend=alt.Legend(orient="top", title=None)
            ),
            tooltip=["experiment", "system", alt.Tooltip("mean:Q", format=".4f"), alt.Tooltip("at:N", title="saved")],
        )
    )
    return alt.layer(rules, lines, numbers)


# ------------------------------------------------------------------------------------------ the page's parts


def _save() -> None:
    """Save the current view (a button's callback): the report at the sidebar's values, the runs, the grades rule."""
    name = str(st.session_state.get(KEY_NAME) or "").strip()
    ds, base = cache.current_dataset(), cache.base_dataset()
    names = report.report_metrics(state.cutoff(), state.metric_name())
    vectors = next((x for x in cache.current_sources(ds) if isinstance(x, Aligned)), None)
    rec = experiments.record(
        cache.evaluation(names),
        cache.ranking_params(ds),
        cache.current_runs(),
        in_use.rule(),
        len(in_use.new_judgements(base)),
        vectors,
        state.cutoff(),
        state.metric_name(),
    )
    message = workspace.save_experiment(base, name, rec)
    st.session_state[MESSAGE] = message


def save_section() -> None:
    st.subheader("Save this view")
    message = st.session_state.pop(MESSAGE, None)
    if message:
        getattr(st, message[0])(plain(message[1]))
    a, b = st.columns([3, 1], vertical_alignment="bottom")
    a.text_input(
        "Experiment name",
        key=KEY_NAME,
        max_chars=200,
        placeholder="e.g. k1 sweep, Monday",
        help="Saved with the dataset, the systems and runs, every sidebar value, the grades rule and every "
        "question's metrics at the sidebar's k.",
    )
    b.button(
        "Save",
        key="exp_save",
        on_click=_save,
        icon=":material/save:",
        width="stretch",
        disabled=not str(st.session_state.get(KEY_NAME) or "").strip(),
    )


def saved_section(entries: list[ExperimentEntry], records: dict[int, dict]) -> None:
    st.subheader("Saved experiments of this dataset")
    found = settings(entries, records)
    every = st.toggle(
        "Every setting",
        key=KEY_EVERY,
        disabled=len(entries) < 2,
        help="Show every setting each experiment was saved with, not only those that differ among them.",
    )
    shown = {c.label: st.column_config.Column(c.label, help=c.help) for c in found.shown_columns(every)}
    st.dataframe(saved_frame(entries, records, every), hide_index=True, width="stretch", column_config=shown)
    st.caption(f"Oldest first; times are UTC. {plain(found.sentence)}")
    metric = state.metric_name()
    numbers = {
        c: st.column_config.NumberColumn(format="%.4f") for c in means_frame(entries, records, metric).columns[2:]
    }
    st.dataframe(means_frame(entries, records, metric), hide_index=True, width="stretch", column_config=numbers)
    st.caption(
        f"Each system's mean {plain(state.metric_label(metric))} (the sidebar's metric) in each experiment; "
        "empty where the experiment did not measure it."
    )


def _options(rec: dict) -> tuple[list[str], list[str]]:
    return list(rec["report"]["per_query"]), list(rec["report"]["metrics"])


def compare_section(entries: list[ExperimentEntry], records: dict[int, dict]) -> None:
    st.subheader("Compare two")
    ids = [e.id for e in entries]
    by_id = {e.id: e for e in entries}
    c1, c2 = st.columns(2)
    a = c1.selectbox("Experiment A", ids, index=max(len(ids) - 2, 0), key=KEY_A, format_func=lambda i: label(by_id[i]))
    b = c2.selectbox("Experiment B", ids, index=len(ids) - 1, key=KEY_B, format_func=lambda i: label(by_id[i]))
    systems_a, metrics_a = _options(records[a])
    systems_b, metrics_b = _options(records[b])
    common = [m for m in metrics_a if m in metrics_b]
    if not common:
        st.info("These two experiments share no metric.", icon=":material/info:")
        return
    sa_ = c1.selectbox("System of A", systems_a, key=KEY_SYSTEM_A)
    sb_ = c2.selectbox(
        "System of B", systems_b, index=systems_b.index(sa_) if sa_ in systems_b else 0, key=KEY_SYSTEM_B
    )
    chosen = state.metric_name()
    metric = st.selectbox(
        "Metric",
        common,
        index=common.index(chosen) if chosen in common else 0,
        key=KEY_METRIC,
        format_func=state.metric_label,
    )
    try:
        c = experiments.compare(records[a], records[b], sa_, sb_, metric)
    except InputError as e:
        st.error(plain(str(e)))
        return
    name_a, name_b = f"{sa_} in #{a}", f"{sb_} in #{b}"
    kind, text = verdict(c.interval, name_a, name_b, state.metric_label(metric))
    getattr(st, kind)(text)
    wins_a, wins_b, ties = tally(c.differences)
    st.caption(
        f"A {plain(by_id[a].name)}: {c.mean_a:.4f}; B {plain(by_id[b].name)}: {c.mean_b:.4f}, over the "
        f"{plural(c.questions, 'question')} both evaluated. A is better on {plural(wins_a, 'question')}, B on "
        f"{wins_b:,}, and {plural(ties, 'tie')}."
    )
    frame = pd.DataFrame({"question": c.question_ids, "A - B": c.differences})
    frame = frame[frame["A - B"] != 0].sort_values("A - B", key=abs, ascending=False)
    if len(frame):
        st.dataframe(
            frame,
            hide_index=True,
            width="stretch",
            column_config={"A - B": st.column_config.NumberColumn(format="%+.4f")},
        )
        st.caption("The questions whose value differs, the largest difference first.")


def history_section(entries: list[ExperimentEntry], records: dict[int, dict]) -> None:
    st.subheader("History")
    metrics = list(dict.fromkeys(m for e in entries for m in records[e.id]["report"]["metrics"]))
    chosen = state.metric_name()
    metric = st.selectbox(
        "Metric over time",
        metrics,
        index=metrics.index(chosen) if chosen in metrics else 0,
        key=KEY_HISTORY,
        format_func=state.metric_label,
    )
    frame = history_frame(entries, records, metric)
    st.altair_chart(history_chart(frame, metric), width="stretch")
    st.caption(
        f"Each saved experiment's mean {plain(state.metric_label(metric))} per system, at the time it was "
        f"saved (UTC). {history_note(frame)}"
    )


def history_note(frame: pd.DataFrame) -> str:
    """What the history chart's numbers are: each experiment's number, and which ones are only in the tooltip."""
    marks = frame.drop_duplicates("number")
    if marks.empty:
        return "No saved experiment measured this metric."
    times = [t.to_pydatetime() for t in marks["saved"]]
    hidden = len(times) - sum(labelled(times, time_axis(times)[0]))
    said = "Each grey line is an experiment, #N its number in the table above"
    if hidden:
        return f"{said}; {plural(hidden, 'number')} of experiments saved close to another {'is' if hidden == 1 else 'are'} left out: hover a line or a point for its name."
    return f"{said}; hover a line or a point for its name."


def page() -> None:
    st.title("Experiments")
    base = cache.base_dataset()
    st.caption(
        f"{plain(in_use.dataset_label())}: save what the sidebar shows as a named experiment, come back tomorrow, compare "
        "two, and follow a metric across them."
    )
    ws = workspace.store()
    if ws is None:
        st.warning(
            f"The workspace cannot be opened, so nothing can be saved: {plain(workspace.problem() or '')}",
            icon=":material/cloud_off:",
        )
        return
    save_section()
    entries, records, unreadable = workspace.experiments_of(base)
    for problem in unreadable:
        st.warning(
            f"{plain(problem)}. It is left out of this page (saved by an older version or by hand).",
            icon=":material/warning:",
        )
    if not entries:
        st.info("No experiment of this dataset is saved yet.", icon=":material/info:")
        return
    saved_section(entries, records)
    if len(entries) >= 2:
        compare_section(entries, records)
    history_section(entries, records)
