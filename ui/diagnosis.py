"""The Diagnosis page's parts: every system's failing questions with their class, what the dense retriever fixes
and breaks relative to BM25 (the article's closing hypothesis), one question's texts with the shared words
highlighted, and BM25's per-term contributions for chosen documents at the current k1 and b."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from retrieval.analyses import diagnosis, stemming, teaching
from retrieval.core.params import Params
from retrieval.corpus.dataset import Dataset
from retrieval.corpus.text import Analysis
from retrieval.engine import adhoc
from retrieval.engine.engine import CHANGES, DIAGNOSIS, STEMMER, built, for_dataset
from retrieval.retrievers import bm25
from retrieval.retrievers.ranking import Ranking

from . import cache, charts, state
from .format import clip, plural
from .markdown import escape_markdown, highlight_markdown
from .per_question import fusion_depths, page_count, page_rows, paged

QUESTION_KEY = "diag_question"
CASE_CLASS_KEY, CASE_PAGE_KEY = "diag_case_class", "diag_case_page"  # the failing questions' class filter and page
DOC_PAGE_KEY = "diag_docs_page_"  # + "relevant" / "wrong": one question's documents, a few to a page
ALL_CLASSES = "all classes"
CLASS_COLORS = {
    "vocabulary gap": "#d62728",
    diagnosis.HOMONYMY: "#ff7f0e",
    diagnosis.UNJUDGED: "#8c8c8c",
    "late rank": "#1f77b4",
    diagnosis.FUSION_CUT: "#9467bd",
}
CASES_PER_PAGE = 15  # failing questions (rows: system x question) per page
DOCS_PER_PAGE = 3  # relevant documents, and wrong first results, shown at a time for one question
HEAD_CHARS = 200  # a document box shows this much of its text; the rest (up to REST_CHARS) is one click away
REST_CHARS = 2_000
LINES_SHOWN = 5  # a class's lines in the dense comparison shown at once; the rest in an expander
RELEVANT_COLOR, WRONG_COLOR = "green", "orange"
BM25_TOP = 10  # BM25's top documents offered for the term-by-term view
BASE, DENSE = "BM25", "dense"  # the hypothesis's two systems: dense against BM25
DENSE_HINT = (
    "The dense retriever (the system *dense*) is not among the systems evaluated: add it on the Data page, "
    "or with `--embeddings e5-small` on the command line, to see what it changes relative to BM25."
)
SCROLL_LINES = 12  # more hidden lines than this in one class scroll in a box of their own


# ------------------------------------------------------------------------------------------ the failing questions


def kept(ds: Dataset, ranks: Mapping[str, Ranking], names: Sequence[str], kind: str, rest: tuple, make: Callable):
    """`make()`, kept in the memo of the dataset's engine for the sidebar's text analysis (its `kind`) under the
    engine's keys of the rankings of `names` (`Engine.ranking_key`: from the parameters and sources each was computed
    from) and `rest`, when the engine holds those very rankings (the pages' are its own); other rankings (a test's,
    an engine not kept) are computed each time, never keyed by their content."""
    analysis = state.analysis()
    if built(ds, analysis):  # else no engine's cache can hold these rankings (and none is built for them here)
        e = for_dataset(ds, analysis=analysis)
        keys = tuple(e.ranking_key(ranks[n]) for n in names)
        if None not in keys:
            return e.memo.get(kind, (tuple(zip(names, keys)), *rest), make)
    return make()


def diagnose_all(ds: Dataset, ranks: dict[str, Ranking], threshold: int, p: Params) -> dict[str, list[diagnosis.Case]]:
    """Every system's failing questions, by system; a fusion's with its members (the sidebar's) and its depth (each
    system's kept in its engine: `kept`)."""
    depths = fusion_depths(ranks, p)
    out = {}
    for name, r in ranks.items():
        names = (name, *(m for m in p.members if m in ranks)) if name in depths else (name,)
        members, depth = tuple(ranks[m] for m in names[1:]), depths.get(name)

        def make(r=r, members=members, depth=depth) -> list[diagnosis.Case]:
            return diagnosis.diagnose(ds, r, threshold, members, depth, analysis=Analysis(*p.analysis))

        out[name] = list(kept(ds, ranks, names, DIAGNOSIS, (threshold, depth, p.analysis), make))
    return out


def class_labels(depth: int) -> dict[str, str]:
    """Each class as shown, the fusions' with their depth written out (diagnosis.class_label)."""
    return {kind: diagnosis.class_label(kind, depth) for kind in diagnosis.CLASSES}


def class_table(counts: pd.DataFrame, systems: list[str], depth: int | None = None) -> pd.DataFrame:
    """Failing questions as system x class, in the systems' and the classes' order, with their sum per system
    (with `depth`, the fusions' class named with it)."""
    table = counts.pivot(index="system", columns="class", values="questions").reindex(
        index=systems, columns=list(diagnosis.CLASSES)
    )
    table["all"] = table.sum(axis=1)
    return table.rename(columns=class_labels(depth)) if depth is not None else table


def case_rows(cases: list[diagnosis.Case]) -> list[dict]:
    """The failing questions' table (teaching.overlap_rows), a fusion's class and not-found named with its depth,
    and, for a fusion, where each member puts the first relevant document."""
    rows = []
    for c, row in zip(cases, teaching.overlap_rows(cases)):
        row = {**row, "class": diagnosis.class_label(c.kind, c.depth), "text": clip(row["text"])}
        row["members: first relevant at"] = ", ".join(f"{m} {diagnosis.rank_text(r)}" for m, r in c.members)
        rows.append(row)
    return rows


def header(ds: Dataset, k: int, depth: int) -> None:
    """The title and the classes defined, at the sidebar's cutoff k and fusion depth."""
    st.title("Diagnosis")
    st.caption(
        f"**{escape_markdown(cache.dataset_label())}**. A question is diagnosed when its first relevant document is not in a system's "
        f"top k, the sidebar's cutoff: k = {k} (the article diagnoses at 3). "
        "Its class: **vocabulary gap** (nothing relevant found and no relevant document shares a word with the question), "
        "**surface homonymy** (nothing relevant found and a document judged not relevant comes first on a word it shares "
        "with the question), **unjudged at the top** (the same, but no judgement names that document: it may be relevant; "
        "grade it on the Judge page), "
        "**late rank** (the relevant document is there, beyond k, or further down than the list goes), "
        f"**{diagnosis.fusion_cut_label(depth)}** (a fusion finds nothing relevant in its list, its top {depth}, the sidebar's "
        f"fusion depth, while one of its members ranks a relevant document: its first relevant rank reads “> {depth}”; "
        "“not found” when no member lists one). "
        "Words are the tokeniser's: lower case, stop words removed."
    )


def unjudged_note(n: int) -> str:
    """What the failing questions "unjudged at the top" (n of them, system x question) ask of a person."""
    return (
        f"{plural(n, 'failing question')} (system × question) {'is' if n == 1 else 'are'} *unjudged at the top*: the "
        "first result shares words with the question but no judgement names it, so it may be relevant. It is not "
        "wrong until a person says so: grade it on the Judge page (graded 0, it becomes a surface homonymy)."
    )


def first_page() -> None:
    """Back to the failing questions' first page (a new class filter starts at its top)."""
    if CASE_PAGE_KEY in st.session_state:
        st.session_state[CASE_PAGE_KEY] = 1


def failing_questions(ds: Dataset, cases: dict[str, list[diagnosis.Case]], threshold: int, depth: int) -> None:
    """The classes' counts per system as bars and a table, and the failing questions with the words they share,
    filtered by class, a page at a time."""
    st.subheader("Failing questions")
    systems = list(cases)
    all_cases = [c for name in systems for c in cases[name]]
    if not all_cases:
        st.success(
            f"Every question has a relevant document in the top {threshold} of every system: nothing to diagnose."
        )
        return
    labels = class_labels(depth)
    counts = pd.DataFrame(teaching.class_counts(cases))
    shown_counts = counts.assign(**{"class": counts["class"].map(labels)})
    colors = {labels[kind]: color for kind, color in CLASS_COLORS.items()}
    st.altair_chart(charts.failure_classes(shown_counts, systems, list(labels.values()), colors), width="stretch")
    cut = labels[diagnosis.FUSION_CUT]
    st.dataframe(
        class_table(counts, systems, depth),
        width="stretch",
        column_config={cut: st.column_config.NumberColumn(f"> {depth} (fusions)", help=cut)},
    )
    st.caption(
        f"Out of {plural(ds.evaluated.size, 'question')} with a relevant document; “> {depth} (fusions)”: {cut}."
    )
    unjudged = sum(c.kind == diagnosis.UNJUDGED for c in all_cases)
    if unjudged:
        st.info(unjudged_note(unjudged), icon=":material/rule:")
        st.page_link("pages/judge.py", label="Judge: grade them", icon=":material/rule:")
    present = [kind for kind in diagnosis.CLASSES if any(c.kind == kind for c in all_cases)]
    chosen = st.segmented_control(
        "class",
        [ALL_CLASSES, *present],
        default=ALL_CLASSES,
        key=CASE_CLASS_KEY,
        required=True,
        format_func=lambda kind: labels.get(kind, kind),
        on_change=first_page,
    )
    if chosen not in (ALL_CLASSES, *present):  # a class no longer present (the data or the sliders changed)
        chosen = ALL_CLASSES
    picked = [c for c in all_cases if chosen == ALL_CLASSES or c.kind == chosen]
    rows = pd.DataFrame(case_rows(picked))
    n_pages = page_count(len(rows), CASES_PER_PAGE)
    page = paged(n_pages, CASE_PAGE_KEY)
    if not any(c.members for c in picked):
        rows = rows.drop(columns="members: first relevant at")
    st.dataframe(
        page_rows(rows, page, CASES_PER_PAGE),
        hide_index=True,
        width="stretch",
        height="content",
        column_config={
            "text": st.column_config.TextColumn("question text", width="large"),
            "relevant documents (grade): shared words": st.column_config.TextColumn(width="large"),
        },
    )
    st.caption(
        f"{plural(len(rows), 'failing question')} (system × question)"
        + (f", {CASES_PER_PAGE} per page: page {page} of {n_pages}." if n_pages > 1 else ".")
    )


# ------------------------------------------------------------------------------------------ what dense changes


@dataclass(frozen=True)
class ClassChanges:
    """One failure class's part of the comparison: how many questions BM25 fails with it, and the lines of the
    questions dense fixes (BM25's class) and breaks (dense's class), as escaped Markdown."""

    kind: str
    base_fails: int
    fixed: tuple[str, ...]
    broken: tuple[str, ...]

    @property
    def heading(self) -> str:
        """The class with its counts."""
        return f"**{self.kind}** · fixed {len(self.fixed)} of {BASE}'s {self.base_fails} · broken {len(self.broken)}"


def change_line(change: diagnosis.Change) -> str:
    """A change's plain line (diagnosis.describe) and its question, escaped."""
    return f"{escape_markdown(diagnosis.describe(change))} · “{escape_markdown(change.question.strip())}”"


def by_class(found: list[diagnosis.Change], base_cases: list[diagnosis.Case]) -> list[ClassChanges]:
    """The changes grouped by failure class, in diagnosis.CLASSES order, each class with BM25's failures of it
    (the fusions' own class only when a change has it: neither BM25 nor dense is a fusion)."""
    kinds = [
        k for k in diagnosis.CLASSES if k != diagnosis.FUSION_CUT or any(c.kind == k for c in (*found, *base_cases))
    ]
    return [
        ClassChanges(
            kind,
            sum(c.kind == kind for c in base_cases),
            tuple(change_line(c) for c in found if c.kind == kind and c.outcome == "fixed"),
            tuple(change_line(c) for c in found if c.kind == kind and c.outcome == "broken"),
        )
        for kind in kinds
    ]


def verdict(found: list[diagnosis.Change], base_cases: list[diagnosis.Case], n_evaluated: int, threshold: int) -> str:
    """One sentence answering the article's hypothesis from the data (diagnosis.Hypothesis): how many of BM25's
    vocabulary-gap failures dense fixes, and how many of the questions BM25 answers in the top k it breaks."""
    return diagnosis.hypothesis(found, base_cases, n_evaluated, threshold, BASE, DENSE).sentence


def dense_summary(
    ds: Dataset, ranks: Mapping[str, Ranking], cases: Mapping[str, list[diagnosis.Case]], threshold: int
) -> tuple[str, list[ClassChanges]] | None:
    """The verdict and the per-class changes of dense relative to BM25 at threshold k, from the rankings given
    and BM25's failing questions (diagnose_all); None when the rankings have no dense system."""
    if DENSE not in ranks or BASE not in ranks:
        return None
    base, other = ranks[BASE], ranks[DENSE]
    found = kept(ds, ranks, (BASE, DENSE), CHANGES, (threshold,), lambda: diagnosis.changes(ds, base, other, threshold))
    base_cases = cases[BASE]
    return verdict(found, base_cases, int(ds.evaluated.size), threshold), by_class(found, base_cases)


def dense_changes(
    ds: Dataset, ranks: Mapping[str, Ranking], cases: Mapping[str, list[diagnosis.Case]], threshold: int
) -> None:
    """What the dense retriever changes relative to BM25, class by class, with the answer to the article's
    hypothesis; without dense, one line on how to add it."""
    st.subheader("What the dense retriever changes")
    summary = dense_summary(ds, ranks, cases, threshold)
    if summary is None:
        st.info(DENSE_HINT)
        return
    said, classes = summary
    st.caption(
        f"Relative to {BASE}, at k = {threshold}: a question is *fixed* when {BASE} fails it and {DENSE} has a relevant "
        f"document in its top {threshold}, *broken* when {BASE} has one and {DENSE} does not; its class is the failing "
        "side's. Ranks are those of the first relevant document."
    )
    st.markdown(said)
    for part in classes:
        st.markdown(part.heading)
        lines = [*part.fixed, *part.broken]
        if not lines:
            continue
        st.markdown("\n".join(f"- {line}" for line in lines[:LINES_SHOWN]))
        rest = lines[LINES_SHOWN:]
        if rest:
            with st.expander(f"{plural(len(rest), 'more question')} of this class"):
                box = st.container(height=320) if len(rest) > SCROLL_LINES else st.container()
                box.markdown("\n".join(f"- {line}" for line in rest))


def stemmer_effect(ds: Dataset, params: Params, threshold: int, metric: str | None = None) -> stemming.StemmerEffect:
    """What a stemmer changes in BM25's failures and mean on the sidebar's metric (or `metric`) at the parameters
    (`stemming.stemmer_effect`), kept in the memo of the dataset's engine under the parameters, the threshold and the
    metric; each side's engine the app's (`cache.engine`: admitted under the server's memory budget, with a progress
    bar while a large corpus is indexed)."""
    engines = tuple(cache.engine(ds, analysis=a) for a in stemming.pair(params))
    metric = metric or state.metric_name()
    return cache.engine(ds, analysis=Analysis(*params.analysis)).memo.get(
        STEMMER,
        (params, threshold, metric),
        lambda: stemming.stemmer_effect(ds, params, threshold, engines, metric),
    )


def effect_text(e: stemming.StemmerEffect) -> str:
    """What the stemmer does to BM25's failures and to its mean of the compared metric, escaped."""
    return escape_markdown(stemming.effect_sentence(e, BASE))


def merges_text(c: stemming.StemmerChange) -> str:
    """The words a stemmer matched on the deciding document, escaped: '“refund” ~ “refunds” (refund)'."""
    if not c.merges:
        return "no word it merged"
    shown = ", ".join(
        f"“{escape_markdown(m.question_word)}” ~ “{escape_markdown(m.doc_word)}”" for m in c.merges[:WORDS_SHOWN]
    )
    return shown + (f" … (+{len(c.merges) - WORDS_SHOWN})" if len(c.merges) > WORDS_SHOWN else "")


def stemmer_line(e: stemming.StemmerEffect, c: stemming.StemmerChange) -> str:
    """One question a stemmer fixes or breaks: its line (stemming.describe: each rank with or without the stemmer),
    the question, the document and the merged words."""
    what = "its first relevant document" if c.change.outcome == "fixed" else "the stemmed first result"
    doc = escape_markdown(c.doc) if c.doc is not None else "none"
    line = f"{escape_markdown(stemming.describe(e, c))} · “{escape_markdown(c.change.question.strip())}”"
    return f"{line} · {what} {doc}: {merges_text(c)}"


def stemmer_changes(ds: Dataset, threshold: int, p: Params) -> None:
    """What a stemmer changes in BM25's failures (Snowball against none, or the sidebar's stemmer against none): the
    summary sentence, then the questions it fixes and breaks with the words it merged to do it."""
    st.subheader("What a stemmer changes")
    with st.spinner("Running BM25 with and without the stemmer…"):
        e = stemmer_effect(ds, p, threshold)
    st.caption(
        f"{BASE} at the sidebar's values with {e.without.describe()} against {e.with_stemmer.describe()}, at k = "
        f"{threshold}: *fixed* when it fails without the stemmer and not with it, *broken* the other way; the class is the "
        "failing side's. A merge “question word” ~ “document word” is what the stemmer matched: the same stem, "
        "different words (a merge of unrelated words is how a stemmer breaks a question)."
    )
    st.markdown(effect_text(e))
    lines = [stemmer_line(e, c) for c in (*e.fixed, *e.broken)]
    if lines:
        st.markdown("\n".join(f"- {line}" for line in lines[:LINES_SHOWN]))
    if len(lines) > LINES_SHOWN:
        with st.expander(f"{plural(len(lines) - LINES_SHOWN, 'more question')}"):
            box = st.container(height=320) if len(lines) - LINES_SHOWN > SCROLL_LINES else st.container()
            box.markdown("\n".join(f"- {line}" for line in lines[LINES_SHOWN:]))


# ------------------------------------------------------------------------------------------ one question up close


def doc_text(ds: Dataset, doc_id: str) -> str | None:
    """A document's text, None when the corpus does not hold it (a run may name such a document)."""
    j = ds.doc_index.get(doc_id)
    return None if j is None else ds.doc_texts[j]


def failing_systems(cases: dict[str, list[diagnosis.Case]]) -> dict[str, list[str]]:
    """The failing questions in the order the systems list them, each with the systems it fails."""
    by: dict[str, list[str]] = {}
    for _name, found in cases.items():
        for c in found:
            by.setdefault(c.qid, []).append(c.system)
    return by


def question_label(qid: str, text: str, fails: list[str] | None) -> str:
    """A question in the selector: its id, its text cut at 70 characters, and the systems it fails."""
    short = text if len(text) <= 70 else text[:67] + "..."
    return f"{qid} · {short}" + (f"  (fails: {', '.join(fails)})" if fails else "")


def question_colors(relevant_words: set[str], wrong_words: set[str]) -> dict[str, str]:
    """A question word shared with a relevant document is green; one shared only with a wrong first result orange."""
    return {**{w: WRONG_COLOR for w in wrong_words}, **{w: RELEVANT_COLOR for w in relevant_words}}


def first_results_frame(
    answers: list, judged: Mapping[str, int], depths: Mapping[str, int] | None = None, members: Sequence[str] = ()
) -> pd.DataFrame:
    """One row per system: where its first relevant document is (diagnosis.rank_text: a fusion, N from `depths`,
    reads "> N" when one of its `members` lists a relevant document), its first result and whether that is relevant
    by the question's judgements (`judged`, any grade): yes, no (judged not relevant) or unjudged."""
    depths = depths or {}
    found = any(a.rank > 0 for a in answers if a.system in members)
    return pd.DataFrame(
        [
            {
                "system": a.system,
                "first relevant at": diagnosis.rank_text(a.rank, depths.get(a.system), found),
                "first result": a.first or "none (empty list)",
                "first result is relevant": first_verdict(judged.get(a.first)) if a.first else "—",
                "results": a.n_results,
            }
            for a in answers
        ]
    )


def first_verdict(grade: int | None) -> str:
    """Whether a first result is relevant: yes (grade > 0), no (judged not relevant) or unjudged (no judgement)."""
    return "unjudged" if grade is None else "yes" if grade > 0 else "no"


def shared_with(ds: Dataset, qtext: str, doc_ids: list[str]) -> set[str]:
    """The question's words shared with any of these documents (those in the corpus; a stem shared is a word shared)."""
    analysis = state.analysis()
    return {
        w for d in doc_ids if (t := doc_text(ds, d)) is not None for w in diagnosis.shared_words(t, qtext, analysis)
    }


WORDS_SHOWN = 6  # a stem's corpus words listed in the per-term table at most


def words_text(words: tuple[str, ...], n: int = WORDS_SHOWN) -> str:
    """A term's corpus words for a table: 'refund, refunded, refunds', '… (+4)' beyond n."""
    return ", ".join(words[:n]) + (f" … (+{len(words) - n})" if len(words) > n else "")


def head_cut(text: str, n: int = HEAD_CHARS) -> int:
    """Where a document's shown head ends: at the last space within its first n characters (the whole text when
    it is at most 1.25 n long, so a box never hides a few words)."""
    if len(text) <= n * 1.25:
        return len(text)
    space = text.rfind(" ", 0, n + 1)
    return space if space > n // 2 else n


def doc_box(ds: Dataset, qtext: str, doc_id: str, what: str, color: str) -> None:
    """A document's first HEAD_CHARS characters with the words it shares with the question highlighted, the rest
    (up to REST_CHARS, then its length) in an expander."""
    text = doc_text(ds, doc_id)
    with st.container(border=True):
        if text is None:
            st.markdown(f"**{escape_markdown(doc_id)}** · {escape_markdown(what)} · not in the corpus, no text to show")
            return
        words = diagnosis.shared_words(qtext, text, state.analysis())
        marks = {w: color for w in words}
        st.markdown(
            f"**{escape_markdown(doc_id)}** · {escape_markdown(what)} · shares: {escape_markdown(teaching.words_label(words))}"
        )
        cut = head_cut(text)
        st.markdown(highlight_markdown(text[:cut], marks) + (" …" if cut < len(text) else ""))
        if cut < len(text):
            with st.expander(f"the rest ({len(text):,} characters in all)"):
                st.markdown(highlight_markdown(clip(text, REST_CHARS)[cut:], marks))


def doc_page(kind: str, n: int) -> tuple[int, int]:
    """The slice of one question's `kind` documents ("relevant" / "wrong") shown, DOCS_PER_PAGE at a time, with a
    pagination when there are more."""
    page = paged(page_count(n, DOCS_PER_PAGE), DOC_PAGE_KEY + kind, visible=5)
    return (page - 1) * DOCS_PER_PAGE, min(page * DOCS_PER_PAGE, n)


def choose_question(ds: Dataset, cases: dict[str, list[diagnosis.Case]]) -> int | None:
    """The question selector (the first failing question by default); None, said, when no question has a relevant
    document (no st.stop: a stopped run keeps none of its last session-state writes, app.py's frame flag among them)."""
    st.subheader("One question up close")
    qids = [ds.query_ids[q] for q in ds.evaluated]
    failing_by = failing_systems(cases)
    if not qids:
        st.info("This dataset has no question with a relevant document.")
        return None
    if st.session_state.get(QUESTION_KEY) not in qids:
        st.session_state.pop(QUESTION_KEY, None)
    default_q = qids.index(next(iter(failing_by))) if failing_by else 0
    qid = st.selectbox(
        "question",
        qids,
        index=default_q,
        key=QUESTION_KEY,
        persist_state="session",
        format_func=lambda q: question_label(q, ds.query_texts[ds.query_index[q]], failing_by.get(q)),
        help="The failing questions are marked; any question with a relevant document can be opened.",
    )
    return ds.query_index[qid]


def question_up_close(
    ds: Dataset, ranks: dict[str, Ranking], q: int, depths: Mapping[str, int] | None = None, members: Sequence[str] = ()
) -> list:
    """The question with its shared words coloured, each system's first result, and the relevant and wrong
    documents' texts, a few at a time; returns each system's first results (teaching.first_results). `members`:
    the fusions' (a fusion's miss reads "> N" only when one of them lists a relevant document)."""
    qtext = ds.query_texts[q]
    relevant = ds.relevant_of(q)
    answers = teaching.first_results(ds, ranks, q)
    shown_wrong = list(dict.fromkeys(a.first for a in answers if a.first is not None and a.first not in relevant))
    colors = question_colors(shared_with(ds, qtext, list(relevant)), shared_with(ds, qtext, shown_wrong))
    st.markdown("**Question:** " + highlight_markdown(clip(qtext), colors))
    st.caption(
        f":{RELEVANT_COLOR}-background[shared with a relevant document] · :{WRONG_COLOR}-background[shared only with a first result not judged relevant] · "
        f"question terms after the text analysis: {escape_markdown(clip(', '.join(state.analysis().analyse(qtext)))) or 'none'}"
    )
    judged = dict(adhoc.judgements_of(ds, q))
    st.dataframe(first_results_frame(answers, judged, depths, members), hide_index=True, width="stretch")
    left, right = st.columns(2, gap="large")
    with left:
        st.markdown(f"**Relevant documents** ({len(relevant):,})")
        items = list(relevant.items())
        lo, hi = doc_page("relevant", len(items))
        for d, g in items[lo:hi]:
            doc_box(ds, qtext, d, f"relevant, grade {g}", RELEVANT_COLOR)
    with right:
        st.markdown(f"**First results not judged relevant** ({len(shown_wrong):,})")
        if not shown_wrong:
            st.caption(
                "No system puts a document not judged relevant first for this question"
                + (" (some return nothing)." if any(a.first is None for a in answers) else ".")
            )
        lo, hi = doc_page("wrong", len(shown_wrong))
        for d in shown_wrong[lo:hi]:
            doc_box(
                ds,
                qtext,
                d,
                "first result of "
                + ", ".join(a.system for a in answers if a.first == d)
                + ", "
                + ("judged not relevant" if d in judged else "unjudged: grade it on the Judge page"),
                WRONG_COLOR,
            )
    return answers


# ------------------------------------------------------------------------------------------ BM25 term by term


def doc_label(doc_id: str, relevant: dict[str, int], top_bm: list[str]) -> str:
    """A document in the selector: its id, its grade when relevant, its place in BM25's top list."""
    tags = []
    if doc_id in relevant:
        tags.append(f"relevant, grade {relevant[doc_id]}")
    if doc_id in top_bm:
        tags.append(f"BM25 #{top_bm.index(doc_id) + 1}")
    return doc_id + (f" ({'; '.join(tags)})" if tags else "")


def bm25_rank_text(pos: int | None, total: float, listed: int) -> str:
    """A document's BM25 rank, or why it has none: a score of 0 is not retrieved, else it lies beyond the list."""
    return str(pos) if pos else ("not retrieved (score 0)" if total <= 0 else f"beyond {listed}")


def term_tables(
    ds: Dataset, eng, bm: Ranking, q: int, terms: list[str], docs: list[str], p: Params, relevant: dict[str, int]
) -> tuple[pd.DataFrame, pd.DataFrame, bool]:
    """Each chosen document's per-term BM25 contributions, one summary row per document, and whether a
    document's contributions fail to add up to the score its ranking holds."""
    listed_docs, listed_scores = bm.top(q)
    rows, summary, mismatch = [], [], False
    for d in docs:
        j = ds.doc_index[d]
        parts = eng.explain_bm25(terms, j, p)
        total = sum(x["score"] for x in parts)
        pos = teaching.bm25_position(bm, q, j)
        if pos and not np.isclose(listed_scores[pos - 1], total):  # the explanation must add up to the ranking's score
            mismatch = True
        length, average = eng.doc_length(j)
        summary.append(
            {
                "document": d,
                "grade": relevant.get(d, 0),
                "BM25 score": total,
                "BM25 rank": bm25_rank_text(pos, total, listed_docs.size),
                "length": length,
                "× average": length / average if average else 0.0,
            }
        )
        for x in parts:
            rows.append(
                {
                    "document": d,
                    "term": x["term"],
                    "the corpus's words": words_text(x["words"]),
                    "in the corpus": x["in_vocabulary"],
                    "df": x["df"],
                    "idf": x["idf"],
                    "qtf": x["qtf"],
                    "question weight": x["question_weight"],
                    "tf": int(x["tf"]),
                    "length norm K": x["length_norm"],
                    "saturation": x["saturation"],
                    "contribution": x["score"],
                }
            )
    return pd.DataFrame(rows), pd.DataFrame(summary), mismatch


def bm25_terms(ds: Dataset, ranks: dict[str, Ranking], q: int, answers: list, p: Params) -> None:
    """Why BM25 ranks chosen documents where it does: their scores split by question term, with the formula."""
    st.subheader(f"Why BM25 ranks a document where it does (k1 = {p.k1:g}, b = {p.b:g})")
    eng = cache.engine(ds)
    bm = ranks["BM25"]
    qtext = ds.query_texts[q]
    relevant = ds.relevant_of(q)
    top_bm = bm.top_ids(ds, q, BM25_TOP)
    options = list(
        dict.fromkeys(
            [d for d in relevant if d in ds.doc_index] + [a.first for a in answers if a.first in ds.doc_index] + top_bm
        )
    )
    default_docs = list(dict.fromkeys(top_bm[:1] + [d for d in relevant if d in ds.doc_index]))
    docs = st.multiselect(
        "documents",
        options,
        default=default_docs,
        format_func=lambda d: doc_label(d, relevant, top_bm),
        key=f"diag_docs_{ds.query_ids[q]}",
        help="Defaults: BM25's first result and the question's relevant documents; BM25's top 10 and every system's first result can be added.",
    )
    terms = eng.index.analyse(qtext)
    if not terms:
        st.info("The question has no word left after the stop words: BM25 scores every document 0.")
        return
    if not docs:
        st.info("Choose a document to see its per-term contributions.")
        return
    per_term, summary, mismatch = term_tables(ds, eng, bm, q, terms, docs, p, relevant)
    if mismatch:
        st.warning("The per-term contributions do not add up to BM25's score: please report this.")
    left, right = st.columns([1, 1], gap="large")
    with left:
        positive = per_term[per_term["contribution"] > 0]
        if positive.empty:
            st.info(
                "No word of the question occurs in these documents: BM25 gives them 0 and does not retrieve them, "
                "whatever k1 and b are. That is a vocabulary gap; only another retriever or a rewritten question can help."
            )
        else:
            st.altair_chart(charts.bm25_terms(positive, summary, docs), width="stretch")
    with right:
        st.dataframe(
            summary,
            hide_index=True,
            width="stretch",
            column_config={
                "BM25 score": st.column_config.NumberColumn(format="%.4f"),
                "× average": st.column_config.NumberColumn("× average length", format="%.2f"),
            },
        )
        unknown = [x for x in dict.fromkeys(terms) if not eng.in_vocabulary(x)]
        if unknown:
            st.caption(f"Not in the corpus vocabulary (they can never match): {escape_markdown(', '.join(unknown))}.")
    st.dataframe(
        per_term,
        hide_index=True,
        width="stretch",
        height="content" if len(per_term) <= 30 else "auto",
        column_config={
            c: st.column_config.NumberColumn(format="%.4f")
            for c in ("idf", "question weight", "length norm K", "saturation", "contribution")
        },
    )
    st.caption(
        f"contribution = idf × question weight × saturation; idf = ln(1 + (N − df + 0.5) / (df + 0.5)) with N = {ds.n_docs:,}; "
        f"saturation = tf × (k1 + 1) / (tf + K), which tends to k1 + 1 = {p.k1 + 1:g} however often the term repeats; "
        f"length norm K = k1 × (1 − b + b × length / average length), average length {eng.doc_length(0)[1]:.2f} tokens: "
        "a document longer than average gets a larger K and each occurrence counts for less. "
        f"Question weight: {bm25.question_words_text(p.query_words, p.k3)} (qtf: how often the question holds the term)."
    )
