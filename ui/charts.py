"""Altair charts of the app: grouped bars with intervals, metric-versus-k curves, the rank heatmap, histograms."""

from __future__ import annotations

import altair as alt
import pandas as pd

NOT_FOUND = "not found"


def bars_with_intervals(df: pd.DataFrame) -> alt.Chart:
    """Grouped bars, one group per metric and one bar per system, with 95% bootstrap intervals as error bars.

    `df` columns: metric, system, mean, low, high.
    """
    base = alt.Chart(df).encode(
        x=alt.X("metric:N", title=None, sort=None, axis=alt.Axis(labelAngle=0, labelFontSize=13)),
        xOffset=alt.XOffset("system:N", sort=None),
    )
    bars = base.mark_bar().encode(
        y=alt.Y("mean:Q", title="mean over the questions", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("system:N", sort=None, legend=alt.Legend(orient="top", title=None)),
        tooltip=[
            alt.Tooltip("system:N"),
            alt.Tooltip("metric:N"),
            alt.Tooltip("mean:Q", format=".4f"),
            alt.Tooltip("low:Q", format=".4f", title="95% low"),
            alt.Tooltip("high:Q", format=".4f", title="95% high"),
        ],
    )
    rules = base.mark_rule(color="#333", strokeWidth=1.5).encode(y="low:Q", y2="high:Q")
    return (bars + rules).properties(height=340)


def curves(df: pd.DataFrame, metric_label: str, current_k: int) -> alt.Chart:
    """Metric versus cutoff k, one line per system, with a rule at the current k. `df`: k, system, value."""
    lines = (
        alt.Chart(df)
        .mark_line(point=True)
        .encode(
            x=alt.X("k:Q", title="cutoff k", scale=alt.Scale(domain=[1, int(df["k"].max())], nice=False), axis=alt.Axis(tickMinStep=1)),
            y=alt.Y("value:Q", title=metric_label, scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("system:N", sort=None, legend=alt.Legend(orient="top", title=None)),
            tooltip=["system:N", "k:Q", alt.Tooltip("value:Q", format=".4f")],
        )
    )
    rule = alt.Chart(pd.DataFrame({"k": [current_k]})).mark_rule(strokeDash=[4, 4], color="gray").encode(x="k:Q")
    return (lines + rule).properties(height=320)


def rank_heatmap(df: pd.DataFrame, max_rank: int = 20) -> alt.Chart:
    """Question x system, coloured by the rank of the first relevant document; 'not found' in its own colour.

    `df` columns: qid, question, system, rank (int, 0 = not found), label.
    """
    found = df[df["rank"] > 0].assign(shown=lambda d: d["rank"].clip(upper=max_rank))
    missing = df[df["rank"] == 0]
    y = alt.Y("qid:N", title="question", sort=None)
    x = alt.X("system:N", title=None, sort=None, axis=alt.Axis(orient="top", labelAngle=0))
    tooltip = [alt.Tooltip("qid:N", title="question"), alt.Tooltip("question:N", title="text"),
               alt.Tooltip("system:N"), alt.Tooltip("label:N", title="first relevant at")]
    cells = alt.Chart(found).mark_rect(stroke="white").encode(
        x=x, y=y, tooltip=tooltip,
        color=alt.Color("shown:Q", title="rank", scale=alt.Scale(scheme="viridis", reverse=False, domain=[1, max_rank]),
                        legend=alt.Legend(orient="right")),
    )
    gaps = alt.Chart(missing).mark_rect(stroke="white", color="#d62728").encode(x=x, y=y, tooltip=tooltip)
    text = alt.Chart(df).mark_text(fontSize=12).encode(
        x=x, y=y, text="label:N",
        color=alt.condition("datum.rank == 0 || datum.rank > 8", alt.value("white"), alt.value("black")),
    )
    height = max(240, 22 * df["qid"].nunique())
    return (cells + gaps + text).properties(height=height)


def histogram_with_interval(means: pd.DataFrame, low: float, high: float, observed: float) -> alt.Chart:
    """The bootstrap distribution of the mean difference, its interval shaded and zero marked. `means`: diff."""
    hist = alt.Chart(means).mark_bar(opacity=0.8).encode(
        x=alt.X("diff:Q", bin=alt.Bin(maxbins=60), title="resampled mean difference"),
        y=alt.Y("count():Q", title="resamples"),
    )
    band = alt.Chart(pd.DataFrame({"low": [low], "high": [high]})).mark_rect(opacity=0.15, color="orange").encode(x="low:Q", x2="high:Q")
    marks = pd.DataFrame({"x": [0.0, observed], "what": ["zero", "observed mean"]})
    rules = alt.Chart(marks).mark_rule(strokeWidth=2).encode(
        x="x:Q", color=alt.Color("what:N", scale=alt.Scale(range=["black", "crimson"]), legend=alt.Legend(orient="top", title=None))
    )
    return (band + hist + rules).properties(height=300)


def difference_bars(df: pd.DataFrame, label: str) -> alt.Chart:
    """Per-question differences as bars, sorted, coloured by sign. `df`: qid, question, diff."""
    return (
        alt.Chart(df)
        .mark_bar()
        .encode(
            x=alt.X("qid:N", sort=alt.EncodingSortField("diff", order="descending"), title="question"),
            y=alt.Y("diff:Q", title=label),
            color=alt.condition("datum.diff >= 0", alt.value("#1f77b4"), alt.value("#d62728")),
            tooltip=["qid:N", "question:N", alt.Tooltip("diff:Q", format="+.4f")],
        )
        .properties(height=300)
    )
