"""The sidebar every page shares: the dataset in use, the parameter sliders (bound to the URL) and the metric.

Values are bound to the URL (a copied link reopens the same view) and persist for the session, so a run that
renders a page without app.py (Streamlit's legacy pages mode, seen in AppTest) keeps them. The metric is kept in the
URL by its short name (`state.write_metric_link`: a bound widget would write its label there), read on a session's
first run, label or short name (`state.read_metric_link`).
"""

from __future__ import annotations

import streamlit as st

from retrieval.corpus.judged import has_documents
from retrieval.evaluation import metrics

from . import cache, state
from .format import plural
from .markdown import escape_markdown


def _clamp_dims(limit: int) -> None:
    """Keep the dimensions slider inside what the dataset allows."""
    if int(st.session_state[state.DIMS]) > limit:
        st.session_state[state.DIMS] = limit


def _slider(key: str, hi: float | None = None) -> None:
    """One sidebar slider, its value held in session state and in the URL."""
    s = state.SLIDERS[key]
    is_int = float(s.step).is_integer()
    cast = int if is_int else float
    st.sidebar.slider(
        s.label,
        min_value=cast(s.lo),
        max_value=cast(hi if hi is not None else s.hi),
        step=cast(s.step),
        key=key,
        help=s.help,
        bind="query-params",
        persist_state="session",
    )


def render() -> None:
    """Draw the shared sidebar."""
    ds = cache.current_dataset()
    sb = st.sidebar
    sb.markdown(
        f"**Dataset:** {escape_markdown(cache.dataset_label())} — {plural(ds.n_docs, 'document')}, "
        f"{plural(ds.n_queries, 'question')}"
    )
    if not has_documents(ds):
        sb.caption(
            "Judgements alone: the runs are scored as they are; BM25, LSA and the fusions the sliders below set need "
            "documents."
        )
    if st.session_state.get(state.DATASET) is not None:
        sb.button("Back to the invented corpus", on_click=_use_invented, width="stretch")
    limit = cache.max_dims(ds)
    _clamp_dims(limit)
    sb.selectbox(
        "metric",
        list(state.METRIC_KINDS),
        key=state.METRIC,
        persist_state="session",
        help="nDCG uses linear gain (the grade) unless the exponential variant is chosen.",
    )
    state.write_metric_link()  # by its short name, not the label a bound widget would put there
    for note in metrics.meaning_warnings(ds.qrels, ds.n_queries, [state.metric_name()]):
        sb.warning(escape_markdown(note), icon=":material/warning:")
    _slider(state.K)
    sb.caption("BM25")
    _slider(state.K1)
    _slider(state.B)
    sb.caption("LSA")
    _slider(state.DIMS, hi=max(limit, 2) if limit > 1 else 2)
    text_analysis()
    if limit < 2:
        sb.caption(f"This corpus allows at most {limit} LSA dimension.")
    sb.caption("Fusions")
    fused = fusion_controls(cache.systems(ds))
    _slider(state.RRF_K)
    if len(fused) == 2:
        _slider(state.ALPHA)
        sb.caption(f"alpha weighs {escape_markdown(fused[0])}, 1 − alpha {escape_markdown(fused[1])}.")
    elif len(fused) > 2:
        for m in fused:
            weight_slider(m)
        if state.weights_in_force(fused) != state.weights_held(fused):
            sb.warning(
                f"Every weight is 0, and a weighted fusion needs one above 0: it weighs each member "
                f"{state.weights_in_force(fused)[0]:g} until one is.",
                icon=":material/warning:",
            )
    sb.button(
        "Article defaults",
        on_click=state.reset_to_article,
        width="stretch",
        help="k1 = 1.2, b = 0.75, d = 6, RRF k = 60, alpha = 0.5, k = 5, nDCG, BM25 + LSA fused from each top 10; "
        "no stemmer, the article's stop words, each question word counted once",
    )


def text_analysis() -> None:
    """The "Text analysis" group: stemmer and stop words (a change builds the index once for that analysis; coming
    back to one still kept costs nothing) and how BM25 counts a repeated question word (a change re-scores only)."""
    sb = st.sidebar
    sb.caption("Text analysis")
    for key in (state.STEMMER, state.STOPWORDS, state.QUERY_WORDS):
        spec = state.TEXT[key]
        if st.session_state.get(key) not in spec.options:  # a value from a hand-made URL: the default instead
            st.session_state[key] = state.DEFAULTS[key]
        sb.selectbox(
            spec.label, list(spec.options), key=key, help=spec.help, bind="query-params", persist_state="session"
        )
    if st.session_state[state.QUERY_WORDS] == "k3":
        spec = state.TEXT[state.K3]
        sb.slider(
            spec.label,
            min_value=float(spec.lo),
            max_value=float(spec.hi),
            step=float(spec.step),
            key=state.K3,
            help=spec.help,
            bind="query-params",
            persist_state="session",
        )


def fusion_controls(available: list[str]) -> tuple[str, ...]:
    """The fusions' members (any of the systems there are; BM25 and LSA by default, the article's) and depth;
    returns the members in force."""
    sb = st.sidebar
    chosen = [m for m in st.session_state.get(state.MEMBERS) or [] if m in available]
    if chosen != list(st.session_state.get(state.MEMBERS) or []):
        st.session_state[state.MEMBERS] = chosen or list(state.ARTICLE_MEMBERS)  # a member that went away is dropped
    sb.multiselect(
        "fused systems",
        available,
        key=state.MEMBERS,
        bind="query-params",
        persist_state="session",
        help="The systems both fusions combine: BM25 + LSA is the article's; add dense for a hybrid.",
    )
    spec = state.SPECS["fusion_depth"]
    sb.select_slider(
        spec.label,
        options=list(spec.choices),
        key=state.FUSION_DEPTH,
        bind="query-params",
        persist_state="session",
        help=spec.help,
    )
    return state.members(available)


def weight_slider(member: str) -> None:
    """A member's weight in a weighted fusion of more than two."""
    s = state.SPECS["weight"]
    st.session_state.setdefault(state.WEIGHT + member, s.default)
    st.sidebar.slider(
        f"weight of {escape_markdown(member)}",
        min_value=float(s.lo),
        max_value=float(s.hi),
        step=float(s.step),
        key=state.WEIGHT + member,
        persist_state="session",
        help=s.help,
    )


def _use_invented() -> None:
    """Drop the uploaded dataset and its runs (a button's callback)."""
    st.session_state[state.DATASET] = None
    st.session_state[state.RUNS] = {}
    st.session_state[state.DIMS] = st.session_state[state.DIMS]  # the browser resets d to 1 when its maximum changes
