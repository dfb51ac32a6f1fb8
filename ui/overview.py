"""The Overview page's parts: the means of every system, bars with 95% bootstrap intervals, the metric versus k."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from retrieval.analyses import coverage
from retrieval.core.params import Params
from retrieval.corpus.dataset import Dataset
from retrieval.corpus.judged import has_documents
from retrieval.evaluation import stats
from retrieval.evaluation.agreement import RULES
from retrieval.evaluation.experiment import Evaluation, score
from retrieval.evaluation.metrics import NO_CUTOFF, meaning_warnings
from retrieval.evaluation.metrics import parse as parse_metric

from . import cache, charts, in_use, state
from .format import agree, plural
from .markdown import escape_markdown

K_MAX = 20  # the curves run over k = 1..K_MAX
JUDGED_FLOOR = (
    1 - coverage.UNJUDGED_LIMIT
)  # below this mean judged@k (the share of the top k that carries a judgement) the Overview warns


def intervals(ds: Dataset, values: np.ndarray) -> np.ndarray:
    """95% bootstrap intervals of each row's mean (rows x questions of `ds`), each row cached on its values by the
    dataset's engine (`Engine.intervals`)."""
    if not has_documents(ds):  # judgements alone: no engine to keep them
        return stats.intervals(np.atleast_2d(np.asarray(values, dtype=np.float64))).reshape(-1, 2)
    return cache.engine(ds).intervals(values)


def table_metrics(k: int, chosen: str) -> list[str]:
    """The means table's columns: hit, recall, MRR and nDCG at k, then the sidebar's metric if it is another."""
    return list(dict.fromkeys([f"hit@{k}", f"recall@{k}", "mrr", f"ndcg@{k}", chosen]))


def curve_metrics(kind: str) -> list[str]:
    """The metric of the sidebar at every k = 1..K_MAX (MRR and MAP: cut at k); none for R-precision and bpref,
    which take no cutoff."""
    return [] if kind in NO_CUTOFF else [f"{kind}@{i}" for i in range(1, K_MAX + 1)]


def caption(ds: Dataset, p: Params, dims_used: int) -> str:
    """What is measured, with the parameters in force (the dataset's name escaped)."""
    return (
        f"**{escape_markdown(cache.dataset_label())}**: {ds.n_docs:,} documents, {ds.evaluated.size:,} questions with a relevant "
        f"document. BM25 k1 = {p.k1:g}, b = {p.b:g} · LSA d = {dims_used} · RRF k = {p.rrf_k:g} · weighted alpha = "
        f"{p.alpha:g}. nDCG uses linear gain unless marked _exp."
    )


def workspace_note(ds: Dataset) -> str | None:
    """Whether the workspace raters' grades are in force, and how: how many of the judgements in use come from them
    and by which rule (the Judge page's choice, in the link); or that the rule leaves their grades out, or that it
    asks for them and there are none. None when the workspace holds no grade and the rule is the default."""
    base = in_use.base_dataset()
    rule, everyone = in_use.rule(), in_use.workspace_grades(base)
    raters = plural(len({g.rater for g in everyone}), "rater")
    added = len(in_use.new_judgements(base))
    if added:
        return (
            f"{added:,} of the {plural(len(ds.qrels), 'judgement')} in use {agree(added, 'comes', 'come')} from "
            f"this workspace's {raters}, combined by {RULES[rule]} (the Judge page's choice, in this page's link)."
        )
    if rule == in_use.DEFAULT_RULE:
        return (
            (
                f"The loaded judgements alone: this workspace's {plural(len(everyone), 'grade')} by {raters} {agree(len(everyone), 'is', 'are')} "
                "left out, the rule being the original judgements only (the Judge page can count them)."
            )
            if everyone
            else None
        )
    return (
        f"The raters' grades are asked for, combined by {RULES[rule]} (this page's link), and add no judgement: "
        f"this workspace's {plural(len(everyone), 'grade')} by {raters} {agree(len(everyone), 'is', 'are')} "
        "all of pairs the loaded judgements grade already."
        if everyone
        else f"The raters' grades are asked for, combined by {RULES[rule]} (this page's link), but this workspace holds "
        "none for this dataset: the loaded judgements alone."
    )


def summary(ev: Evaluation, metrics: list[str]) -> pd.DataFrame:
    """Systems x metrics means, labelled for reading."""
    return pd.DataFrame(
        {state.metric_label(m): [ev.mean(s, m) for s in ev.systems] for m in metrics},
        index=pd.Index(ev.systems, name="system"),
    )


def bars(ev: Evaluation, metrics: list[str]) -> pd.DataFrame:
    """One row per (metric, system): the mean and its 95% bootstrap interval over the questions."""
    rows = np.array([ev.values[s][m] for m in metrics for s in ev.systems])
    iv = intervals(ev.dataset, rows)
    frame = pd.DataFrame(
        [{"metric": state.metric_label(m), "system": s, "mean": ev.mean(s, m)} for m in metrics for s in ev.systems]
    )
    frame["low"], frame["high"] = iv[:, 0], iv[:, 1]
    return frame


def curve(ev: Evaluation, metrics: list[str]) -> pd.DataFrame:
    """The mean of each system at every k of the curve."""
    return pd.DataFrame(
        [{"k": i + 1, "system": s, "value": ev.mean(s, m)} for i, m in enumerate(metrics) for s in ev.systems]
    )


def judged_shares(ev: Evaluation, k: int) -> dict[str, float]:
    """Each system's mean judged@k over the evaluated questions (computed here if the evaluation lacks it)."""
    name = f"judged@{k}"
    if all(name in row for row in ev.values.values()):
        return {s: ev.mean(s, name) for s in ev.systems}
    judged = score(ev.dataset, ev.rankings, [parse_metric(name)])
    return {s: judged.mean(s, name) for s in ev.systems}


def records_non_relevant(ds: Dataset) -> bool:
    """Whether the judgements name any document judged not relevant (a grade of 0 or less). When they name
    relevant documents only, judged@k is precision@k and cannot tell a hole from a non-relevant document."""
    return bool((ds.qrels.grade <= 0).any())


def judged_warning(ev: Evaluation, k: int) -> str | None:
    """One warning naming (escaped) every system whose mean judged@k is below JUDGED_FLOOR, with its value; None
    when every system's top k is judged enough. On judgements that name relevant documents only, judged@k is
    precision@k, so the rule is read on the unjudged share of each top k instead (coverage.UNJUDGED_LIMIT, 1 -
    JUDGED_FLOOR): "67% of BM25's top 5 is unjudged", the Data page's number."""
    if not records_non_relevant(ev.dataset):
        said = coverage.coverage_sentence(coverage.coverage(ev.dataset, ev.rankings, k))
        return escape_markdown(said) if said else None
    low = {s: v for s, v in judged_shares(ev, k).items() if v < JUDGED_FLOOR}
    if not low:
        return None
    listed = ", ".join(f"{escape_markdown(s)} {v:.3f}" for s, v in low.items())
    many = len(low) > 1
    return (
        f"Few of the top {k} places hold a judged document (`judged@{k}`, the judged documents of the top {k} "
        f"over {k}, any grade, is below {JUDGED_FLOOR:g}): {listed}. An unjudged document counts as not relevant, "
        f"so the metrics understate {'these systems' if many else 'this system'} if some of "
        f"{'their' if many else 'its'} unjudged results are relevant; the Judge page lists them, to grade."
    )


def relevant_only_note(k: int) -> str:
    """What judged@k means for judgements that name relevant documents only (the invented corpus's, BEIR's)."""
    return (
        f"These judgements name relevant documents only (no grade 0), so every document they leave out counts as "
        f"not relevant and `judged@{k}` equals `precision@{k}`: it cannot show holes here. The Judge page lists "
        f"the unjudged documents of every system's top {k}, to grade."
    )


def warnings(ds: Dataset, ev: Evaluation, k: int | None = None) -> None:
    """The dataset's and the systems' warnings (they quote ids and run names: escaped), then, with the cutoff `k`,
    the judged@k warning (or, for judgements of relevant documents only and judged@k shown, what it means there)."""
    for note in list(ds.warnings) + list(ev.notes):
        st.warning(escape_markdown(note), icon=":material/warning:")
    for note in meaning_warnings(ds.qrels, ds.n_queries, [m for m in ev.metrics if m.kind == "bpref"]):
        st.warning(escape_markdown(note), icon=":material/warning:")
    if k is None:
        return
    note = judged_warning(ev, k)
    relevant_only = not records_non_relevant(ds)
    if note and relevant_only:  # expected of such judgements (judged@k is precision@k): said, not alarmed
        st.info(note, icon=":material/rule:")
    elif note:
        st.warning(note, icon=":material/rule:")
    if relevant_only and any(m.kind == "judged" for m in ev.metrics):
        st.caption(relevant_only_note(k))


def means_table(ev: Evaluation, metrics: list[str]):
    """The means as shown: 6 decimals, as the article's tables print them (the table spans the page's width, so
    they fit), each column's best in bold (a Styler over `summary`)."""
    return summary(ev, metrics).style.format("{:.6f}").highlight_max(axis=0, props="font-weight: bold")


def means_and_intervals(ev: Evaluation, metrics: list[str]) -> None:
    """The means table across the page (every column readable at 1024 px with 6 systems), then the bars with their intervals."""
    st.subheader("Means")
    st.dataframe(means_table(ev, metrics), width="stretch")
    st.caption(
        "Means over the questions that have at least one relevant document; a question a system does not answer scores 0."
    )
    st.subheader("With 95% bootstrap intervals")
    st.vega_lite_chart(spec=charts.bars_spec(bars(ev, metrics)), width="stretch")  # the chart of bars_with_intervals
    st.caption(
        f"Percentile bootstrap over the questions, {stats.RESAMPLES} resamples, seed {stats.SEED}: overlapping "
        "intervals are a warning, not a verdict; the Compare page pairs the questions."
    )


def fitting_note(ds: Dataset, waiting: tuple[str, ...], dims: int) -> str:
    """What the page shows while LSA's SVD is fitted: the systems that follow (escaped) and why they wait."""
    names = ", ".join(escape_markdown(s) for s in waiting)
    return (
        f"{cache.fitting_text(ds, dims)}. Meanwhile, the systems that need no fit; {names} follow here when it is done."
    )


def first_look(ds: Dataset, ev: Evaluation, metrics: list[str], waiting: tuple[str, ...], dims: int) -> None:
    """The means and intervals of the systems that need no fit, under `fitting_note` (the page replaces them with
    every system's once the fit is done)."""
    st.info(fitting_note(ds, waiting, dims), icon=":material/hourglass_top:")
    means_and_intervals(ev, metrics)


def evaluation(ds: Dataset, shown: list[str], table: list[str], dims: int) -> Evaluation:
    """Every system's values of the `shown` metrics. On a large corpus's first LSA fit at this d (seconds), the
    systems that need no fit are drawn at once (`first_look`, with the `table` metrics) while the fit runs in the
    engine's thread, and cleared once every system's values are in."""
    waiting = cache.waiting(ds)
    if not waiting:
        return cache.evaluation(shown)
    cache.fit_in_background(ds)
    first = st.empty()
    with first.container():
        first_look(ds, cache.first_evaluation(shown), table, waiting, dims)
    ev = cache.evaluation(shown, spinner=False)  # waits for the background fit (the engine makes it once)
    first.empty()
    return ev


def curves(ev: Evaluation, metrics: list[str], chosen: str, k: int) -> None:
    """The metric versus the cutoff k, the sidebar's k marked (a caption instead for a metric without a cutoff)."""
    name = state.metric_label(chosen).split("@")[0]
    if not metrics:
        st.caption(
            f"{name} takes no cutoff (the question's judgements set how deep it looks), so there is no curve over k."
        )
        return
    st.subheader(f"{name} versus the cutoff k")
    st.vega_lite_chart(
        spec=charts.curves_spec(curve(ev, metrics), name + "@k", k), width="stretch"
    )  # the chart of charts.curves
