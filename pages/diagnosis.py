"""Diagnosis: the failing questions of every system with the words they share and their class, the texts with the
shared words highlighted, and BM25's per-term contributions for a chosen question and documents at the current k1/b."""

from __future__ import annotations

import hashlib

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from retrieval import diagnosis, teaching
from retrieval.dataset import Dataset
from retrieval.ranking import Ranking
from retrieval.text import tokenize
from ui import cache, state
from ui.markdown import escape_markdown, highlight_markdown

state.init_state()

THRESHOLD_KEY = "diag_threshold"
QUESTION_KEY = "diag_question"
CLASS_COLORS = {"vocabulary gap": "#d62728", "surface homonymy": "#ff7f0e", "late rank": "#1f77b4"}
RELEVANT_COLOR, WRONG_COLOR = "green", "orange"


def _ranking_key(r: Ranking) -> str:
    """A content key of what the diagnosis reads from a ranking: the judged ranks and each question's first result."""
    h = hashlib.sha1(r.name.encode())
    h.update(r.judged_rank.tobytes())
    starts = r.indptr[:-1]
    has = np.diff(r.indptr) > 0
    h.update(np.where(has, r.docs[np.minimum(starts, max(r.docs.size - 1, 0))] if r.docs.size else -1, -2).tobytes())
    if r.doc_names is not None:
        h.update("\x1f".join(n[0] if n else "" for n in r.doc_names).encode())
    return h.hexdigest()


@st.cache_data(max_entries=64, show_spinner=False)
def _diagnose(_ds: Dataset, fingerprint: str, _ranking: Ranking, ranking_key: str, threshold: int) -> list[diagnosis.Case]:
    """The failing questions of one system (cached on the dataset, the ranking's content and the threshold)."""
    return diagnosis.diagnose(_ds, _ranking, threshold)


def _doc_text(ds: Dataset, doc_id: str) -> str | None:
    """A document's text, None when the corpus does not hold it (a run may name such a document)."""
    j = ds.doc_index.get(doc_id)
    return None if j is None else ds.doc_texts[j]


ds = cache.current_dataset()
p = state.params()
ranks = cache.rankings(ds)

st.title("Diagnosis")
st.caption(
    f"**{ds.name}**. A question is diagnosed when its first relevant document is not in a system's top *t*. "
    "Its class: **vocabulary gap** (nothing relevant found and no relevant document shares a word with the question), "
    "**surface homonymy** (nothing relevant found and a wrong document comes first on a word it shares with the question), "
    "**late rank** (the relevant document is there, beyond *t*, or further down than the list goes). "
    "Words are the tokeniser's: lower case, stop words removed."
)

threshold = int(st.number_input("first relevant document not in the top t", min_value=1, max_value=1000, value=diagnosis.THRESHOLD_DEFAULT,
                                step=1, key=THRESHOLD_KEY, persist_state="session",
                                help="The article uses 3: a question whose first right document is at rank 4 or beyond is diagnosed."))

cases = {name: _diagnose(ds, ds.fingerprint, r, _ranking_key(r), threshold) for name, r in ranks.items()}
all_cases = [c for name in ranks for c in cases[name]]

# ------------------------------------------------------------------------------------------ the failing questions
st.subheader("Failing questions")
if not all_cases:
    st.success(f"Every question has a relevant document in the top {threshold} of every system: nothing to diagnose.")
else:
    counts = pd.DataFrame(teaching.class_counts(cases))
    left, right = st.columns([1, 1], gap="large")
    with left:
        chart = alt.Chart(counts).mark_bar().encode(
            x=alt.X("system:N", sort=list(ranks), title=None, axis=alt.Axis(labelAngle=0)),
            xOffset=alt.XOffset("class:N", sort=list(diagnosis.CLASSES)),
            y=alt.Y("questions:Q", title="failing questions", axis=alt.Axis(tickMinStep=1)),
            color=alt.Color("class:N", sort=list(diagnosis.CLASSES), legend=alt.Legend(orient="top", title=None),
                            scale=alt.Scale(domain=list(CLASS_COLORS), range=list(CLASS_COLORS.values()))),
            tooltip=["system:N", "class:N", "questions:Q"],
        ).properties(height=230)
        st.altair_chart(chart, width="stretch")
    with right:
        table = counts.pivot(index="system", columns="class", values="questions").reindex(index=list(ranks), columns=list(diagnosis.CLASSES))
        table["all"] = table.sum(axis=1)
        st.dataframe(table, width="stretch")
        st.caption(f"Out of {ds.evaluated.size:,} questions with a relevant document.")
    st.dataframe(
        pd.DataFrame(teaching.overlap_rows(all_cases)),
        hide_index=True,
        width="stretch",
        column_config={
            "text": st.column_config.TextColumn("question text", width="large"),
            "relevant documents (grade): shared words": st.column_config.TextColumn(width="large"),
        },
    )

# ------------------------------------------------------------------------------------------ one question up close
st.subheader("One question up close")
qids = [ds.query_ids[q] for q in ds.evaluated]
failing = list(dict.fromkeys(c.qid for c in all_cases))
failing_by = {qid: [c.system for c in all_cases if c.qid == qid] for qid in failing}
if not qids:
    st.info("This dataset has no question with a relevant document.")
    st.stop()
if st.session_state.get(QUESTION_KEY) not in qids:
    st.session_state.pop(QUESTION_KEY, None)
default_q = qids.index(failing[0]) if failing else 0


def _question_label(qid: str) -> str:
    text = ds.query_texts[ds.query_index[qid]]
    short = text if len(text) <= 70 else text[:67] + "..."
    fails = failing_by.get(qid)
    return f"{qid} · {short}" + (f"  (fails: {', '.join(fails)})" if fails else "")


qid = st.selectbox("question", qids, index=default_q, format_func=_question_label, key=QUESTION_KEY, persist_state="session",
                   help="The failing questions are marked; any question with a relevant document can be opened.")
q = ds.query_index[qid]
qtext = ds.query_texts[q]
relevant = ds.relevant_of(q)
answers = teaching.first_results(ds, ranks, q)

# colours: a question word shared with a relevant document is green, one shared only with a wrong first result orange
shown_wrong = list(dict.fromkeys(a.first for a in answers if a.first is not None and a.first not in relevant))
rel_words = {w for d in relevant if (t := _doc_text(ds, d)) is not None for w in diagnosis.shared_words(qtext, t)}
wrong_words = {w for d in shown_wrong if (t := _doc_text(ds, d)) is not None for w in diagnosis.shared_words(qtext, t)}
qcolors = {**{w: WRONG_COLOR for w in wrong_words}, **{w: RELEVANT_COLOR for w in rel_words}}

st.markdown("**Question:** " + highlight_markdown(qtext, qcolors))
st.caption(
    f":{RELEVANT_COLOR}-background[shared with a relevant document] · :{WRONG_COLOR}-background[shared only with a wrong first result] · "
    f"question words after the stop words: {', '.join(tokenize(qtext)) or 'none'}"
)
st.dataframe(
    pd.DataFrame([{
        "system": a.system,
        "first relevant at": str(a.rank) if a.rank else "not found",
        "first result": a.first or "none (empty list)",
        "first result is relevant": ("yes" if a.first in relevant else "no") if a.first else "—",
        "results": a.n_results,
    } for a in answers]),
    hide_index=True, width="stretch",
)


def _doc_box(doc_id: str, what: str, color: str) -> None:
    """A document's text with the words it shares with the question highlighted."""
    text = _doc_text(ds, doc_id)
    with st.container(border=True):
        if text is None:
            st.markdown(f"**{escape_markdown(doc_id)}** · {what} · not in the corpus, no text to show")
            return
        words = diagnosis.shared_words(qtext, text)
        st.markdown(f"**{escape_markdown(doc_id)}** · {what} · shares: {escape_markdown(teaching.words_label(words))}")
        st.markdown(highlight_markdown(text, {w: color for w in words}))


left, right = st.columns(2, gap="large")
with left:
    st.markdown("**Relevant documents**")
    for d, g in relevant.items():
        _doc_box(d, f"relevant, grade {g}", RELEVANT_COLOR)
with right:
    st.markdown("**Wrong first results**")
    if not shown_wrong:
        st.caption("No system puts a wrong document first for this question" + (" (some return nothing)." if any(a.first is None for a in answers) else "."))
    for d in shown_wrong:
        _doc_box(d, "first result of " + ", ".join(a.system for a in answers if a.first == d), WRONG_COLOR)

# ------------------------------------------------------------------------------------------ BM25 term by term
st.subheader(f"Why BM25 ranks a document where it does (k1 = {p.k1:g}, b = {p.b:g})")
eng = cache.engine(ds)
bm = ranks["BM25"]
top_bm = bm.top_ids(ds, q, 10)
options = list(dict.fromkeys(
    [d for d in relevant if d in ds.doc_index] + [a.first for a in answers if a.first in ds.doc_index] + top_bm
))
bm_first = top_bm[0] if top_bm else None
default_docs = list(dict.fromkeys(([bm_first] if bm_first else []) + [d for d in relevant if d in ds.doc_index]))


def _doc_label(doc_id: str) -> str:
    tags = []
    if doc_id in relevant:
        tags.append(f"relevant, grade {relevant[doc_id]}")
    if doc_id in top_bm:
        tags.append(f"BM25 #{top_bm.index(doc_id) + 1}")
    return doc_id + (f" ({'; '.join(tags)})" if tags else "")


docs = st.multiselect("documents", options, default=default_docs, format_func=_doc_label, key=f"diag_docs_{qid}",
                      help="Defaults: BM25's first result and the question's relevant documents; BM25's top 10 and every system's first result can be added.")
terms = tokenize(qtext)
if not terms:
    st.info("The question has no word left after the stop words: BM25 scores every document 0.")
elif not docs:
    st.info("Choose a document to see its per-term contributions.")
else:
    listed_docs, listed_scores = bm.top(q)
    rows, summary, mismatch = [], [], False
    for d in docs:
        j = ds.doc_index[d]
        parts = eng.explain_bm25(terms, j, p.k1, p.b)
        total = sum(x["score"] for x in parts)
        pos = teaching.bm25_position(bm, q, j)
        if pos and not np.isclose(listed_scores[pos - 1], total):  # the explanation must add up to the ranking's score
            mismatch = True
        summary.append({
            "document": d,
            "grade": relevant.get(d, 0),
            "BM25 score": total,
            "BM25 rank": str(pos) if pos else ("not retrieved (score 0)" if total <= 0 else f"beyond {listed_docs.size}"),
            "length": eng.doc_length(j)[0],
            "× average": eng.doc_length(j)[0] / eng.doc_length(j)[1] if eng.doc_length(j)[1] else 0.0,
        })
        for x in parts:
            rows.append({
                "document": d, "term": x["term"], "in the corpus": x["in_vocabulary"], "df": x["df"], "idf": x["idf"],
                "tf": int(x["tf"]), "length norm K": x["length_norm"], "saturation": x["saturation"], "contribution": x["score"],
            })
    per_term = pd.DataFrame(rows)
    summary_df = pd.DataFrame(summary)
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
            x = alt.X("document:N", sort=docs, title=None, scale=alt.Scale(domain=docs, paddingInner=0.35), axis=alt.Axis(labelAngle=0))
            bars = alt.Chart(positive).mark_bar().encode(
                x=x,
                y=alt.Y("sum(contribution):Q", title="BM25 score = sum of the term contributions"),
                color=alt.Color("term:N", legend=alt.Legend(orient="top", title="question term")),
                order=alt.Order("term:N"),
                tooltip=["document:N", "term:N", alt.Tooltip("idf:Q", format=".4f"), "tf:Q",
                         alt.Tooltip("length norm K:Q", format=".4f"), alt.Tooltip("saturation:Q", format=".4f"),
                         alt.Tooltip("contribution:Q", format=".4f")],
            )
            totals = alt.Chart(summary_df).mark_text(dy=-8, fontSize=12).encode(
                x=x, y=alt.Y("BM25 score:Q"), text=alt.Text("BM25 score:Q", format=".3f"))
            st.altair_chart((bars + totals).properties(height=300), width="stretch")
    with right:
        st.dataframe(summary_df, hide_index=True, width="stretch",
                     column_config={"BM25 score": st.column_config.NumberColumn(format="%.4f"),
                                    "× average": st.column_config.NumberColumn("× average length", format="%.2f")})
        unknown = [x for x in dict.fromkeys(terms) if not eng.in_vocabulary(x)]
        if unknown:
            st.caption(f"Not in the corpus vocabulary (they can never match): {escape_markdown(', '.join(unknown))}.")
    st.dataframe(
        per_term, hide_index=True, width="stretch", height="content" if len(per_term) <= 30 else "auto",
        column_config={c: st.column_config.NumberColumn(format="%.4f") for c in ("idf", "length norm K", "saturation", "contribution")},
    )
    st.caption(
        f"contribution = idf × saturation; idf = ln(1 + (N − df + 0.5) / (df + 0.5)) with N = {ds.n_docs:,}; "
        f"saturation = tf × (k1 + 1) / (tf + K), which tends to k1 + 1 = {p.k1 + 1:g} however often the term repeats; "
        f"length norm K = k1 × (1 − b + b × length / average length), average length {eng.doc_length(0)[1]:.2f} tokens: "
        "a document longer than average gets a larger K and each occurrence counts for less. "
        "A question word counts once however often the question repeats it."
    )
