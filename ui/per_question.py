"""The Per question page's parts: the rank heatmap (question x system, first relevant document) with its filter,
order and pages, the counts, and one question's rankings side by side with its judged documents."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from retrieval.analyses.diagnosis import (
    beyond_cut,
    fusion_cut_label,
    members_found,
    rank_text,
)
from retrieval.core.params import Params
from retrieval.corpus.dataset import Dataset
from retrieval.evaluation.experiment import Evaluation
from retrieval.retrievers.systems import FUSIONS

from . import charts
from .format import FULL_CHARS, clip, full_text_note, plural
from .in_use import dataset_label
from .markdown import escape_markdown as plain

PAGE_SIZE = 30  # heatmap rows per page
MAX_RANK = 20  # ranks from here on share the palest colour
MIN_SHOWN = 10  # the side-by-side lists show max(k, this) results
TEXT_CHARS = 160  # document text in the tables is cut here (the full text is one selectbox away)
SHOW_ALL = "all questions"
SHOW_MISSED = "missed in the top k by some system"
SORT_ID = "question order"
SORT_HARD = "hardest first"
KEY_SHOW, KEY_SORT, KEY_PAGE, KEY_Q, KEY_DOC = "pq_show", "pq_sort", "pq_page", "pq_question", "pq_doc"
KEY_HEAT, KEY_PICKED = "pq_heatmap", "pq_heatmap_picked"  # the chart's selection, and the last click acted on
KEY_HEAT_ROUND = (
    "pq_heatmap_round"  # bumped when the question's dialog is closed: a fresh chart, so the same cell opens it again
)
ROW_CHARS = 40  # a heatmap row's label: the question's id and its text cut here (the tooltip has the text in full)
RELEVANT_CSS = "background-color: rgba(47, 158, 68, 0.22); font-weight: bold"


# ------------------------------------------------------------------------------------------ pure helpers


def cut(text: str, n: int) -> str:
    """Text on one line, at most n characters (an ellipsis in the last when cut)."""
    t = " ".join(str(text).split())
    return t if len(t) <= n else t[: n - 1] + "…"


def fusion_depths(systems, p: Params) -> dict[str, int]:
    """The fusions among the systems, each with its depth N: its list is its top N."""
    return {s: p.fusion_depth for s in systems if s in FUSIONS}


def cell_label(r: int, depth: int | None = None, member_found: bool = False) -> str:
    """A heatmap cell's text: the rank, "> N" for a fusion's cut (diagnosis.rank_text), "—" for not found (the legend
    names both)."""
    return rank_text(int(r), depth, member_found) if r or beyond_cut(r, depth, member_found) else charts.NOT_FOUND_MARK


def missing_text(depth: int | None = None, member_found: bool = False) -> str:
    """What a miss means: "beyond the fusion's top N" for a fusion's cut (`beyond_cut`), else not found."""
    return fusion_cut_label(depth) if beyond_cut(0, depth, member_found) else charts.NOT_FOUND


def found_by_members(first: pd.DataFrame, members) -> pd.Series:
    """Per question (the rows of `first`): whether one of the fusions' members lists a relevant document."""
    cols = [m for m in members if m in first.columns]
    found = members_found([first[m].to_numpy() for m in cols]) if cols else np.zeros(len(first), dtype=bool)
    return pd.Series(found, index=first.index)


def first_ranks(ev: Evaluation) -> pd.DataFrame:
    """Question index x system: the rank of the first relevant document (0 = not found)."""
    return pd.DataFrame({s: ev.first_rank[s] for s in ev.systems}, index=ev.dataset.evaluated)


def missed(first: pd.DataFrame, k: int) -> pd.Series:
    """The questions where at least one system has no relevant document in its top k."""
    return ((first == 0) | (first > k)).any(axis=1)


def hardest_first(rows: pd.DataFrame, k: int, worst: int) -> pd.DataFrame:
    """The rows ordered hardest first: the most systems with nothing found, then the most beyond k, then the
    mean rank (not found counted as `worst`); ties keep their order."""
    hardness = pd.DataFrame(
        {
            "not_found": (rows == 0).sum(axis=1),
            "beyond_k": (rows > k).sum(axis=1),
            "mean_rank": rows.replace(0, worst).mean(axis=1),
        }
    )
    return rows.loc[hardness.sort_values(["not_found", "beyond_k", "mean_rank"], ascending=False, kind="stable").index]


def paged(n_pages: int, key: str, visible: int = 9) -> int:
    """The page shown (from 1): a pagination when there is more than one (st.pagination brings a page number left
    beyond the last, after the rows changed, back to the first itself)."""
    return st.pagination(n_pages, key=key, max_visible_pages=visible) if n_pages > 1 else 1


def page_count(n_rows: int, size: int = PAGE_SIZE) -> int:
    """Pages of `size` rows needed for n_rows."""
    return -(-n_rows // size)


def page_rows(rows: pd.DataFrame, page: int, size: int = PAGE_SIZE) -> pd.DataFrame:
    """The rows of page `page` (from 1)."""
    return rows.iloc[(page - 1) * size : page * size]


def heatmap_cells(
    ds: Dataset, shown: pd.DataFrame, depths: dict[str, int] | None = None, found: pd.Series | None = None
) -> pd.DataFrame:
    """One cell per question and system: the question's id and text (for the tooltip), its row label, the rank,
    the cell's text and what a miss means (a fusion's, among `depths`, is beyond its top N where one of its
    members lists a relevant document, `found` by question; else not found)."""
    depths = depths or {}
    found = found if found is not None else pd.Series(False, index=shown.index)
    return pd.DataFrame(
        [
            {
                "qid": ds.query_ids[q],
                "question": cut(ds.query_texts[q], 300),
                "row": f"{ds.query_ids[q]} · {cut(ds.query_texts[q], ROW_CHARS)}",
                "system": s,
                "rank": int(shown.at[q, s]),
                "label": cell_label(shown.at[q, s], depths.get(s), bool(found.get(q, False))),
                "missing": missing_text(depths.get(s), bool(found.get(q, False))),
            }
            for q in shown.index
            for s in shown.columns
        ]
    )


MISSED = charts.NOT_FOUND  # the counts' column of the questions with nothing relevant found


def cut_column(depth: int) -> str:
    """The counts' column of a fusion's cut: "> 10"."""
    return f"> {int(depth)}"


def counts_frame(
    first: pd.DataFrame, k: int, depths: dict[str, int] | None = None, found: pd.Series | None = None
) -> pd.DataFrame:
    """Per system: questions whose first relevant document is in the top k, beyond it, not found, and (with
    fusions among `depths`) beyond a fusion's top N, by the one rule (`beyond_cut`; `found`: per question, one of
    the fusions' members lists a relevant document)."""
    depths = depths or {}
    found = (
        found.reindex(first.index, fill_value=False).to_numpy()
        if found is not None
        else np.zeros(len(first), dtype=bool)
    )
    systems = list(first.columns)
    cut = {s: (first[s].to_numpy() == 0) & found if s in depths else np.zeros(len(first), dtype=bool) for s in systems}
    out = {
        f"in the top {k}": [int(((first[s] > 0) & (first[s] <= k)).sum()) for s in systems],
        f"beyond {k}": [int((first[s] > k).sum()) for s in systems],
        MISSED: [int((first[s] == 0).sum()) - int(cut[s].sum()) for s in systems],
    }
    if depths:
        out[cut_column(next(iter(depths.values())))] = [int(cut[s].sum()) for s in systems]
    return pd.DataFrame(out, index=pd.Index(systems, name="system"))


def grade_text(doc_id: str, grades: dict[str, int]) -> str:
    """A listed document's grade: ✓ and the grade when relevant, the grade when judged not relevant, else empty."""
    if grades.get(doc_id, 0) > 0:
        return "✓ " + str(grades[doc_id])
    return str(grades[doc_id]) if doc_id in grades else ""


def short_list_reason(system: str, fusion_depth: int) -> str:
    """Why a system's list can be shorter than asked."""
    return {
        "BM25": "every other document shares no word with the question",
        "LSA": "every other document scores zero or less",
        "weighted": f"the fusions keep their top {fusion_depth}",
        "RRF": f"the fusions keep their top {fusion_depth}",
    }.get(system, "the run file lists no more")


def styled(df: pd.DataFrame):
    """Relevant rows (grade marked ✓) in green and bold, scores with four decimals."""
    rel = df["grade"].str.startswith("✓")
    return df.style.apply(lambda row: [RELEVANT_CSS if rel[row.name] else ""] * len(row), axis=1).format(
        {"score": "{:.4f}"}
    )


# ------------------------------------------------------------------------------------------ the heatmap


def header(ds: Dataset, k: int) -> None:
    """The title and what the page shows."""
    st.title("Per question")
    st.caption(
        f"**{plain(dataset_label())}**: where does each system put the first relevant document of each question? "
        f"Cutoff k = {k} (sidebar); {ds.evaluated.size:,} of {ds.n_queries:,} questions have a relevant document and are shown."
    )


def first_page() -> None:
    """Back to the heatmap's first page (a new filter or order starts at its top: the hardest, when hardest first)."""
    if KEY_PAGE in st.session_state:
        st.session_state[KEY_PAGE] = 1


def chosen_rows(first: pd.DataFrame, k: int) -> pd.DataFrame:
    """The filter and order controls, and the heatmap's rows they select."""
    with st.container(horizontal=True, wrap=True, gap="medium"):  # each control whole: one above the other at 1024 px
        show = st.segmented_control(
            "Show",
            [SHOW_ALL, SHOW_MISSED],
            default=SHOW_ALL,
            key=KEY_SHOW,
            required=True,
            persist_state="session",
            on_change=first_page,
            width="content",
            help="'Missed' keeps the questions where at least one system has no relevant document in its top k.",
        )
        order = st.segmented_control(
            "Order",
            [SORT_ID, SORT_HARD],
            default=SORT_ID,
            key=KEY_SORT,
            required=True,
            persist_state="session",
            on_change=first_page,
            width="content",
            help="Hardest first: the most systems with no relevant document first, then the most beyond the top k, then the mean rank of the first relevant document.",
        )
    rows = first[missed(first, k)] if show == SHOW_MISSED else first
    if order == SORT_HARD:
        rows = hardest_first(rows, k, int(first.to_numpy().max(initial=0)) + 1)
    return rows


def heatmap_key() -> str:
    """The chart's key: a new one after the question's dialog is closed, so its selection starts empty."""
    return f"{KEY_HEAT}_{st.session_state.get(KEY_HEAT_ROUND, 0)}"


def heatmap(
    ds: Dataset, rows: pd.DataFrame, k: int, depths: dict[str, int] | None = None, found: pd.Series | None = None
) -> int | None:
    """One page of the heatmap, the full width of the page; returns the question a new click picked (its index),
    which the page opens in a dialog (and below), else None."""
    if rows.empty:
        st.success(
            f"Every system has a relevant document in its top {k} for every question.", icon=":material/check_circle:"
        )
        return None
    n_pages = page_count(len(rows))
    page = paged(n_pages, KEY_PAGE)
    if n_pages > 1:
        st.caption(f"{len(rows):,} questions, {PAGE_SIZE} per page: page {page} of {n_pages}.")
    cells = heatmap_cells(ds, page_rows(rows, page), depths, found)
    event = st.altair_chart(
        charts.rank_heatmap(cells, MAX_RANK, k, select="pick"),
        width="stretch",
        on_select="rerun",
        selection_mode="pick",
        key=heatmap_key(),
    )
    picked = ((event.get("selection") or {}).get("pick") or [{}])[0].get(
        "qid"
    )  # the event is a dict (attribute access too)
    if picked == st.session_state.get(KEY_PICKED):
        return None
    st.session_state[KEY_PICKED] = picked  # a new click: that question, in a dialog and below
    if picked not in ds.query_index:
        return None
    st.session_state[KEY_Q] = ds.query_index[picked]
    return ds.query_index[picked]


def counts(first: pd.DataFrame, k: int, depths: dict[str, int], found: pd.Series | None = None) -> None:
    """Questions by where each system's first relevant document lands, and how to read the heatmap."""
    depth = next(iter(depths.values())) if depths else None
    config = {
        MISSED: st.column_config.NumberColumn(
            help="No relevant document in the system's list, and for a fusion in none of its members' lists either."
        )
    }
    if depth is not None:
        config[cut_column(depth)] = st.column_config.NumberColumn(
            help=f"{fusion_cut_label(depth)}: a member lists a relevant "
            "document, the fusion's list (its top N) does not."
        )
    st.dataframe(counts_frame(first, k, depths, found), width="stretch", column_config=config)
    fused = ""
    if depth is not None:
        fused = (
            f"A fusion keeps its top {depth} (the sidebar's fusion depth): where one of its members lists a relevant "
            f"document and the fusion does not, its miss, amber, reads “> {depth}”, {fusion_cut_label(depth)}; where "
            "no member lists one, it is not found. "
        )
    st.caption(
        f"Questions by where the first relevant document lands, over all {len(first):,} questions. "
        f"Colour: the rank of the first relevant document (dark = near the top, pale = rank {MAX_RANK} or deeper); "
        f"an orange “{charts.NOT_FOUND_MARK}” means *not found*: no relevant document in the system's list. {fused}"
        "BM25 and LSA rank every document they score, uploaded runs what the file lists. "
        "Hover a cell for the question's text; click it to open the question."
    )


def dialog_closed() -> None:
    """The question's dialog was closed: the next chart is a new one, so a click on the same cell opens it again."""
    st.session_state[KEY_HEAT_ROUND] = st.session_state.get(KEY_HEAT_ROUND, 0) + 1


@st.dialog("One question", width="large", on_dismiss=dialog_closed)
def question_dialog(ds: Dataset, ev: Evaluation, q: int, k: int, p: Params) -> None:
    """The clicked question over the page, where the click was: its first relevant ranks, each system's top list
    and its judged documents (the same question stays open below the heatmap)."""
    one = Question(ds, ev, q)
    summary(one, fusion_depths(one.systems, p), p.members)
    side_by_side(one, k, p, key="pq_dialog_top_")
    judged_documents(one, k, p.fusion_depth)
    st.caption("Close this (Esc, or click outside) to go back to the heatmap; the question stays open below it.")


# ------------------------------------------------------------------------------------------ one question


class Question:
    """One question's judgements and where each system puts them."""

    def __init__(self, ds: Dataset, ev: Evaluation, q: int):
        self.ds, self.q, self.ranks, self.systems = ds, q, ev.rankings, ev.systems
        self.judged = np.flatnonzero(ds.qrels.query == q)  # positions in the qrels
        self.grades = {str(ds.qrels.doc_id[j]): int(ds.qrels.grade[j]) for j in self.judged}
        self.relevant = {d: g for d, g in self.grades.items() if g > 0}
        self.firsts = {}
        for s in self.systems:
            jr = self.ranks[s].judged_rank[self.judged]
            hit = jr[(jr > 0) & (ds.qrels.grade[self.judged] > 0)]
            self.firsts[s] = int(hit.min()) if hit.size else 0

    def member_found(self, members) -> bool:
        """Whether one of the fusions' `members` lists a relevant document of this question."""
        return any(self.firsts.get(m, 0) > 0 for m in members)

    def doc_text(self, d: int) -> str:
        """A document's text, or a note for a run's document outside the corpus."""
        return self.ds.doc_texts[d] if d >= 0 else "(not in the corpus)"

    def ranking_table(self, s: str, n: int) -> pd.DataFrame:
        """System s's top n for this question: rank, document, grade, score, text."""
        docs, scores = self.ranks[s].top(self.q, n)
        ids = self.ranks[s].top_ids(self.ds, self.q, n)
        return pd.DataFrame(
            {
                "rank": np.arange(1, len(ids) + 1),
                "document": ids,
                "grade": [grade_text(d, self.grades) for d in ids],
                "score": scores.astype(float),
                "text": [cut(self.doc_text(int(d)), TEXT_CHARS) for d in docs],
            }
        )

    def judged_table(self) -> pd.DataFrame:
        """Every judged document with its grade, each system's rank of it (empty: not in the list) and its text,
        by grade then id."""
        ds, judged = self.ds, self.judged
        return pd.DataFrame(
            {"document": [str(ds.qrels.doc_id[j]) for j in judged], "grade": ds.qrels.grade[judged].astype(int)}
            | {
                s: pd.array([int(r) if r > 0 else None for r in self.ranks[s].judged_rank[judged]], dtype="Int64")
                for s in self.systems
            }
            | {"text": [cut(self.doc_text(int(ds.qrels.doc[j])), TEXT_CHARS) for j in judged]}
        ).sort_values(["grade", "document"], ascending=[False, True], kind="stable")

    def on_screen(self, n: int) -> list[str]:
        """The judged documents, then every listed one, once each."""
        return list(
            dict.fromkeys(
                list(self.grades) + [d for s in self.systems for d in self.ranks[s].top_ids(self.ds, self.q, n)]
            )
        )


def choose_question(ds: Dataset, ev: Evaluation, depths: dict[str, int] | None = None, members=()) -> Question:
    """The question selector, the question and its relevant documents, and each system's first relevant rank."""
    st.divider()
    st.header("One question")
    q = st.selectbox(
        "Question",
        list(range(ds.n_queries)),
        format_func=lambda i: f"{ds.query_ids[i]} — {cut(ds.query_texts[i], 110)}",
        key=KEY_Q,
        persist_state="session",
        help="Type to search by id or words.",
    )
    one = Question(ds, ev, q)
    summary(one, depths or {}, members)
    return one


def summary(one: Question, depths: dict[str, int], members=()) -> None:
    """The question, its relevant documents, and each system's first relevant rank (a fusion's miss: "> N" when one
    of its `members` lists a relevant document, else not found)."""
    ds, q = one.ds, one.q
    st.markdown(f"**{plain(ds.query_ids[q])}** — {plain(clip(ds.query_texts[q]))}")
    if one.relevant:
        st.caption(
            "Relevant: "
            + ", ".join(f"{plain(d)} (grade {g})" for d, g in sorted(one.relevant.items(), key=lambda x: (-x[1], x[0])))
        )
    else:
        st.warning(
            "This question has no relevant document in the judgements: it is left out of every mean.",
            icon=":material/info:",
        )
    per_row = (
        3 if len(one.systems) > 4 else len(one.systems)
    )  # names stay readable: at most three cards a row beyond four
    cols = [c for start in range(0, len(one.systems), per_row) for c in st.columns(per_row)][: len(one.systems)]
    found = one.member_found(members)
    for col, s in zip(cols, one.systems):
        d = depths.get(s)
        col.metric(
            plain(s),
            rank_text(int(one.firsts[s]), d, found),
            border=True,
            help="Rank of the first relevant document in this system's list"
            + (f"; “> {d}”: {fusion_cut_label(d)}, its list." if beyond_cut(one.firsts[s], d, found) else "."),
        )


def side_by_side(one: Question, k: int, p: Params, key: str = "pq_top_") -> None:
    """Each system's top max(k, 10) for the question, one system under the other across the page: side by side, two
    or three to a row, the text column was squeezed to a letter at 1024 px (the other columns take 250 px)."""
    n_show = max(k, MIN_SHOWN)
    st.subheader(f"Top {n_show} of each system")
    columns = {
        "rank": st.column_config.NumberColumn("#", width=36),
        "document": st.column_config.TextColumn("document", width="small"),
        "grade": st.column_config.TextColumn(
            "grade", width=58, help="✓ = relevant, with its grade; 0 = judged not relevant; empty = not judged"
        ),
        "score": st.column_config.NumberColumn("score", width=78),
        "text": st.column_config.TextColumn(
            "text", width="large", help=f"The document's first {TEXT_CHARS} characters; the full text is below."
        ),
    }
    for s in one.systems:
        (col,) = st.columns(1)  # a row of its own, across the page
        with col:
            df = one.ranking_table(s, n_show)
            total = int(one.ranks[s].n_results[one.q])
            first = one.firsts[s]
            missed = (
                f"no relevant document in its top {p.fusion_depth}: {fusion_cut_label(p.fusion_depth)}"
                if beyond_cut(first, p.fusion_depth if s in FUSIONS else None, one.member_found(p.members))
                else "no relevant document in its list" + (", nor in its members'" if s in FUSIONS else "")
            )
            st.markdown(f"**{plain(s)}** · " + (f"first relevant at rank {first}" if first else missed))
            if df.empty:
                st.info(f"{plain(s)} returns nothing for this question.", icon=":material/block:")
                continue
            st.dataframe(styled(df), hide_index=True, column_config=columns, width="stretch", key=f"{key}{s}")
            if total < n_show:
                st.caption(
                    f"{plain(s)} returns only {plural(total, 'document')}: {short_list_reason(s, p.fusion_depth)}."
                )


def judged_documents(one: Question, k: int, fusion_depth: int | None = None) -> None:
    """The judged documents and where each system put them (green inside the top k)."""
    st.subheader("Judged documents")
    if not one.judged.size:
        st.caption("No judged document for this question.")
        return
    systems = one.systems
    inside = one.judged_table().style.apply(
        lambda col: [
            "font-weight: bold; background-color: rgba(47, 158, 68, 0.22)" if not pd.isna(v) and v <= k else ""
            for v in col
        ],
        subset=systems,
    )
    st.dataframe(
        inside,
        hide_index=True,
        width="stretch",
        placeholder="not retrieved",
        column_config={
            "grade": st.column_config.NumberColumn("grade", width=60),
            "text": st.column_config.TextColumn("text", width="large"),
        }
        | {s: st.column_config.NumberColumn(s, format="%d") for s in systems},
    )
    cut = (
        f" (a fusion's list is its top {fusion_depth}: {fusion_cut_label(fusion_depth)})"
        if fusion_depth is not None and any(s in FUSIONS for s in systems)
        else ""
    )
    st.caption(
        f"Each system's rank for each judged document (green: inside the top {k}); 'not retrieved' = not in the "
        f"system's list{cut}."
    )


def full_text(one: Question, k: int) -> None:
    """Any document on screen, in full."""
    with st.expander("Read a document in full"):
        on_screen = one.on_screen(max(k, MIN_SHOWN))
        if on_screen:
            did = st.selectbox(
                "Document",
                on_screen,
                key=KEY_DOC,
                format_func=lambda d: f"{d} (grade {one.grades[d]})" if d in one.grades else d,
            )
            idx = one.ds.doc_index.get(did)
            if idx is None:
                st.text("(not in the corpus)", width="stretch")
            else:
                st.text(clip(one.doc_text(idx), FULL_CHARS), width="stretch")
                st.caption(full_text_note(one.doc_text(idx)))
