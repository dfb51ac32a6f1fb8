"""The frame every page shares (app.py + ui/sidebar.py), the landing page (the Tour) and the Overview page, used as a
person would."""

from __future__ import annotations

import pytest

from apptest import move, open_app

pytestmark = pytest.mark.app

OVERVIEW = "pages/overview.py"
ARTICLE = {"k": 5, "k1": 1.2, "b": 0.75, "dims": 6, "rrf_k": 60, "alpha": 0.5}


def _means(at) -> dict[str, dict[str, float]]:
    """The Overview's means table as {system: {metric: value}}."""
    df = at.dataframe[0].value
    return {s: {c: float(df.loc[s, c]) for c in df.columns} for s in df.index}


@pytest.fixture(scope="module")
def at():
    return open_app(OVERVIEW)


def test_opens_on_the_tour_first_in_the_navigation_with_the_overview_second():
    from ui import router

    landing = open_app()
    assert not landing.exception
    assert landing.title[0].value == "Tour" and landing.session_state["step"] == 1
    assert "invented" in landing.sidebar.markdown[0].value and "28 documents" in landing.sidebar.markdown[0].value
    assert [title for _, title, _ in router.PAGES[:2]] == ["Tour", "Overview"]


def test_the_overview_opens_without_exception(at):
    assert not at.exception
    assert at.title[0].value == "Overview"
    assert "invented" in at.sidebar.markdown[0].value and "28 documents" in at.sidebar.markdown[0].value


def test_sliders_hold_the_article_defaults(at):
    got = {key: at.sidebar.slider(key=key).value for key in ARTICLE}
    assert got == ARTICLE
    assert at.sidebar.selectbox(key="metric").value == "nDCG (linear gain)"


def test_overview_shows_the_article_means(at):
    m = _means(at)
    assert list(m) == ["BM25", "LSA", "dense", "weighted", "RRF"]
    article = ("BM25", "LSA", "weighted", "RRF")
    assert {s: round(m[s]["nDCG@5"], 6) for s in article} == {
        "BM25": 0.691171,
        "LSA": 0.679138,
        "weighted": 0.733993,
        "RRF": 0.737367,
    }
    assert m["dense"]["MRR"] == 1.0  # the pinned model ranks a relevant document first for all 14 questions
    assert round(m["BM25"]["MRR"], 6) == 0.821429 and round(m["LSA"]["recall@5"], 6) == 0.678571
    assert len(at.get("vega_lite_chart")) == 2


def test_moving_b_changes_the_bm25_figure_and_alpha_only_the_weighted():
    at = open_app(OVERVIEW)
    before = _means(at)
    move(at, "b", 0.0)
    after_b = _means(at)
    assert after_b["BM25"]["nDCG@5"] != before["BM25"]["nDCG@5"]
    assert after_b["LSA"] == before["LSA"]
    move(at, "alpha", 0.9)
    after_alpha = _means(at)
    assert after_alpha["weighted"] != after_b["weighted"]
    assert {s: after_alpha[s] for s in ("BM25", "LSA", "RRF")} == {s: after_b[s] for s in ("BM25", "LSA", "RRF")}


def test_moving_k_changes_the_columns_and_the_article_button_puts_defaults_back():
    at = open_app(OVERVIEW)
    move(at, "k", 3)
    assert "hit@3" in at.dataframe[0].value.columns
    assert round(_means(at)["BM25"]["hit@3"], 6) == 0.857143
    move(at, "k1", 2.5)
    assert at.session_state["k1"] == 2.5
    at = open_app(OVERVIEW, query={"k1": "2.5", "k": "3"})
    at.sidebar.button[-1].click().run()
    assert {key: at.session_state[key] for key in ARTICLE} == ARTICLE
    assert "k1 = 1.2, b = 0.75" in at.caption[0].value
    assert not at.exception


def test_a_url_with_query_parameters_opens_with_those_values():
    at = open_app(
        OVERVIEW,
        query={"k1": "2.0", "b": "0.5", "dims": "4", "rrf_k": "10", "alpha": "0.25", "k": "10", "metric": "MRR"},
    )
    assert not at.exception
    got = {key: at.sidebar.slider(key=key).value for key in ARTICLE}
    assert got == {"k": 10, "k1": 2.0, "b": 0.5, "dims": 4, "rrf_k": 10, "alpha": 0.25}
    assert at.sidebar.selectbox(key="metric").value == "MRR"
    assert "k1 = 2, b = 0.5" in at.caption[0].value and "d = 4" in at.caption[0].value


def test_an_absurd_url_value_is_ignored_not_a_crash():
    at = open_app(query={"k1": "-7", "dims": "abc"})
    assert not at.exception
    assert at.sidebar.slider(key="k1").value == 1.2 and at.sidebar.slider(key="dims").value == 6


@pytest.mark.parametrize(
    "page",
    [
        "pages/overview.py",
        "pages/per_question.py",
        "pages/diagnosis.py",
        "pages/compare.py",
        "pages/tuning.py",
        "pages/metrics_lab.py",
        "pages/data.py",
    ],
)
def test_every_page_opens_through_app_without_exception(page):
    at = open_app(page)
    assert not at.exception, page
    assert at.title, page


def test_a_page_run_alone_is_rerun_through_the_frame():
    """Every AppTest rerun runs the page alone (Streamlit's legacy pages mode); the page hands it back to app.py,
    so the sidebar is there on a page reached by a switch and a rerun."""
    at = open_app("pages/compare.py")
    at.run()
    assert not at.exception and at.sidebar.slider, "the sidebar is missing: the page ran without app.py"
    assert at.title[0].value == "Compare", "the rerun through app.py went to the landing page, not the page being run"


def test_streamlit_still_runs_a_page_alone(monkeypatch):
    """Tells when ui.state.leave_legacy_pages_mode is no longer needed: without it, a rerun on a page shows no
    sidebar. The day this fails, Streamlit routes through app.py by itself: delete that function."""
    from ui import state

    at = open_app("pages/compare.py")
    monkeypatch.setattr(state, "leave_legacy_pages_mode", lambda: False)
    at.run()
    assert not at.sidebar.slider, "Streamlit now runs app.py on a page's rerun: remove leave_legacy_pages_mode"


def test_dense_is_a_system_and_the_fusion_members_follow_the_sidebar():
    """The invented corpus ships its vectors: dense is there at once; choosing BM25 + dense in the sidebar fuses
    those two (their values change, BM25, LSA and dense stay), and the choice is in the URL."""
    at = open_app(OVERVIEW)
    before = _means(at)
    assert "dense" in before
    members = at.sidebar.multiselect(key="fuse")
    assert members.value == ["BM25", "LSA"] and "dense" in members.options
    members.set_value(["BM25", "dense"]).run()
    assert not at.exception
    after = _means(at)
    for s in ("BM25", "LSA", "dense"):
        assert after[s] == before[s]
    assert after["weighted"]["nDCG@5"] != before["weighted"]["nDCG@5"] and after["RRF"] != before["RRF"]
    linked = open_app(query={"fuse": ["BM25", "dense"], "fusion_depth": "100"})  # a copied link reopens the choice
    assert linked.sidebar.multiselect(key="fuse").value == ["BM25", "dense"]
    assert linked.sidebar.select_slider(key="fusion_depth").value == 100
    assert "alpha weighs BM25, 1 − alpha dense." in [c.value for c in at.sidebar.caption]
    at.sidebar.multiselect(key="fuse").set_value(["BM25", "LSA", "dense"]).run()  # three: one weight each
    assert not at.exception
    weights = [s.label for s in at.sidebar.slider if s.label.startswith("weight of")]
    assert weights == ["weight of BM25", "weight of LSA", "weight of dense"]
    assert not [s for s in at.sidebar.slider if s.key == "alpha"]


def test_the_server_listens_on_this_machine_only_by_default():
    """A laptop running the app does not serve its data to the network unless someone chooses to."""
    import tomllib

    from conftest import ROOT

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["address"] == "127.0.0.1"
    assert config["client"]["showErrorDetails"] == "none"


def test_no_full_garbage_collection_holds_up_the_end_of_every_run():
    """Streamlit's post-run gc.collect(2) took 250-320 ms with Cranfield loaded (bench/browser_latency.py): off."""
    import tomllib

    from conftest import ROOT

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["runner"]["postScriptGC"] is False


@pytest.mark.parametrize(
    "query", [{"fusion_depth": "7"}, {"k1": "abc"}, {"alpha": "5"}, {"fuse": ["<b>x</b>", "nope"]}]
)
def test_an_absurd_link_opens_on_the_defaults_without_an_exception(query):
    at = open_app(query=query)
    assert not at.exception
    sb = at.sidebar
    assert (
        sb.select_slider(key="fusion_depth").value,
        sb.slider(key="k1").value,
        sb.slider(key="alpha").value,
        sb.multiselect(key="fuse").value,
    ) == (10, 1.2, 0.5, ["BM25", "LSA"])


def test_the_means_table_spans_the_page_above_the_bars(at):
    # beside the bars (in a column) it clipped its last columns at 1024 px with six systems
    assert at.dataframe and not any(col.dataframe for col in at.columns)
    heads = [h.value for h in at.subheader]
    assert heads.index("Means") < heads.index("With 95% bootstrap intervals")


def test_no_page_icon_is_fetched_from_another_origin(monkeypatch):
    """A page's icon is its tab's favicon until app.py's arrives, and Streamlit's frontend fetches a Material icon's
    favicon from fonts.gstatic.com, while an emoji draws as an empty box without an emoji font: st.Page gets no
    icon at all (the pages' Material icons mark only the links inside pages). tests/browser/test_browser.py checks the
    requests themselves, page by page, opened cold."""
    from ui import router

    given = []
    monkeypatch.setattr(router.st, "Page", lambda path, **kw: given.append((path, kw)) or kw)
    router.pages()
    icons = {kw["title"]: kw.get("icon") for _, kw in given}  # what st.Page was given
    assert len(icons) == len(router.PAGES)
    assert all(not icon or not icon.startswith(":material") for icon in icons.values()), icons
    assert not any(icons.values()), icons  # and no emoji either: nothing to draw as a box
