"""The Compare page's parts: two systems on the sidebar's metric, the paired bootstrap of their per-question
difference, a plain verdict, and the question-by-question bars; then the table of every system at once on any
metrics the command line takes, the significant differences marked (retrieval.evaluation.comparison), to download
as LaTeX, Markdown and CSV."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from retrieval.core.errors import InputError
from retrieval.corpus.dataset import Dataset
from retrieval.evaluation import comparison as tables
from retrieval.evaluation import metrics, stats
from retrieval.evaluation.experiment import Evaluation

from . import cache, charts, state
from .data import download_stem
from .format import MINUS, agree, interval_text, plural, signed
from .markdown import escape_markdown as plain

KEY_A, KEY_B = "cmp_a", "cmp_b"
KEY_MORE, KEY_TEST, KEY_LEVEL = "cmp_more_metrics", "cmp_test", "cmp_level"  # the table's widgets
KEY_SIDEBAR = "cmp_with_sidebar"  # the table begins with the sidebar's metric (unticked: the chosen ones alone)
KEY_MORE_K, KEY_REFUSED = "cmp_more_k", "cmp_refused"  # the cutoff the chosen metrics follow; a typed name refused
CUTOFFS = (1, 3, 5, 10, 20, 100, 1000)  # offered for every metric with a cutoff, with the sidebar's k; any other typed
MAX_METRICS = 12  # a table's metrics beside the sidebar's: each one is a significance test over every pair
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
        return "info", (
            f"**{name_a} and {name_b} can't be told apart** on {label}: the 95% interval of the mean "
            f"difference, {span}, holds zero."
        )
    better, worse = (name_a, name_b) if iv.mean > 0 else (name_b, name_a)
    return "success", (
        f"**{better} is better than {worse}** on {label}, by {abs(iv.mean):.3f} on average: "
        f"the 95% interval of {name_a} {MINUS} {name_b}, {span}, leaves zero out."
    )


def tally(diff: np.ndarray) -> tuple[int, int, int]:
    """Questions where A is better, where B is better, and ties."""
    wins_a, wins_b = int((diff > 0).sum()), int((diff < 0).sum())
    return wins_a, wins_b, int(diff.size - wins_a - wins_b)


def tally_text(a: str, b: str, diff: np.ndarray) -> str:
    """'A is better on 3 questions, B on 1, and 2 are ties' (names escaped)."""
    wins_a, wins_b, ties = tally(diff)
    return (
        f"{plain(a)} is better on {plural(wins_a, 'question')}, {plain(b)} on {wins_b}, "
        f"and {ties} {agree(ties, 'is a tie', 'are ties')} (grey diamonds on the zero line). Hover a bar for the question."
    )


def choose_pair(systems: list[str]) -> tuple[str, str]:
    """The two systems' selectors (BM25 and LSA by default), side by side."""
    c1, c2 = st.columns(2)
    a = c1.selectbox(
        "System A",
        systems,
        index=systems.index(DEFAULT_A) if DEFAULT_A in systems else 0,
        key=KEY_A,
        persist_state="session",
    )
    b = c2.selectbox(
        "System B",
        systems,
        index=systems.index(DEFAULT_B) if DEFAULT_B in systems else min(1, len(systems) - 1),
        key=KEY_B,
        persist_state="session",
    )
    return a, b


def header(ds: Dataset, label: str) -> None:
    """The title and what the page answers."""
    st.title("Compare")
    st.caption(
        f"**{plain(ds.name)}**: is one system better than another on **{label}** (the sidebar's metric and cutoff), "
        f"or is the difference noise? The questions are the unit: {plural(ds.evaluated.size, 'question')} with a relevant "
        "document, each scored by both systems."
    )


def comparison(ds: Dataset, ev: Evaluation, metric: str, label: str, a: str, b: str) -> None:
    """The verdict, the figures, the bootstrap distribution and the per-question differences of A - B."""
    diff = ev.values[a][metric] - ev.values[b][metric]
    iv, bins = bootstrap(diff)
    kind, text = verdict(iv, a, b, label)
    getattr(st, kind)(text, icon=":material/balance:" if kind == "info" else ":material/trending_up:")
    name_a, name_b = plain(a), plain(b)
    with st.container(horizontal=True, wrap=True, gap="small"):  # each card as wide as its text: two rows at 1024 px
        st.metric(
            f"mean difference, A {MINUS} B",
            signed(iv.mean),
            border=True,
            width="content",
            help=f"Mean over the questions of {name_a}'s {label} minus {name_b}'s.",
        )
        st.metric(
            "95% interval",
            interval_text(iv.low, iv.high),
            border=True,
            width="content",
            help="Percentile bootstrap: the 126th and the 4875th of the 5000 sorted resampled means.",
        )
        st.metric(
            f"A: {name_a}", f"{ev.mean(a, metric):.3f}", border=True, width="content", help=f"{name_a}'s mean {label}."
        )
        st.metric(
            f"B: {name_b}", f"{ev.mean(b, metric):.3f}", border=True, width="content", help=f"{name_b}'s mean {label}."
        )

    st.subheader("The bootstrap distribution")
    st.altair_chart(charts.histogram_with_interval(bins, iv.low, iv.high, iv.mean), width="stretch")
    st.caption(
        f"The per-question differences resampled with replacement {stats.RESAMPLES:,} times "
        f"(numpy default_rng, seed {stats.SEED}), the mean of each resample counted. "
        "The shaded band is the 95% interval; the dashed line is zero, the red line the observed mean difference."
    )

    st.subheader("Question by question")
    per_q = pd.DataFrame(
        {
            "qid": [ds.query_ids[q] for q in ds.evaluated],
            "question": [" ".join(ds.query_texts[q].split())[:200] for q in ds.evaluated],
            "diff": diff,
        }
    )
    st.altair_chart(charts.difference_bars(per_q, f"{label}: {a} {MINUS} {b}", a, b, ev.systems), width="stretch")
    st.caption(tally_text(a, b, diff))


# ------------------------------------------------------------------------------------------- every system at once


def more_metrics(metric: str, k: int, chosen: list[str] | tuple[str, ...] = ()) -> list[str]:
    """The table's metrics to choose from: every one the command line's --metrics takes (`metrics.names_at`) at
    CUTOFFS and the sidebar's k, and any chosen before (a cutoff typed), but the sidebar's own metric."""
    return [m for m in dict.fromkeys([*metrics.names_at((*CUTOFFS, k)), *chosen]) if m != metric]


def follow_cutoff(chosen: list[str], old: int | None, k: int) -> list[str]:
    """The chosen metrics after the sidebar's cutoff moved from `old` to `k`: one at the old cutoff follows it
    (hit@5 becomes hit@10), one at another cutoff (map@100) or with none (mrr) stays."""
    if old is None or old == k:
        return list(chosen)
    moved = []
    for m in chosen:
        kind, _, cut = m.partition("@")
        moved.append(f"{kind}@{k}" if cut == str(old) else m)
    return list(dict.fromkeys(moved))


def carry_over(metric: str, k: int) -> list[str]:
    """Before the widget is made: the chosen metrics kept across a cutoff change (`follow_cutoff`), those no longer
    offered (the sidebar's own) dropped; the options offered."""
    chosen = follow_cutoff(list(st.session_state.get(KEY_MORE) or []), st.session_state.get(KEY_MORE_K), k)
    st.session_state[KEY_MORE_K] = k
    options = more_metrics(metric, k, chosen)
    st.session_state[KEY_MORE] = [m for m in chosen if m in options]
    return options


def _as_named(typed: str) -> str:
    """A typed metric as the parser names it: a kind as the page labels it (P@10, R-prec, MAP@100) as its name."""
    kind, at, cut = typed.strip().partition("@")
    return {state.metric_label(k).lower(): k for k in metrics.KINDS}.get(kind.lower(), kind) + at + cut


def checked(names: list[str]) -> tuple[list[str], str | None]:
    """The names the metric parser takes, as it names them (NDCG@10 and nDCG@10 are ndcg@10, P@10 is
    precision@10), duplicates dropped, and the parser's message for the first one it refuses (None when it takes
    all)."""
    good, refused = [], None
    for name in names:
        try:
            good.append(metrics.parse(_as_named(str(name))).name)
        except InputError as e:
            refused = refused or str(e)
    return list(dict.fromkeys(good)), refused


def _check_typed() -> None:
    """The multiselect's callback: a typed name the parser refuses is taken out, its message kept for the page."""
    good, refused = checked(list(st.session_state.get(KEY_MORE) or []))
    st.session_state[KEY_MORE] = good
    if refused:
        st.session_state[KEY_REFUSED] = refused


def table_names(metric: str, with_sidebar: bool, more: list[str]) -> tuple[str, ...]:
    """The table's metrics, in order: the sidebar's first (unless left out), then the chosen."""
    return tuple(dict.fromkeys([*([metric] if with_sidebar else []), *more]))


@st.cache_data(max_entries=32, show_spinner=False)
def table(
    values: np.ndarray, systems: tuple[str, ...], names: tuple[str, ...], test: str, level: float
) -> tables.ComparisonTable:
    """`comparison.table_from_values` of `values` (systems x metrics x questions), cached on their content."""
    by_system = {s: dict(zip(names, values[i])) for i, s in enumerate(systems)}
    return tables.table_from_values(by_system, names, test, level)


def every_system(ds: Dataset, metric: str) -> None:
    """The table the IR field publishes: every system's mean on the sidebar's metric (unless left out) and any
    other chosen (every metric the command line takes), the best in bold, on each value the letters of the systems
    it beats significantly; the test chosen here, the statement under the table, and the table as LaTeX, Markdown
    and CSV: what `python -m retrieval compare` prints for the same systems and metrics."""
    st.divider()
    st.subheader("Every system at once")
    st.caption(
        "The table papers publish: each system's mean, the best of each column in **bold**, and on each value "
        "the letters of the systems it beats significantly."
    )
    options = carry_over(metric, state.cutoff())
    c1, c2 = st.columns([1.4, 0.6])  # the test's longest name whole at 1024 pixels wide, the sidebar open
    test = c1.selectbox(
        "Test",
        tables.TESTS,
        format_func=tables.TEST_NAMES.get,
        key=KEY_TEST,
        persist_state="session",
        help="Paired and two-sided, over the questions with a relevant document.",
    )
    level = c2.selectbox(
        "p below",
        LEVELS,
        index=LEVELS.index(tables.ALPHA),
        key=KEY_LEVEL,
        persist_state="session",
        help="The significance level alpha, after Holm's correction.",
    )
    more = st.multiselect(
        "More metrics",
        options,
        key=KEY_MORE,
        format_func=state.metric_label,
        persist_state="session",
        on_change=_check_typed,
        accept_new_options=True,
        max_selections=MAX_METRICS,
        placeholder="e.g. nDCG@10, MAP@100; or type one, e.g. ndcg@15",
        help=f"Beside {state.metric_label(metric)}, the sidebar's metric: any metric the command "
        f"line's --metrics takes ({metrics.VALID_FORMS}); type a cutoff not listed.",
    )
    refused = st.session_state.pop(KEY_REFUSED, None)
    if refused:
        st.error(f"More metrics: {plain(refused)}", icon=":material/error:")
    with_sidebar = st.checkbox(
        f"Begin with {state.metric_label(metric)}, the sidebar's metric",
        value=True,
        key=KEY_SIDEBAR,
        persist_state="session",
        help="Untick it for a table of the chosen metrics alone.",
    )
    names = table_names(metric, with_sidebar, checked(list(more))[0])
    if not names:
        st.info("Choose a metric for the table, or tick the sidebar's.", icon=":material/info:")
        return
    ev = cache.evaluation(list(names), ds)
    values = np.array([[ev.values[s][m] for m in names] for s in ev.systems])
    try:
        shown = table(values, tuple(ev.systems), names, test, level)
    except InputError as e:  # the t-test of a single question
        st.warning(plain(str(e)), icon=":material/warning:")
        return
    st.markdown(shown.to_markdown(escape=plain, labels={m: state.metric_label(m) for m in names}, statement=False))
    st.caption(shown.statement())
    downloads(shown, ds.name, names, test, level)


FORMS = (  # the table's downloads: label, the ComparisonTable renderer, file extension, MIME type, icon, help
    (
        "LaTeX",
        "to_latex",
        "tex",
        "application/x-tex",
        ":material/functions:",
        "A booktabs table, the means right-aligned, the statement as its caption.",
    ),
    (
        "Markdown",
        "to_markdown",
        "md",
        "text/markdown",
        ":material/article:",
        "A GitHub Markdown table, the statement under it.",
    ),
    (
        "CSV",
        "to_csv",
        "csv",
        "text/csv",
        ":material/table:",
        "Per system its letter, name, and per metric every digit of its mean and the letters of the systems it beats.",
    ),
)


def command(names: tuple[str, ...], test: str, level: float) -> str:
    """The command line's options for this table: `--metrics ... --test ... --alpha ...`."""
    return f"--metrics {','.join(names)} --test {test} --alpha {level:g}"


def downloads(
    shown: tables.ComparisonTable, dataset_name: str, names: tuple[str, ...], test: str, level: float
) -> None:
    """The table as LaTeX (booktabs, the means right-aligned), Markdown and CSV, each made when its button is
    clicked: what `python -m retrieval compare` prints with --latex, --markdown or --csv."""
    stem = f"{download_stem(dataset_name)}_comparison"
    with st.container(horizontal=True, wrap=True, gap="small"):
        for label, render, ext, mime, icon, help_ in FORMS:
            st.download_button(
                label,
                getattr(shown, render),
                file_name=f"{stem}.{ext}",
                mime=mime,
                key=f"cmp_dl_{ext}",
                on_click="ignore",
                icon=icon,
                width="content",
                help=help_,
            )
    st.caption(
        f"Each file is what `python -m retrieval compare {command(names, test, level)}` prints with `--latex`, "
        "`--markdown` or `--csv`, for the same dataset, systems (the dense one with `--embeddings`, each run with `--run`) "
        "and parameters (the LaTeX needs "
        "`\\usepackage{booktabs}`)."
    )
