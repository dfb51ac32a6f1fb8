"""The Experiments page's parts: save the current view as a named experiment (in the workspace), the dataset's
saved experiments, two of them compared question by question (paired bootstrap, the Compare page's verdict), and a
metric across them in time order, so a week of tuning is one chart."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from retrieval.analyses import experiments
from retrieval.core.errors import InputError
from retrieval.evaluation import report
from retrieval.store.workspace import ExperimentEntry

from . import cache, charts, in_use, state, workspace
from .compare import tally, verdict
from .format import plural
from .markdown import escape_markdown as plain

KEY_NAME, KEY_A, KEY_B = "exp_name", "exp_a", "exp_b"
KEY_SYSTEM_A, KEY_SYSTEM_B, KEY_METRIC, KEY_HISTORY = "exp_system_a", "exp_system_b", "exp_metric", "exp_history_metric"
MESSAGE = "exp_message"


def label(entry: ExperimentEntry) -> str:
    """How an experiment is named in a selector: its name, number and time (the name is shown as text)."""
    return f"{entry.name} (#{entry.id}, {workspace.when(entry.created_at)})"


PARAMS = {"k1": "k1", "b": "b", "dims": "d", "rrf_k": "RRF k", "alpha": "alpha"}  # the table's (`experiments show`:
# every parameter)


def saved_frame(entries: list[ExperimentEntry], records: dict[int, dict]) -> pd.DataFrame:
    """The saved experiments, oldest first: number, name, when (UTC), by whom, and the sliders' values they were
    made with."""
    return pd.DataFrame([{"#": e.id, "name": e.name, "saved": workspace.when(e.created_at), "by": e.created_by,
                          **{label: records[e.id]["report"]["params"].get(key) for key, label in PARAMS.items()}}
                         for e in entries])


def means_frame(entries: list[ExperimentEntry], records: dict[int, dict], metric: str) -> pd.DataFrame:
    """Each saved experiment's mean of the metric per system (empty where it did not measure it)."""
    systems = list(dict.fromkeys(s for e in entries for s in records[e.id]["report"]["systems"]))
    return pd.DataFrame([{"#": e.id, "name": e.name,
                          **{s: records[e.id]["report"]["systems"].get(s, {}).get(metric) for s in systems}}
                         for e in entries])


def history_frame(entries: list[ExperimentEntry], records: dict[int, dict], metric: str) -> pd.DataFrame:
    """`analyses.experiments.history` as rows: time, experiment, system, mean."""
    points = experiments.history([(e.id, e.name, e.created_at.isoformat(), records[e.id]) for e in entries], metric)
    return pd.DataFrame({"saved": pd.to_datetime([p.created_at for p in points], utc=True),
                         "experiment": [f"#{p.experiment} {p.name}" for p in points],
                         "system": [p.system for p in points], "mean": [p.mean for p in points]})


def history_chart(frame: pd.DataFrame, metric: str) -> alt.Chart:
    """The metric's mean per system across the saved experiments, in time order (a point per experiment), each
    system in its colour on every page."""
    systems = list(dict.fromkeys(frame["system"]))
    return alt.Chart(frame).mark_line(point=True).encode(
        x=alt.X("saved:T", title="saved (UTC)"),
        y=alt.Y("mean:Q", title=state.metric_label(metric)),
        color=alt.Color("system:N", sort=None, scale=charts.system_scale(systems),
                        legend=alt.Legend(orient="top", title=None)),
        tooltip=["experiment", "system", alt.Tooltip("mean:Q", format=".4f"), "saved:T"],
    )


# ------------------------------------------------------------------------------------------ the page's parts


def _save() -> None:
    """Save the current view (a button's callback): the report at the sidebar's values, the runs, the grades rule."""
    name = str(st.session_state.get(KEY_NAME) or "").strip()
    ds, base = cache.current_dataset(), cache.base_dataset()
    names = report.report_metrics(state.cutoff(), state.metric_name())
    rec = experiments.record(cache.evaluation(names), cache.ranking_params(ds), cache.current_runs(), in_use.rule(),
                             len(in_use.new_judgements(base)))
    message = workspace.save_experiment(base, name, rec)
    st.session_state[MESSAGE] = message


def save_section() -> None:
    st.subheader("Save this view")
    message = st.session_state.pop(MESSAGE, None)
    if message:
        getattr(st, message[0])(plain(message[1]))
    a, b = st.columns([3, 1], vertical_alignment="bottom")
    a.text_input("Experiment name", key=KEY_NAME, max_chars=200, placeholder="e.g. k1 sweep, Monday",
                 help="Saved with the dataset, the systems and runs, every sidebar value, the grades rule and every "
                      "question's metrics at the sidebar's k.")
    b.button("Save", key="exp_save", on_click=_save, icon=":material/save:", width="stretch",
             disabled=not str(st.session_state.get(KEY_NAME) or "").strip())


def saved_section(entries: list[ExperimentEntry], records: dict[int, dict]) -> None:
    st.subheader("Saved experiments of this dataset")
    st.dataframe(saved_frame(entries, records), hide_index=True, width="stretch")
    st.caption("Oldest first; times are UTC; the parameters each was saved with.")
    metric = state.metric_name()
    numbers = {c: st.column_config.NumberColumn(format="%.4f") for c in means_frame(entries, records, metric).columns[2:]}
    st.dataframe(means_frame(entries, records, metric), hide_index=True, width="stretch", column_config=numbers)
    st.caption(f"Each system's mean {plain(state.metric_label(metric))} (the sidebar's metric) in each experiment; "
               "empty where the experiment did not measure it.")


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
    sb_ = c2.selectbox("System of B", systems_b, index=systems_b.index(sa_) if sa_ in systems_b else 0, key=KEY_SYSTEM_B)
    chosen = state.metric_name()
    metric = st.selectbox("Metric", common, index=common.index(chosen) if chosen in common else 0, key=KEY_METRIC,
                          format_func=state.metric_label)
    try:
        c = experiments.compare(records[a], records[b], sa_, sb_, metric)
    except InputError as e:
        st.error(plain(str(e)))
        return
    name_a, name_b = f"{sa_} in #{a}", f"{sb_} in #{b}"
    kind, text = verdict(c.interval, name_a, name_b, state.metric_label(metric))
    getattr(st, kind)(text)
    wins_a, wins_b, ties = tally(c.differences)
    st.caption(f"A {plain(by_id[a].name)}: {c.mean_a:.4f}; B {plain(by_id[b].name)}: {c.mean_b:.4f}, over the "
               f"{plural(c.questions, 'question')} both evaluated. A is better on {plural(wins_a, 'question')}, B on "
               f"{wins_b:,}, and {plural(ties, 'tie')}.")
    frame = pd.DataFrame({"question": c.question_ids, "A - B": c.differences})
    frame = frame[frame["A - B"] != 0].sort_values("A - B", key=abs, ascending=False)
    if len(frame):
        st.dataframe(frame, hide_index=True, width="stretch",
                     column_config={"A - B": st.column_config.NumberColumn(format="%+.4f")})
        st.caption("The questions whose value differs, the largest difference first.")


def history_section(entries: list[ExperimentEntry], records: dict[int, dict]) -> None:
    st.subheader("History")
    metrics = list(dict.fromkeys(m for e in entries for m in records[e.id]["report"]["metrics"]))
    chosen = state.metric_name()
    metric = st.selectbox("Metric over time", metrics, index=metrics.index(chosen) if chosen in metrics else 0,
                          key=KEY_HISTORY, format_func=state.metric_label)
    frame = history_frame(entries, records, metric)
    st.altair_chart(history_chart(frame, metric), width="stretch")
    st.caption(f"Each saved experiment's mean {plain(state.metric_label(metric))} per system, in the order they were "
               "saved.")


def page() -> None:
    st.title("Experiments")
    base = cache.base_dataset()
    st.caption(f"{plain(in_use.dataset_label())}: save what the sidebar shows as a named experiment, come back tomorrow, compare "
               "two, and follow a metric across them.")
    ws = workspace.store()
    if ws is None:
        st.warning(f"The workspace cannot be opened, so nothing can be saved: {plain(workspace.problem() or '')}",
                   icon=":material/cloud_off:")
        return
    save_section()
    entries, records = workspace.experiments_of(base)
    if not entries:
        st.info("No experiment of this dataset is saved yet.", icon=":material/info:")
        return
    saved_section(entries, records)
    if len(entries) >= 2:
        compare_section(entries, records)
    history_section(entries, records)
