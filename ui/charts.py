"""Altair charts of the app: grouped bars with intervals, metric-versus-k curves, the rank heatmap, histograms."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

import altair as alt
import pandas as pd
import streamlit as st

NOT_FOUND = "not found"

# One colour per system on every page: the built-in systems always these, the other systems (uploaded runs)
# the next of RUN_COLORS in the order they are given (cycling past the eighth).
SYSTEM_COLORS = {"BM25": "#4c78a8", "LSA": "#f58518", "dense": "#54a24b", "weighted": "#b279a2", "RRF": "#e45756"}
RUN_COLORS = ("#72b7b2", "#eeca3b", "#9d755d", "#ff9da6", "#17becf", "#8c6d31", "#393b79", "#bab0ac")


def system_colors(systems: Sequence[str]) -> dict[str, str]:
    """Each system's colour: a built-in system's own, the others RUN_COLORS in their order in `systems`."""
    names = list(dict.fromkeys(systems))
    others = [n for n in names if n not in SYSTEM_COLORS]
    return {n: SYSTEM_COLORS.get(n) or RUN_COLORS[others.index(n) % len(RUN_COLORS)] for n in names}


def system_scale(systems: Sequence[str], shown: Sequence[str] | None = None) -> alt.Scale:
    """A colour scale of the systems `shown` (default: all of `systems`), coloured as `system_colors(systems)`."""
    colors = system_colors(systems)
    names = list(dict.fromkeys(shown if shown is not None else colors))
    return alt.Scale(domain=names, range=[colors[n] for n in names])


def bars_with_intervals(df: pd.DataFrame) -> alt.Chart:
    """Grouped bars, one group per metric and one bar per system, with 95% bootstrap intervals as error bars.

    `df` columns: metric, system, mean, low, high.
    """
    return _bars(df, list(df["system"]))


def _bars(data, systems: Sequence[str]) -> alt.Chart:
    """`bars_with_intervals` over `data` (a frame, or the named data of a cached spec), coloured for `systems`."""
    base = alt.Chart(data).encode(
        x=alt.X("metric:N", title=None, sort=None, axis=alt.Axis(labelAngle=0, labelFontSize=13)),
        xOffset=alt.XOffset("system:N", sort=None),
    )
    bars = base.mark_bar().encode(
        y=alt.Y("mean:Q", title="mean over the questions", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color(
            "system:N", sort=None, scale=system_scale(systems), legend=alt.Legend(orient="top", title=None)
        ),
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


def curve_domain(values: pd.Series) -> tuple[float, float]:
    """The y range of `curves`: the values' 0.02 either side, rounded to 0.01, within [0, 1]."""
    return max(0.0, round(float(values.min()) - 0.02, 2)), min(1.0, round(float(values.max()) + 0.02, 2))


def curves(df: pd.DataFrame, metric_label: str, current_k: int) -> alt.Chart:
    """Metric versus cutoff k, one line per system, with a rule at the current k. `df`: k, system, value.

    The y axis is fitted to the values (0.02 either side, within [0, 1]), so lines close together stay apart.
    """
    return _curves(df, list(df["system"]), curve_domain(df["value"]), int(df["k"].max()), metric_label, current_k)


def _curves(
    data, systems: Sequence[str], domain: tuple[float, float], k_max: int, metric_label: str, current_k: int
) -> alt.LayerChart:
    """`curves` over `data` (a frame, or the named data of a cached spec): its lines, y range, k range and rule."""
    lo, hi = domain
    lines = (
        alt.Chart(data)
        .mark_line(point=True)
        .encode(
            x=alt.X(
                "k:Q", title="cutoff k", scale=alt.Scale(domain=[1, k_max], nice=False), axis=alt.Axis(tickMinStep=1)
            ),
            y=alt.Y("value:Q", title=metric_label, scale=alt.Scale(domain=[lo, hi], nice=False, zero=False)),
            color=alt.Color(
                "system:N", sort=None, scale=system_scale(systems), legend=alt.Legend(orient="top", title=None)
            ),
            tooltip=["system:N", "k:Q", alt.Tooltip("value:Q", format=".4f")],
        )
    )
    rule = alt.Chart(pd.DataFrame({"k": [current_k]})).mark_rule(strokeDash=[4, 4], color="gray").encode(x="k:Q")
    return (lines + rule).properties(height=320)


# ------------------------------------------------------------------------- specs for st.vega_lite_chart
# Building an Altair chart and validating its JSON against the Vega-Lite schema costs tens of ms per chart and
# rerun. The Overview's two charts change their data with every slider, their structure (the systems and their
# colours, the curve's ranges, the rule at k) rarely: so the structure is built and validated once per value of
# what it depends on (Streamlit's cache_data, bounded), and each call puts the current rows in as the named dataset DATA. The
# spec the browser gets is then the same from rerun to rerun unless the structure changed: only the data moves.

DATA = "table"  # the named dataset every cached spec reads; the rows come with each call
SPEC_CACHE = 64  # structures kept (a few hundred bytes to a few kB of JSON each)


def _without_theme(spec: dict) -> dict:
    """`spec` without what Altair's active theme merged into its config (st.altair_chart converts with the theme
    "none": the Streamlit theme styles the chart in the browser). The charts here set no config of their own."""
    theme = alt.theme.get()
    extra = theme() if theme is not None else {}

    def strip(d: dict, t: dict) -> None:
        for key, value in t.items():
            if isinstance(value, dict) and isinstance(d.get(key), dict):
                strip(d[key], value)
                if not d[key]:
                    del d[key]
            elif key in d and d[key] == value:
                del d[key]

    strip(spec, extra)
    return spec


@st.cache_data(max_entries=SPEC_CACHE, show_spinner=False)
def spec_structure(kind: str, key: tuple) -> str:
    """The validated Vega-Lite JSON of one chart structure, reading its rows from the named dataset DATA."""
    source = alt.NamedData(name=DATA)
    chart = _bars(source, list(key[0])) if kind == "bars" else _curves(source, *key)
    return json.dumps(_without_theme(chart.to_dict(validate=True)))


def _with_rows(structure: str, rows: pd.DataFrame) -> dict:
    """A fresh spec of `structure` (never the cached object) with `rows` as its dataset DATA, beside the small
    datasets the structure carries itself (the curve's rule at k)."""
    spec = json.loads(structure)
    spec.setdefault("datasets", {})[DATA] = rows
    return spec


def bars_spec(df: pd.DataFrame) -> dict:
    """The Vega-Lite spec of `bars_with_intervals(df)` for st.vega_lite_chart: the structure (cached, keyed by
    the systems in their order: all the chart reads of `df` besides its rows) with `df`'s rows as DATA."""
    return _with_rows(
        spec_structure("bars", (tuple(dict.fromkeys(df["system"])),)), df[["metric", "system", "mean", "low", "high"]]
    )


def curves_spec(df: pd.DataFrame, metric_label: str, current_k: int) -> dict:
    """The Vega-Lite spec of `curves(df, metric_label, current_k)` for st.vega_lite_chart: the structure (cached,
    keyed by the systems, the y and k ranges, the label and the current k) with `df`'s rows as DATA."""
    key = (
        tuple(dict.fromkeys(df["system"])),
        curve_domain(df["value"]),
        int(df["k"].max()),
        metric_label,
        int(current_k),
    )
    return _with_rows(spec_structure("curves", key), df[["k", "system", "value"]])


NOT_FOUND_MARK = (
    "—"  # a heatmap cell with nothing relevant in the system's list ("not found" in the legend and tooltip)
)
MISSING_COLORS = ("#e8590c", "#f59f00")  # not found; any other miss (a fusion's "beyond the fusion's top N")
LEGEND_ROOM = 110  # px above the column headers for the two legends
WIDE_NAMES = 8  # system names longer than this, or more than five systems, tilt the column headers


def rank_heatmap(
    df: pd.DataFrame, max_rank: int = 20, k: int | None = None, select: str | None = None
) -> alt.LayerChart:
    """Question x system, coloured by the rank of the first relevant document; a miss in its own colour.

    `df` columns: qid, question, row (the y label), system, rank (int, 0 = not found), label (the cell text), and
    optionally missing (what a miss means, per cell: NOT_FOUND, or a fusion's "beyond the fusion's top N"; default
    NOT_FOUND). Ranks are coloured on a log scale from 1 (dark) to `max_rank` (pale; deeper ranks share its
    colour), so 1, 2 and 3 stay distinct; NOT_FOUND has the first colour of MISSING_COLORS, a fusion's miss the
    second; with `k`, the tooltip says whether the rank is inside the top k. With `select`, a click on a cell
    selects its question in a point selection of that name (field qid). Column headers (the systems) tilt when
    there are many or long ones, cut at 130 px with an ellipsis (the tooltip names the system in full).
    """
    missing = df["missing"] if "missing" in df else pd.Series(NOT_FOUND, index=df.index)
    df = df.assign(
        shown=df["rank"].clip(lower=1, upper=max_rank),
        status=[
            m if r == 0 else ("in the top k" if k is None or r <= k else f"beyond the top {k}")
            for r, m in zip(df["rank"], missing)
        ],
    )
    found, gaps_df = df[df["rank"] > 0], df[df["rank"] == 0]
    rows = list(dict.fromkeys(df["row"]))
    systems = list(dict.fromkeys(df["system"]))
    kinds = sorted(dict.fromkeys(gaps_df["status"]), key=lambda m: m != NOT_FOUND) or [NOT_FOUND]  # not found first
    tilt = len(systems) > 5 or any(len(s) > WIDE_NAMES for s in systems)
    head = 92 if tilt else 24  # the column headers' height above the plot: the legends stand above them
    y = alt.Y("row:N", title=None, sort=rows, axis=alt.Axis(labelLimit=220, labelFontSize=12))
    x = alt.X(
        "system:N",
        title=None,
        sort=systems,
        axis=alt.Axis(
            orient="top",
            labelAngle=-40 if tilt else 0,
            labelAlign="left" if tilt else "center",
            labelOverlap=False,
            labelFontSize=13,
            labelLimit=130,
            labelPadding=4,
        ),
    )
    tooltip = [
        alt.Tooltip("qid:N", title="question"),
        alt.Tooltip("question:N", title="text"),
        alt.Tooltip("system:N"),
        alt.Tooltip("label:N", title="first relevant at"),
        alt.Tooltip("status:N", title=" "),
    ]
    ticks = [v for v in (1, 2, 3, 5, 10, 20, 50, 100) if v <= max_rank]
    cells = (
        alt.Chart(found)
        .mark_rect(stroke="white", strokeWidth=1.5)
        .encode(
            x=x,
            y=y,
            tooltip=tooltip,
            color=alt.Color(
                "shown:Q",
                title="first relevant at",
                scale=alt.Scale(type="log", scheme="blues", reverse=True, domain=[1, max_rank]),
                legend=alt.Legend(
                    orient="none",
                    legendX=0,
                    legendY=-(head + 96),
                    direction="horizontal",
                    values=ticks,
                    gradientLength=150,
                    titleLimit=200,
                    labelExpr=f"datum.value >= {max_rank} ? '{max_rank}+' : datum.label",
                ),
            ),
        )
    )
    gaps = (
        alt.Chart(gaps_df)
        .mark_rect(stroke="white", strokeWidth=1.5)
        .encode(
            x=x,
            y=y,
            tooltip=tooltip,
            color=alt.Color(
                "status:N",
                title=None,
                scale=alt.Scale(domain=kinds, range=[MISSING_COLORS[m != NOT_FOUND] for m in kinds]),
                legend=alt.Legend(
                    orient="none",
                    legendX=0,
                    legendY=-(head + 36),
                    direction="horizontal",
                    symbolType="square",
                    symbolSize=200,
                    labelFontSize=12,
                    labelLimit=300,
                ),
            ),
        )
    )
    white = f"(datum.rank == 0 && datum.status == '{NOT_FOUND}') || (datum.rank > 0 && datum.rank <= 4)"
    text = (
        alt.Chart(df)
        .mark_text(fontSize=12, fontWeight="bold")
        .encode(
            x=x,
            y=y,
            text="label:N",
            tooltip=tooltip,
            color=alt.condition(white, alt.value("white"), alt.value("#1a1a1a")),
        )
    )
    layers = [cells, gaps, text]
    if select:  # an invisible cell on top of everything catches the click, whether on the colour or on the label
        layers.append(
            alt.Chart(df)
            .mark_rect(opacity=0.001, color="white", cursor="pointer")
            .encode(x=x, y=y, tooltip=tooltip)
            .add_params(alt.selection_point(name=select, fields=["qid"], on="click", clear="dblclick"))
        )
    # the height is the plot's, 26 px a row (fit-x: only the width is fitted to the page; the headers and the
    # padding come on top). The legends are placed by hand above the headers, left-aligned, one under the other, so
    # neither is cut however narrow the page: the layout does not count them, the top padding makes their room.
    return (
        alt.layer(*layers)
        .resolve_scale(color="independent")
        .properties(
            height=26 * len(rows),
            padding={"top": LEGEND_ROOM, "left": 5, "bottom": 5, "right": 5},
            autosize=alt.AutoSizeParams(type="fit-x", contains="padding"),
        )
    )


def signed_ticks(lo: float, hi: float, target: int = 12) -> tuple[list[float], str]:
    """Ticks for a signed axis over [lo, hi]: the multiples of a round step (1, 2 or 5 times a power of ten) giving
    at most about `target` of them, and a format ("+.2f", "+.3f"...) with as many decimals as the step needs (at least
    two), so that no two ticks read the same (a step of 0.005 written with two decimals read "+0.01" twice)."""
    span = hi - lo if hi > lo else 1e-6
    raw = span / target
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw * (1 - 1e-9))
    decimals = max(2, -math.floor(math.log10(step) + 1e-9))
    first, last = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)
    return [round(i * step, decimals + 3) for i in range(first, last + 1)], f"+.{decimals}f"


def histogram_with_interval(bins: pd.DataFrame, low: float, high: float, observed: float) -> alt.Chart:
    """The bootstrap distribution of the mean difference, its 95% interval shaded, zero and the observed mean marked.

    `bins` columns: start, end, count (a histogram binned beforehand, so the chart carries a few dozen rows
    rather than every resampled mean).
    """
    lo_x = min(float(bins["start"].min()), 0.0, low)
    hi_x = max(float(bins["end"].max()), 0.0, high)
    pad = 0.04 * (hi_x - lo_x or 1.0)
    xscale = alt.Scale(domain=[lo_x - pad, hi_x + pad], nice=False)
    ticks, tick_format = signed_ticks(lo_x - pad, hi_x + pad)
    band = (
        alt.Chart(pd.DataFrame({"low": [low], "high": [high], "what": ["95% interval"]}))
        .mark_rect(opacity=0.18)
        .encode(
            x=alt.X("low:Q", scale=xscale),
            x2="high:Q",
            color=alt.Color(
                "what:N",
                scale=alt.Scale(domain=["95% interval"], range=["#f59f00"]),
                legend=alt.Legend(orient="top", title=None, symbolType="square"),
            ),
            tooltip=[
                alt.Tooltip("low:Q", format="+.4f", title="95% low"),
                alt.Tooltip("high:Q", format="+.4f", title="95% high"),
            ],
        )
    )
    hist = (
        alt.Chart(bins.assign(base=0))
        .mark_rect(color="#4c78a8", opacity=0.85, stroke="white", strokeWidth=0.5)
        .encode(
            x=alt.X(
                "start:Q",
                title="resampled mean difference",
                scale=xscale,
                axis=alt.Axis(values=ticks, format=tick_format),
            ),
            x2="end:Q",
            y=alt.Y("count:Q", title="resamples"),
            y2="base:Q",
            tooltip=[
                alt.Tooltip("start:Q", format="+.4f", title="from"),
                alt.Tooltip("end:Q", format="+.4f", title="to"),
                alt.Tooltip("count:Q", title="resamples"),
            ],
        )
    )
    marks = pd.DataFrame({"x": [0.0, observed], "what": ["zero", "observed mean"]})
    rules = (
        alt.Chart(marks)
        .mark_rule(strokeWidth=2.5)
        .encode(
            x=alt.X("x:Q", scale=xscale),
            strokeDash=alt.StrokeDash(
                "what:N", scale=alt.Scale(domain=["zero", "observed mean"], range=[[5, 4], [1, 0]]), legend=None
            ),
            color=alt.Color(
                "what:N",
                scale=alt.Scale(domain=["zero", "observed mean"], range=["#212529", "#c92a2a"]),
                legend=alt.Legend(orient="top", title=None),
            ),
            tooltip=[alt.Tooltip("what:N", title=" "), alt.Tooltip("x:Q", format="+.4f", title="value")],
        )
    )
    return (band + hist + rules).resolve_scale(color="independent").properties(height=340)


def difference_bars(
    df: pd.DataFrame, label: str, a: str = "A", b: str = "B", systems: Sequence[str] | None = None
) -> alt.Chart:
    """Per-question differences a - b as bars, sorted, coloured by which system wins. `df`: qid, question, diff.

    With `systems` (every system of the page), a win is in the winner's colour of `system_colors(systems)`.
    With many questions the question labels are dropped from the axis (the tooltip still names each bar).
    """
    many = df["qid"].nunique() > 60
    colors = (
        system_colors(systems)
        if systems is not None and a in systems and b in systems
        else {a: "#1c7ed6", b: "#e03131"}
    )
    win_colors = [colors[a], colors[b]]
    wins = [f"{a} better", f"{b} better", "tie"]
    df = df.assign(winner=[wins[0] if d > 0 else wins[1] if d < 0 else wins[2] for d in df["diff"]])
    order = df.sort_values(["diff", "qid"], ascending=[False, True])["qid"].tolist()
    bars = (
        alt.Chart(df)
        .mark_bar()
        .encode(
            x=alt.X(
                "qid:N",
                sort=order,
                title="question (sorted by the difference)",
                axis=alt.Axis(labels=not many, ticks=not many, labelAngle=-60 if len(order) > 20 else 0),
            ),
            y=alt.Y("diff:Q", title=label, axis=alt.Axis(format="+.2f")),
            color=alt.Color(
                "winner:N",
                title=None,
                scale=alt.Scale(domain=wins, range=[*win_colors, "#adb5bd"]),
                legend=alt.Legend(orient="top"),
            ),
            tooltip=[
                alt.Tooltip("qid:N", title="question"),
                alt.Tooltip("question:N", title="text"),
                alt.Tooltip("diff:Q", format="+.4f", title="difference"),
            ],
        )
    )
    ties = (
        alt.Chart(df[df["diff"] == 0])
        .mark_point(shape="diamond", filled=True, size=70, color="#868e96", opacity=1)
        .encode(
            x=alt.X("qid:N", sort=order),
            y=alt.Y("diff:Q"),
            tooltip=[
                alt.Tooltip("qid:N", title="question"),
                alt.Tooltip("question:N", title="text"),
                alt.Tooltip("diff:Q", format="+.4f", title="difference"),
            ],
        )
    )
    zero = alt.Chart(pd.DataFrame({"y": [0.0]})).mark_rule(color="#495057").encode(y="y:Q")
    return (bars + ties + zero).properties(height=320)


# ------------------------------------------------------------------------------------------- tuning page

TIED = "can't be told apart (uncorrected)"  # each setting's own bootstrap against the best, no correction
NOT_TIED = "worse than the best (uncorrected)"
BEST, CURRENT = "best", "current (sidebar)"
_STAR = "M0,-1L0.29,-0.4L0.95,-0.31L0.48,0.15L0.59,0.81L0,0.5L-0.59,0.81L-0.48,0.15L-0.95,-0.31L-0.29,-0.4Z"
_MARK_COLORS = {BEST: "#ffffff", CURRENT: "#e03131"}


def _landscape_tooltip(names: list[str], label: str) -> list:
    """Tooltip of one setting of a tuning landscape: its parameters, mean, interval against the best, p-values."""
    return [
        *[alt.Tooltip(f"{n}:Q", title=n) for n in names],
        alt.Tooltip("mean:Q", format=".4f", title=label),
        alt.Tooltip("status:N", title=" "),
        alt.Tooltip("low:Q", format="+.4f", title="95% low (setting - best)"),
        alt.Tooltip("high:Q", format="+.4f", title="95% high (setting - best)"),
        alt.Tooltip("p:Q", format=".4f", title="permutation p vs best"),
        alt.Tooltip("p_holm:Q", format=".4f", title="Holm-adjusted p"),
    ]


def tuning_heatmap(
    cells: pd.DataFrame,
    marks: pd.DataFrame,
    label: str,
    select: str | None = None,
    domain: tuple[float, float] | None = None,
) -> alt.LayerChart:
    """The metric over the k1 x b grid: b across, k1 up; settings tied with the best at full colour, the others faded.

    `cells` columns: k1, b, k1_lo, k1_hi, b_lo, b_hi (the cell's edges), mean, status (TIED / NOT_TIED), low, high
    (the bootstrap interval of setting - best), p, p_holm. `marks` columns: k1, b, what (BEST / CURRENT), mean:
    the best cell gets a star, the current setting (which may lie between cells) a diamond. With `select`, a click
    on a cell selects its (k1, b) in a point selection of that name. With `domain`, the colours span it rather
    than the grid's own range.
    """
    xs = alt.Scale(domain=[float(cells["b_lo"].min()), float(cells["b_hi"].max())], nice=False, zero=False)
    ys = alt.Scale(domain=[float(cells["k1_lo"].min()), float(cells["k1_hi"].max())], nice=False, zero=False)
    b_ticks = sorted(cells["b"].unique().tolist())
    k1_ticks = sorted(cells["k1"].unique().tolist())
    x = alt.X(
        "b_lo:Q", title="b (length normalisation)", scale=xs, axis=alt.Axis(values=b_ticks, format=".1f", grid=False)
    )
    y = alt.Y(
        "k1_lo:Q",
        title="k1 (term-frequency saturation)",
        scale=ys,
        axis=alt.Axis(values=k1_ticks, format=".1f", grid=False),
    )
    tooltip = _landscape_tooltip(["k1", "b"], label)
    rect = (
        alt.Chart(cells)
        .mark_rect(stroke="white", strokeWidth=0.6)
        .encode(
            x=x,
            x2="b_hi:Q",
            y=y,
            y2="k1_hi:Q",
            tooltip=tooltip,
            color=alt.Color(
                "mean:Q",
                title=label,
                scale=alt.Scale(scheme="viridis", **({"domain": list(domain)} if domain else {})),
                legend=alt.Legend(orient="right", format=".4f", gradientLength=260, tickCount=5),
            ),
            opacity=alt.Opacity(
                "status:N",
                title=None,
                scale=alt.Scale(domain=[TIED, NOT_TIED], range=[1.0, 0.22]),
                legend=alt.Legend(
                    orient="top", direction="vertical", symbolType="square", symbolSize=180, labelLimit=320
                ),
            ),
        )
    )
    crosses = (
        alt.Chart(cells[cells["status"] == NOT_TIED])
        .mark_text(text="×", fontSize=13, color="#495057")
        .encode(x=alt.X("b:Q", scale=xs), y=alt.Y("k1:Q", scale=ys))
    )
    points = (
        alt.Chart(marks)
        .mark_point(filled=True, size=340, stroke="black", strokeWidth=1.4, opacity=1)
        .encode(
            x=alt.X("b:Q", scale=xs),
            y=alt.Y("k1:Q", scale=ys),
            shape=alt.Shape("what:N", scale=alt.Scale(domain=[BEST, CURRENT], range=[_STAR, "diamond"]), legend=None),
            color=alt.Color(
                "what:N",
                title=None,
                scale=alt.Scale(domain=list(_MARK_COLORS), range=list(_MARK_COLORS.values())),
                legend=alt.Legend(
                    orient="top", direction="vertical", symbolStrokeColor="black", symbolStrokeWidth=1, symbolSize=180
                ),
            ),
            tooltip=[
                alt.Tooltip("what:N", title=" "),
                alt.Tooltip("k1:Q"),
                alt.Tooltip("b:Q"),
                alt.Tooltip("mean:Q", format=".4f", title=label),
            ],
        )
    )
    layers = [rect, crosses, points]
    if select:  # an invisible cell on top of everything catches the click, on the colour or on a mark
        layers.append(
            alt.Chart(cells)
            .mark_rect(opacity=0.001, color="white", cursor="pointer")
            .encode(x=x, x2="b_hi:Q", y=y, y2="k1_hi:Q", tooltip=tooltip)
            .add_params(alt.selection_point(name=select, fields=["k1", "b"], on="click", clear="dblclick"))
        )
    return alt.layer(*layers).resolve_scale(color="independent", shape="independent").properties(height=460)


def tuning_curve(
    points: pd.DataFrame,
    bands: pd.DataFrame,
    marks: pd.DataFrame,
    param: str,
    title: str,
    label: str,
    select: str | None = None,
    domain: tuple[float, float] | None = None,
) -> alt.LayerChart:
    """The metric over one parameter: the line, its settings coloured by tie status, the tie region shaded,
    the current setting as a dashed rule and the best as a star.

    `points` columns: <param>, mean, status, low, high, p, p_holm. `bands` columns: start, end (contiguous runs of
    tied settings). `marks` columns: <param>, mean, what (BEST / CURRENT). With `select`, a click selects the
    nearest setting in a point selection of that name (field <param>). With `domain`, the y axis spans it.
    """
    lo, hi = float(points[param].min()), float(points[param].max())
    pad = 0.01 * (hi - lo or 1.0)
    xs = alt.Scale(domain=[lo - pad, hi + pad], nice=False, zero=False)
    ys = alt.Scale(domain=list(domain), nice=False) if domain else alt.Scale(zero=False, nice=True)
    x = alt.X(f"{param}:Q", title=title, scale=xs)
    tooltip = _landscape_tooltip([param], label)
    band = alt.Chart(bands).mark_rect(opacity=0.14, color="#2f9e44").encode(x=alt.X("start:Q", scale=xs), x2="end:Q")
    line = (
        alt.Chart(points)
        .mark_line(color="#868e96", strokeWidth=1.5)
        .encode(x=x, y=alt.Y("mean:Q", title=label, scale=ys))
    )
    dots = (
        alt.Chart(points)
        .mark_circle(size=42 if len(points) <= 40 else 22, opacity=1)
        .encode(
            x=x,
            y=alt.Y("mean:Q", scale=ys),
            tooltip=tooltip,
            color=alt.Color(
                "status:N",
                title=None,
                scale=alt.Scale(domain=[TIED, NOT_TIED], range=["#2f9e44", "#adb5bd"]),
                legend=alt.Legend(orient="top", direction="vertical", labelLimit=320),
            ),
        )
    )
    current = marks[marks["what"] == CURRENT]
    rule = (
        alt.Chart(current)
        .mark_rule(strokeDash=[6, 4], strokeWidth=2)
        .encode(
            x=alt.X(f"{param}:Q", scale=xs),
            color=alt.Color(
                "what:N",
                title=None,
                scale=alt.Scale(domain=[CURRENT], range=[_MARK_COLORS[CURRENT]]),
                legend=alt.Legend(orient="top", symbolType="stroke", symbolStrokeWidth=2.5, symbolDash=[6, 4]),
            ),
            tooltip=[
                alt.Tooltip("what:N", title=" "),
                alt.Tooltip(f"{param}:Q"),
                alt.Tooltip("mean:Q", format=".4f", title=label),
            ],
        )
    )
    star = (
        alt.Chart(marks[marks["what"] == BEST])
        .mark_point(filled=True, size=420, stroke="black", strokeWidth=1.2, opacity=1)
        .encode(
            x=alt.X(f"{param}:Q", scale=xs),
            y=alt.Y("mean:Q", scale=ys),
            shape=alt.Shape("what:N", scale=alt.Scale(domain=[BEST], range=[_STAR]), legend=None),
            color=alt.Color(
                "what:N",
                title=None,
                scale=alt.Scale(domain=[BEST], range=[_MARK_COLORS[BEST]]),
                legend=alt.Legend(orient="top", symbolStrokeColor="black", symbolStrokeWidth=1, symbolSize=180),
            ),
            tooltip=[
                alt.Tooltip("what:N", title=" "),
                alt.Tooltip(f"{param}:Q"),
                alt.Tooltip("mean:Q", format=".4f", title=label),
            ],
        )
    )
    layers = [band, line, dots, rule, star]
    if select:  # the nearest setting to a click, wherever on the plot
        layers.append(
            alt.Chart(points)
            .mark_circle(size=60, opacity=0.001, cursor="pointer")
            .encode(x=x, y=alt.Y("mean:Q", scale=ys), tooltip=tooltip)
            .add_params(alt.selection_point(name=select, fields=[param], on="click", nearest=True, clear="dblclick"))
        )
    return alt.layer(*layers).resolve_scale(color="independent", shape="independent").properties(height=380)


def oracle_wins(df: pd.DataFrame) -> alt.Chart:
    """Questions on which each system is the best, split into alone and shared with another. `df`: system, how, questions."""
    order = list(dict.fromkeys(df["system"]))
    kinds = ["alone", "tied with another system"]
    return (
        alt.Chart(df)
        .mark_bar()
        .encode(
            y=alt.Y("system:N", sort=order, title=None, axis=alt.Axis(labelLimit=160, labelFontSize=12)),
            x=alt.X("questions:Q", title="questions on which it is the best", axis=alt.Axis(tickMinStep=1)),
            color=alt.Color(
                "how:N",
                title=None,
                scale=alt.Scale(domain=kinds, range=["#1c7ed6", "#a5d8ff"]),
                legend=alt.Legend(orient="top", direction="vertical", labelLimit=240),
            ),  # inside a half-width chart
            order=alt.Order("order:Q"),
            tooltip=[alt.Tooltip("system:N"), alt.Tooltip("how:N", title=" "), alt.Tooltip("questions:Q")],
        )
        .properties(height=44 * len(order) + 90)
    )


NOTE_BREAK = "\n"  # between a fusion row's label and its note: the axis writes them on two lines


def fusion_contributions(
    df: pd.DataFrame, title: str, members: tuple[str, ...], systems: Sequence[str] | None = None
) -> alt.Chart:
    """Each document's fused score as stacked bars, one part per fused member, the row's label and, under it, why the
    document is there (its note): in the label column, never after the bar, where a long note ran past the chart's
    right edge and was cut ("the sum put it her" at 1024 px).

    Each member is in its colour of `system_colors(systems)` (`systems`: every system of the app, default the members).

    `df` columns: row (the y label, in display order), retriever (a member's name), contribution, total, note (the
    text under the label), doc_id, grade (as text: a number, or "unjudged"), fused_rank, rank (the document's rank in that member).
    """
    df = df.assign(label=[f"{r}{NOTE_BREAK}{n}" if n else r for r, n in zip(df["row"], df["note"])])
    rows = list(dict.fromkeys(df["label"]))
    y = alt.Y(
        "label:N",
        sort=rows,
        title=None,
        axis=alt.Axis(
            labelLimit=300,
            labelFontSize=12,
            labelExpr=f"split(datum.label, '{NOTE_BREAK.encode('unicode_escape').decode()}')",
        ),
    )
    tooltip = [
        alt.Tooltip("doc_id:N", title="document"),
        alt.Tooltip("grade:N"),
        alt.Tooltip("retriever:N", title="member"),
        alt.Tooltip("contribution:Q", format=".4f"),
        alt.Tooltip("total:Q", format=".4f"),
        alt.Tooltip("rank:N", title="rank in that member"),
        alt.Tooltip("fused_rank:N", title="fused rank"),
    ]
    order = {m: i for i, m in enumerate(members)}
    bars = (
        alt.Chart(df.assign(member_order=df["retriever"].map(order)))
        .mark_bar()
        .encode(
            y=y,
            x=alt.X("sum(contribution):Q", title=title, stack="zero"),
            color=alt.Color(
                "retriever:N",
                title=None,
                scale=system_scale([*(systems or ()), *members], members),
                legend=alt.Legend(orient="top"),
            ),
            order=alt.Order("member_order:Q"),
            tooltip=[*tooltip, alt.Tooltip("note:N", title="why")],
        )
    )
    return bars.properties(height=40 * len(rows) + 50)


HISTOGRAM_BINS = 30  # at most this many bars: one per count while the counts span fewer values


def relevant_histogram(hist: pd.DataFrame) -> alt.Chart:
    """How many questions have how many relevant documents, on a quantitative axis binned in whole steps (at most
    HISTOGRAM_BINS bars): the gaps between counts keep their width (1, 13, 29 ... 155 were evenly spaced as
    categories). `hist`: relevant documents, questions (one row per count that occurs)."""
    lo, hi = (int(hist["relevant documents"].min()), int(hist["relevant documents"].max())) if len(hist) else (0, 0)
    step = max(
        1, math.ceil((hi + 1 - lo) / HISTOGRAM_BINS)
    )  # whole steps, each bar [start, start + step): 1 and 2 never share one
    binning = alt.Bin(step=step, extent=[lo, lo + step * math.ceil((hi + 1 - lo) / step)], nice=False)
    return (
        alt.Chart(hist)
        .mark_bar()
        .encode(
            x=alt.X(
                "relevant documents:Q",
                bin=binning,
                title="relevant documents (grade > 0)",  # the heading says per question; the longer title was cut at 1024 px
                axis=alt.Axis(labelAngle=0, format="d"),
            ),
            y=alt.Y("sum(questions):Q", title="questions", axis=alt.Axis(tickMinStep=1)),
            tooltip=[
                alt.Tooltip("relevant documents:Q", bin=binning, title="relevant documents"),
                alt.Tooltip("sum(questions):Q", title="questions"),
            ],
        )
        .properties(height=260)
    )


def failure_classes(counts: pd.DataFrame, systems: list[str], classes: list[str], colors: dict[str, str]) -> alt.Chart:
    """Failing questions per system, one bar per class side by side. `counts`: system, class, questions."""
    return (
        alt.Chart(counts)
        .mark_bar()
        .encode(
            x=alt.X("system:N", sort=systems, title=None, axis=alt.Axis(labelAngle=0)),
            xOffset=alt.XOffset("class:N", sort=classes),
            y=alt.Y("questions:Q", title="failing questions", axis=alt.Axis(tickMinStep=1)),
            color=alt.Color(
                "class:N",
                sort=classes,
                legend=alt.Legend(orient="top", title=None, labelLimit=260, columns=2),  # whole at 1024 px
                scale=alt.Scale(domain=list(colors), range=list(colors.values())),
            ),
            tooltip=["system:N", "class:N", "questions:Q"],
        )
        .properties(height=230)
    )


SHORT_ID = 8  # a document id longer than this is written tilted under its bar


def bm25_terms(per_term: pd.DataFrame, summary: pd.DataFrame, docs: list[str]) -> alt.LayerChart:
    """Each document's BM25 score as stacked bars, one part per question term, its total written above.

    `per_term` columns: document, term, idf, tf, length norm K, saturation, contribution (positive only);
    `summary`: document, BM25 score; `docs`: the documents in display order.
    """
    tilt = max(map(len, docs), default=0) > SHORT_ID  # long ids tilted and whole, not cut to one same prefix
    x = alt.X(
        "document:N",
        sort=docs,
        title=None,
        scale=alt.Scale(domain=docs, paddingInner=0.35),
        axis=alt.Axis(labelAngle=-40 if tilt else 0, labelLimit=240),
    )
    bars = (
        alt.Chart(per_term)
        .mark_bar()
        .encode(
            x=x,
            y=alt.Y("sum(contribution):Q", title="BM25 score = sum of the term contributions"),
            color=alt.Color(
                "term:N", legend=alt.Legend(orient="top", title="question term", direction="vertical", labelLimit=120)
            ),  # a half-width chart at 1024 px
            order=alt.Order("term:N"),
            tooltip=[
                "document:N",
                "term:N",
                alt.Tooltip("idf:Q", format=".4f"),
                "tf:Q",
                alt.Tooltip("length norm K:Q", format=".4f"),
                alt.Tooltip("saturation:Q", format=".4f"),
                alt.Tooltip("contribution:Q", format=".4f"),
            ],
        )
    )
    totals = (
        alt.Chart(summary)
        .mark_text(dy=-8, fontSize=12)
        .encode(x=x, y=alt.Y("BM25 score:Q"), text=alt.Text("BM25 score:Q", format=".3f"))
    )
    return (bars + totals).properties(height=300)
