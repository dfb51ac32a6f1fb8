"""The Overview through app.py: its charts are sent as one Vega-Lite structure whose rows follow the sliders."""

from __future__ import annotations

import io

import pyarrow as pa
import pytest

from apptest import large_corpus, move, open_app, shown, the_app_s_thread
from retrieval.evaluation.metrics import meaning_warnings

pytestmark = pytest.mark.app


def _charts(at):
    """(spec JSON, {dataset name: rows}) of each chart on the page, as the browser receives them."""
    out = []
    for chart in at.get("vega_lite_chart"):
        tables = {d.name: pa.ipc.open_stream(io.BytesIO(d.data.data)).read_pandas() for d in chart.proto.datasets}
        out.append((chart.proto.spec, tables))
    return out


def test_a_slider_move_keeps_each_charts_spec_and_sends_the_new_means_as_its_rows(invented):
    from retrieval.core.params import Params
    from retrieval.engine.engine import Engine
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


def test_a_slow_lsa_fit_shows_what_needs_none_first_then_every_system(monkeypatch):
    """A large corpus (the prefix path forced on the invented corpus: PREFIX_ABOVE = 0, a fresh engine): the Overview
    starts LSA's block fit in the engine's thread, draws the systems that need no fit, then every system once the
    fit is in; the SVD is fitted once (the page waits for the background fit instead of fitting again), and the
    note that it is fitting is gone."""
    from retrieval.engine import engine as engine_mod
    from retrieval.retrievers import lsa

    fits, started = [], []
    real, background = lsa.fit, engine_mod.Engine.fit_in_background

    def counted_fit(*a, **k):  # the app's fits (not the background warm-up's, on its own engine)
        if the_app_s_thread():
            fits.append((a[1], k.get("block", False)))
        return real(*a, **k)

    def large(at):  # after the landing page: the next page finds no engine, and the prefix path on
        large_corpus(monkeypatch)
        monkeypatch.setattr(lsa, "fit", counted_fit)
        monkeypatch.setattr(
            engine_mod.Engine, "fit_in_background", lambda self, d: started.append(d) or background(self, d)
        )

    at = open_app("pages/overview.py", before=large)
    table = at.dataframe[0].value
    assert {"BM25", "LSA", "weighted", "RRF"} <= set(table.index)
    assert started == [6] and fits == [(8, True)]
    assert not any("Fitting LSA" in i.value for i in at.info)
    assert "LSA d = 6" in at.caption[0].value


def test_the_first_look_shows_the_systems_that_need_no_fit_under_a_note_naming_the_others():
    from streamlit.testing.v1 import AppTest

    def page():
        from retrieval.core.params import Params
        from retrieval.corpus import dataset
        from retrieval.engine.engine import Engine
        from retrieval.evaluation.experiment import score
        from retrieval.evaluation.metrics import parse_list
        from ui import overview

        ds = dataset.load("invented")
        ranks = Engine(ds).first_rankings(Params(members=("BM25",)))
        ranks.pop("LSA")
        ev = score(ds, ranks, parse_list(["hit@5", "ndcg@5"]))
        overview.first_look(ds, ev, ["hit@5", "ndcg@5"], ("LSA", "weighted", "RRF"), 6)

    at = AppTest.from_function(page, default_timeout=60).run()
    assert not at.exception
    note = at.info[0].value
    assert "Fitting LSA's SVD at d = 6 on 28 documents" in note and "LSA, weighted, RRF follow here" in note
    assert list(at.dataframe[0].value.index) == ["BM25"] and len(at.get("vega_lite_chart")) == 1


def test_on_a_large_corpus_the_next_d_step_is_read_from_what_was_computed_ahead(monkeypatch):
    """Where a d step is slow (PREFETCH_ABOVE lowered, the prefix path forced), the Overview's rankings at d = 6 set
    d = 7 and 5, then 8, 4 and 3 (`Engine.reach`, 3 on this small corpus) computing in the background; the slider's
    step to 7, and then a drag to 4, run no LSA pass, and show their d."""
    from retrieval.engine import ahead
    from retrieval.engine import engine as engine_mod
    from retrieval.retrievers import lsa

    threads, passes = [], []
    real_prefetch, real_run = engine_mod.Engine.prefetch, lsa.run

    def large(at):
        large_corpus(monkeypatch)
        monkeypatch.setattr(ahead, "PREFETCH_ABOVE", 0)
        monkeypatch.setattr(
            engine_mod.Engine,
            "prefetch",
            lambda self, p, sources=(): threads.append(real_prefetch(self, p, sources)) or threads[-1],
        )
        monkeypatch.setattr(lsa, "run", counted_run)

    def counted_run(ds, model, *a, **k):  # the page's LSA passes (not the dense retriever's, nor the warm-up's)
        if model.components is not None and the_app_s_thread():
            passes.append(model.dims)
        return real_run(ds, model, *a, **k)

    at = open_app("pages/overview.py", before=large)
    assert threads and threads[0] is not None
    for t in threads:
        if t is not None:
            t.join(60)
    assert sorted(passes) == [3, 4, 5, 6, 7, 8]  # the page's, then the five computed ahead (9 is another block)
    move(at, "dims", 7)
    assert sorted(passes) == [3, 4, 5, 6, 7, 8]  # the step read d = 7
    assert "LSA d = 7" in at.caption[0].value
    move(at, "dims", 4)  # a drag three steps long
    assert 4 not in passes[6:] and "LSA d = 4" in at.caption[0].value
    for t in threads:  # d = 4's neighbours 2 and 1, computed ahead meanwhile
        if t is not None:
            t.join(60)
    assert sorted(passes) == [1, 2, 3, 4, 5, 6, 7, 8]


def test_bpref_without_a_document_judged_not_relevant_is_said_beside_it(invented):
    """The issue: on judgements of relevant documents only, bpref rewards ranking anything (Cranfield: LSA 0.9991
    against BM25's 0.9382, nDCG@10 0.13): the sidebar and the Overview say so wherever bpref is the metric."""
    note = meaning_warnings(invented.qrels, invented.n_queries, ["bpref"])[0]
    at = open_app("pages/overview.py")
    assert not any(note == shown(w.value) for w in (*at.warning, *at.sidebar.warning))  # nDCG: nothing to say
    move(at, "metric", "bpref (judged documents only)")
    assert not at.exception
    assert [shown(w.value) for w in at.sidebar.warning] == [note]  # beside the metric's selector, on every page
    assert note in [shown(w.value) for w in at.main.warning]  # and above the Overview's table of bpref
    assert "bpref" in at.dataframe[0].value.columns
