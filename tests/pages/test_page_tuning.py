"""The Tuning page, entered through app.py: the k1 x b heatmap with the best setting and the region tied with it,
the curves of the other parameters, held-out validation, the permutation test with Holm, the per-question oracle
and one question's fusion explained. Expected figures come from retrieval.analyses.tuning, computed here."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

from apptest import open_app
from retrieval import fusion
from retrieval.analyses import tuning
from retrieval.core.params import Params
from retrieval.engine.engine import Engine
from ui import tuning as ui

PAGE = "pages/tuning.py"
METRIC = "ndcg@5"  # the sidebar's default: nDCG (linear gain) at k = 5
WHAT = {
    "k1,b": "k1 × b (BM25)",
    "dims": "LSA dimensions",
    "rrf_k": "RRF constant",
    "alpha": "alpha (weighted fusion)",
    "alpha,dims": "alpha × d",
    "rrf_k,dims": "RRF k × d",
    "k1,dims": "k1 × d",
}
from ui.charts import TIED  # noqa: E402 - the bootstrap's own (uncorrected) tie, as the legend says

pytestmark = pytest.mark.app

TOP = "in the top 10 of"  # the fusion table's column: whose own top 10 holds each fused document


def figures(at) -> dict[str, str]:
    """The page's headline figures, label -> shown value."""
    return {m.label: m.value for m in at.metric}


def chart_frames(at, i: int = 0) -> list[pd.DataFrame]:
    """The data of the page's i-th chart, one frame per dataset."""
    charts = at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart")
    return [convert_arrow_bytes_to_pandas_df(d.data.data) for d in charts[i].proto.datasets]


def table_with(at, column: str) -> pd.DataFrame:
    """The one dataframe on the page that has this column."""
    found = [d.value for d in at.dataframe if column in d.value.columns]
    assert len(found) == 1, [list(d.value.columns) for d in at.dataframe]
    return found[0]


def setting_text(setting: dict) -> str:
    return ", ".join(f"{n} = {v:g}" for n, v in setting.items())


@pytest.fixture(scope="module")
def prep(invented):
    return Engine(invented)


@pytest.fixture(scope="module")
def bm25_sweep(invented, prep):
    """What the library computes for the default view: BM25's nDCG@5 over the 16 x 11 grid."""
    sw = tuning.sweep_bm25(invented, METRIC, engine=prep)
    best = tuning.best_setting(sw.values)
    return sw, best, tuning.tie_region(sw.values, best)


@pytest.fixture(scope="module")
def at():
    return open_app(PAGE)


def test_opens_on_the_k1_b_heatmap(at):
    assert not at.exception
    assert at.title[0].value == "Tuning"
    assert at.segmented_control(key="tune_what").value == WHAT["k1,b"]
    charts = at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart")
    assert len(charts) == 3  # the landscape, the oracle's wins, the fusion's contributions


def test_the_heatmap_marks_the_best_the_ties_and_the_current_setting(at, bm25_sweep):
    sw, best, ties = bm25_sweep
    assert sw.values.shape == (176, 14)
    assert sw.setting(best) == {"k1": 0.0, "b": 0.0}
    assert ties.size == 176  # on 14 questions every setting is within noise of the best
    frames = chart_frames(at)
    cells = max(frames, key=len)
    assert len(cells) == 176 and {"k1", "b", "mean", "status", "p_holm"} <= set(cells.columns)
    assert (cells["status"] == TIED).sum() == ties.size
    by = cells.set_index(["k1", "b"])
    for i in (0, best, 100, 175):
        s = sw.setting(i)
        assert by.loc[(s["k1"], s["b"]), "mean"] == pytest.approx(sw.means[i], abs=1e-12)
    marks = next(f for f in frames if "what" in f.columns and len(f) == 2).set_index("what")
    assert (marks.loc["best", "k1"], marks.loc["best", "b"]) == (0.0, 0.0)
    assert (marks.loc["current (sidebar)", "k1"], marks.loc["current (sidebar)", "b"]) == (1.2, 0.75)
    shown = figures(at)
    assert shown["best of the grid"] == f"{sw.means[best]:.6f}"
    assert shown["tied with the best"] == f"{ties.size} / 176"
    assert any(f"best: {setting_text(sw.setting(best))} · {ties.size} of 176 settings" in c.value for c in at.caption)


def test_everything_ties_on_the_invented_corpus_so_no_move_is_offered(at, bm25_sweep):
    sw, best, ties = bm25_sweep
    assert ties.size == sw.means.size  # computed here: all 176 settings can't be told apart from the best
    assert len(set(np.round(sw.means, 12))) > 1  # ... though their means differ: the same within noise, not exactly
    text = " ".join(m.value for m in at.markdown)
    assert (
        "**Every setting scores the same here, within noise**: all 176 settings can't be told apart from the best (k1 = 0, b = 0)"
        in text
    )
    assert not [b for b in at.button if b.key == "tune_to_best"]
    assert any(
        "No move to the best is offered: every setting scores the same here (176 of 176" in c.value for c in at.caption
    )


def test_the_current_setting_is_scored_as_the_library_scores_it(at, invented, prep):
    current = tuning.current_values(invented, "k1,b", METRIC, Params(), prep)
    assert figures(at)["current (sidebar)"] == f"{current.mean():.6f}"
    assert any("Current: k1 = 1.2, b = 0.75 (between grid points)" in c.value for c in at.caption)


def test_in_sample_beside_cross_validated(at, bm25_sweep):
    sw = bm25_sweep[0]
    cv = tuning.cross_validate(sw.values, 5, 0)
    shown = figures(at)
    assert at.slider(key="tune_folds").value == 5
    assert shown["tuned, in-sample"] == f"{cv.in_sample:.6f}" == "0.691738"
    assert shown["cross-validated"] == f"{cv.cross_validated:.6f}" == "0.688184"
    folds = table_with(at, "test mean (held out)")
    assert len(folds) == 5 and folds["chosen on the other folds"].tolist() == [
        setting_text(sw.setting(c)) for c in cv.chosen
    ]
    assert folds["test mean (held out)"].tolist() == pytest.approx(list(cv.test_means))
    assert any("over-fitting" in m.value for m in at.markdown)


def test_significance_and_method_are_stated(at, bm25_sweep):
    sw, best, _ = bm25_sweep
    p, p_holm = tuning.versus_best(sw.values, best, tuning.sign_vectors_for(176))
    text = " ".join(m.value for m in at.markdown)
    # 175 grid settings + the current one, between grid points
    assert "the 175 comparisons of every other grid setting with the best, plus the current setting" in text
    assert "Holm" in text and f"{int((p_holm <= 0.05).sum())} after it" in text
    captions = " ".join(c.value for c in at.caption)
    assert "5,000 resamples, seed 0, 95%" in captions and "permutation" in captions and "Holm" in captions
    assert "all 2^14 = 16,384 sign vectors" in captions
    assert any("14 questions" in w.value and "noise" in w.value for w in at.warning)


def test_the_oracle_is_an_upper_bound(at):
    shown = figures(at)
    oracle_mean = float(shown["oracle"])
    systems = table_with(at, "below the oracle")
    assert list(systems.index) == ["BM25", "LSA", "dense", "weighted", "RRF"]
    assert (oracle_mean >= systems["mean"].round(4)).all()
    assert (systems["below the oracle"] >= 0).all()
    assert shown["best single system"] == f"{systems.loc['dense', 'mean']:.4f}"
    assert any(f"the best single system, dense, {systems.loc['dense', 'mean']:.4f}" in c.value for c in at.caption)


def test_fusion_explained_for_q01(at):
    assert at.selectbox(key="tune_question").value == "q01"
    rows = table_with(at, TOP).set_index("document")
    assert rows.loc["pricing1", "from BM25"] > 0 and rows.loc["pricing1", "from LSA"] > 0
    assert rows.loc["pricing1", TOP] == "both" and rows.loc["pricing1", "fused rank"] == "1"
    assert rows.loc["pricing1", "from BM25"] == pytest.approx(0.5)  # alpha x min-max(BM25), BM25's top document
    assert (rows[TOP] == "LSA only").any()  # documents only LSA put in its top 10
    assert rows.loc["backup2", "BM25 rank"] == "—" and rows.loc["backup2", "from BM25"] == 0  # BM25 does not return it
    assert (rows.loc[rows["fused rank"] == "—", TOP] == "").all()  # a relevant document left out: nobody brought it in
    captions = " ".join(c.value for c in at.caption)
    assert "Weighted fusion of BM25 + LSA at alpha = 0.5" in captions


def test_rrf_contributions_are_reciprocal_ranks():
    at = open_app(PAGE)
    at.segmented_control(key="tune_fusion").set_value("RRF").run()
    assert not at.exception
    rows = table_with(at, TOP).set_index("document")
    k = fusion.RRF_K_DEFAULT
    assert rows.loc["pricing1", "from BM25"] == pytest.approx(1 / (k + 1))  # BM25 rank 1
    assert rows.loc["pricing1", "from LSA"] == pytest.approx(1 / (k + 2))  # LSA rank 2


def test_switching_to_the_curves(invented, prep):
    at = open_app(PAGE)
    for key in ("alpha", "rrf_k", "dims"):
        at.segmented_control(key="tune_what").set_value(WHAT[key]).run()
        assert not at.exception, key
        sw = tuning.sweep(invented, key, METRIC, Params(), prep)
        best = tuning.best_setting(sw.values)
        ties = tuning.tie_region(sw.values, best)
        shown = figures(at)
        assert shown["best of the grid"] == f"{sw.means[best]:.6f}", key
        assert shown["tied with the best"] == f"{ties.size} / {sw.means.size}", key
        points = max(chart_frames(at), key=len)
        assert len(points) == sw.means.size and (points["status"] == TIED).sum() == ties.size
        buttons = [b for b in at.button if b.key == "tune_to_best"]
        current = tuning.current_values(invented, key, METRIC, Params(), prep)
        if ties.size == sw.means.size or np.array_equal(current, sw.values[best]):
            # rrf_k on the invented corpus: every setting ties with the best; alpha: the sidebar's 0.5 scores what the best scores
            assert not buttons, key
        else:
            assert buttons[0].label.endswith(f"({setting_text(sw.setting(best))})"), key


def test_the_button_moves_the_sidebar_to_the_best(invented, prep):
    sw = tuning.sweep_dims(invented, METRIC, engine=prep)
    best = tuning.best_setting(sw.values)
    assert tuning.tie_region(sw.values, best).size < sw.means.size  # some settings are worse: a best worth moving to
    best_dims = sw.setting(best)["dims"]
    at = open_app(PAGE)
    at.segmented_control(key="tune_what").set_value(WHAT["dims"]).run()
    assert at.sidebar.slider(key="dims").value == 6
    at.button(key="tune_to_best").click().run()
    assert not at.exception
    assert at.sidebar.slider(key="dims").value == best_dims and isinstance(at.sidebar.slider(key="dims").value, int)
    assert any(f"dims = {best_dims}" in s.value for s in at.success)
    assert "**The current setting is the best of the 27 settings.**" in " ".join(m.value for m in at.markdown)
    assert not [b for b in at.button if b.key == "tune_to_best"]  # already there


def _signals(invented, prep, key, base=Params()):
    """The verdict's inputs, from the library: the sweep, its best, the tie region, Holm's p of the current
    setting (a grid setting here) and the cross-validated gain over it."""
    sw = tuning.sweep(invented, key, METRIC, base, prep)
    best = tuning.best_setting(sw.values)
    ties = tuning.tie_region(sw.values, best)
    p, p_holm = tuning.versus_best(sw.values, best, tuning.sign_vectors_for(sw.means.size))
    near = sw.nearest(**{n: getattr(base, n) for n in sw.names})
    assert all(abs(sw.setting(near)[n] - getattr(base, n)) < 1e-12 for n in sw.names)  # on the grid
    current = tuning.current_values(invented, key, METRIC, base, prep)
    cv = tuning.cross_validate(sw.values, 5, 0)
    same = bool(np.array_equal(current, sw.values[best]))
    tied = bool(ties.tied[near])
    signals = ui.Signals(
        sw.means.size,
        ties.size,
        len(set(np.round(sw.means, 12))) == 1,
        near == best or same,
        tied,
        float(current.mean() - sw.means[best]),
        float(p[near]),
        float(p_holm[near]),
        sw.means.size - 1,
        float(cv.cross_validated - current.mean()),
    )
    return sw, best, signals


def test_the_verdict_of_the_dims_sweep(invented, prep):
    sw, best, signals = _signals(invented, prep, "dims")
    at = open_app(PAGE)
    at.segmented_control(key="tune_what").set_value(WHAT["dims"]).run()
    assert not at.exception
    said = ui.verdict_text(signals, "d", setting_text(sw.setting(best)), "nDCG@5")
    assert said in [m.value for m in at.markdown]
    assert ui.verdict_kind(signals) not in ("same", "flat", "best")


def test_the_joint_sweep_draws_its_heatmap(invented, prep):
    sw, best, signals = _signals(invented, prep, "alpha,dims")
    at = open_app(PAGE)
    at.segmented_control(key="tune_what").set_value(WHAT["alpha,dims"]).run()
    assert not at.exception
    d = tuning.thin(tuning.dims_axis(prep))
    assert sw.shape == (21, d.size)
    cells = max(chart_frames(at), key=len)
    assert len(cells) == 21 * d.size and {"alpha", "dims", "mean", "status"} <= set(cells.columns)
    by = cells.set_index(["alpha", "dims"])
    for i in range(0, sw.means.size, 17):
        s = sw.setting(i)
        assert by.loc[(s["alpha"], s["dims"]), "mean"] == pytest.approx(sw.means[i], abs=1e-12)
    shown = figures(at)
    assert shown["best of the grid"] == f"{sw.means[best]:.6f}"
    assert shown["tied with the best"] == f"{signals.n_tied} / {sw.means.size}"
    # the sidebar's setting (alpha 0.5, d 6: a grid cell) scores what the engine scores there
    current = prep.evaluate(Params(), [METRIC]).values["weighted"][METRIC]
    assert shown["current (sidebar)"] == f"{current.mean():.6f}"
    captions = " ".join(c.value for c in at.caption)
    assert (
        f"21 alpha × {d.size} d = {21 * d.size} settings" in captions
        and f"d takes {d.size} values from 1 to {d[-1]:g}" in captions
    )
    text = [m.value for m in at.markdown]
    assert ui.verdict_text(signals, "alpha and d", setting_text(sw.setting(best)), "nDCG@5") in text
    assert any(
        t.startswith("Swept: alpha and d; held at the sidebar's values: k1 = 1.2 (BM25), b = 0.75 (BM25)") for t in text
    )
    assert bool([b for b in at.button if b.key == "tune_to_best"]) == ui.offers_best(ui.verdict_kind(signals))
    # moving d re-uses the landscape: it is not among what the joint sweep holds
    at.sidebar.slider(key="dims").set_value(14).run()
    assert not at.exception and figures(at)["best of the grid"] == f"{sw.means[best]:.6f}"


def test_the_alpha_sweep_says_what_it_holds():
    at = open_app(PAGE)
    at.segmented_control(key="tune_what").set_value(WHAT["alpha"]).run()
    text = " ".join(m.value for m in at.markdown)
    assert (
        "Swept: alpha; held at the sidebar's values: k1 = 1.2 (BM25), b = 0.75 (BM25), d = 6 (LSA), each member's top 10. "
        "So the best alpha is the best *at d = 6*, not overall"
    ) in text
    assert "Sweep **alpha × d** to vary both." in text


@pytest.fixture(scope="module")
def dense_source(invented):
    from retrieval.corpus import embeddings
    from retrieval.retrievers import dense

    return embeddings.align(dense.embeddings_of(invented), invented)


def test_the_alpha_sweep_of_bm25_and_dense(invented, prep, dense_source):
    at = open_app(PAGE)
    at.sidebar.multiselect(key="fuse").set_value(["BM25", "dense"]).run()
    assert not at.exception
    at.segmented_control(key="tune_what").set_value(WHAT["alpha"]).run()
    assert not at.exception
    base = Params(members=("BM25", "dense"))
    sw = tuning.sweep_alpha(invented, METRIC, engine=prep, base=base, sources=(dense_source,))
    best = tuning.best_setting(sw.values)
    ties = tuning.tie_region(sw.values, best)
    # the sweep at the sidebar's alpha is what the engine ranks there: the page's current figure is the engine's
    current = prep.evaluate(base, [METRIC], (dense_source,)).values["weighted"][METRIC]
    assert np.array_equal(sw.values[sw.nearest(alpha=0.5)], current)
    shown = figures(at)
    assert shown["best of the grid"] == f"{sw.means[best]:.6f}"
    assert shown["current (sidebar)"] == f"{current.mean():.6f}"
    assert shown["tied with the best"] == f"{ties.size} / 21"
    points = max(chart_frames(at), key=len)
    assert points["mean"].tolist() == pytest.approx(sw.means.tolist(), abs=1e-12)
    assert any("System: weighted of BM25 + dense" in c.value for c in at.caption)
    rows = table_with(at, TOP)
    assert {"BM25 rank", "dense rank", "from BM25", "from dense"} <= set(
        rows.columns
    ) and "from LSA" not in rows.columns
    explained = tuning.explain_fusion(invented, "q01", "weighted", base, prep, sources=(dense_source,))
    assert rows["document"].tolist() == [r["doc_id"] for r in explained]
    assert rows["from dense"].tolist() == pytest.approx([r["contributions"]["dense"] for r in explained], abs=1e-12)


def test_with_three_members_the_alpha_sweep_is_not_offered(invented, prep, dense_source):
    at = open_app(PAGE)
    at.segmented_control(key="tune_what").set_value(WHAT["alpha"]).run()
    at.sidebar.multiselect(key="fuse").set_value(["BM25", "LSA", "dense"]).run()
    assert not at.exception
    control = at.segmented_control(key="tune_what")
    assert WHAT["alpha"] not in control.options and control.value == WHAT["k1,b"]
    assert any(
        "No alpha sweep" in c.value and "each has its own weight, set in the sidebar" in c.value for c in at.caption
    )
    control.set_value(WHAT["rrf_k"]).run()
    assert not at.exception
    three = Params(members=("BM25", "LSA", "dense"), weights=(0.5, 0.5, 0.5))
    sw = tuning.sweep_rrf_k(invented, METRIC, engine=prep, base=three, sources=(dense_source,))
    best = tuning.best_setting(sw.values)
    assert figures(at)["best of the grid"] == f"{sw.means[best]:.6f}"
    current = prep.evaluate(three, [METRIC], (dense_source,)).values["RRF"][METRIC]
    assert figures(at)["current (sidebar)"] == f"{current.mean():.6f}"
    assert {"from BM25", "from LSA", "from dense"} <= set(table_with(at, TOP).columns)


def test_the_button_of_a_joint_sweep_moves_both_sliders(invented, prep):
    sw = tuning.sweep(invented, "rrf_k,dims", METRIC, Params(), prep)
    best = tuning.best_setting(sw.values)
    want = sw.setting(best)
    at = open_app(PAGE)
    at.segmented_control(key="tune_what").set_value(WHAT["rrf_k,dims"]).run()
    (button,) = [b for b in at.button if b.key == "tune_to_best"]
    assert button.label.endswith(f"the best setting ({setting_text(want)})")
    button.click().run()
    assert not at.exception
    assert at.sidebar.slider(key="rrf_k").value == want["rrf_k"] and at.sidebar.slider(key="dims").value == want["dims"]
    assert (
        figures(at)["current (sidebar)"] == f"{sw.means[best]:.6f}"
    )  # the engine at the moved sliders: the cell's value
