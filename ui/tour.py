"""The Tour's parts: the article's argument in ten steps, each a live view of the data and the sidebar's values
with a sentence or two computed from it, and the navigation between the steps (the step lives in the URL: ?step=4).

The sentences are pure functions of numbers (tests/ui/test_ui_tour.py feeds them numbers and checks the wording: a
"tie" is said only when the paired bootstrap's interval holds zero); the findings among them are the library's
(retrieval.analyses: fusion_gains for where two systems part and what a fusion gains, noise for a tie and the
noise, diagnosis for the failures), rendered here with the names escaped and the stressed phrase in bold. The views reuse the other pages' parts
(ui.overview, ui.per_question, ui.diagnosis, ui.compare, ui.charts) and read every figure through ui.cache.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from retrieval.analyses import diagnosis, fusion_gains, noise, stemming, teaching
from retrieval.analyses.fusion_gains import Gains, Split, Standing, explain_fusion, found, gains_text, picks
from retrieval.analyses.noise import Noise, Tie
from retrieval.core.params import Params
from retrieval.corpus.dataset import Dataset
from retrieval.engine import adhoc
from retrieval.evaluation import stats
from retrieval.evaluation.experiment import Evaluation

from . import cache, charts, compare, overview, router, state
from . import diagnosis as diag
from . import per_question as pq
from .format import MINUS, agree, clip, interval_text, plural, signed
from .markdown import bold, highlight_markdown
from .markdown import escape_markdown as plain

STEPS = (  # the article's argument, in order: each step's title
    "The corpus and the questions",
    "One question, four metrics",
    "BM25 against LSA, on average",
    "Where each one fails",
    "Why a question fails: the words it shares",
    "Fusing the two",
    "Is the difference noise?",
    "The scikit-learn ndcg_score trap",
    "What a dense retriever changes",
    "Now try your own data",
)
N_STEPS = len(STEPS)
KEY_PREV, KEY_NEXT = "tour_prev", "tour_next"
KEY_QUESTION = "tour_question"
BASE, OTHER, DENSE = "BM25", "LSA", "dense"  # the article's two retrievers, and the dense one of its hypothesis
FUSIONS = ("weighted", "RRF")
SPLIT_K_MAX = overview.K_MAX  # the smallest cutoff at which two systems part is looked for up to here
SAMPLE_QUESTIONS = 5
TRAP_K = 5  # the article's worked example is scored at 5
SHOWN_RELEVANT = 2  # relevant documents shown in full under a failing question
EXAMPLE_CLASSES = ("vocabulary gap", diagnosis.HOMONYMY)  # the article's two failures, in its order


# ------------------------------------------------------------------------------------------ the step and its URL


def clamp_step(raw, n: int = N_STEPS) -> int:
    """A step number from the URL or a button, kept within 1..n: a number is truncated and clamped (0 -> 1,
    99 -> n, 4.7 -> 4), anything else (empty, 'abc', NaN) is step 1; a repeated parameter takes its last value."""
    if isinstance(raw, (list, tuple)):
        raw = raw[-1] if raw else None
    try:
        value = float(str(raw).strip())
    except (TypeError, ValueError):
        return 1
    if math.isnan(value):
        return 1
    if math.isinf(value):
        return n if value > 0 else 1
    return min(n, max(1, int(value)))


def go(step: int) -> None:
    """Move to a step (the Previous and Next buttons' callback): the bound widget carries it into the URL."""
    st.session_state[state.STEP] = clamp_step(step)


def progress_text(step: int, n: int = N_STEPS) -> str:
    """'Step 4 of 10: Where each one fails'."""
    return f"Step {step} of {n}: {STEPS[step - 1]}"


def navigation() -> int:
    """The title, Previous / the step picker / Next, and the progress; returns the current step (1..N_STEPS).

    The picker is bound to the URL (?step=4); a step the URL gives out of range or not as a number is clamped
    on the session's first run (Streamlit drops such a value from the URL, the clamped one stays shown)."""
    if state.STEP not in st.session_state or st.session_state[state.STEP] not in range(1, N_STEPS + 1):
        st.session_state[state.STEP] = clamp_step(st.query_params.get(state.STEP, 1))
    st.title("Tour")
    step = st.segmented_control(
        "Step",
        list(range(1, N_STEPS + 1)),
        key=state.STEP,
        required=True,
        bind="query-params",
        persist_state="session",
        label_visibility="collapsed",
        width="stretch",
        help="Jump to a step; the address bar keeps it (?step=4), so a link reopens this step.",
    )
    step = clamp_step(
        step
    )  # the widget's value, not the one read before it: the browser's Back button sets it from the URL
    left, middle, right = st.columns([1, 3, 1], vertical_alignment="center")
    left.button(
        "Previous",
        key=KEY_PREV,
        on_click=go,
        args=(step - 1,),
        disabled=step <= 1,
        icon=":material/arrow_back:",
        width="stretch",
    )
    middle.progress(step / N_STEPS, text=progress_text(step))
    right.button(
        "Next",
        key=KEY_NEXT,
        on_click=go,
        args=(step + 1,),
        disabled=step >= N_STEPS,
        icon=":material/arrow_forward:",
        width="stretch",
    )
    if step == 1:
        st.caption(
            "The article *The retriever must be measured on its own*, step by step, on the data and the sidebar's "
            "values in force: every number below is computed now, so move a slider and the story follows."
        )
    return step


# ------------------------------------------------------------------------------------------ what every step reads


@dataclass(frozen=True)
class View:
    """What the steps read: the dataset, its evaluation at the sidebar's values, the cutoff and the chosen metric."""

    ds: Dataset
    ev: Evaluation
    k: int
    metric: str  # the sidebar's metric at k, e.g. ndcg@5
    params: Params
    name: str = ""  # the dataset as every page names it ("invented · edited: 1 grade"), plain text
    added: int = 0  # judgements the workspace's grades add to the loaded ones

    @property
    def label(self) -> str:
        return state.metric_label(self.metric)

    @property
    def title(self) -> str:
        """The dataset's name as the pages write it (with its edits)."""
        return self.name or self.ds.name

    @property
    def table(self) -> list[str]:
        """The four metrics at k (then the sidebar's, when it is another)."""
        return overview.table_metrics(self.k, self.metric)

    @property
    def qids(self) -> list[str]:
        """The evaluated questions' ids, in the order of the evaluation's values."""
        return [self.ds.query_ids[q] for q in self.ds.evaluated]


def view(ds: Dataset) -> View:
    """The evaluation of every system at the sidebar's values, on the four metrics and the sidebar's metric."""
    k, metric = state.cutoff(), state.metric_name()
    return View(
        ds,
        cache.evaluation(overview.table_metrics(k, metric), ds),
        k,
        metric,
        cache.ranking_params(ds),
        cache.dataset_label(),
        len(cache.new_judgements()),
    )


def fmt6(x: float) -> str:
    """A mean as the article's tables print it."""
    return f"{x:.6f}"


def id_list(ids: Sequence[str], limit: int = 6) -> str:
    """'q01, q12' (escaped), the first `limit` and how many more (fusion_gains.id_list)."""
    return fusion_gains.id_list(ids, limit, plain)


def means_table(ev: Evaluation, systems: Sequence[str], metrics: list[str]):
    """The Overview's means (6 decimals, each column's best in bold) for some systems only."""
    frame = overview.summary(ev, metrics).loc[list(systems)]
    return frame.style.format("{:.6f}").highlight_max(axis=0, props="font-weight: bold")


def some_bars(ev: Evaluation, systems: Sequence[str], metrics: list[str]) -> None:
    """The Overview's bars with 95% bootstrap intervals, for some systems only (their colours as everywhere)."""
    frame = overview.bars(ev, metrics)
    st.vega_lite_chart(
        spec=charts.bars_spec(frame[frame["system"].isin(list(systems))].reset_index(drop=True)), width="stretch"
    )


# ------------------------------------------------------------------------------------------ 1. the corpus


@dataclass(frozen=True)
class CorpusFacts:
    """Sizes and judgements of a dataset."""

    documents: int
    questions: int
    evaluated: int  # questions with at least one relevant document
    judgements: int
    grades: dict[int, int]  # positive grade -> judgements with it, highest first
    not_relevant: int  # judgements with a grade of 0 or less
    added: int = 0  # of the judgements, those the workspace's grades add to the loaded ones (the Judge page)


def corpus_facts(ds: Dataset, added: int = 0) -> CorpusFacts:
    """The dataset's sizes and its judgements by grade (`added` of them from the workspace's grades)."""
    g = ds.qrels.grade
    counts = Counter(int(x) for x in g[g > 0])
    return CorpusFacts(
        ds.n_docs,
        ds.n_queries,
        int(ds.evaluated.size),
        int(g.size),
        dict(sorted(counts.items(), reverse=True)),
        int((g <= 0).sum()),
        int(added),
    )


def corpus_sentence(name: str, f: CorpusFacts) -> str:
    """What the dataset holds, in words (the name escaped)."""
    relevant = sum(f.grades.values())
    by_grade = ", ".join(f"{n:,} with grade {g}" for g, n in list(f.grades.items())[:4])
    if len(f.grades) > 4:
        by_grade += f", {sum(list(f.grades.values())[4:]):,} with lower grades"
    rest = f.questions - f.evaluated
    left_out = (
        f" The other {plural(rest, 'question')} {'has' if rest == 1 else 'have'} no relevant document and "
        f"{'is' if rest == 1 else 'are'} left out of every mean."
        if rest
        else ""
    )
    zero = (
        f" {plural(f.not_relevant, 'judgement')} {agree(f.not_relevant, 'says', 'say')} *not relevant*."
        if f.not_relevant
        else ""
    )
    if f.added:
        zero += (
            f" Of the {plural(f.judgements, 'judgement')} in use, {f.judgements - f.added:,} came with the data and "
            f"{f.added:,} {'is a grade' if f.added == 1 else 'are grades'} given on the Judge page."
        )
    return (
        f"**{plain(name)}** holds {plural(f.documents, 'document')} and {plural(f.questions, 'question')}; "
        f"{f.evaluated:,} of the questions have at least one relevant document, and every mean in this tour is over them."
        f"{left_out} The {plural(relevant, 'relevant judgement')} ({by_grade}) are all a retriever is measured "
        f"against: for each question, the documents a person said are right, and how right.{zero}"
    )


def sample_questions(ds: Dataset, n: int = SAMPLE_QUESTIONS) -> pd.DataFrame:
    """The first n evaluated questions: id, text and their relevant documents with grades."""
    rows = []
    for q in ds.evaluated[:n]:
        rel = ds.relevant_of(int(q))
        rows.append(
            {
                "question": ds.query_ids[q],
                "text": clip(ds.query_texts[q]),
                "relevant documents (grade)": ", ".join(
                    f"{d} ({g})" for d, g in sorted(rel.items(), key=lambda x: (-x[1], x[0]))
                ),
            }
        )
    return pd.DataFrame(rows)


def step_corpus(v: View) -> None:
    f = corpus_facts(v.ds, v.added)
    st.markdown(corpus_sentence(v.name or v.ds.name, f))
    cols = st.columns(4)
    cols[0].metric("documents", f"{f.documents:,}", border=True)
    cols[1].metric("questions", f"{f.questions:,}", border=True)
    cols[2].metric("evaluated", f"{f.evaluated:,}", border=True, help="Questions with at least one relevant document.")
    cols[3].metric(
        "judgements",
        f"{f.judgements:,}",
        border=True,
        help=f"{f.judgements - f.added:,} loaded and {f.added:,} given on the Judge page." if f.added else None,
    )
    st.dataframe(
        sample_questions(v.ds),
        hide_index=True,
        width="stretch",
        column_config={
            "question": st.column_config.TextColumn(width=70),
            "text": st.column_config.TextColumn(width="medium"),
            "relevant documents (grade)": st.column_config.TextColumn(width="medium"),
        },
    )
    st.caption(
        f"The first {min(SAMPLE_QUESTIONS, f.evaluated)} of the {plural(f.evaluated, 'question')}; the Data page shows "
        f"{agree(f.evaluated, 'it', 'them all')}."
    )


# ------------------------------------------------------------------------------------------ 2. one question


def default_question(first_rank: np.ndarray, k: int) -> int:
    """The question the step opens on (a position in the evaluated questions): the first whose first relevant
    document is found but not first, inside the top k (every metric then says something different), else the
    first found at rank 1, else the first."""
    fr = np.asarray(first_rank)
    for hit in (np.flatnonzero((fr > 1) & (fr <= k)), np.flatnonzero(fr == 1)):
        if hit.size:
            return int(hit[0])
    return 0


def found_in_top(ds: Dataset, ranking, q: int, k: int) -> tuple[int, int]:
    """(relevant documents of question q in the system's top k, relevant documents of q)."""
    sel = (ds.qrels.query == q) & ds.qrels.relevant
    ranks = ranking.judged_rank[sel]
    return int(((ranks > 0) & (ranks <= k)).sum()), int(sel.sum())


def metrics_sentence(
    system: str, qid: str, k: int, rank: int, found: int, relevant: int, values: Mapping[str, float]
) -> str:
    """The four metrics of one question read aloud, from its first relevant rank, the relevant documents found in
    the top k and the metric values (keys hit@k, recall@k, mrr, ndcg@k)."""
    s, q = plain(system), "question " + plain(qid)
    hit, rec, rr, nd = values[f"hit@{k}"], values[f"recall@{k}"], values["mrr"], values[f"ndcg@{k}"]
    if rank == 0:
        return (
            f"{s} finds no relevant document for {q} anywhere in its list: hit@{k} = {hit:.0f}, recall@{k} = {rec:.3f}, "
            f"RR = {rr:.3f} and nDCG@{k} = {nd:.3f}. Every metric agrees when nothing is found."
        )
    where = f"inside the top {k}" if rank <= k else f"beyond the top {k}"
    return (
        f"{s} puts the first relevant document of {q} at rank {rank}, {where}. "
        f"**hit@{k} = {hit:.0f}**: {'a' if hit else 'no'} relevant document in the top {k}. "
        f"**recall@{k} = {rec:.3f}**: "
        + (
            f"its only relevant document is {'' if found else 'not '}there. "
            if relevant == 1
            else f"{found} of its {relevant:,} relevant documents {'is' if found == 1 else 'are'} there. "
        )
        + f"**RR = 1/{rank} = {rr:.3f}**: the reciprocal of that rank (its mean over the questions is the MRR; it has no cutoff). "
        f"**nDCG@{k} = {nd:.3f}**: the grades found, each discounted by 1/log2(rank + 1), over the same sum in the best order possible."
    )


def choose_question(v: View, system: str = BASE) -> int:
    """The question selector (a position in the evaluated questions), opened on `default_question`."""
    qids = v.qids
    if st.session_state.get(KEY_QUESTION) not in qids:
        st.session_state.pop(KEY_QUESTION, None)
    start = default_question(v.ev.first_rank[system], v.k)
    texts = {qid: v.ds.query_texts[q] for qid, q in zip(qids, v.ds.evaluated)}
    qid = st.selectbox(
        "question",
        qids,
        index=start,
        key=KEY_QUESTION,
        persist_state="session",
        format_func=lambda x: f"{x} · {pq.cut(texts[x], 90)}",
        help="Opened on a question whose first relevant document is found but not first; any can be chosen.",
    )
    return qids.index(qid)


def step_metrics(v: View) -> None:
    i = choose_question(v)
    q = int(v.ds.evaluated[i])
    r = v.ev.rankings[BASE]
    values = {m: float(v.ev.values[BASE][m][i]) for m in v.table}
    found, relevant = found_in_top(v.ds, r, q, v.k)
    rank = int(v.ev.first_rank[BASE][i])
    if len(v.ds.query_texts[q]) > 90:  # the selector cuts it there
        st.markdown(f"**{plain(v.ds.query_ids[q])}** · {plain(clip(v.ds.query_texts[q]))}")
    st.markdown(metrics_sentence(BASE, v.ds.query_ids[q], v.k, rank, found, relevant, values))
    cols = st.columns(4)
    for col, (label, name) in zip(
        cols,
        (
            (f"hit@{v.k}", f"hit@{v.k}"),
            (f"recall@{v.k}", f"recall@{v.k}"),
            ("RR", "mrr"),
            (f"nDCG@{v.k}", f"ndcg@{v.k}"),
        ),
    ):
        col.metric(label, f"{values[name]:.3f}", border=True)
    table = pq.Question(v.ds, v.ev, q).ranking_table(BASE, v.k)
    if table.empty:
        st.info(
            f"{BASE} returns nothing for this question: no word of it is in the corpus after the stop words.",
            icon=":material/block:",
        )
    else:
        st.dataframe(
            pq.styled(table),
            hide_index=True,
            width="stretch",
            column_config={
                "rank": st.column_config.NumberColumn("#", width=36),
                "text": st.column_config.TextColumn("text", width="large"),
            },
        )
        st.caption(
            f"{BASE}'s top {v.k} (the sidebar's k): relevant documents in green with their grade (✓). "
            "The Per question page shows every system's list."
        )


# ------------------------------------------------------------------------------------------ 3. means side by side


def tie_sentence(a: str, b: str, mean_a: float, mean_b: float, iv: stats.Interval, label: str, n: int) -> str:
    """Whether two systems tie on average (noise.Tie: "tie" only when the means are equal or the 95% interval holds
    zero; otherwise which is better, beyond noise), names escaped, the verdict in bold."""
    return Tie(a, b, mean_a, mean_b, iv, label, n).text(plain, bold)


def step_means(v: View) -> None:
    diff = v.ev.values[BASE][v.metric] - v.ev.values[OTHER][v.metric]
    iv, _ = compare.bootstrap(diff)
    st.markdown(
        tie_sentence(BASE, OTHER, v.ev.mean(BASE, v.metric), v.ev.mean(OTHER, v.metric), iv, v.label, int(diff.size))
    )
    cols = st.columns(3)
    cols[0].metric(f"{BASE}, {v.label}", fmt6(v.ev.mean(BASE, v.metric)), border=True)
    cols[1].metric(f"{OTHER}, {v.label}", fmt6(v.ev.mean(OTHER, v.metric)), border=True)
    difference(cols[2], BASE, OTHER, iv)
    st.dataframe(means_table(v.ev, (BASE, OTHER), v.table), width="stretch")
    some_bars(v.ev, (BASE, OTHER), v.table)
    st.caption(
        "Means over the questions with a relevant document, with 95% bootstrap intervals. Step 7 asks the same "
        "question of the fusion; the Compare page of any two systems."
    )


def difference(col, a: str, b: str, iv: stats.Interval) -> None:
    """The mean difference a - b as a metric, its 95% interval underneath."""
    col.metric(
        f"{plain(a)} {MINUS} {plain(b)}",
        signed(iv.mean),
        delta=f"95%: {interval_text(iv.low, iv.high)}",
        delta_color="gray",
        delta_arrow="off",
        border=True,
        help=f"Mean per-question difference; its interval from the paired bootstrap over the questions, "
        f"{stats.RESAMPLES:,} resamples, seed {stats.SEED}.",
    )


# ------------------------------------------------------------------------------------------ 4. where they fail


def disagreement_sentence(
    a: str, b: str, k: int, only_a: Sequence[str], only_b: Sequence[str], neither: Sequence[str], parts_at: int | None
) -> str:
    """Where two systems fail (fusion_gains.Split's sentence, names escaped, the cutoff where they part in bold and
    what to do with it), from the questions only one finds in the top k, those neither finds, and the smallest
    cutoff at which they part (None: they never do up to SPLIT_K_MAX)."""
    said = Split(a, b, k, tuple(only_a), tuple(only_b), tuple(neither), parts_at, SPLIT_K_MAX)
    aside = (
        f" (set k = {parts_at} in the sidebar); the table lists every question whose first relevant rank differs"
        if parts_at is not None
        else ""
    )
    return said.text(plain, bold, aside)


def rank_cells(v: View, system: str, rows: np.ndarray) -> list[str]:
    """A system's first relevant rank of the chosen questions as every page writes it (diagnosis.rank_text): a
    fusion's miss reads "> N" when one of its members lists a relevant document, else "not found"."""
    depth = v.params.fusion_depth if system in FUSIONS else None
    members = [m for m in v.params.members if m in v.ev.first_rank]
    found = (
        diagnosis.members_found([v.ev.first_rank[m] for m in members]) if members else np.zeros(len(v.qids), dtype=bool)
    )
    return [diagnosis.rank_text(int(v.ev.first_rank[system][i]), depth, bool(found[i])) for i in rows]


RANK_COLUMNS = {"question": st.column_config.TextColumn(width=70), "text": st.column_config.TextColumn(width="medium")}


def first_rank_rows(
    v: View, systems: Sequence[str], rows: np.ndarray, pair_k: int | None = None, text: bool = True
) -> pd.DataFrame:
    """The chosen questions (positions in the evaluated ones) with each system's first relevant rank; with
    `pair_k`, which of the first two systems finds it in its top k."""
    frame = pd.DataFrame({"question": [v.qids[i] for i in rows]})
    if text:
        frame["text"] = [pq.cut(v.ds.query_texts[v.ds.evaluated[i]], 120) for i in rows]
    for s in systems:
        frame[s] = rank_cells(v, s, rows)
    if pair_k is not None:
        a, b = systems[0], systems[1]
        fa, fb = found(v.ev.first_rank[a], pair_k), found(v.ev.first_rank[b], pair_k)
        who = np.where(fa & fb, "both", np.where(fa, f"{a} only", np.where(fb, f"{b} only", "neither")))
        frame[f"in the top {pair_k}"] = [who[i] for i in rows]
    return frame


def step_disagree(v: View) -> None:
    fa, fb = v.ev.first_rank[BASE], v.ev.first_rank[OTHER]
    in_a, in_b = found(fa, v.k), found(fb, v.k)
    parted = fusion_gains.split(BASE, OTHER, fa, fb, v.qids, v.k, SPLIT_K_MAX)
    only_a, only_b, neither = parted.only_a, parted.only_b, parted.neither
    st.markdown(disagreement_sentence(BASE, OTHER, v.k, only_a, only_b, neither, parted.parts_at))
    cols = st.columns(3)
    cols[0].metric(f"{BASE} alone, top {v.k}", f"{len(only_a):,}", border=True)
    cols[1].metric(f"{OTHER} alone, top {v.k}", f"{len(only_b):,}", border=True)
    cols[2].metric(f"neither, top {v.k}", f"{len(neither):,}", border=True)
    rows = np.flatnonzero(in_a != in_b)
    what = f"Only the questions one finds in its top {v.k} and the other does not"
    if not rows.size:
        rows = np.flatnonzero(fa != fb)
        what = "No question splits them at this k; these are the questions whose first relevant rank differs"
    if rows.size:
        st.dataframe(
            first_rank_rows(v, (BASE, OTHER), rows, v.k), hide_index=True, width="stretch", column_config=RANK_COLUMNS
        )
        st.caption(
            f"{what}: the rank of the first relevant document. The Per question page has the heatmap of every question."
        )


# ------------------------------------------------------------------------------------------ 5. why


def examples(
    cases: Sequence[diagnosis.Case], classes: Sequence[str] = EXAMPLE_CLASSES
) -> dict[str, diagnosis.Case | None]:
    """The first failing question of each class (None when the class has none): the tour's examples."""
    return {kind: next((c for c in cases if c.kind == kind), None) for kind in classes}


def shown_classes(cases: Sequence[diagnosis.Case]) -> list[str]:
    """The classes step 5 shows, in diagnosis.CLASSES order: the article's two (an example, or a note that this data
    has none) and every other class that occurs."""
    present = {c.kind for c in cases}
    return [kind for kind in diagnosis.CLASSES if kind in EXAMPLE_CLASSES or kind in present]


CLASS_PHRASES = {
    diagnosis.UNJUDGED: "its first result unjudged"
}  # a class inside a sentence, when "a <class>" reads badly


def class_phrase(kind: str) -> str:
    """A class inside a sentence: "a vocabulary gap", "its first result unjudged"."""
    return CLASS_PHRASES.get(kind, f"a {kind}")


def case_sentence(c: diagnosis.Case, k: int) -> str:
    """Why one question fails at cutoff k, from its diagnosis (every id, word and text escaped)."""
    q = f"Question {plain(c.qid)}, “{plain(clip(c.question.strip(), 200))}”"
    rel = len(c.relevant)
    sharing = [d for d, _, w in c.relevant if w]
    rel_text = (
        f"none of its {plural(rel, 'relevant document')} shares a word with it (after the stop words)"
        if not sharing
        else f"{len(sharing)} of its {plural(rel, 'relevant document')} {agree(len(sharing), 'shares', 'share')} a word with it"
    )
    if c.kind == "vocabulary gap":
        first = (
            "its list is empty"
            if c.first_result is None
            else f"its first result is {plain(c.first_result)}, on no shared word"
        )
        return (
            f"{q}: {plain(c.system)} finds nothing relevant, {first}, and {rel_text}. A **vocabulary gap**: no retriever "
            "that matches words can find these documents; the cure is one that does not depend on the same words."
        )
    first = plain(c.first_result or "")
    if c.kind == diagnosis.HOMONYMY:
        words = ", ".join(f"“{plain(w)}”" for w in c.first_result_words)
        return (
            f"{q}: {plain(c.system)} puts {first} first on {words}, which it shares with the question, and a judgement "
            f"says it is not relevant (grade {c.first_grade}), while {rel_text}. A **surface homonymy**: worse than no "
            "answer, a convincing and wrong context."
        )
    if c.kind == diagnosis.UNJUDGED:
        words = ", ".join(f"“{plain(w)}”" for w in c.first_result_words)
        return (
            f"{q}: {plain(c.system)} puts {first} first on {words}, which it shares with the question, while {rel_text}. "
            f"No judgement names {first} for this question: **unjudged at the top**, not a wrong answer until a person "
            "says so. Read it and grade it on the Judge page: graded not relevant, it is a surface homonymy; graded "
            "relevant, the question is found at rank 1."
        )
    where = f"at rank {c.rank}" if c.rank > 0 else "further down than its list goes"
    said = f"{q}: the relevant document is there, {where}, beyond the top {k}. A **late rank**."
    if c.first_result is not None and c.first_grade is None:
        said += (
            f" Its first result, {first}, is unjudged: with a relevant document in the list the question is a late "
            f"rank, not *unjudged at the top*; graded relevant on the Judge page, {first} would put it at rank 1."
        )
    return said


def first_result_note(c: diagnosis.Case) -> str:
    """What a failing question's first result is, by the judgements: judged not relevant, or unjudged."""
    judged = "unjudged" if c.first_grade is None else f"judged not relevant (grade {c.first_grade})"
    later = f"; the first relevant document is at rank {c.rank}" if c.kind == "late rank" and c.rank > 0 else ""
    return f"{c.system}'s first result, {judged}{later}"


def missing_sentence(system: str, kind: str, threshold: int, judged_not_relevant: bool = True) -> str:
    """What the tour says when a class has no example on this data; for a surface homonymy on judgements that name no
    document not relevant (`judged_not_relevant` False), why there can be none."""
    if kind == diagnosis.HOMONYMY and not judged_not_relevant:
        return (
            f"No judgement of this data says *not relevant*, so no failure can be called a **{kind}** here: a question "
            f"{plain(system)} finds nothing relevant for, whose first result no judgement names and shares a word with "
            "it, is *unjudged at the top* until a person grades that result on the Judge page."
        )
    return f"On this data {plain(system)} fails no question on a **{kind}** in the top {threshold}: this class has no example here."


def counts_sentence(system: str, cases: Sequence[diagnosis.Case], n: int, threshold: int) -> str:
    """How many questions a system fails at cutoff k (`threshold`), by class, and of them those whose first result
    is unjudged, by class (diagnosis.failures_sentence; the system's name escaped, the only text it quotes)."""
    said = diagnosis.failures_sentence(diagnosis.failures(cases, plain(system), n, threshold))
    return (
        said
        + " The first check is the cheapest: which words does the question share with the documents it should have found?"
    )


def example_box(ds: Dataset, c: diagnosis.Case, k: int) -> None:
    """One failing question: its sentence, the question with its shared words coloured, and the documents."""
    with st.container(border=True):
        st.markdown(case_sentence(c, k))
        q = ds.query_index[c.qid]
        relevant_words = {w for _, _, ws in c.relevant for w in ws}
        colors = diag.question_colors(relevant_words, set(c.first_result_words))
        st.markdown("**Question:** " + highlight_markdown(clip(ds.query_texts[q]), colors))
        if c.first_result is not None:
            diag.doc_box(ds, c.question, c.first_result, first_result_note(c), diag.WRONG_COLOR)
        for d, g, _ in c.relevant[:SHOWN_RELEVANT]:
            diag.doc_box(ds, c.question, d, f"relevant, grade {g}", diag.RELEVANT_COLOR)
        if len(c.relevant) > SHOWN_RELEVANT:
            st.caption(
                f"and {plural(len(c.relevant) - SHOWN_RELEVANT, 'more relevant document')} (the Diagnosis page shows them all)."
            )
        if c.kind == diagnosis.UNJUDGED:
            st.page_link("pages/judge.py", label=f"Judge: grade {plain(c.first_result)}", icon=":material/rule:")


def base_cases(v: View) -> list[diagnosis.Case]:
    """BM25's failing questions at the sidebar's k, as the Diagnosis page files them (cached with its own)."""
    return diag.diagnose_all(v.ds, {BASE: v.ev.rankings[BASE]}, v.k, v.params)[BASE]


def stemmer_advice(e: stemming.StemmerEffect, stems: bool) -> str:
    """Where to see and set the stemmer, pointing the way its mean does (`stems`: the sidebar's analysis stems
    already, so the comparison is against none): never towards the lower mean."""
    where = "The Diagnosis page lists what it fixes and breaks"
    lower, higher = e.mean_change < 0, e.mean_change > 0  # False both for no change (and for NaN: no metric)
    if not stems:
        if lower:
            return (
                f"{where}. On this data the mean is higher without it, so no stemmer is the better setting here; the "
                "sidebar's *Text analysis* turns it on to see the questions it changes."
            )
        if higher:
            return f"{where}, and the sidebar's *Text analysis* turns it on: on this data it raises the mean."
        return f"{where}, and the sidebar's *Text analysis* turns it on."
    if lower:
        return (
            f"{where}, against none (the sidebar's *Text analysis* stems already). On this data the mean is higher "
            "without it: the sidebar's *Text analysis* turns it off."
        )
    return f"{where}, against none: the sidebar's *Text analysis* stems already" + (
        ", and on this data it raises the mean." if higher else "."
    )


def step_why(v: View) -> None:
    cases = base_cases(v)
    st.markdown(counts_sentence(BASE, cases, int(v.ds.evaluated.size), v.k))
    zero = bool((v.ds.qrels.grade <= 0).any())
    effect = diag.stemmer_effect(v.ds, v.params, v.k, v.metric)
    for kind, c in examples(cases, shown_classes(cases)).items():
        if c is None:
            st.info(missing_sentence(BASE, kind, v.k, zero), icon=":material/info:")
        else:
            example_box(v.ds, c, v.k)
            if kind == "vocabulary gap":
                st.markdown(plain(stemming.gap_sentence(effect, c.qid, BASE)))
    st.markdown(diag.effect_text(effect) + " " + stemmer_advice(effect, v.params.stemmer != "none"))
    st.caption(
        f"The examples are {BASE}'s first failing question of each class that occurs, chosen from the diagnosis of this data. "
        "The Diagnosis page has every failing question of every system, and BM25's score term by term."
    )


# ------------------------------------------------------------------------------------------ 6. fusion


def fusion_sentence(fusion: str, value: float, members: Mapping[str, float], label: str) -> str:
    """Where a fusion's mean stands against its members' (fusion_gains.Standing: above both, level with the better,
    between, below), names escaped, the fusion in bold."""
    return Standing(fusion, value, tuple(members.items()), label).text(plain, bold)


def ranks_sentence(fusion: str, fusion_ranks: np.ndarray, member_ranks: Sequence[np.ndarray]) -> str:
    """On the questions where the members' first relevant ranks differ: how often the fusion takes the better
    member's rank, beats both, or falls behind the better one (fusion_gains.Picks)."""
    return picks(fusion, fusion_ranks, member_ranks).text(plain)


GAINS_TABLE = " (the table below shows where each system puts them)"  # what step 6 adds to the gains' sentence


def gains_sentence(g: Gains, qids: Sequence[str], label: str, n_members: int) -> str:
    """Where a fusion's gain on the mean comes from (fusion_gains.gains_text), names escaped, the finding in bold."""
    return gains_text(g, qids, label, n_members, plain, bold, GAINS_TABLE)


def relevant_ranks(ds: Dataset, ranking, q: int, n: int = 4) -> str:
    """The ranks of a question's relevant documents in a system's list with their grades, best first: "1 (2), 3 (1)"
    ("none" when none is listed; "and N more" past n)."""
    sel = np.flatnonzero((ds.qrels.query == q) & ds.qrels.relevant)
    ranks = ranking.judged_rank[sel]
    order = np.argsort(ranks[ranks > 0], kind="stable")
    listed, grades = ranks[ranks > 0][order], ds.qrels.grade[sel][ranks > 0][order]
    if not listed.size:
        return "none"
    return ", ".join(f"{int(r)} ({int(g)})" for r, g in zip(listed[:n], grades[:n])) + (
        f" and {listed.size - n} more" if listed.size > n else ""
    )


GAIN_RANKS = "ranks of its relevant documents (grades)"


def gains_rows(v: View, systems: Sequence[str], rows: Sequence[int]) -> pd.DataFrame:
    """The questions a fusion gains on, a row per question and system (so the table is four columns wide whatever the
    number of systems: one column per system was cut at 1024 px): the system's value of the sidebar's metric and the
    ranks (grades) of the question's relevant documents in its list, "1 (2), 3 (1)"."""
    return pd.DataFrame(
        [
            {
                "question": v.qids[i],
                "system": s,
                v.label: round(float(v.ev.values[s][v.metric][i]), 3),
                GAIN_RANKS: relevant_ranks(v.ds, v.ev.rankings[s], int(v.ds.evaluated[i])),
            }
            for i in rows
            for s in systems
        ],
        columns=["question", "system", v.label, GAIN_RANKS],
    )


def fusion_intro(members: Sequence[str], p: Params) -> str:
    """What the two fusions compute, with the sidebar's members and values."""
    names = [plain(m) for m in members]
    if len(names) == 2:
        weights = f"alpha = {p.alpha:g} on {names[0]}, 1 {MINUS} alpha on {names[1]}"
    elif len(names) > 2:
        weights = "one weight per member, from the sidebar"
    else:
        weights = "a single member"
    return (
        f"The weighted fusion adds the members' min-max normalised scores ({weights}); RRF adds 1/({p.rrf_k:g} + rank) "
        f"over each member's top {p.fusion_depth}. Members: {', '.join(names)} (the sidebar's *fused systems*)."
    )


def step_fusion(v: View) -> None:
    members = [m for m in v.params.members if m in v.ev.values]
    fusions = [f for f in FUSIONS if f in v.ev.values]
    shown = [*members, *fusions]
    st.markdown(fusion_intro(members, v.params))
    gains = {}
    for f in fusions:
        said = explain_fusion(v.ev, f, v.metric, v.label, members, v.qids)
        gains[f] = said.gains
        st.markdown(
            f"- {said.standing.text(plain, bold)} {said.picks.text(plain)} "
            + gains_text(said.gains, v.qids, v.label, len(members), plain, bold, GAINS_TABLE)
        )
    st.dataframe(means_table(v.ev, shown, v.table), width="stretch")
    gained = sorted({i for g in gains.values() for i in g.above})
    if gained:
        st.dataframe(
            gains_rows(v, shown, gained),
            hide_index=True,
            width="stretch",
            column_config={
                "question": st.column_config.TextColumn(width=70),
                "system": st.column_config.TextColumn(width=90),
                v.label: st.column_config.NumberColumn(format="%.3f", width=80),
                GAIN_RANKS: st.column_config.TextColumn(width="large"),
            },
        )
        st.caption(
            f"The questions a fusion scores above every member on, on {v.label}, a row per system: its value and "
            "the ranks of the question's relevant documents in its list (their grades in brackets). Where the first ranks are the same, compare "
            "the later ones."
        )
    m = np.stack([v.ev.first_rank[s] for s in members])
    rows = np.flatnonzero((m != m[0]).any(axis=0))
    if rows.size:
        st.dataframe(
            first_rank_rows(v, shown, rows, text=False), hide_index=True, width="stretch", column_config=RANK_COLUMNS
        )
        st.caption(
            "The questions where the members' first relevant ranks differ, and where each fusion puts the first relevant "
            "document: a fusion can only gain where its members err at different points."
        )


# ------------------------------------------------------------------------------------------ 7. noise


def best_of(ev: Evaluation, systems: Sequence[str], metric: str) -> str:
    """The system with the highest mean (the first listed on a tie: noise.best_of)."""
    return noise.best_of(ev, systems, metric)


def noise_sentence(fusion: str, member: str, iv: stats.Interval, label: str, n: int) -> str:
    """The plain reading of the best fusion against its best member: noise or not, and what that means (noise.Noise),
    names escaped."""
    return Noise(fusion, member, iv, label, n).text(plain)


def step_noise(v: View) -> None:
    members = [m for m in v.params.members if m in v.ev.values]
    fusions = [f for f in FUSIONS if f in v.ev.values]
    fusion, member = best_of(v.ev, fusions, v.metric), best_of(v.ev, members, v.metric)
    diff = v.ev.values[fusion][v.metric] - v.ev.values[member][v.metric]
    iv, bins = compare.bootstrap(diff)
    st.markdown(
        f"The better fusion, **{plain(fusion)}** ({v.ev.mean(fusion, v.metric):.3f}), against the better of its "
        f"members, **{plain(member)}** ({v.ev.mean(member, v.metric):.3f}), on {v.label}: the paired bootstrap of "
        f"their per-question differences, {stats.RESAMPLES:,} resamples, seed {stats.SEED}."
    )
    kind, text = compare.verdict(iv, fusion, member, v.label)
    getattr(st, kind)(text, icon=":material/balance:" if kind == "info" else ":material/trending_up:")
    st.markdown(noise_sentence(fusion, member, iv, v.label, int(diff.size)))
    cols = st.columns(3)
    cols[0].metric(f"{plain(fusion)}, {v.label}", fmt6(v.ev.mean(fusion, v.metric)), border=True)
    cols[1].metric(f"{plain(member)}, {v.label}", fmt6(v.ev.mean(member, v.metric)), border=True)
    difference(cols[2], fusion, member, iv)
    st.altair_chart(charts.histogram_with_interval(bins, iv.low, iv.high, iv.mean), width="stretch")
    st.caption(
        "The shaded band is the 95% interval, the dashed line zero, the red line the observed mean difference. "
        "The Compare page pairs any two systems."
    )


# ------------------------------------------------------------------------------------------ 8. the trap


def trap_sentence(ours: float, whole: float, only: float, missing: Sequence[str], k: int, advice: bool = True) -> str:
    """The scikit-learn trap read aloud from the three numbers and the relevant documents not retrieved
    (teaching.trap_text; with the advice to pass the whole universe, unless `advice` is False: it was given once
    already), ids escaped, the inflated value in bold."""
    return teaching.trap_text(ours, whole, only, missing, k, advice, plain, bold, lambda s: f"`{s}`")


def step_trap(v: View) -> None:
    toy = teaching.article_toy("a third")
    trap = teaching.sklearn_trap(toy, TRAP_K)
    ours = teaching.rank_metrics(toy, TRAP_K)[f"nDCG@{TRAP_K} (linear gain)"]
    missing = [d for d in toy.relevant if d not in toy.ranking]
    grades = ", ".join(f"{plain(d)} = {g}" for d, g in toy.judged.items())
    st.markdown(
        f"The article's worked example: relevant {grades}; the ranking {' '.join(plain(d) for d in toy.ranking)}; "
        f"the universe {' '.join(plain(d) for d in toy.universe)}. A check of our nDCG against scikit-learn hides a trap."
    )
    st.markdown(trap_sentence(ours, trap.whole, trap.retrieved_only, missing, TRAP_K))
    cols = st.columns(3)
    cols[0].metric(f"ours, nDCG@{TRAP_K}", fmt6(ours), border=True, help="The ideal DCG from every judged document.")
    cols[1].metric(
        "sklearn, universe", fmt6(trap.whole), border=True, help="ndcg_score given every document of the universe."
    )
    cols[2].metric(
        "sklearn, retrieved",
        fmt6(trap.retrieved_only),
        border=True,
        help="ndcg_score given only the retrieved documents.",
    )
    calls = (
        f"ndcg_score([{list(trap.y_true_whole)}], [{list(trap.y_score_whole)}], k={TRAP_K})  # whole universe\n"
        f"ndcg_score([{list(trap.y_true_retrieved)}], [{list(trap.y_score_retrieved)}], k={TRAP_K})  # only the retrieved"
    )
    st.expander("what was passed to ndcg_score").code(calls, language="python")
    st.caption("The Metrics lab lets you edit this ranking and watch every DCG term, and the trap, move.")
    trap_on_the_data(v)


def split_questions(ds: Dataset, ranking, k: int) -> list[int]:
    """The evaluated questions (indices) with a relevant document in the system's top k and another outside it (a
    recall@k strictly between 0 and 1): where the trap can show on real data."""
    out = []
    for q in ds.evaluated:
        found, relevant = found_in_top(ds, ranking, int(q), k)
        if 0 < found < relevant:
            out.append(int(q))
    return out


def trap_question(ds: Dataset, ranking, k: int) -> int | None:
    """The first of `split_questions` whose top k is full, None when there is none. With fewer than k documents
    listed, scikit-learn's top k takes unretrieved documents (score 0) too, which then earn gain in its DCG and in
    none of ours: neither of its calls can agree with our nDCG, and the trap no longer shows alone."""
    return next((q for q in split_questions(ds, ranking, k) if int(ranking.n_results[q]) >= k), None)


def no_trap_sentence(name: str, system: str, k: int, split: Sequence[str]) -> str:
    """Why the trap has no example on the data at this k, from the questions with a relevant document in the top k
    and another outside it (`split`, their ids: the system lists fewer than k documents for each)."""
    if not split:
        return (
            f"**On {plain(name)}** no question has a relevant document in {system}'s top {k} and another outside it, "
            "so the trap does not show here at this k (try a smaller k in the sidebar)."
        )
    one = len(split) == 1
    return (
        f"**On {plain(name)}**, {plural(len(split), 'question')} ({id_list(split)}) {'has' if one else 'have'} a relevant "
        f"document in {system}'s top {k} and another outside it, but {system} lists fewer than {k} documents for "
        f"{'it' if one else 'each'}: scikit-learn's top {k} would then take unretrieved documents too, and its numbers "
        "would differ from ours for that reason as well. Try a smaller k in the sidebar to see the trap on this data."
    )


def data_toy(ds: Dataset, ranking, q: int, k: int) -> teaching.Toy:
    """A question's top k as the trap's ranking, with its judgements; the universe is the ranking and every judged
    document (the corpus's other documents score 0 and have no grade: with k documents listed they change neither call)."""
    ids = tuple(ranking.top_ids(ds, q, k))
    judged = dict(adhoc.judgements_of(ds, q))
    return teaching.Toy(ids, judged, tuple(dict.fromkeys([*ids, *judged])))


def trap_on_the_data(v: View) -> None:
    """The same check on one question of the dataset in use, against the engine's own nDCG."""
    r = v.ev.rankings[BASE]
    q = trap_question(v.ds, r, v.k)
    if q is None:
        st.markdown(no_trap_sentence(v.title, BASE, v.k, [v.ds.query_ids[x] for x in split_questions(v.ds, r, v.k)]))
        return
    toy = data_toy(v.ds, r, q, v.k)
    trap = teaching.sklearn_trap(toy, v.k)
    i = int(np.flatnonzero(v.ds.evaluated == q)[0])
    ours = float(v.ev.values[BASE][f"ndcg@{v.k}"][i])
    missing = [d for d in toy.relevant if d not in toy.ranking]
    st.markdown(
        f"**On {plain(v.title)}**, question {plain(v.ds.query_ids[q])} and {BASE}'s top {v.k}, the same check: "
        + trap_sentence(ours, trap.whole, trap.retrieved_only, missing, v.k, advice=False)
    )
    cols = st.columns(3)
    cols[0].metric(f"ours, nDCG@{v.k}", fmt6(ours), border=True, help="The engine's nDCG of this question.")
    cols[1].metric(
        "sklearn, universe",
        fmt6(trap.whole),
        border=True,
        help="ndcg_score given the ranking and every judged document.",
    )
    cols[2].metric(
        "sklearn, retrieved", fmt6(trap.retrieved_only), border=True, help=f"ndcg_score given only the top {v.k}."
    )


# ------------------------------------------------------------------------------------------ 9. dense


def dense_example_sentence(c: diagnosis.Case, dense_rank: int, threshold: int) -> str:
    """What dense does with one of BM25's failing questions: fixed (a relevant document in its top t) or not."""
    q = "Question " + plain(c.qid)
    base = diagnosis.rank_words(c.rank)
    if 0 < dense_rank <= threshold:
        return (
            f"{q} ({BASE}: {base}, {class_phrase(c.kind)}): {DENSE} puts its first relevant document at rank {dense_rank}, "
            f"inside the top {threshold}: **fixed**."
        )
    now = f"at rank {dense_rank}, still beyond the top {threshold}" if dense_rank else "nowhere in its list"
    return (
        f"{q} ({BASE}: {base}, {class_phrase(c.kind)}): {DENSE} puts its first relevant document {now}: **not fixed**."
    )


def dense_hint() -> str:
    """How to turn the dense retriever on when the dataset has no vectors yet."""
    return (
        "The dense retriever is not on for this dataset: its documents have no vectors yet. On the Data page, encode them "
        "once with the bundled model (multilingual-e5-small; an estimate is shown first), or upload embeddings computed "
        "elsewhere; on the command line, `python -m retrieval evaluate --data PATH --embeddings e5-small`."
    )


def step_dense(v: View) -> None:
    ranks = v.ev.rankings
    st.markdown(
        f"The article ends on a hypothesis it never runs: {BASE} misses a vocabulary gap, and a retriever that does "
        "not depend on the same words (an embedding model) would close it. The lab runs it."
    )
    if DENSE not in ranks:
        st.info(dense_hint(), icon=":material/memory:")
        st.page_link("pages/data.py", label="Data: turn the dense retriever on", icon=":material/database:")
        return
    cases = base_cases(v)
    summary = diag.dense_summary(v.ds, ranks, {BASE: cases}, v.k)
    said, _ = summary
    st.markdown(said)
    i_of = {qid: i for i, qid in enumerate(v.qids)}
    for kind, c in examples(cases, shown_classes(cases)).items():
        if c is None:
            st.markdown("- " + missing_sentence(BASE, kind, v.k))
        else:
            st.markdown("- " + dense_example_sentence(c, int(v.ev.first_rank[DENSE][i_of[c.qid]]), v.k))
    cols = st.columns(2)
    cols[0].metric(f"{BASE}, {v.label}", fmt6(v.ev.mean(BASE, v.metric)), border=True)
    cols[1].metric(f"{DENSE}, {v.label}", fmt6(v.ev.mean(DENSE, v.metric)), border=True)
    st.dataframe(means_table(v.ev, (BASE, DENSE), v.table), width="stretch")
    st.caption(
        f"Add {DENSE} to the sidebar's *fused systems* for a hybrid; the Diagnosis page lists every question "
        f"{DENSE} fixes or breaks."
    )


# ------------------------------------------------------------------------------------------ 10. your data


NEXT_PAGES = (  # (page file, what to do there), shown when the router has the page
    (
        "pages/data.py",
        "Upload your own corpus, questions and judgements (a BEIR zip, CSV, JSONL) or a TREC run from your system: this tour then tells its story.",
    ),
    ("pages/playground.py", "Type your own question and watch each retriever answer it."),
    (
        "pages/tuning.py",
        "Are the sidebar's values the best for this data? The metric over a grid, with the settings that can't be told apart from the best.",
    ),
    (
        "pages/per_question.py",
        "Every question's rank for every system, as a heatmap, and any question's lists side by side.",
    ),
    ("pages/diagnosis.py", "Every failing question, classed, with the shared words highlighted."),
    ("pages/compare.py", "Any two systems, paired question by question."),
)


def next_pages(available: Sequence[str]) -> list[tuple[str, str, str, str]]:
    """The pages to go on to that the router has: (file, title, icon, what to do there)."""
    known = {path: (title, icon) for path, title, icon in router.PAGES}
    return [(path, *known[path], text) for path, text in NEXT_PAGES if path in known and path in available]


def step_yours(v: View) -> None:
    st.markdown(
        f"That was **{plain(v.title)}** at k1 = {v.params.k1:g}, b = {v.params.b:g}, d = {v.params.dims}, "
        f"RRF k = {v.params.rrf_k:g}, alpha = {v.params.alpha:g}, k = {v.k}. Every step follows the sidebar and the "
        "dataset: load yours and walk it again."
    )
    for path, title, icon, text in next_pages([p for p, _, _ in router.PAGES]):
        with st.container(border=True):
            st.page_link(path, label=title, icon=icon)
            st.caption(text)


VIEWS = (
    step_corpus,
    step_metrics,
    step_means,
    step_disagree,
    step_why,
    step_fusion,
    step_noise,
    step_trap,
    step_dense,
    step_yours,
)


def show(step: int, v: View) -> None:
    """The step's heading and its view."""
    st.subheader(f"{step}. {STEPS[step - 1]}")
    VIEWS[step - 1](v)
