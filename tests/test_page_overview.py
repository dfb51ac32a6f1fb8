"""The Overview through app.py: its charts are sent as one Vega-Lite structure whose rows follow the sliders."""

from __future__ import annotations

import io

import pyarrow as pa

from apptest import move, open_app


def _charts(at):
    """(spec JSON, {dataset name: rows}) of each chart on the page, as the browser receives them."""
    out = []
    for chart in at.get("vega_lite_chart"):
        tables = {d.name: pa.ipc.open_stream(io.BytesIO(d.data.data)).read_pandas() for d in chart.proto.datasets}
        out.append((chart.proto.spec, tables))
    return out


def test_a_slider_move_keeps_each_charts_spec_and_sends_the_new_means_as_its_rows(invented):
    from retrieval.engine import Engine
    from retrieval.params import Params
    from ui import charts

    at = open_app("pages/overview.py")
    before = _charts(at)
    move(at, "k1", 1.5)
    after = _charts(at)
    assert len(before) == len(after) == 2
    for (spec0, rows0), (spec1, rows1) in zip(before, after):
        assert spec1 == spec0  # the same structure: the browser swaps the data, it does not build a new view
        assert charts.DATA in rows1 and not rows1[charts.DATA].equals(rows0[charts.DATA])
    ev = Engine(invented).evaluate(Params(k1=1.5), ["hit@5", "ndcg@5"])
    bars = after[0][1][charts.DATA].set_index(["metric", "system"])["mean"]
    assert bars[("hit@5", "BM25")] == ev.mean("BM25", "hit@5") and bars[("nDCG@5", "LSA")] == ev.mean("LSA", "ndcg@5")
    curve = after[1][1][charts.DATA].set_index(["k", "system"])["value"]
    assert curve[(5, "BM25")] == ev.mean("BM25", "ndcg@5")


def test_the_rule_at_k_moves_with_the_k_slider():
    at = open_app("pages/overview.py")
    move(at, "k", 7)
    (_, _), (spec, tables) = _charts(at)
    rule = [rows for name, rows in tables.items() if name != "table"]
    assert [r["k"].tolist() for r in rule] == [[7]]
