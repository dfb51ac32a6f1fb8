"""The Compare page's parts: two systems on the sidebar's metric, the paired bootstrap of their per-question
difference, a plain verdict, and the question-by-question bars; then the table of every system at once, the
significant differences marked (retrieval.evaluation.comparison)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from retrieval.core.errors import InputError
from retrieval.corpus.dataset import Dataset
from retrieval.evaluation import comparison as tables
from retrieval.evaluation import stats
from retrieval.evaluation.experiment import Evaluation
from retrieval.evaluation.report import report_metrics

from . import cache, charts, state
from .format import MINUS, agree, interval_text, plural, signed
from .markdown import escape_markdown as plain

KEY_A, KEY_B = "cmp_a", "cmp_b"
KEY_MORE, KEY_TEST, KEY_LEVEL = "cmp_more_metrics", "cmp_test", "cmp_level"  # the table's widgets
LEVELS = (0.01, 0.05, 0.1)
DEFAULT_A, DEFAULT_B = "BM25", "LSA"
BINS = 50


@st.cache_data(max_entries=64, show_spinner=False)
def bootstrap(diff: np.ndarray) -> tuple[stats.Interval, pd.DataFrame]:
    """The article's paired bootstrap of the per-question differences and the histogram of its resampled means
    (cached on the differences' values)."""
    iv = stats.bootstrap(diff)
    return iv, histogram(stats.resampled_means(diff))


def histogram(means: np.ndarray, bins: int = BINS) -> pd.DataFrame:
    """The resampled means in `bins` equal bins (start, end, count), empty bins left out; a single value gets
    one bar 0.01 wide around it."""
    lo, hi = float(means.min()), float(means.max())
    if hi - lo < 1e-12:  # every resample has the same mean (e.g. identical values): one narrow bar
        lo, hi = lo - 0.005, hi + 0.005
    counts, edges = np.histogram(means, bins=bins, range=(lo, hi))
    frame = pd.DataFrame({"start": edges[:-1], "end": edges[1:], "count": counts})
    return frame[frame["count"] > 0].reset_index(drop=True)


def verdict(iv: stats.Interval, a: str, b: str, label: str) -> tuple[str, str]:
    """The plain verdict (kind 'info' or 'success', Markdown) on A - B: can't be told apart when the 95% interval
    holds zero, else which is better and by how much. `a`, `b` are user strings (run names): escaped here."""
    name_a, name_b = plain(a), plain(b)
    span = interval_text(iv.low, iv.high)
    if iv.holds_zero:
        return "info", (f"**{name_a} and {name_b} can't be told apart** on {label}: the 95% interval of the mean "
                        f"difference, {span}, holds zero.")
    better, worse = (name_a, name_b) if iv.mean > 0 else (name_b, name_a)
    return "success", (f"**{better} is better than {worse}** on {label}, by {abs(iv.mean):.3f} on average: "
                       f"the 95% interval of {name_a} {MINUS} {name_b}, {span}, leaves zero out.")


def tally(diff: np.ndarray) -> tuple[int, int, int]:
    """Questions where A is better, where B is better, and ties."""
    wins_a, wins_b = int((diff > 0).sum()), int((diff < 0).sum())
    return wins_a, wins_b, int(diff.size - wins_a - wins_b)


def tally_text(a: str, b: str, diff: np.ndarray) -> str:
    """'A is better on 3 questions, B on 1, and 2 are ties' (names escaped)."""
    wins_a, wins_b, ties = tally(diff)
    return (f"{plain(a)} is better on {plural(wins_a, 'question')}, {plain(b)} on {wins_b}, "
            f"and {ties} {agree(ties, 'is a tie', 'are ties')} (grey diamonds on the zero line). Hover a bar for the question.")


def choose_pair(systems: list[str]) -> tuple[str, str]:
    """The two systems' selectors (BM25 and LSA by default), side by side."""
    c1, c2 = st.columns(2)
    a = c1.selectbox("System A", systems, index=systems.index(DEFAULT_A) if DEFAULT_A in systems else 0,
                     key=KEY_A, persist_state="session")
    b = c2.selectbox("System B", systems, index=systems.index(DEFAULT_B) if DEFAULT_B in systems else min(1, len(systems) - 1),
                     key=KEY_B, persist_state="session")
    return a, b


def header(ds: Dataset, label: str) -> None:
    """The title and what the page answers."""
    st.title("Compare")
    st.caption(
        f"**{plain(ds.name)}**: is one system better than another on **{label}** (the sidebar's metric and cutoff), "
        f"or is the difference noise? The questions are the unit: {plural(ds.evaluated.size, 'question')} with a relevant "
        "document, each scored by both systems.")


def comparison(ds: Dataset, ev: Evaluation, metric: str, label: str, a: str, b: str) -> None:
    """The verdict, the figures, the bootstrap distribution and the per-question differences of A - B."""
    diff = ev.values[a][metric] - ev.values[b][metric]
    iv, bins = bootstrap(diff)
    kind, text = verdict(iv, a, b, label)
    getattr(st, kind)(text, icon=":material/balance:" if kind == "info" else ":material/trending_up:")
    name_a, name_b = plain(a), plain(b)
    with st.container(horizontal=True, wrap=True, gap="small"):  # each card as wide as its text: two rows at 1024 px
        st.metric(f"mean difference, A {MINUS} B", signed(iv.mean), border=True, width="content",
                  help=f"Mean over the questions of {name_a}'s {label} minus {name_b}'s.")
        st.metric("95% interval", interval_text(iv.low, iv.high), border=True, width="content",
                  help="Percentile bootstrap: the 126th and the 4875th of the 5000 sorted resampled means.")
        st.metric(f"A: {name_a}", f"{ev.mean(a, metric):.3f}", border=True, width="content", help=f"{name_a}'s mean {label}.")
        st.metric(f"B: {name_b}", f"{ev.mean(b, metric):.3f}", border=True, width="content", help=f"{name_b}'s mean {label}.")

    st.subheader("The bootstrap distribution")
    st.altair_chart(charts.histogram_with_interval(bins, iv.low, iv.high, iv.mean), width="stretch")
    st.caption(
        f"The per-question differences resampled with replacement {stats.RESAMPLES:,} times "
        f"(numpy default_rng, seed {stats.SEED}), the mean of each resample counted. "
        "The shaded band is the 95% interval; the dashed line is zero, the red line the observed mean difference.")

    st.subheader("Question by question")
    per_q = pd.DataFrame({"qid": [ds.query_ids[q] for q in ds.evaluated],
                          "question": [" ".join(ds.query_texts[q].split())[:200] for q in ds.evaluated], "diff": diff})
    st.altair_chart(charts.difference_bars(per_q, f"{label}: {a} {MINUS} {b}", a, b, ev.systems), width="stretch")
    st.caption(tally_text(a, b, diff))


# ------------------------------------------------------------------------------------------- every system at once


def more_metrics(metric: str, k: int) -> list[str]:
    """The table's other metrics to choose from: the report's (hit, recall and nDCG at k, MRR) but the sidebar's."""
    return [m for m in report_metrics(k, metric) if m != metric]


def carry_over(options: list[str]) -> None:
    """Keep the chosen extra metrics across a cutoff change (hit@5 chosen becomes hit@10), before the widget is
    made: an option that is no longer offered is dropped."""
    kinds = {m.partition("@")[0] for m in st.session_state.get(KEY_MORE) or []}
    st.session_state[KEY_MORE] = [m for m in options if m.partition("@")[0] in kinds]


@st.cache_data(max_entries=32, show_spinner=False)
def table(values: np.ndarray, systems: tuple[str, ...], names: tuple[str, ...], test: str,
          level: float) -> tables.ComparisonTable:
    """`comparison.table_from_values` of `values` (systems x metrics x questions), cached on their content."""
    by_system = {s: dict(zip(names, values[i])) for i, s in enumerate(systems)}
    return tables.table_from_values(by_system, names, test, level)


def every_system(ds: Dataset, metric: str) -> None:
    """The table the IR field publishes: every system's mean on the sidebar's metric (and any other chosen), the
    best in bold, on each value the letters of the systems it beats significantly; the test chosen here and the
    statement under the table."""
    st.divider()
    st.subheader("Every system at once")
    st.caption("The table papers publish: each system's mean, the best of each column in **bold**, and on each value "
               "the letters of the systems it beats significantly.")
    options = more_metrics(metric, state.cutoff())
    carry_over(options)
    c1, c2 = st.columns([1.4, 0.6])  # the test's longest name whole at 1024 pixels wide, the sidebar open
    test = c1.selectbox("Test", tables.TESTS, format_func=tables.TEST_NAMES.get, key=KEY_TEST,
                        persist_state="session", help="Paired and two-sided, over the questions with a relevant document.")
    level = c2.selectbox("p below", LEVELS, index=LEVELS.index(tables.ALPHA), key=KEY_LEVEL,
                         persist_state="session", help="The significance level alpha, after Holm's correction.")
    more = st.multiselect("More metrics", options, key=KEY_MORE, format_func=state.metric_label,
                          persist_state="session", help=f"Beside {state.metric_label(metric)}, the sidebar's metric.")
    names = tuple([metric, *more])
    ev = cache.evaluation(list(names), ds)
    values = np.array([[ev.values[s][m] for m in names] for s in ev.systems])
    try:
        shown = table(values, tuple(ev.systems), names, test, level)
    except InputError as e:  # the t-test of a single question
        st.warning(plain(str(e)), icon=":material/warning:")
        return
    st.markdown(shown.to_markdown(escape=plain, labels={m: state.metric_label(m) for m in names}, statement=False))
    st.caption(shown.statement())
