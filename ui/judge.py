"""The Judge page's parts: the holes in the judgements (unjudged documents in any system's top k), grading them
0, 1 or 2 as one of several raters, how far the raters agree and where they differ most, the rule that combines
their grades, the chosen metric's means before and after, and the judgements as TREC qrels (per rater, combined).

A hole is a document of the corpus that some system ranks in a question's top k and that the loaded dataset's
judgements do not grade for that question (the judging pool: retrieval.analyses.holes, which finds and counts them,
also for `python -m retrieval holes`). The holes are found against the loaded judgements, so a document
graded here stays listed (with your grade, which can be changed or taken back). Each grade is kept in the workspace
with its rater and time (ui.workspace); every page measures with the raters' grades combined by the chosen rule
(`ui.in_use.new_judgements`). A run's document outside the corpus has no text to read and is not listed.
A rater may grade blind (ui.rater): the other raters' grades of a document, the grade in force and where they differ
are shown only once the rater has graded it.
"""

from __future__ import annotations

import functools
import math

import pandas as pd
import streamlit as st

from retrieval.analyses.holes import Pool, judging_pool, most_unjudged_sentence, ranked_by_text
from retrieval.corpus.dataset import Dataset, format_qrels
from retrieval.evaluation.agreement import RULES, agreement, disagreements, explain
from retrieval.evaluation.experiment import Evaluation
from retrieval.retrievers.ranking import Ranking
from retrieval.store.workspace import Grade

from . import cache, in_use, state, workspace
from .data import download_stem
from .format import FULL_CHARS, clip, full_text_note, plural, signed
from .markdown import escape_markdown as plain
from .overview import JUDGED_FLOOR
from .per_question import cut, page_count
from .rater import BLIND, blind_toggle, name_input

DISAGREEMENTS = 20  # pairs listed where the raters differ most
MESSAGE = "judge_message"  # the last grade's refusal, shown once
PER_PAGE = 10  # documents graded per page of a question
SNIPPET_CHARS = 300  # a document's text shown before its expander
GRADES = (0, 1, 2)
GRADE_LABELS = {0: "0 not relevant", 1: "1 relevant", 2: "2 highly relevant"}
KEY_Q, KEY_PAGE = "judge_question", "judge_page"
KEY_GRADE, KEY_FULL = "judge_grade:", "judge_full:"  # + dataset fingerprint:rater:question:document


# ------------------------------------------------------------------------------------------ pure helpers


def find_pool(ds: Dataset, ranks: dict[str, Ranking], k: int) -> Pool:
    """The judging pool of the systems' rankings at the sidebar's k, against `ds`'s judgements
    (retrieval.analyses.holes)."""
    return judging_pool(ds, ranks, k)


def system_frame(pool: Pool, graded: set[tuple[int, int]]) -> pd.DataFrame:
    """Per system: the unjudged documents in its top k (summed over the questions), and how many of them are
    still unjudged once the new grades (`graded`: (question, document) indices) count (holes.Pool.per_system)."""
    shares = pool.per_system(graded)
    return pd.DataFrame(
        {
            "system": [x.system for x in shares],
            "unjudged in the top k": [x.unjudged for x in shares],
            "still unjudged": [x.still_unjudged for x in shares],
        }
    )


def page_of(items: list, page: int, per_page: int = PER_PAGE) -> tuple[int, list]:
    """The page shown (from 1; one beyond the last gives the last) and its items."""
    page = min(max(1, int(page)), max(1, page_count(len(items), per_page)))
    return page, items[(page - 1) * per_page : page * per_page]


def mine(grades: tuple[Grade, ...], rater: str) -> dict[tuple[str, str], int]:
    """One rater's grades, (question id, document id) -> grade."""
    return {(g.query_id, g.doc_id): g.grade for g in grades if g.rater == rater}


def others(grades: tuple[Grade, ...], rater: str) -> dict[tuple[str, str], dict[str, int]]:
    """The other raters' grades of each pair, (question id, document id) -> {rater: grade}."""
    out: dict[tuple[str, str], dict[str, int]] = {}
    for g in grades:
        if g.rater != rater:
            out.setdefault((g.query_id, g.doc_id), {})[g.rater] = g.grade
    return out


def rater_qrels(grades: tuple[Grade, ...], rater: str) -> str:
    """One rater's grades as TREC qrels, in question then document order."""
    return new_qrels(mine(grades, rater))


def _kappa_text(x: float | None) -> str:
    return "undefined" if x is None else f"{x:.3f}"


def agreement_frame(grades: tuple[Grade, ...]) -> pd.DataFrame:
    """Each two raters: the pairs both graded and Cohen's kappa over them, plain and weighted for graded relevance
    (linear, quadratic); "undefined" where it is."""
    a = agreement((g.query_id, g.doc_id, g.rater, g.grade) for g in grades)
    return pd.DataFrame(
        {
            "raters": [f"{x} and {y}" for x, y in a.cohen],
            "pairs both graded": [a.shared[p] for p in a.cohen],
            "Cohen's kappa": [_kappa_text(a.cohen[p]) for p in a.cohen],
            "linear weighted": [_kappa_text(a.linear[p]) for p in a.cohen],
            "quadratic weighted": [_kappa_text(a.quadratic[p]) for p in a.cohen],
        }
    )


def disagreement_frame(grades: tuple[Grade, ...], limit: int = DISAGREEMENTS) -> pd.DataFrame:
    """The pairs the raters graded most differently: question, document, spread, each rater's grade."""
    rows = disagreements(((g.query_id, g.doc_id, g.rater, g.grade) for g in grades), limit)
    return pd.DataFrame(
        {
            "question": [r.query_id for r in rows],
            "document": [r.doc_id for r in rows],
            "spread": [r.spread for r in rows],
            "grades": ["; ".join(f"{who} {g}" for who, g in r.grades.items()) for r in rows],
        }
    )


def graded_pairs(ds: Dataset, grades: dict[tuple[str, str], int]) -> set[tuple[int, int]]:
    """The new grades as (question, document) indices."""
    return {(ds.query_index[q], ds.doc_index[d]) for q, d in grades if q in ds.query_index and d in ds.doc_index}


def before_after(before: Evaluation, after: Evaluation, metric: str) -> pd.DataFrame:
    """Per system: the metric's mean with the loaded judgements, with the new ones, and the change."""
    rows = [(s, before.mean(s, metric), after.mean(s, metric)) for s in after.systems if s in before.systems]
    return pd.DataFrame(
        {
            "system": [r[0] for r in rows],
            "before": [r[1] for r in rows],
            "after": [r[2] for r in rows],
            "change": [signed(r[2] - r[1], 6) if not (math.isnan(r[1]) or math.isnan(r[2])) else "" for r in rows],
        }
    )


def new_qrels(grades: dict[tuple[str, str], int]) -> str:
    """The new judgements alone as TREC qrels, in question then document order."""
    return format_qrels((q, d, g) for (q, d), g in sorted(grades.items()))


def all_qrels(ds: Dataset) -> str:
    """Every judgement of the dataset in use (the loaded ones and the new ones) as TREC qrels."""
    return format_qrels(ds.judgements())


def file_names(dataset_name: str) -> tuple[str, str]:
    """The download names: every judgement, and the new ones only (the dataset's name made safe for a file)."""
    stem = download_stem(dataset_name)
    return f"{stem}_qrels.txt", f"{stem}_new_qrels.txt"


def grade_key(fingerprint: str, rater: str, qid: str, did: str) -> str:
    """The widget key of one rater's grade of one document."""
    return f"{KEY_GRADE}{fingerprint}:{rater}:{qid}:{did}"


def in_force(everyone: tuple[Grade, ...], grades: dict, rule: str) -> str:
    """What the workspace holds and what of it the metrics count under `rule` (the selector's value, in the link):
    the header's sentence (names escaped)."""
    pairs = len({(g.query_id, g.doc_id) for g in everyone})
    held = (
        f"{plural(pairs, 'pair')} graded in this workspace ({plural(len(everyone), 'grade')} by "
        f"{plural(len({g.rater for g in everyone}), 'rater')})"
    )
    if rule == "original":
        return f"{held}, none counted: the rule below is {plain(RULES[rule])}."
    return f"{held}; {len(grades):,} in force, combined by {plain(RULES[rule])} (the rule below, in the link)."


# ------------------------------------------------------------------------------------------ the page's parts


def header(base: Dataset, pool: Pool, grades: dict) -> None:
    """Title, what the page counts (the pool's sentence), and who grades."""
    st.title("Judge")
    everyone = in_use.workspace_grades(base)
    st.caption(
        f"{plain(in_use.dataset_label())}: {plain(pool.sentence)} The cutoff k is the sidebar's. Grade them: every "
        f"page then measures with the raters' grades. {in_force(everyone, grades, in_use.rule())} An unjudged "
        "document counts as not relevant."
    )
    who()
    message = st.session_state.pop(MESSAGE, None)
    if message:
        st.error(plain(message), icon=":material/error:")
    if st.session_state.pop(COUNTING, None):
        st.info(
            f"Every page now counts the raters' grades, by {RULES['mean']} (the rule below, and in the link; "
            "'original' leaves them out, as the app does by default).",
            icon=":material/functions:",
        )


def who() -> None:
    """Who grades: the proxy's user, else a name typed once in this browser (grading waits for one)."""
    user = workspace.proxy_user()
    if user:
        st.caption(f"You grade as **{plain(user)}** (from the proxy).")
    elif workspace.signed_out():  # sign-in configured, no header: read-only, never a typed name
        st.warning(plain(workspace.signed_out_message()), icon=":material/lock:")
        return
    else:
        name_input(
            "Your name as a rater",
            "type it to grade",
            "Each grade is kept with its rater's name and time; "
            "several raters may grade the same documents, and the page shows how far they agree.",
        )
    if blind_toggle():
        st.caption(
            "Blind grading: the other raters' grades of a document, the grade in force and where the raters "
            "differ show once you have graded it; the downloads of their grades wait too."
        )


def blind() -> bool:
    """Whether this rater grades blind (ui.rater: their choice, kept in this browser)."""
    return bool(st.session_state.get(BLIND))


def seen_by(grades: tuple[Grade, ...], rater: str, blind_: bool) -> tuple[Grade, ...]:
    """The grades this rater may see: every one, or blind, those of the pairs they have graded themselves."""
    if not blind_:
        return grades
    graded = set(mine(grades, rater))
    return tuple(g for g in grades if (g.query_id, g.doc_id) in graded)


def summary(pool: Pool, graded: set) -> None:
    """Per system: the unjudged documents in its top k, and those still unjudged; which has the most left."""
    st.subheader(f"Unjudged documents in each system's top {pool.k}")
    st.dataframe(system_frame(pool, graded), hide_index=True, width="stretch")
    most = most_unjudged_sentence(pool.per_system(graded))
    st.caption(
        "Summed over every question: a document ranked by two systems counts once for each."
        + (f" {plain(most)}" if most else "")
    )


def _move(order: list[int], step: int) -> None:
    at = st.session_state.get(KEY_Q)
    i = order.index(at) if at in order else 0
    st.session_state[KEY_Q] = order[min(max(i + step, 0), len(order) - 1)]
    st.session_state[KEY_PAGE] = 1


def _to_first_page() -> None:
    st.session_state[KEY_PAGE] = 1


def choose_question(base: Dataset, pool: Pool, order: list[int]) -> int:
    """The question selector (the most holes first) with previous and next buttons."""
    st.subheader("Grade one question's documents")
    counts = pool.counts()
    if st.session_state.get(KEY_Q) not in order:
        st.session_state[KEY_Q] = order[0]
    q = st.selectbox(
        f"Question ({len(order):,} with unjudged documents, the most first)",
        order,
        key=KEY_Q,
        format_func=lambda i: f"{base.query_ids[i]} — {int(counts[i])} unjudged — {cut(base.query_texts[i], 90)}",
        on_change=_to_first_page,
        help="Type to search by id or words.",
    )
    at = order.index(q)
    with st.container(horizontal=True):
        st.button(
            "Previous question",
            key="judge_prev",
            on_click=_move,
            args=(order, -1),
            disabled=at == 0,
            icon=":material/arrow_back:",
        )
        st.button(
            "Next question",
            key="judge_next",
            on_click=_move,
            args=(order, 1),
            disabled=at == len(order) - 1,
            icon=":material/arrow_forward:",
        )
    st.markdown(f"**{plain(base.query_ids[q])}** — {plain(clip(base.query_texts[q]))}")
    relevant = base.relevant_of(q)
    if relevant:
        st.caption(
            "Judged relevant already: "
            + ", ".join(f"{plain(d)} (grade {g})" for d, g in sorted(relevant.items(), key=lambda x: (-x[1], x[0])))
        )
    else:
        st.caption("No document is judged relevant for this question yet: it is left out of every mean until one is.")
    return q


COUNTING = "judge_counting"  # the note that grading turned the raters' grades on, shown once


def _on_grade(qid: str, did: str, key: str) -> None:
    """A grade widget's callback: this rater's new grade (or none) goes into the workspace. A session grading
    while the rule leaves the raters' grades out (the default) counts them from then on, by their mean."""
    grade = st.session_state.get(key)
    message = workspace.give_grade(cache.base_dataset(), qid, did, grade)
    if message:
        st.session_state[MESSAGE] = message
    elif grade is not None and in_use.rule() == "original":
        st.session_state[state.RULE] = "mean"
        st.session_state[COUNTING] = True


def grade_documents(base: Dataset, pool: Pool, q: int, grades: dict) -> None:
    """The question's unjudged documents, a page at a time: who ranks each where, its text, a 0/1/2 control."""
    docs = pool.holes_of(base, q)
    pages = max(1, page_count(len(docs), PER_PAGE))
    if int(st.session_state.get(KEY_PAGE) or 1) > pages:  # fewer pages since (another k): the last one
        st.session_state[KEY_PAGE] = pages
    if pages > 1:
        st.number_input(
            f"Page (of {pages}, {PER_PAGE} documents each)",
            min_value=1,
            max_value=pages,
            step=1,
            key=KEY_PAGE,
            width=220,
        )
    page, shown = page_of(docs, st.session_state.get(KEY_PAGE) or 1)
    rater = workspace.person()
    named = rater != workspace.ANONYMOUS
    at_bound = int(st.session_state.get(state.GIVEN, 0)) >= workspace.MAX_GIVEN
    if at_bound:
        st.warning(
            f"This session has given {workspace.MAX_GIVEN:,} grades, the most it may: reload to give more.",
            icon=":material/block:",
        )
    if not named:
        st.info("Type your name above to grade: each grade is kept with its rater.", icon=":material/badge:")
    everyone = in_use.workspace_grades(base)
    yours, theirs = mine(everyone, rater), others(everyone, rater)
    qid = base.query_ids[q]
    for n, hole in enumerate(shown, (page - 1) * PER_PAGE + 1):
        did, text = base.doc_ids[hole.doc], base.doc_texts[hole.doc]
        key = grade_key(base.fingerprint, rater, qid, did)
        given = yours.get((qid, did))
        with st.container(border=True):
            st.markdown(f"**{n}. {plain(did)}** · ranked by {plain(ranked_by_text(hole))}")
            st.markdown(plain(clip(text, SNIPPET_CHARS)))
            st.segmented_control(
                f"Grade of {plain(did)}",
                GRADES,
                format_func=GRADE_LABELS.get,
                key=key,
                default=given,
                on_change=_on_grade,
                args=(qid, did, key),
                label_visibility="collapsed",
                disabled=not named or (at_bound and given is None),
            )
            said = [f"you {given}"] if given is not None else []
            hidden = blind() and given is None  # blind grading: nothing of the others' until graded
            said += [] if hidden else [f"{plain(who_)} {g}" for who_, g in sorted(theirs.get((qid, did), {}).items())]
            if said:
                in_force = grades.get((qid, did))
                st.caption(
                    f"Graded by {', '.join(said)}"
                    + (f": {in_force} in force, by {plain(RULES[in_use.rule()])}" if in_force is not None else "")
                    + (". Click your grade again to take it back." if given is not None else ".")
                )
            if len(text) > SNIPPET_CHARS:  # sent only while open: ten long documents stay off the page
                full = st.expander("Full text", key=f"{KEY_FULL}{base.fingerprint}:{qid}:{did}", on_change="rerun")
                if full.open:
                    with full:
                        st.text(clip(text, FULL_CHARS))
                        st.caption(full_text_note(text))


def means(base: Dataset, ds: Dataset, metric: str, k: int) -> None:
    """The chosen metric's mean per system with the loaded judgements and with the new ones, then judged@k (the
    share of each system's top k that carries a judgement) the same way: grading fills it in."""
    judged = f"judged@{k}"
    names = list(dict.fromkeys([metric, judged]))
    before, after = cache.evaluation(names, ds=base), cache.evaluation(names, ds=ds)
    numbers = {
        "before": st.column_config.NumberColumn(format="%.6f"),
        "after": st.column_config.NumberColumn(format="%.6f"),
    }
    st.subheader(f"{state.metric_label(metric)} before and after the raters' grades")
    st.dataframe(before_after(before, after, metric), hide_index=True, width="stretch", column_config=numbers)
    if metric != judged:
        st.subheader(f"judged@{k} before and after")
        st.dataframe(before_after(before, after, judged), hide_index=True, width="stretch", column_config=numbers)
    nb, na = base.evaluated.size, ds.evaluated.size
    st.caption(
        f"Means over the questions with a relevant document: {nb:,} before, {na:,} after. Every page measures "
        f"with the new grades. `judged@{k}` below {JUDGED_FLOOR:g} means the metrics may understate a system."
    )


def raters(base: Dataset) -> None:
    """The raters: the rule combining their grades (in the URL), how far they agree, where they differ most."""
    st.subheader("Raters")
    st.selectbox(
        "Combine the raters' grades by",
        list(RULES),
        key=state.RULE,
        persist_state="session",
        help="The one grade per document the metrics use, from every rater's grade of it in this workspace: "
        + "; ".join(f"{name}: {text}" for name, text in RULES.items())
        + ".",
    )
    st.caption(f"In force: {plain(RULES[in_use.rule()])}.")
    everyone = in_use.workspace_grades(base)
    names = sorted({g.rater for g in everyone})
    st.button(
        "Read the latest grades",
        key="judge_refresh",
        on_click=workspace.read_grades,
        args=(base,),
        icon=":material/refresh:",
        help="Other raters' grades since this page opened (it reads them on entry).",
    )
    if len(names) < 2:
        st.caption(
            f"{len(names)} rater has graded this dataset in the workspace: agreement needs two."
            if names
            else "No rater has graded this dataset in the workspace yet."
        )
        return
    a = agreement((g.query_id, g.doc_id, g.rater, g.grade) for g in everyone)
    st.dataframe(agreement_frame(everyone), hide_index=True, width="stretch")
    alpha = "undefined (too few pairs graded twice, or one grade throughout)" if a.alpha is None else f"{a.alpha:.3f}"
    twice = a.pairs_graded_twice
    st.caption(
        f"{plural(len(names), 'rater')} ({', '.join(plain(n) for n in names)}); {plural(twice, 'document')} "
        f"graded by two or more. Krippendorff's alpha (ordinal, all raters): {alpha}. Each is 1 when the raters "
        "agree throughout and 0 at what chance gives; kappa is undefined over fewer than two shared documents, "
        "or when both raters gave one and the same grade throughout."
    )
    st.markdown("\n".join(f"- {plain(e.sentence)}" for e in explain(a)))
    rows = disagreement_frame(seen_by(everyone, workspace.person(), blind()))
    if len(rows):
        st.markdown(
            f"**Where they differ most** ({len(rows):,} shown, the largest spread first"
            + ("; blind grading: of the documents you have graded" if blind() else "")
            + ")"
        )
        st.dataframe(rows, hide_index=True, width="stretch")


def downloads(ds: Dataset, grades: dict) -> None:
    """Every judgement in use (loaded and combined) as TREC qrels, the combined ones only, or one rater's; and taking
    back every grade of yours."""
    st.subheader("Download the judgements")
    base = cache.base_dataset()
    every, only_new = file_names(ds.name)
    everyone = in_use.workspace_grades(base)
    rater = workspace.person()
    hide = blind() and bool(set(grades) - set(mine(everyone, rater)))  # some not graded by you
    waits = " Blind grading: it waits until you have graded every document it names." if hide else ""
    row = st.container(horizontal=True, wrap=True, gap="small")  # each button as wide as its text, wrapping at 1024 px
    row.download_button(
        f"All judgements in use ({len(ds.qrels):,})",
        functools.partial(all_qrels, ds),
        file_name=every,
        mime="text/plain",
        key="judge_dl_all",
        on_click="ignore",
        icon=":material/download:",
        width="content",
        disabled=hide,
        help="TREC qrels, `qid 0 docid grade` a line: the loaded "
        "judgements and the raters' grades, combined by the rule chosen." + waits,
    )
    row.download_button(
        f"The raters' combined ({len(grades):,})",
        functools.partial(new_qrels, grades),
        file_name=only_new,
        mime="text/plain",
        key="judge_dl_new",
        on_click="ignore",
        icon=":material/download:",
        width="content",
        disabled=not grades or hide,
        help="TREC qrels of the workspace's grades, combined." + waits,
    )
    row.button(
        "Take every grade of yours back",
        key="judge_forget",
        on_click=_forget,
        args=(rater,),
        disabled=not mine(everyone, rater),
        icon=":material/undo:",
        width="content",
    )
    names = sorted({g.rater for g in everyone} if not blind() else {g.rater for g in everyone} & {rater})
    if names:
        x, y = st.columns([2, 1], vertical_alignment="bottom")
        who_ = x.selectbox("One rater's grades", names, key="judge_dl_rater")
        y.download_button(
            "Download",
            functools.partial(rater_qrels, everyone, who_),
            file_name=f"{download_stem(ds.name)}_{download_stem(who_)}_qrels.txt",
            mime="text/plain",
            key="judge_dl_rater_button",
            on_click="ignore",
            icon=":material/download:",
            width="stretch",
        )


def _forget(rater: str) -> None:
    """Take back every grade this rater gave the loaded dataset (and the widgets' values with them)."""
    base = cache.base_dataset()
    message = workspace.take_back_all(base)
    if message:
        st.session_state[MESSAGE] = message
        return
    prefix = f"{KEY_GRADE}{base.fingerprint}:{rater}:"
    for key in [k for k in st.session_state if isinstance(k, str) and k.startswith(prefix)]:
        del st.session_state[key]


def nothing_to_judge(pool: Pool) -> None:
    """What the page says when every document in every top k is judged (the pool's sentence)."""
    st.success(f"{plain(in_use.dataset_label())}: {plain(pool.sentence)}", icon=":material/check_circle:")
