"""ui/charts.py: one colour per system on every chart that colours by system, the curves' y axis fitted to the data."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import pytest

from ui import charts

BUILTIN = ["BM25", "LSA", "dense", "weighted", "RRF"]


def color_scales(spec) -> list[dict]:
    """Every colour scale with a domain and a range in a Vega-Lite spec (a dict), wherever it is nested."""
    found = []
    if isinstance(spec, dict):
        color = spec.get("encoding", {}).get("color", {}) if isinstance(spec.get("encoding"), dict) else {}
        scale = color.get("scale", {}) if isinstance(color, dict) else {}
        if "domain" in scale and "range" in scale:
            found.append(scale)
        for v in spec.values():
            found += color_scales(v)
    elif isinstance(spec, list):
        for v in spec:
            found += color_scales(v)
    return found


def colors_of(chart) -> dict[str, str]:
    """name -> colour over every colour scale of a chart."""
    out = {}
    for scale in color_scales(chart.to_dict()):
        out.update(zip(scale["domain"], scale["range"]))
    return out


def test_the_builtin_systems_keep_their_colours_whatever_comes_with_them():
    alone = charts.system_colors(BUILTIN)
    with_runs = charts.system_colors(["run-a", "BM25", "run-b", "LSA", "RRF"])
    assert {s: with_runs[s] for s in ("BM25", "LSA", "RRF")} == {s: alone[s] for s in ("BM25", "LSA", "RRF")}
    assert charts.system_colors(["RRF", "BM25"]) == {"RRF": alone["RRF"], "BM25": alone["BM25"]}


def test_up_to_eight_systems_get_distinct_colours_and_runs_follow_the_palette_in_order():
    systems = [*BUILTIN, "run1", "run2", "run3"]
    colors = charts.system_colors(systems)
    assert list(colors) == systems and len(set(colors.values())) == 8
    assert [colors[r] for r in ("run1", "run2", "run3")] == list(charts.RUN_COLORS[:3])
    assert charts.system_colors(systems) == colors  # stable from call to call
    runs_only = charts.system_colors([f"r{i}" for i in range(8)])
    assert len(set(runs_only.values())) == 8 and not set(runs_only.values()) & set(charts.SYSTEM_COLORS.values())


def test_a_system_has_the_same_colour_in_the_overview_bars_the_curves_compare_and_the_fusion_chart(invented):
    from retrieval.core.params import Params
    from retrieval.engine.engine import Engine
    from ui import overview

    ev = Engine(invented).evaluate(Params(), ["hit@3", "mrr", "mrr@1", "mrr@2"])
    bars = colors_of(charts.bars_with_intervals(overview.bars(ev, ["hit@3", "mrr"])))
    curve = colors_of(charts.curves(overview.curve(ev, ["mrr@1", "mrr@2"]), "MRR@k", 1))
    assert set(bars) == set(ev.systems) and bars == curve == {
        s: charts.system_colors(ev.systems)[s] for s in ev.systems
    }
    diff = pd.DataFrame({"qid": ["q1", "q2", "q3"], "question": ["a", "b", "c"], "diff": [0.5, -0.5, 0.0]})
    compare = colors_of(charts.difference_bars(diff, "MRR", "RRF", "LSA", ev.systems))
    assert compare["RRF better"] == bars["RRF"] and compare["LSA better"] == bars["LSA"]
    parts = pd.DataFrame(
        {
            "row": ["d1", "d1"],
            "retriever": ["LSA", "BM25"],
            "contribution": [0.2, 0.3],
            "total": [0.5, 0.5],
            "note": ["", ""],
            "doc_id": ["d1", "d1"],
            "grade": [1, 1],
            "fused_rank": ["1", "1"],
            "rank": ["1", "2"],
        }
    )
    fusion = colors_of(charts.fusion_contributions(parts, "score", ("LSA", "BM25"), ev.systems))
    assert fusion == {"LSA": bars["LSA"], "BM25": bars["BM25"]}


def test_the_curves_y_axis_is_fitted_to_the_values_within_zero_and_one():
    df = pd.DataFrame({"k": [1, 2, 1, 2], "system": ["BM25", "BM25", "LSA", "LSA"], "value": [0.61, 0.70, 0.655, 0.69]})
    y = charts.curves(df, "MRR@k", 1).to_dict()["layer"][0]["encoding"]["y"]["scale"]
    assert y["domain"] == [0.59, 0.72] and y["zero"] is False
    edges = pd.DataFrame({"k": [1, 2], "system": ["BM25", "BM25"], "value": [0.0, 1.0]})
    assert charts.curves(edges, "hit@k", 1).to_dict()["layer"][0]["encoding"]["y"]["scale"]["domain"] == [0.0, 1.0]


def _heatmap_cells(systems, misses):
    """Two questions x the systems; `misses`: system -> (label, what a miss means) of q2's cell (q1 is found at 1)."""
    rows = []
    for q in ("q1", "q2"):
        for s in systems:
            rank = 0 if q == "q2" and s in misses else 3
            label, missing = misses.get(s, ("3", charts.NOT_FOUND)) if rank == 0 else ("3", charts.NOT_FOUND)
            rows.append(
                {"qid": q, "question": q, "row": q, "system": s, "rank": rank, "label": label, "missing": missing}
            )
    return pd.DataFrame(rows)


def test_the_heatmap_names_every_system_and_each_kind_of_miss():
    systems = ["BM25", "LSA", "dense", "weighted", "RRF", "elastic_bm25_run"]
    misses = {"BM25": ("—", charts.NOT_FOUND), "RRF": ("> 10", "beyond the fusion's top 10")}
    spec = charts.rank_heatmap(_heatmap_cells(systems, misses), 20, 5, select="pick").to_dict()
    x = spec["layer"][0]["encoding"]["x"]
    assert x["sort"] == systems and x["axis"]["labelOverlap"] is False  # no header dropped to make room
    assert x["axis"]["labelAngle"] == -40 and x["axis"]["labelLimit"] == 130  # six systems: tilted, cut at 130 px
    gaps = spec["layer"][1]["encoding"]["color"]
    assert gaps["scale"] == {
        "domain": [charts.NOT_FOUND, "beyond the fusion's top 10"],
        "range": list(charts.MISSING_COLORS),
    }
    assert (
        gaps["legend"]["labelLimit"] >= 300 and gaps["legend"]["orient"] == "none"
    )  # placed whole, never cut by the width
    assert spec["padding"]["top"] == charts.LEGEND_ROOM and spec["autosize"]["type"] == "fit-x"
    assert spec["height"] == 26 * 2
    few = charts.rank_heatmap(_heatmap_cells(["BM25", "LSA"], {}), 20, 5).to_dict()
    assert few["layer"][0]["encoding"]["x"]["axis"]["labelAngle"] == 0  # two short names stay level
    assert few["layer"][1]["encoding"]["color"]["scale"]["domain"] == [charts.NOT_FOUND]
    only_cut = charts.rank_heatmap(
        _heatmap_cells(["RRF"], {"RRF": ("> 10", "beyond the fusion's top 10")}), 20, 5
    ).to_dict()
    assert only_cut["layer"][1]["encoding"]["color"]["scale"] == {
        "domain": ["beyond the fusion's top 10"],
        "range": [charts.MISSING_COLORS[1]],
    }


# ------------------------------------------------------------------ the Overview's specs for st.vega_lite_chart


def _resolved(spec: dict) -> dict:
    """A spec with every named dataset put in place as inline rows (records), the datasets table dropped: what
    Vega-Lite draws, whatever the data are named."""
    import json

    spec = json.loads(json.dumps(spec, default=lambda df: df.to_dict("records")))
    tables = spec.pop("datasets", {})

    def put(node):
        if isinstance(node, dict):
            data = node.get("data")
            if isinstance(data, dict) and set(data) == {"name"}:
                node["data"] = {"values": tables[data["name"]]}
            for v in node.values():
                put(v)
        elif isinstance(node, list):
            for v in node:
                put(v)

    put(spec)
    return spec


def _altair_reference(chart) -> dict:
    """What st.altair_chart would send for `chart`: its validated JSON without Altair's theme (Streamlit converts
    with the theme "none"), its data inline."""
    import altair as alt

    with alt.theme.enable("none"):
        return _resolved(chart.to_dict(validate=True))


def _validates(spec: dict) -> None:
    """The spec, its rows as the JSON Vega-Lite reads, is valid against the Vega-Lite schema altair bundles."""
    import json

    import altair as alt
    import jsonschema

    as_json = json.loads(json.dumps(spec, default=lambda df: df.to_dict("records")))
    jsonschema.validate(as_json, alt.vegalite.v6.schema.load_schema())


def _frames(invented, params):
    from retrieval.engine.engine import Engine
    from ui import overview

    ks = [f"ndcg@{i}" for i in range(1, 21)]
    ev = Engine(invented).evaluate(params, ["hit@5", "mrr", *ks])
    return overview.bars(ev, ["hit@5", "mrr"]), overview.curve(ev, ks)


def test_the_overview_specs_validate_and_draw_what_the_altair_charts_draw(invented):
    from retrieval.core.params import Params

    bars, curve = _frames(invented, Params())
    for spec, chart in [
        (charts.bars_spec(bars), charts.bars_with_intervals(bars)),
        (charts.curves_spec(curve, "nDCG@k", 5), charts.curves(curve, "nDCG@k", 5)),
    ]:
        _validates(spec)
        assert spec["datasets"][charts.DATA] is not None  # the rows travel as the named dataset
        assert _resolved(spec) == _altair_reference(chart)


def test_a_cached_structure_never_carries_another_datasets_or_settings_rows_or_scales(invented, monkeypatch):
    """Specs asked in turn for two parameter settings, for runs named otherwise (other colours) and for another
    k each equal the Altair chart of their own data: the cache serves a structure only to the same structure."""
    from retrieval.core.params import Params

    base_bars, base_curve = _frames(invented, Params())
    other_bars, other_curve = _frames(invented, Params(k1=2.0, b=0.3, alpha=0.9))
    renamed = base_bars.assign(
        system=base_bars["system"].map({"BM25": "run*1", "LSA": "LSA", "weighted": "w", "RRF": "RRF"})
    )
    renamed_curve = base_curve.assign(
        system=base_curve["system"].map({"BM25": "run*1", "LSA": "LSA", "weighted": "w", "RRF": "RRF"})
    )
    charts.spec_structure.clear()
    built = []
    for name in ("_bars", "_curves"):
        real = getattr(charts, name)
        monkeypatch.setattr(charts, name, lambda *a, real=real: built.append(a[0]) or real(*a))
    for bars, curve, k in [
        (base_bars, base_curve, 5),
        (other_bars, other_curve, 5),
        (renamed, renamed_curve, 5),
        (base_bars, base_curve, 3),
        (other_bars, other_curve, 5),
    ]:
        assert _resolved(charts.bars_spec(bars)) == _altair_reference(charts.bars_with_intervals(bars))
        assert _resolved(charts.curves_spec(curve, "nDCG@k", k)) == _altair_reference(charts.curves(curve, "nDCG@k", k))
    assert not base_bars["mean"].equals(other_bars["mean"])  # the two settings do differ
    structures = [s for s in built if isinstance(s, alt.NamedData)]  # the specs' (the references read their rows)
    assert len(structures) <= 10 - 3  # same systems, new rows: a structure was reused at least three times of ten


def test_a_spec_handed_out_is_a_copy_changing_it_changes_no_later_spec(invented):
    from retrieval.core.params import Params

    bars, _ = _frames(invented, Params())
    first = charts.bars_spec(bars)
    first["layer"][0]["encoding"]["color"]["scale"]["range"][0] = "#000000"
    first["datasets"].clear()
    assert _resolved(charts.bars_spec(bars)) == _altair_reference(charts.bars_with_intervals(bars))


def _x_axis(spec: dict) -> dict:
    """The x axis of a layered spec that names one (the bootstrap histogram's)."""
    return next(layer["encoding"]["x"]["axis"] for layer in spec["layer"] if "axis" in layer["encoding"].get("x", {}))


@pytest.mark.parametrize(
    "low, high", [(-0.0143, 0.0151), (-0.004, 0.006), (0.179, 0.246), (-0.081, 0.107), (-0.6, 0.9)]
)
def test_the_bootstrap_histograms_axis_never_repeats_a_label(low, high):
    """Cranfield's weighted - RRF spans about -0.014 to +0.015: ticks every 0.005 written with two decimals read
    "−0.01 −0.01 +0.00 +0.01 +0.01". Each tick now has the decimals its step needs."""
    edges = np.linspace(low, high, 51)
    bins = pd.DataFrame({"start": edges[:-1], "end": edges[1:], "count": np.arange(50) % 7 + 1})
    spec = charts.histogram_with_interval(
        bins, low + 0.1 * (high - low), high - 0.1 * (high - low), (low + high) / 2
    ).to_dict()
    axis = _x_axis(spec)
    labels = [format(v, axis["format"]) for v in axis["values"]]  # d3-format's "+.3f" writes what Python's does
    assert len(labels) >= 5 and len(set(labels)) == len(labels), labels
    domain = next(
        layer["encoding"]["x"]["scale"]["domain"] for layer in spec["layer"] if "axis" in layer["encoding"].get("x", {})
    )
    assert domain[0] <= min(axis["values"]) and max(axis["values"]) <= domain[1]
    assert axis["format"] == "+.2f" or (high - low) < 0.1  # two decimals as before wherever they are enough


def test_signed_ticks_take_a_round_step_and_the_decimals_it_needs():
    assert charts.signed_ticks(-0.0143, 0.0151) == ([-0.01, -0.005, 0.0, 0.005, 0.01, 0.015], "+.3f")
    assert charts.signed_ticks(0.15, 0.29) == ([0.16, 0.18, 0.2, 0.22, 0.24, 0.26, 0.28], "+.2f")
    values, fmt = charts.signed_ticks(0.1999, 0.2001)
    assert fmt == "+.5f" and len({format(v, fmt) for v in values}) == len(values) <= 12
