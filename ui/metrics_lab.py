"""The Metrics lab's parts: the editable toy ranking (kept across page switches), the rank-aware metrics with
every DCG term written out, scikit-learn's ndcg_score trap, and Ragas's order-blind context precision and recall
against a shuffle of the ranking."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from retrieval.analyses import teaching
from retrieval.core.errors import InputError

from .markdown import escape_markdown

PRESETS = {  # label -> the article's ranking of the worked example
    "the article's ranking: a third (x y a b z)": "a third",
    "a first (a x y b z)": "a first",
    "no relevant document (x y z w v)": "no relevant document",
}
PRESET_KEY = "ml_preset"
OTHERS_KEY = "ml_others"
VERSION = "ml_version"  # bumped whenever the tables are replaced: the editors start afresh under a new key
BASE_RANKING, BASE_UNRETRIEVED = "ml_base_ranking", "ml_base_unretrieved"
SHUFFLES, BEFORE, LAST = "ml_shuffles", "ml_before", "ml_last"
CURRENT = (
    "ml_rows"  # the tables as last shown, edits included (editors lose their edits on a page switch; this keeps them)
)
COLUMNS = ["document", "grade"]
PRESET_WIDTH = 330  # px: the longest preset whole
TERMS_WIDTH = 430  # px: a table of DCG terms with all six columns in view
TERM_COLUMNS = ["position", "document", "grade", "gain", "discount", "term"]


# ------------------------------------------------------------------------------------------ pure helpers


def fmt(x: float | None) -> str:
    """Six decimals, the article's precision; a dash for undefined."""
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.6f}"


def blank(v) -> bool:
    """True for an empty editor cell (None or NaN)."""
    try:
        return v is None or bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def frame(rows: list[dict]) -> pd.DataFrame:
    """A table for the editor: document ids as text, grades as numbers (blank allowed)."""
    df = pd.DataFrame(rows, columns=COLUMNS)
    df["document"] = df["document"].astype(object)
    df["grade"] = pd.to_numeric(df["grade"], errors="coerce").astype("float64")
    return df


def rows_of(df: pd.DataFrame) -> list[dict]:
    """Editor output as plain rows (None for empty cells)."""
    return [
        {c: (None if blank(v) else v) for c, v in zip(COLUMNS, rec)}
        for rec in df[COLUMNS].itertuples(index=False, name=None)
    ]


def shuffle_delta(x: float, before: float | None) -> dict:
    """The st.metric arguments past the value for a figure after a shuffle: 'unchanged' when it did not move,
    else its change; nothing without a before (or when either is undefined)."""
    if before is None or math.isnan(before) or math.isnan(x):
        return {}
    if fmt(before) == fmt(x):
        return {"delta": "unchanged by the shuffle", "delta_color": "gray", "delta_arrow": "off"}
    return {"delta": f"{x - before:+.6f}", "delta_description": "since the shuffle"}


def versus_ours(x: float, ours: float) -> dict:
    """The st.metric arguments past the value for a scikit-learn figure: green when it agrees with ours, red
    with the difference when not, nothing when either is undefined."""
    if math.isnan(x) or math.isnan(ours):
        return {}
    if math.isclose(x, ours, abs_tol=1e-12):
        return {"delta": "agrees with ours", "delta_color": "green", "delta_arrow": "off"}
    return {"delta": f"{x - ours:+.6f}", "delta_color": "red", "delta_description": "vs ours"}


def shuffle_table(before: dict, now: dict, names: list[str]) -> pd.DataFrame:
    """Each metric before the shuffle and now, and whether it moved (at six decimals)."""
    return pd.DataFrame(
        [
            {
                "metric": m,
                "before": fmt(before.get(m, float("nan"))),
                "now": fmt(now[m]),
                "moved": "yes" if fmt(before.get(m, float("nan"))) != fmt(now[m]) else "no",
            }
            for m in names
        ]
    )


def ndcg_line(name: str, dcg: float, idcg: float, value: float) -> str:
    """nDCG as the division it is, or why there is none."""
    return (
        f"{name} = {dcg:.6f} / {idcg:.6f} = **{fmt(value)}**"
        if idcg > 0
        else f"{name}: the ideal DCG is 0, nothing to normalise by."
    )


def cards():
    """A row of figures, each as wide as its label and value (six decimals), wrapping onto the next line where the
    page is narrow (1024 px with the sidebar open) rather than cutting them."""
    return st.container(horizontal=True, wrap=True, gap="medium")


# ------------------------------------------------------------------------------------------ the tables in session state


def load(name: str) -> None:
    """Put one of the article's rankings in the tables (universe a b c x y z w v)."""
    toy = teaching.article_toy(name)
    st.session_state[BASE_RANKING] = [{"document": d, "grade": float(toy.grade(d))} for d in toy.ranking]
    st.session_state[BASE_UNRETRIEVED] = [
        {"document": d, "grade": float(g)} for d, g in toy.judged.items() if d not in toy.ranking
    ]
    st.session_state[OTHERS_KEY] = " ".join(d for d in toy.universe if d not in toy.judged and d not in toy.ranking)
    st.session_state[VERSION] = st.session_state.get(VERSION, 0) + 1
    st.session_state.pop(CURRENT, None)
    st.session_state[BEFORE] = None


def on_preset() -> None:
    """The preset selector or 'Start over' (callback): load the chosen ranking."""
    load(PRESETS[st.session_state[PRESET_KEY]])


def on_edit() -> None:
    """An edit ends the before/after comparison of a shuffle."""
    st.session_state[BEFORE] = None


def on_shuffle() -> None:
    """Shuffle the ranking's rows as shown (document and grade together), remembering the figures from before."""
    n = st.session_state.get(SHUFFLES, 0)
    ranking_rows, unretrieved_rows = st.session_state.get(
        CURRENT, (st.session_state[BASE_RANKING], st.session_state[BASE_UNRETRIEVED])
    )
    st.session_state[BASE_RANKING] = teaching.shuffled(ranking_rows, seed=n)
    st.session_state[BASE_UNRETRIEVED] = unretrieved_rows
    st.session_state[SHUFFLES] = n + 1
    st.session_state[VERSION] += 1
    st.session_state.pop(CURRENT, None)
    st.session_state[BEFORE] = st.session_state.get(LAST)


def init() -> None:
    """The article's ranking on the first visit; back from another page, the tables as last shown."""
    if BASE_RANKING not in st.session_state:
        load("a third")
    elif f"ml_ranking_{st.session_state[VERSION]}" not in st.session_state and CURRENT in st.session_state:
        # back from another page: the editors forgot their edits, the tables as last shown did not
        st.session_state[BASE_RANKING], st.session_state[BASE_UNRETRIEVED] = st.session_state.pop(CURRENT)
        st.session_state[VERSION] += 1


# ------------------------------------------------------------------------------------------ sections


def header(k: int) -> None:
    """The title, what is computed, and the controls: preset, start over, shuffle."""
    st.title("Metrics lab")
    st.caption(
        "One question, its judged documents and one ranking, all editable. Every rank-aware figure is computed by the app's own "
        f"metrics (`retrieval.evaluation.metrics`, the ones behind every other page) at the sidebar's cutoff **k = {k}**. "
        "The start is the article's worked example: relevant {a: 2, b: 1, c: 1}, ranking x y a b z, universe a b c x y z w v."
    )
    with st.container(horizontal=True, wrap=True, vertical_alignment="bottom"):  # the buttons wrap below at 1024 px
        st.selectbox(
            "start from",
            list(PRESETS),
            key=PRESET_KEY,
            on_change=on_preset,
            width=PRESET_WIDTH,
            help="Replaces the tables with one of the article's three rankings.",
        )
        st.button(
            "Start over",
            icon=":material/restart_alt:",
            on_click=on_preset,
            width="content",
            key="ml_start_over",
            help="Puts the chosen ranking of the article back, undoing every edit.",
        )
        st.button(
            "Shuffle the ranking",
            icon=":material/shuffle:",
            on_click=on_shuffle,
            width="content",
            key="ml_shuffle",
            help="Reorders the retrieved documents (each keeps its grade): watch RR and nDCG move while the set-based metrics stay put.",
        )
    st.caption("Edit a cell to change an id or a grade; add or delete rows at the table's edge.")


def _editor(rows: list[dict], key: str, grade_required: bool) -> pd.DataFrame:
    """One editable table of documents and grades."""
    return st.data_editor(
        frame(rows),
        key=key,
        num_rows="dynamic",
        hide_index=True,
        width="stretch",
        on_change=on_edit,
        column_config={
            "document": st.column_config.TextColumn("document id", required=True),
            "grade": st.column_config.NumberColumn(
                "grade", min_value=0, max_value=10, step=1, format="%d", required=grade_required or None
            ),
        },
    )


def edit_toy() -> teaching.Toy | None:
    """The two editable tables and the rest of the collection, parsed into the toy question (None, with an
    error, while they can't be scored)."""
    v = st.session_state[VERSION]
    left, right = st.columns([1, 1], gap="large")
    with left:
        st.markdown("**Ranking** (row order = rank; grade 0 or empty = not relevant)")
        edited = _editor(st.session_state[BASE_RANKING], f"ml_ranking_{v}", False)
    with right:
        st.markdown("**Judged but not retrieved** (they count in recall and in the ideal DCG)")
        edited_unretrieved = _editor(st.session_state[BASE_UNRETRIEVED], f"ml_unretrieved_{v}", True)
        others = st.text_input(
            "other documents of the collection (neither retrieved nor judged)",
            key=OTHERS_KEY,
            persist_state="session",
            help="Only scikit-learn's whole-universe call uses them: each gets score 0 and grade 0.",
        )
    ranking_rows, unretrieved_rows = rows_of(edited), rows_of(edited_unretrieved)
    st.session_state[CURRENT] = (ranking_rows, unretrieved_rows)
    try:
        return teaching.parse_toy(ranking_rows, unretrieved_rows, others or "")
    except InputError as e:
        st.error(f"The tables cannot be scored yet: {e}.", icon=":material/edit_note:")
        return None


class Figures:
    """Every figure of the toy at k, and the ones from before the last shuffle (None after an edit)."""

    def __init__(self, toy: teaching.Toy, k: int):
        self.toy, self.k = toy, k
        self.values = teaching.rank_metrics(toy, k)
        retrieved, relevant = toy.ranking, toy.relevant
        self.trap = teaching.sklearn_trap(toy, k)
        self.now = {
            **self.values,
            "context precision": teaching.id_context_precision(retrieved, relevant),
            "context recall": teaching.id_context_recall(retrieved, relevant),
            "scikit-learn, whole universe": self.trap.whole,
            "scikit-learn, only the retrieved": self.trap.retrieved_only,
            "ranking": " ".join(retrieved),
        }
        self.before = st.session_state.get(BEFORE)
        st.session_state[LAST] = self.now

    def metric(self, label: str, name: str) -> None:
        """A card of a figure of now, as wide as its text; after a shuffle, with its change since before it."""
        x = self.now[name]
        st.metric(label, fmt(x), **shuffle_delta(x, self.before.get(name) if self.before else None), width="content")


def rank_aware(f: Figures) -> None:
    """hit, recall, RR and nDCG (both gains) at k, with their definitions."""
    k = f.k
    st.subheader("Rank-aware metrics")
    if not f.toy.relevant:
        st.info(
            "No document has a grade above 0: this question has no relevant document, so it would be left out of every mean (the metrics are undefined)."
        )
    with cards():
        for label in f.values:
            f.metric(label, label)
    st.caption(
        f"hit@{k}: a relevant document in the top {k}? · recall@{k}: the share of the relevant documents in the top {k} · "
        "RR: 1 / the rank of the first relevant document (its mean over questions is the MRR) · "
        f"nDCG@{k}: DCG@{k} / ideal DCG@{k}, gain = the grade (linear) or 2^grade − 1 (exponential), discount 1 / log2(position + 1)."
    )


def dcg_written_out(f: Figures) -> None:
    """Every DCG term of the ranking and of the ideal ranking, for both gains."""
    k, toy = f.k, f.toy
    st.subheader(f"nDCG@{k} written out")
    term_cfg = {c: st.column_config.NumberColumn(format="%.6f") for c in ("gain", "discount", "term")}
    for tab, exponential in zip(st.tabs(["linear gain (the grade)", "exponential gain (2^grade − 1)"]), (False, True)):
        with tab:
            terms = teaching.dcg_terms(toy, k, exponential)
            ideal = teaching.ideal_terms(toy, k, exponential)
            dcg, idcg = sum(t["term"] for t in terms), sum(t["term"] for t in ideal)
            name = f"nDCG@{k} ({'exponential' if exponential else 'linear'} gain)"
            with st.container(
                horizontal=True, wrap=True, gap="medium"
            ):  # side by side at 1440 px, one above the other at 1024
                with st.container(width=TERMS_WIDTH):
                    st.markdown(f"**DCG@{k}** of the ranking = {dcg:.6f}")
                    st.dataframe(
                        pd.DataFrame(terms, columns=TERM_COLUMNS),
                        hide_index=True,
                        width="stretch",
                        column_config=term_cfg,
                    )
                with st.container(width=TERMS_WIDTH):
                    st.markdown(f"**ideal DCG@{k}**: every judged grade, best first = {idcg:.6f}")
                    st.dataframe(
                        pd.DataFrame(ideal, columns=TERM_COLUMNS),
                        hide_index=True,
                        width="stretch",
                        column_config=term_cfg,
                    )
            st.markdown(ndcg_line(name, dcg, idcg, f.values[name]))


def sklearn_trap(f: Figures) -> None:
    """scikit-learn's ndcg_score beside ours, given the whole universe and only the retrieved documents."""
    k, trap, retrieved = f.k, f.trap, f.toy.ranking
    st.subheader("The scikit-learn trap")
    st.caption(
        "`sklearn.metrics.ndcg_score` (linear gain) derives the ideal DCG only from the documents it is given. Scores as in the article: "
        f"the ranked documents get {len(retrieved)}, {max(len(retrieved) - 1, 0)}, ..., 1 and every other document 0."
    )
    ours = f.values[f"nDCG@{k} (linear gain)"]
    with cards():
        st.metric(
            f"ours, nDCG@{k}",
            fmt(ours),
            delta="ideal DCG from every judged document",
            delta_color="gray",
            delta_arrow="off",
            width="content",
        )
        st.metric("scikit-learn, whole universe", fmt(trap.whole), **versus_ours(trap.whole, ours), width="content")
        st.metric(
            "scikit-learn, only the retrieved",
            fmt(trap.retrieved_only),
            **versus_ours(trap.retrieved_only, ours),
            width="content",
        )
    if trap.note:
        st.caption(f"scikit-learn refused one call: {escape_markdown(trap.note)}")
    missing = [d for d in f.toy.relevant if d not in retrieved]
    if missing and not math.isnan(trap.retrieved_only):
        st.warning(
            f"Given only the retrieved documents, scikit-learn never sees {', '.join(escape_markdown(d) for d in missing)} (relevant, not retrieved): "
            "its ideal DCG is too small and the nDCG comes out inflated. Pass the whole universe, with score 0 for what was not retrieved.",
            icon=":material/warning:",
        )
    if len(retrieved) < k and not math.isnan(trap.whole) and not math.isclose(trap.whole, ours, abs_tol=1e-9):
        st.caption(
            f"The list is shorter than k = {k}: the documents scored 0 tie, and scikit-learn averages the gains of tied documents, "
            "so a relevant document that was not retrieved gets partial credit there."
        )
    with st.expander("what was passed to ndcg_score"):
        st.dataframe(
            pd.DataFrame(
                {"document": trap.universe, "y_true (grade)": trap.y_true_whole, "y_score": trap.y_score_whole}
            )
            .set_index("document")
            .T,
            width="stretch",
        )
        st.code(
            f"ndcg_score([{list(trap.y_true_whole)}], [{list(trap.y_score_whole)}], k={k})  # whole universe\n"
            f"ndcg_score([{list(trap.y_true_retrieved)}], [{list(trap.y_score_retrieved)}], k={k})  # only the retrieved",
            language="python",
        )


def order_blind(f: Figures) -> None:
    """Ragas's ID-based context precision and recall beside RR and nDCG, before and after a shuffle, and the
    article's example in every order."""
    k = f.k
    st.subheader("Order-blind: Ragas's ID-based context precision and recall")
    st.caption(
        "IDBasedContextPrecision = |retrieved ∩ relevant| / |retrieved| and IDBasedContextRecall = |retrieved ∩ relevant| / |relevant|, "
        "computed on sets of ids: they never look at the order. Shuffle the ranking: RR and nDCG move, these two do not."
    )
    with cards():
        f.metric("context precision (ID-based)", "context precision")
        f.metric("context recall (ID-based)", "context recall")
        f.metric("RR", "RR")
        f.metric(f"nDCG@{k}", f"nDCG@{k} (linear gain)")
    if f.before:
        compare = [
            "RR",
            f"nDCG@{k} (linear gain)",
            f"nDCG@{k} (exponential gain)",
            f"hit@{k}",
            f"recall@{k}",
            "context precision",
            "context recall",
        ]
        st.markdown(
            f"**Before the shuffle:** {escape_markdown(f.before['ranking'])} → **now:** {escape_markdown(f.now['ranking'])}"
        )
        st.dataframe(shuffle_table(f.before, f.now, compare), hide_index=True, width="stretch")
    ret_ex, rel_ex = teaching.RAGAS_EXAMPLE
    with st.expander(
        f"the article's example: retrieved {', '.join(ret_ex)}, relevant {', '.join(rel_ex)}, in every order",
        expanded=not f.before,
    ):
        orders = pd.DataFrame(teaching.every_order(ret_ex, {d: 1 for d in rel_ex}, len(ret_ex)))
        st.dataframe(
            orders,
            hide_index=True,
            width="stretch",
            column_config={c: st.column_config.NumberColumn(format="%.6f") for c in orders.columns if c != "order"},
        )
        st.caption(
            "Precision 0.333 and recall 0.5 for all six orders; RR and nDCG@3 (binary grades) tell them apart. "
            "The order is seen by Ragas's judge-verdict ContextPrecision and by the rank-aware metrics above."
        )
