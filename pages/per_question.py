"""Per question: the rank heatmap (question x system, first relevant document), then one question's rankings side by side."""

from __future__ import annotations


import numpy as np
import pandas as pd
import streamlit as st

from ui.markdown import escape_markdown as plain
from ui import cache, charts, state

state.init_state()

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



def cut(text: str, n: int) -> str:
    """Text on one line, at most n characters."""
    t = " ".join(str(text).split())
    return t if len(t) <= n else t[: n - 1] + "…"


def rank_label(r: int) -> str:
    """A rank for display, 0 meaning not found."""
    return charts.NOT_FOUND if r == 0 else str(int(r))


ds = cache.current_dataset()
k = state.cutoff()
p = state.params()
ev = cache.evaluation([state.metric_name()])
systems = ev.systems
evaluated = ds.evaluated

st.title("Per question")
st.caption(
    f"**{plain(ds.name)}**: where does each system put the first relevant document of each question? "
    f"Cutoff k = {k} (sidebar); {evaluated.size:,} of {ds.n_queries:,} questions have a relevant document and are shown."
)

# ------------------------------------------------------------------------------------------ heatmap
first = pd.DataFrame({s: ev.first_rank[s] for s in systems}, index=evaluated)  # question index -> rank per system
missed = ((first == 0) | (first > k)).any(axis=1)

c1, c2 = st.columns([3, 2])
show = c1.segmented_control(
    "Show", [SHOW_ALL, SHOW_MISSED], default=SHOW_ALL, key=KEY_SHOW, required=True, persist_state="session",
    help="'Missed' keeps the questions where at least one system has no relevant document in its top k.",
)
order = c2.segmented_control(
    "Order", [SORT_ID, SORT_HARD], default=SORT_ID, key=KEY_SORT, required=True, persist_state="session",
    help="Hardest first: the most systems with no relevant document first, then the most beyond the top k, then the mean rank of the first relevant document.",
)
rows = first[missed] if show == SHOW_MISSED else first
if order == SORT_HARD:
    worst = int(first.to_numpy().max(initial=0)) + 1
    hardness = pd.DataFrame({
        "not_found": (rows == 0).sum(axis=1),
        "beyond_k": (rows > k).sum(axis=1),
        "mean_rank": rows.replace(0, worst).mean(axis=1),
    })
    rows = rows.loc[hardness.sort_values(["not_found", "beyond_k", "mean_rank"], ascending=False, kind="stable").index]

left, right = st.columns([3, 2], gap="large")
with left:
    if rows.empty:
        st.success(f"Every system has a relevant document in its top {k} for every question.", icon=":material/check_circle:")
    else:
        n_pages = -(-len(rows) // PAGE_SIZE)
        page = 1
        if n_pages > 1:
            page = st.pagination(n_pages, key=KEY_PAGE, max_visible_pages=9)
            st.caption(f"{len(rows):,} questions, {PAGE_SIZE} per page: page {page} of {n_pages}.")
        shown = rows.iloc[(page - 1) * PAGE_SIZE: page * PAGE_SIZE]
        cells = pd.DataFrame(
            [
                {
                    "qid": ds.query_ids[q],
                    "question": cut(ds.query_texts[q], 300),
                    "row": f"{ds.query_ids[q]} · {cut(ds.query_texts[q], 48)}",
                    "system": s,
                    "rank": int(shown.at[q, s]),
                    "label": rank_label(shown.at[q, s]),
                }
                for q in shown.index
                for s in systems
            ]
        )
        event = st.altair_chart(charts.rank_heatmap(cells, MAX_RANK, k, select="pick"), width="stretch",
                                on_select="rerun", selection_mode="pick", key=KEY_HEAT)
        picked = (event.selection.get("pick") or [{}])[0].get("qid")
        if picked != st.session_state.get(KEY_PICKED):  # a new click opens that question below
            st.session_state[KEY_PICKED] = picked
            if picked in ds.query_index:
                st.session_state[KEY_Q] = ds.query_index[picked]
with right:
    st.subheader("Counts")
    counts = pd.DataFrame(
        {
            f"in the top {k}": [int(((first[s] > 0) & (first[s] <= k)).sum()) for s in systems],
            f"beyond {k}": [int((first[s] > k).sum()) for s in systems],
            charts.NOT_FOUND: [int((first[s] == 0).sum()) for s in systems],
        },
        index=pd.Index(systems, name="system"),
    )
    st.dataframe(counts, width="stretch")
    st.caption(
        f"Questions by where the first relevant document lands, over all {evaluated.size:,} questions. "
        f"Colour: the rank of the first relevant document (dark = near the top, pale = rank {MAX_RANK} or deeper); "
        f"orange cells mean *not found*: no relevant document in the system's list. "
        f"BM25 and LSA rank every document they score; the fusions keep their top {p.fusion_depth}, "
        "uploaded runs what the file lists. "
        "Hover a cell for the question's text; click it to open the question below."
    )

# ------------------------------------------------------------------------------------------ one question
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
qid, qtext = ds.query_ids[q], ds.query_texts[q]
st.markdown(f"**{plain(qid)}** — {plain(qtext)}")

judged = np.flatnonzero(ds.qrels.query == q)  # positions in the qrels
grades = {str(ds.qrels.doc_id[j]): int(ds.qrels.grade[j]) for j in judged}
relevant = {d: g for d, g in grades.items() if g > 0}
if relevant:
    st.caption(
        "Relevant: " + ", ".join(f"{plain(d)} (grade {g})" for d, g in sorted(relevant.items(), key=lambda x: (-x[1], x[0])))
    )
else:
    st.warning("This question has no relevant document in the judgements: it is left out of every mean.", icon=":material/info:")

ranks = ev.rankings
firsts = {}
for s in systems:
    jr = ranks[s].judged_rank[judged]
    hit = jr[(jr > 0) & (ds.qrels.grade[judged] > 0)]
    firsts[s] = int(hit.min()) if hit.size else 0
metric_cols = st.columns(len(systems))
for col, s in zip(metric_cols, systems):
    col.metric(plain(s), rank_label(firsts[s]), help="Rank of the first relevant document in this system's list.", border=True)

# the rankings side by side
n_show = max(k, MIN_SHOWN)
st.subheader(f"Top {n_show} of each system")


def doc_text(d: int) -> str:
    """A document's text, or a note for a run's document outside the corpus."""
    return ds.doc_texts[d] if d >= 0 else "(not in the corpus)"


def ranking_table(s: str) -> pd.DataFrame:
    """System s's top list for this question: rank, document, grade, relevant marker, score, text."""
    docs, scores = ranks[s].top(q, n_show)
    ids = ranks[s].top_ids(ds, q, n_show)
    return pd.DataFrame(
        {
            "rank": np.arange(1, len(ids) + 1),
            "document": ids,
            "grade": [("✓ " + str(grades[d])) if grades.get(d, 0) > 0 else (str(grades[d]) if d in grades else "") for d in ids],
            "score": scores.astype(float),
            "text": [cut(doc_text(int(d)), TEXT_CHARS) for d in docs],
        }
    )


def styled(df: pd.DataFrame):
    """Relevant rows in green and bold, scores with four decimals."""
    rel = df["grade"].str.startswith("✓")

    def row_style(row: pd.Series) -> list[str]:
        css = "background-color: rgba(47, 158, 68, 0.22); font-weight: bold" if rel[row.name] else ""
        return [css] * len(row)

    return df.style.apply(row_style, axis=1).format({"score": "{:.4f}"})


SHORT_LIST = {  # why a system's list can be shorter than asked
    "BM25": "every other document shares no word with the question",
    "LSA": "every other document scores zero or less",
    "weighted": f"the fusions keep their top {p.fusion_depth}",
    "RRF": f"the fusions keep their top {p.fusion_depth}",
}
COLUMNS = {
    "rank": st.column_config.NumberColumn("#", width=36),
    "document": st.column_config.TextColumn("document", width="small"),
    "grade": st.column_config.TextColumn("grade", width=58, help="✓ = relevant, with its grade; 0 = judged not relevant; empty = not judged"),
    "score": st.column_config.NumberColumn("score", width=78),
    "text": st.column_config.TextColumn("text", width="large", help=f"The document's first {TEXT_CHARS} characters; the full text is below."),
}
per_row = 2 if len(systems) > 3 else len(systems)
for start in range(0, len(systems), per_row):
    cols = st.columns(per_row, gap="medium")
    for col, s in zip(cols, systems[start: start + per_row]):
        df = ranking_table(s)
        with col:
            total = int(ranks[s].n_results[q])
            st.markdown(f"**{plain(s)}** · " + (f"first relevant at rank {firsts[s]}" if firsts[s] else "no relevant document in its list"))
            if df.empty:
                st.info(f"{plain(s)} returns nothing for this question.", icon=":material/block:")
                continue
            st.dataframe(styled(df), hide_index=True, column_config=COLUMNS, width="stretch", key=f"pq_top_{s}")
            if total < n_show:
                st.caption(f"{plain(s)} returns only {total} document{'s' if total != 1 else ''}: {SHORT_LIST.get(s, 'the run file lists no more')}.")

# the judged documents and where each system put them
st.subheader("Judged documents")
if judged.size:
    table = pd.DataFrame(
        {"document": [str(ds.qrels.doc_id[j]) for j in judged], "grade": ds.qrels.grade[judged].astype(int)}
        | {s: pd.array([int(r) if r > 0 else None for r in ranks[s].judged_rank[judged]], dtype="Int64") for s in systems}
        | {"text": [cut(doc_text(int(ds.qrels.doc[j])), TEXT_CHARS) for j in judged]}
    ).sort_values(["grade", "document"], ascending=[False, True], kind="stable")
    inside = table.style.apply(
        lambda col: ["font-weight: bold; background-color: rgba(47, 158, 68, 0.22)" if not pd.isna(v) and v <= k else "" for v in col],
        subset=systems,
    )
    st.dataframe(
        inside, hide_index=True, width="stretch", placeholder="not retrieved",
        column_config={"grade": st.column_config.NumberColumn("grade", width=60),
                       "text": st.column_config.TextColumn("text", width="large")}
        | {s: st.column_config.NumberColumn(s, format="%d") for s in systems},
    )
    st.caption(f"Each system's rank for each judged document (green: inside the top {k}); 'not retrieved' = not in the system's list.")
else:
    st.caption("No judged document for this question.")

# full text of any document on screen
with st.expander("Read a document in full"):
    on_screen = list(dict.fromkeys(list(grades) + [d for s in systems for d in ranks[s].top_ids(ds, q, n_show)]))
    if on_screen:
        did = st.selectbox("Document", on_screen, key=KEY_DOC,
                           format_func=lambda d: f"{d} (grade {grades[d]})" if d in grades else d)
        idx = ds.doc_index.get(did)
        st.text(doc_text(idx) if idx is not None else "(not in the corpus)", width="stretch")
