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


def rank_heatmap(df: pd.DataFrame, max_rank: int = 20, k: int | None = None, select: str | None = None) -> alt.LayerChart:
    """Question x system, coloured by the rank of the first relevant document; 'not found' in its own colour.

    `df` columns: qid, question, row (the y label), system, rank (int, 0 = not found), label (the cell text).
    Ranks are coloured on a log scale from 1 (dark) to `max_rank` (pale; deeper ranks share its colour),
    so 1, 2 and 3 stay distinct; with `k`, the tooltip says whether the rank is inside the top k. With `select`,
    a click on a cell selects its question in a point selection of that name (field qid).
    """
    df = df.assign(
        shown=df["rank"].clip(lower=1, upper=max_rank),
        status=[NOT_FOUND if r == 0 else ("in the top k" if k is None or r <= k else f"beyond the top {k}") for r in df["rank"]],
    )
    found, missing = df[df["rank"] > 0], df[df["rank"] == 0]
    rows = list(dict.fromkeys(df["row"]))
    systems = list(dict.fromkeys(df["system"]))
    y = alt.Y("row:N", title=None, sort=rows, axis=alt.Axis(labelLimit=360, labelFontSize=12))
    x = alt.X("system:N", title=None, sort=systems, axis=alt.Axis(orient="top", labelAngle=0, labelFontSize=13, labelLimit=140))
    tooltip = [alt.Tooltip("qid:N", title="question"), alt.Tooltip("question:N", title="text"),
               alt.Tooltip("system:N"), alt.Tooltip("label:N", title="first relevant at"), alt.Tooltip("status:N", title=" ")]
    ticks = [v for v in (1, 2, 3, 5, 10, 20, 50, 100) if v <= max_rank]
    cells = alt.Chart(found).mark_rect(stroke="white", strokeWidth=1.5).encode(
        x=x, y=y, tooltip=tooltip,
        color=alt.Color(
            "shown:Q", title="first relevant at",
            scale=alt.Scale(type="log", scheme="blues", reverse=True, domain=[1, max_rank]),
            legend=alt.Legend(orient="top", values=ticks, gradientLength=150, titleLimit=200,
                              labelExpr=f"datum.value >= {max_rank} ? '{max_rank}+' : datum.label"),
        ),
    )
    gaps = alt.Chart(missing).mark_rect(stroke="white", strokeWidth=1.5).encode(
        x=x, y=y, tooltip=tooltip,
        color=alt.Color("status:N", title=None, scale=alt.Scale(domain=[NOT_FOUND], range=["#e8590c"]),
                        legend=alt.Legend(orient="top", symbolType="square", symbolSize=200, labelFontSize=12)),
    )
    text = alt.Chart(df).mark_text(fontSize=12, fontWeight="bold").encode(
        x=x, y=y, text="label:N", tooltip=tooltip,
        color=alt.condition("datum.rank == 0 || datum.rank <= 4", alt.value("white"), alt.value("#1a1a1a")),
    )
    height = 26 * len(rows) + 120  # the plot plus the legends and the top axis (the chart is fitted to this height)
    layers = [cells, gaps, text]
    if select:  # an invisible cell on top of everything catches the click, whether on the colour or on the label
        layers.append(
            alt.Chart(df).mark_rect(opacity=0.001, color="white", cursor="pointer").encode(x=x, y=y, tooltip=tooltip)
            .add_params(alt.selection_point(name=select, fields=["qid"], on="click", clear="dblclick"))
        )
    return alt.layer(*layers).resolve_scale(color="independent").properties(height=height)


def histogram_with_interval(bins: pd.DataFrame, low: float, high: float, observed: float) -> alt.Chart:
    """The bootstrap distribution of the mean difference, its 95% interval shaded, zero and the observed mean marked.

    `bins` columns: start, end, count (a histogram binned beforehand, so the chart carries a few dozen rows
    rather than every resampled mean).
    """
    lo_x = min(float(bins["start"].min()), 0.0, low)
    hi_x = max(float(bins["end"].max()), 0.0, high)
    pad = 0.04 * (hi_x - lo_x or 1.0)
    xscale = alt.Scale(domain=[lo_x - pad, hi_x + pad], nice=False)
    band = alt.Chart(pd.DataFrame({"low": [low], "high": [high], "what": ["95% interval"]})).mark_rect(opacity=0.18).encode(
        x=alt.X("low:Q", scale=xscale), x2="high:Q",
        color=alt.Color("what:N", scale=alt.Scale(domain=["95% interval"], range=["#f59f00"]),
                        legend=alt.Legend(orient="top", title=None, symbolType="square")),
        tooltip=[alt.Tooltip("low:Q", format="+.4f", title="95% low"), alt.Tooltip("high:Q", format="+.4f", title="95% high")],
    )
    hist = alt.Chart(bins.assign(base=0)).mark_rect(color="#4c78a8", opacity=0.85, stroke="white", strokeWidth=0.5).encode(
        x=alt.X("start:Q", title="resampled mean difference", scale=xscale, axis=alt.Axis(format="+.2f", tickCount=12)),
        x2="end:Q",
        y=alt.Y("count:Q", title="resamples"),
        y2="base:Q",
        tooltip=[alt.Tooltip("start:Q", format="+.4f", title="from"), alt.Tooltip("end:Q", format="+.4f", title="to"),
                 alt.Tooltip("count:Q", title="resamples")],
    )
    marks = pd.DataFrame({"x": [0.0, observed], "what": ["zero", "observed mean"]})
    rules = alt.Chart(marks).mark_rule(strokeWidth=2.5).encode(
        x=alt.X("x:Q", scale=xscale),
        strokeDash=alt.StrokeDash("what:N", scale=alt.Scale(domain=["zero", "observed mean"], range=[[5, 4], [1, 0]]), legend=None),
        color=alt.Color("what:N", scale=alt.Scale(domain=["zero", "observed mean"], range=["#212529", "#c92a2a"]),
                        legend=alt.Legend(orient="top", title=None)),
        tooltip=[alt.Tooltip("what:N", title=" "), alt.Tooltip("x:Q", format="+.4f", title="value")],
    )
    return (band + hist + rules).resolve_scale(color="independent").properties(height=340)


def difference_bars(df: pd.DataFrame, label: str, a: str = "A", b: str = "B") -> alt.Chart:
    """Per-question differences a - b as bars, sorted, coloured by which system wins. `df`: qid, question, diff.

    With many questions the question labels are dropped from the axis (the tooltip still names each bar).
    """
    many = df["qid"].nunique() > 60
    wins = [f"{a} better", f"{b} better", "tie"]
    df = df.assign(winner=[wins[0] if d > 0 else wins[1] if d < 0 else wins[2] for d in df["diff"]])
    order = df.sort_values(["diff", "qid"], ascending=[False, True])["qid"].tolist()
    bars = alt.Chart(df).mark_bar().encode(
        x=alt.X("qid:N", sort=order, title="question (sorted by the difference)",
                axis=alt.Axis(labels=not many, ticks=not many, labelAngle=-60 if len(order) > 20 else 0)),
        y=alt.Y("diff:Q", title=label, axis=alt.Axis(format="+.2f")),
        color=alt.Color("winner:N", title=None, scale=alt.Scale(domain=wins, range=["#1c7ed6", "#e03131", "#adb5bd"]),
                        legend=alt.Legend(orient="top")),
        tooltip=[alt.Tooltip("qid:N", title="question"), alt.Tooltip("question:N", title="text"),
                 alt.Tooltip("diff:Q", format="+.4f", title="difference")],
    )
    ties = alt.Chart(df[df["diff"] == 0]).mark_point(shape="diamond", filled=True, size=70, color="#868e96", opacity=1).encode(
        x=alt.X("qid:N", sort=order), y=alt.Y("diff:Q"),
        tooltip=[alt.Tooltip("qid:N", title="question"), alt.Tooltip("question:N", title="text"),
                 alt.Tooltip("diff:Q", format="+.4f", title="difference")],
    )
    zero = alt.Chart(pd.DataFrame({"y": [0.0]})).mark_rule(color="#495057").encode(y="y:Q")
    return (bars + ties + zero).properties(height=320)
