"""The Playground's parts: a question typed (or started from a dataset question, with its text and judgements),
every system's top 10 for it, the metrics for the typed text beside the original's, documents judged on the fly,
and each system's list up close: the shared words highlighted, BM25's per-term contributions, the cosines.

The scoring is the engine's (`Engine.adhoc`, retrieval/adhoc.py); what is here turns it into tables and text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import streamlit as st

from retrieval.analyses import diagnosis
from retrieval.core.errors import InputError
from retrieval.core.params import Params
from retrieval.corpus.dataset import Dataset
from retrieval.engine import adhoc
from retrieval.evaluation.experiment import Evaluation
from retrieval.retrievers import bm25
from retrieval.retrievers.ranking import Ranking
from retrieval.retrievers.systems import Sources

from . import cache, state
from .format import clip, signed
from .markdown import escape_markdown as plain
from .markdown import highlight_markdown
from .per_question import RELEVANT_CSS, cut, grade_text, short_list_reason

TOP = 10  # each system's list shown
TEXT_CHARS = 160  # a document's text in a table
CLOSE_CHARS = 600  # a document's text up close
SHARED_COLOR = "orange"  # a word the document shares with the typed question
MARKED_GRADE = 1  # the grade a document gets when it is marked relevant here (unless its dataset grade is higher)
MAX_MARKS = 200  # documents whose judgement a person changes here, at most (the session's judgements stay bounded)
TYPED, ORIGINAL = "typed", "original"
METRIC_WIDTH = 150  # one system's card (they wrap: three to a row at 1024 pixels, five at 1400)


# ------------------------------------------------------------------------------------------ state


def init(ds: Dataset) -> None:
    """The Playground's keys, once per session and again when the dataset in use changes (its judgements and
    its question belong to the dataset they were made on; a grade given on the Judge page keeps them: the same
    documents and questions, corpus_fingerprint unchanged)."""
    s = st.session_state
    if s.get(state.PG_DATASET) != ds.corpus_fingerprint:
        s[state.PG_DATASET] = ds.corpus_fingerprint
        s[state.PG_ORIGIN] = None
        s[state.PG_JUDGED] = {}
        s[state.PG_FROM] = None
        s.setdefault(state.PG_TEXT, "")
    s.setdefault(state.PG_VERSION, 0)
    s.setdefault(state.PG_JUDGED, {})
    s.setdefault(state.PG_ORIGIN, None)


def editor_key() -> str:
    """The judging table's key: a new one after each applied edit, so the table restarts from the judgements."""
    return f"pg_judge_{st.session_state[state.PG_VERSION]}"


def on_start_from(ds: Dataset) -> None:
    """The selector's callback: the chosen dataset question's text and judgements become the typed question's
    (none chosen: the text stays, the judgements go)."""
    s = st.session_state
    qid = s.get(state.PG_FROM)
    if qid is None or qid not in ds.query_index:
        s[state.PG_ORIGIN], s[state.PG_JUDGED] = None, {}
    else:
        q = ds.query_index[qid]
        s[state.PG_TEXT] = ds.query_texts[q][: adhoc.MAX_CHARS]
        s[state.PG_ORIGIN] = qid
        s[state.PG_JUDGED] = dict(adhoc.judgements_of(ds, q))
    s[state.PG_VERSION] += 1


def on_reset(ds: Dataset) -> None:
    """The reset button's callback: the judgements back to the original question's (none without one)."""
    s = st.session_state
    origin = s.get(state.PG_ORIGIN)
    s[state.PG_JUDGED] = dict(adhoc.judgements_of(ds, ds.query_index[origin])) if origin in ds.query_index else {}
    s[state.PG_VERSION] += 1


def marked(grades: Mapping[str, int], original: Mapping[str, int], doc_id: str, relevant: bool) -> dict[str, int]:
    """The judgements after a document is marked relevant (its original grade if that was positive, else
    MARKED_GRADE) or not relevant (grade 0 if the original judgements hold it, else no judgement)."""
    out = dict(grades)
    if relevant:
        out[doc_id] = original[doc_id] if original.get(doc_id, 0) > 0 else MARKED_GRADE
    elif doc_id in original:
        out[doc_id] = 0
    else:
        out.pop(doc_id, None)
    return out


def edited(
    grades: Mapping[str, int], original: Mapping[str, int], rows: Sequence[str], edits: Mapping
) -> dict[str, int]:
    """The judgements after the judging table's edits ({row position: {"relevant": bool}}) on `rows` (its
    documents in order); an edit of another column or of a row not there is ignored."""
    out = dict(grades)
    for pos, change in (edits or {}).items():
        i = int(pos)
        if "relevant" in change and 0 <= i < len(rows):
            out = marked(out, original, rows[i], bool(change["relevant"]))
    return out


def apply_edits(ds: Dataset) -> str | None:
    """Apply the judging table's pending edits to the judgements (before anything is computed, so the metrics
    above the table follow at once); a message when they would exceed the bound."""
    s = st.session_state
    pending = s.get(editor_key())
    shown = s.get(state.PG_ROWS)
    if not pending or not shown or shown[0] != s[state.PG_VERSION] or not pending.get("edited_rows"):
        return None
    original = original_grades(ds)
    new = edited(s[state.PG_JUDGED], original, shown[1], pending["edited_rows"])
    s[state.PG_VERSION] += 1
    n = changes(new, original)
    if n > MAX_MARKS:
        return (
            f"At most {MAX_MARKS} documents can be judged here beyond the original judgements: this edit would "
            f"make {n}. Reset the judgements to start again."
        )
    s[state.PG_JUDGED] = new
    return None


def changes(grades: Mapping[str, int], original: Mapping[str, int]) -> int:
    """How many documents' judgements differ from the original ones (added, changed or taken away)."""
    return sum(grades.get(d) != original.get(d) for d in set(grades) | set(original))


def original_grades(ds: Dataset) -> dict[str, int]:
    """The judgements of the dataset question the typed one started from (none without one)."""
    origin = st.session_state.get(state.PG_ORIGIN)
    return dict(adhoc.judgements_of(ds, ds.query_index[origin])) if origin in ds.query_index else {}


# ------------------------------------------------------------------------------------------ pure helpers


def metric_names(chosen: str, k: int) -> list[str]:
    """The sidebar's metric, then hit, recall and nDCG at the sidebar's k and MRR, as the Overview's table (once each)."""
    return list(dict.fromkeys([chosen, f"hit@{k}", f"recall@{k}", "mrr", f"ndcg@{k}"]))


def question_label(ds: Dataset, qid: str) -> str:
    """A dataset question in the selector: its id and its text cut at 80 characters."""
    return f"{qid} · {cut(ds.query_texts[ds.query_index[qid]], 80)}"


def words_note(scores: adhoc.Scores) -> tuple[str, str]:
    """What the typed text's words are to the retrievers: ('info' | 'warning', escaped Markdown)."""
    if not scores.terms:
        return "warning", (
            "No word is left after the stop words: BM25 and LSA score every document 0"
            + (", only dense ranks." if "dense" in scores.rows else ".")
        )
    known = [t for t in scores.terms if t not in scores.unknown]
    if not known:
        return "warning", (
            f"None of its words is in the corpus's vocabulary ({plain(', '.join(scores.unknown))}): BM25 "
            "and LSA score every document 0 — a vocabulary gap"
            + (", only dense ranks." if "dense" in scores.rows else ".")
        )
    text = f"Words after the stop words: **{plain(', '.join(known))}**"
    if scores.unknown:
        text += f"; not in the corpus's vocabulary, so no word-based retriever can match them: {plain(', '.join(scores.unknown))}"
    return "info", text + "."


def values(ev: Evaluation | None, system: str, name: str, at: int = 0) -> float | None:
    """One system's value of a metric for one evaluated question (position `at` among the evaluated), None
    when the question has no relevant judgement."""
    if ev is None or system not in ev.values:
        return None
    v = ev.values[system][name]
    return float(v[at]) if v.size > at else None


def original_position(ds: Dataset, qid: str | None) -> int | None:
    """The original question's position among the dataset's evaluated ones (those with a relevant document)."""
    if qid not in ds.query_index:
        return None
    hit = np.flatnonzero(ds.evaluated == ds.query_index[qid])
    return int(hit[0]) if hit.size else None


def metrics_frame(
    typed: Evaluation, original: Evaluation | None, at: int | None, systems: Sequence[str], names: Sequence[str]
) -> pd.DataFrame:
    """One row per system and version (typed, then original when there is one): each metric, and the rank
    of the first relevant document."""
    rows = []
    for s in systems:
        versions = [(TYPED, typed, 0)] + ([(ORIGINAL, original, at)] if original is not None and at is not None else [])
        for label, ev, pos in versions:
            if s not in ev.values:
                continue
            first = ev.first_rank[s]
            row = {
                "system": s,
                "question": label,
                "first relevant": diagnosis.rank_text(int(first[pos])) if first.size > pos else "—",
            }
            row.update({state.metric_label(n): values(ev, s, n, pos) for n in names})
            rows.append(row)
    return pd.DataFrame(rows)


def headline(
    typed: Evaluation, original: Evaluation | None, at: int | None, system: str, name: str
) -> tuple[str, str | None, float]:
    """A system's value of the chosen metric for the typed text, its change from the original's (None without
    one) and that change as a number (0 without one)."""
    now = values(typed, system, name)
    if now is None:
        return "—", None, 0.0
    before = values(original, system, name, at) if at is not None else None
    if before is None:
        return f"{now:.4f}", None, 0.0
    return f"{now:.4f}", signed(now - before, 4), now - before


def position(ranking: Ranking, doc: int) -> int:
    """A document's rank in a one-question ranking's list (0: not in it)."""
    hit = np.flatnonzero(ranking.top(0)[0] == doc)
    return int(hit[0]) + 1 if hit.size else 0


def top_grid(one: Dataset, ranks: Mapping[str, Ranking], grades: Mapping[str, int], n: int = TOP) -> pd.DataFrame:
    """Rank 1..n x system: the document at that rank (✓ and the grade when relevant), empty past a list's end."""
    cols = {}
    for s, r in ranks.items():
        ids = r.top_ids(one, 0, n)
        cols[s] = [(f"{ids[i]} {grade_text(ids[i], grades)}".strip() if i < len(ids) else "") for i in range(n)]
    return pd.DataFrame(cols, index=pd.RangeIndex(1, n + 1, name="rank"))


def judging_rows(one: Dataset, ranks: Mapping[str, Ranking], grades: Mapping[str, int], n: int = TOP) -> list[str]:
    """The documents to judge: every system's top n in rank order, then the other judged ones, once each."""
    listed = [d for r in ranks.values() for d in r.top_ids(one, 0, n)]
    return list(dict.fromkeys(listed + [d for d in grades if d in one.doc_index]))


def judged_rank(one: Dataset, ranking: Ranking, doc_id: str) -> int:
    """A judged document's exact rank (0: not retrieved) in a one-question ranking."""
    hit = np.flatnonzero(one.qrels.doc_id == doc_id)
    return int(ranking.judged_rank[hit[0]]) if hit.size else 0


def rank_cell(one: Dataset, ranking: Ranking, doc_id: str, depth: int) -> str:
    """A document's rank for a table: exact for a judged one (however deep); another's within the list, else
    'not found' when the list holds every result, else '> depth' (further down than the list goes)."""
    if doc_id in set(one.qrels.doc_id.tolist()):
        return diagnosis.rank_text(int(judged_rank(one, ranking, doc_id)))
    r = position(ranking, one.doc_index[doc_id])
    if r:
        return str(r)
    return diagnosis.rank_text(0) if ranking.top(0)[0].size >= int(ranking.n_results[0]) else f"> {depth}"


def judging_frame(
    one: Dataset, ranks: Mapping[str, Ranking], grades: Mapping[str, int], rows: Sequence[str], depth: int
) -> pd.DataFrame:
    """The judging table: relevant (editable), document, grade, each system's rank of it, the text's start."""
    return pd.DataFrame(
        {
            "relevant": [grades.get(d, 0) > 0 for d in rows],
            "document": list(rows),
            "grade": pd.array([grades[d] if d in grades else None for d in rows], dtype="Int64"),
        }
        | {s: [rank_cell(one, r, d, depth) for d in rows] for s, r in ranks.items()}
        | {"text": [cut(one.doc_texts[one.doc_index[d]], TEXT_CHARS) for d in rows]}
    )


def judged_ranks_frame(
    one: Dataset, ranks: Mapping[str, Ranking], ds: Dataset, original: Mapping[str, Ranking] | None, qid: str | None
) -> pd.DataFrame:
    """Each judged document's rank per system for the typed text and, where the original question's differs,
    that one beside it (`typed ← original`); by grade then id."""
    orig_q = ds.query_index.get(qid) if qid is not None else None
    base = np.flatnonzero(ds.qrels.query == orig_q) if orig_q is not None else np.zeros(0, dtype=np.int64)
    before_ids = {str(ds.qrels.doc_id[j]): j for j in base}
    out = []
    for j, (d, g) in enumerate(zip(one.qrels.doc_id.tolist(), one.qrels.grade.tolist())):
        row = {"document": d, "grade": int(g)}
        for s, r in ranks.items():
            now = diagnosis.rank_text(int(r.judged_rank[j]))
            before = (
                diagnosis.rank_text(int(original[s].judged_rank[before_ids[d]]))
                if original is not None and s in original and d in before_ids
                else now
            )
            row[s] = now if before == now else f"{now} ← {before}"
        out.append(row)
    frame = pd.DataFrame(out, columns=["document", "grade", *ranks])
    return frame.sort_values(["grade", "document"], ascending=[False, True], kind="stable")


def doc_line(
    one: Dataset,
    scores: adhoc.Scores,
    ranks: Mapping[str, Ranking],
    system: str,
    rank: int,
    doc: int,
    grades: Mapping[str, int],
) -> str:
    """A listed document's heading, escaped: rank, id, grade, the system's score and every retriever's."""
    d = one.doc_ids[doc]
    g = grades.get(d)
    judged = f" · ✓ grade {g}" if g and g > 0 else (" · judged not relevant" if g is not None else "")
    parts = [f"BM25 {scores.rows['BM25'][doc]:.4f}", f"LSA cosine {scores.rows['LSA'][doc]:.4f}"]
    if "dense" in scores.rows:
        parts.append(f"dense cosine {scores.rows['dense'][doc]:.4f}")
    if system in ("weighted", "RRF"):
        parts.insert(0, f"{system} {ranks[system].top(0)[1][rank - 1]:.4f}")
    return f"**{rank}. {plain(d)}**{judged} · " + " · ".join(parts)


def term_label(term: str, words: tuple[str, ...]) -> str:
    """A term's column: the term, and with a stemmer the question's words it came from ('refund ← refunds')."""
    return term if words == (term,) else f"{term} ← {', '.join(words)}"


def bm25_frame(eng, text: str, docs: Sequence[int], one: Dataset, p: Params) -> tuple[pd.DataFrame, list[str]]:
    """BM25's contribution of each question term (those in the vocabulary; a stem labelled with the question's
    words it came from) to each document's score, and the sum; and the terms' column labels."""
    origins = eng.index.analysis.origins(text)
    terms = eng.index.analyse(text)  # repeats included: the rule for repeated question words reads them
    labels = {t: term_label(t, ws) for t, ws in origins.items() if eng.in_vocabulary(t)}
    rows = []
    for j in docs:
        parts = eng.explain_bm25(terms, int(j), p)
        row = {"document": one.doc_ids[j]}
        row.update({labels[x["term"]]: x["score"] for x in parts if x["term"] in labels})
        row["BM25 score"] = sum(x["score"] for x in parts)
        rows.append(row)
    return pd.DataFrame(rows, columns=["document", *labels.values(), "BM25 score"]), list(labels.values())


# ------------------------------------------------------------------------------------------ sections


def header(ds: Dataset, p: Params, has_dense: bool) -> None:
    """The title and what the page does."""
    st.title("Playground")
    dense_note = (
        "dense with the bundled model" if has_dense else "dense once its vectors are there (the Data page encodes them)"
    )
    st.caption(
        f"**{plain(ds.name)}**. Type any question, or start from one of the dataset's: every system ranks the corpus for it "
        f"at the sidebar's settings (BM25 k1 = {p.k1:g}, b = {p.b:g}; LSA d = {p.dims}; {dense_note}; both fusions over "
        f"{plain(' + '.join(p.members))}, the top {p.fusion_depth} of each). Mark documents relevant in the results and "
        "the metrics follow. Nothing here changes the dataset."
    )


def start_from(ds: Dataset) -> str | None:
    """The dataset-question selector (its choice fills the text box and the judgements); the origin's id."""
    s = st.session_state
    if s.get(state.PG_FROM) not in ds.query_index:
        s[state.PG_FROM] = None
    st.selectbox(
        "start from a dataset question (its text and its judgements)",
        list(ds.query_ids),
        index=None,
        key=state.PG_FROM,
        placeholder="none: type your own below",
        on_change=on_start_from,
        args=(ds,),
        persist_state="session",
        format_func=lambda qid: question_label(ds, qid),
        help="Fills the box with the question's text and takes its judgements, so an edit of the text shows what it changes.",
    )
    origin = s.get(state.PG_ORIGIN)
    return origin if origin in ds.query_index else None


def question_input() -> str:
    """The text box (Enter submits); the text typed."""
    st.text_input(
        "question",
        key=state.PG_TEXT,
        max_chars=adhoc.MAX_CHARS,
        placeholder="e.g. can I get a refund?",
        persist_state="session",
        help=f"Any text up to {adhoc.MAX_CHARS:,} characters; press Enter to rank.",
    )
    text = str(st.session_state.get(state.PG_TEXT) or "")
    if len(text) >= adhoc.MAX_CHARS:
        st.warning(
            f"The question is at its limit of {adhoc.MAX_CHARS:,} characters: what goes beyond is not taken.",
            icon=":material/warning:",
        )
    return text


def scored(ds: Dataset, text: str, p: Params, sources: Sources, qid: str | None):
    """The typed question's one-question dataset, rankings and scores; None, with one message, for an empty
    text or bad input (the page then shows nothing more: no st.stop, which would leave the frame's run open
    in session state, see state.end_frame)."""
    if not text.strip():
        st.info(
            "Type a question above and press Enter, or start from one of the dataset's questions.",
            icon=":material/keyboard:",
        )
        return None
    try:
        judged = tuple(st.session_state[state.PG_JUDGED].items())
        with st.spinner("Ranking the corpus for the question…"):
            return cache.engine(ds).adhoc(text, p, sources, judged, qid or adhoc.QUESTION_ID)
    except InputError as e:
        st.error(plain(str(e)), icon=":material/error:")
        return None


def words(scores: adhoc.Scores) -> None:
    """The question's words as the retrievers see them, and the systems left out and why."""
    kind, text = words_note(scores)
    (st.warning if kind == "warning" else st.caption)(text)
    for name, why in scores.skipped.items():
        st.caption(f"**{plain(name)}** is left out: {plain(why)}.")


def relevant_note(n_relevant: int) -> str:
    """The line under the cards: how many documents the cards count as relevant, or that they wait for one. One
    short line either way, so that the first tick leaves everything below where it was."""
    if not n_relevant:
        return "— : no document is judged relevant yet. Tick some in the table below."
    return f"{n_relevant} document{'s' if n_relevant != 1 else ''} judged relevant: tick or untick in the table below."


def measures(one: Dataset, ranks: Mapping[str, Ranking], ds: Dataset, origin: str | None, names: list[str]) -> None:
    """The chosen metric per system for the typed text with its change from the original, then every metric
    for both. Drawn the same with or without a relevant document (a dash for the values), so the judging table
    below does not move under the pointer when a first document is ticked."""
    st.subheader("How the systems do on it")
    typed = adhoc.evaluate(one, ranks, names)
    at = original_position(ds, origin)
    original = cache.evaluation(names, ds) if origin is not None else None
    chosen = names[0]
    st.markdown(
        f"**{state.metric_label(chosen)}** for the typed text"
        + (f", and its change from {plain(origin)}'s" if at is not None else "")
    )
    with st.container(horizontal=True, wrap=True, gap="small"):
        for s in ranks:
            value, delta, change = headline(typed, original, at, s, chosen)
            st.metric(
                plain(s),
                value,
                delta,
                border=True,
                width=METRIC_WIDTH,
                delta_color="normal" if change else "off",
                help="For the typed text with the judgements below; the change is from the original question's.",
            )
    st.caption(relevant_note(int((one.qrels.grade > 0).sum())))
    frame = metrics_frame(typed, original, at, list(ranks), names)
    st.dataframe(
        frame,
        hide_index=True,
        width="stretch",
        key="pg_metrics",
        column_config={state.metric_label(n): st.column_config.NumberColumn(format="%.4f") for n in names},
    )


def judged_ranks(one: Dataset, ranks: Mapping[str, Ranking], ds: Dataset, origin: str | None) -> None:
    """Each judged document's rank per system, typed beside original: under the judging table (it grows a row with
    each tick), an HTML table as wide as its text (every system's column in view at 1024 px), its cells escaped."""
    if not len(one.qrels):
        return
    st.markdown("**Ranks of the judged documents**" + (f" (typed ← original {plain(origin)})" if origin else ""))
    originals = cache.rankings(ds) if origin is not None else None
    frame = judged_ranks_frame(one, ranks, ds, originals, origin)
    st.table(
        frame.rename(columns=plain).map(lambda v: plain(v) if isinstance(v, str) else v),
        hide_index=True,
        width="content",
        border="horizontal",
    )
    if origin:
        st.caption(
            f"“typed ← original”: the rank for the typed text, then for {plain(origin)} as the dataset has it, "
            "where the two differ; a single rank where they are the same."
        )


def top_lists(one: Dataset, ranks: Mapping[str, Ranking], grades: Mapping[str, int], p: Params) -> None:
    """Every system's top 10 side by side, a relevant document marked ✓ with its grade."""
    st.subheader(f"Top {TOP} of every system")
    grid = top_grid(one, ranks, grades)
    st.dataframe(grid.style.map(lambda v: RELEVANT_CSS if "✓" in str(v) else ""), width="stretch", key="pg_top")
    short = [s for s, r in ranks.items() if r.top(0)[0].size < TOP]
    for s in short:
        n = int(ranks[s].top(0)[0].size)
        st.caption(
            f"{plain(s)} returns {'nothing' if n == 0 else f'only {n}'}: {short_list_reason(s, p.fusion_depth)}."
        )


def judge(
    ds: Dataset, one: Dataset, ranks: Mapping[str, Ranking], grades: Mapping[str, int], p: Params, message: str | None
) -> None:
    """The judging table: tick a document to mark it relevant, untick to unmark (the metrics above follow)."""
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    left.subheader("Judge the results")
    right.button(
        "Reset judgements",
        on_click=on_reset,
        args=(ds,),
        key="pg_reset",
        width="stretch",
        help="Back to the original question's judgements (none when the question was typed from scratch).",
    )
    if message:
        st.warning(message, icon=":material/warning:")
    rows = judging_rows(one, ranks, grades)
    s = st.session_state
    s[state.PG_ROWS] = (s[state.PG_VERSION], rows)
    depth = p.list_depth
    st.data_editor(
        judging_frame(one, ranks, grades, rows, depth),
        key=editor_key(),
        hide_index=True,
        width="stretch",
        placeholder="—",
        height="content" if len(rows) <= 30 else "auto",
        disabled=[c for c in ("document", "grade", *ranks, "text")],
        column_config={
            "relevant": st.column_config.CheckboxColumn(
                "relevant", width=84, help=f"Tick to mark relevant (grade {MARKED_GRADE}, or the dataset's grade)"
            ),
            "document": st.column_config.TextColumn("document", width="small"),
            "grade": st.column_config.NumberColumn(
                "grade", width=58, format="%d", help="—: not judged; 0: judged not relevant"
            ),
            "text": st.column_config.TextColumn("text", width="large"),
        }
        | {name: st.column_config.TextColumn(name, width=70) for name in ranks},
    )
    st.caption(
        f"Every system's top {TOP}, then the other judged documents. A judged document's rank is exact however deep; "
        f"another's is within the {depth} documents each list keeps ('> {depth}': further down). Judgements stay in this session; "
        f"at most {MAX_MARKS} documents can be marked or unmarked."
    )


def up_close(
    eng, one: Dataset, scores: adhoc.Scores, ranks: Mapping[str, Ranking], grades: Mapping[str, int], p: Params
) -> None:
    """One tab per system: its top 10 with the words each document shares with the question highlighted, every
    retriever's score of it, and BM25's per-term contributions."""
    st.subheader("Each list up close")
    text = scores.text
    known = [t for t in scores.terms if t not in scores.unknown]
    for tab, (s, r) in zip(st.tabs(list(ranks)), ranks.items()):
        with tab:
            docs = r.top(0, TOP)[0]
            if not docs.size:
                st.info(f"{plain(s)} returns nothing for this question.", icon=":material/block:")
                continue
            for i, d in enumerate(docs.tolist(), 1):
                body = clip(
                    one.doc_texts[d], CLOSE_CHARS
                )  # what is shown, and searched for shared words (a 2 MB text is not)
                shared = diagnosis.shared_words(text, body, eng.index.analysis)
                with st.container(border=True):
                    st.markdown(doc_line(one, scores, ranks, s, i, d, grades))
                    st.markdown(highlight_markdown(body, {w: SHARED_COLOR for w in shared}))
            if known:
                st.markdown(
                    f"**BM25's per-term contributions** (k1 = {p.k1:g}, b = {p.b:g}; "
                    f"{bm25.question_words_text(p.query_words, p.k3)}) to these documents"
                )
                frame, columns = bm25_frame(eng, text, docs, one, p)
                st.dataframe(
                    frame,
                    hide_index=True,
                    width="stretch",
                    key=f"pg_bm25_{s}",
                    column_config={c: st.column_config.NumberColumn(format="%.4f") for c in (*columns, "BM25 score")},
                )
    st.caption(
        f":{SHARED_COLOR}-background[**shared**] = a word of the question the document holds too (after the stop words). "
        "A contribution is idf × tf × (k1 + 1) / (tf + k1 × (1 − b + b × length / average length)), the Diagnosis page writes it out."
    )
