"""Tuning: the sidebar's metric over a grid of one retriever's parameters, the settings that can't be told apart
from the best, held-out validation of the choice, the permutation test with Holm's correction, the per-question
oracle and one question's fusion explained."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from retrieval import significance, stats, tuning
from retrieval.dataset import Dataset
from retrieval.errors import InputError
from retrieval.params import Params
from ui import cache, charts, state
from ui.format import MINUS, fmt_setting, p_text, signed
from ui.markdown import escape_markdown

state.init_state()

WHAT = {  # selector label -> the library's parameter key
    "k1 × b (BM25)": "k1,b",
    "LSA dimensions": "dims",
    "RRF constant": "rrf_k",
    "alpha (weighted fusion)": "alpha",
}
AXIS_TITLE = {"dims": "LSA dimensions d", "rrf_k": "RRF constant k", "alpha": "alpha (weight of BM25)"}
KEY_WHAT, KEY_FOLDS, KEY_BEST, KEY_KIND, KEY_QUESTION = "tune_what", "tune_folds", "tune_to_best", "tune_fusion", "tune_question"
KEY_ABSOLUTE = "tune_absolute"
KEY_FLASH = "tune_flash"  # the message of the last slider move, shown once
PICK = "pick"  # the charts' point selection
FEW = 50  # below this many questions the page warns that the landscape is mostly noise


# ------------------------------------------------------------------------------------------- cached library calls


@st.cache_resource(max_entries=4, show_spinner=False)
def _fixed(_ds: Dataset, fingerprint: str, k1: float, b: float, dims: int) -> tuning.Fixed:
    """BM25 at (k1, b) and LSA at d with their rankings: what the fusion sweeps and explanations hold fixed."""
    return tuning.fixed_parts(_ds, Params(k1=k1, b=b, dims=dims), cache.engine(_ds))


@st.cache_resource(max_entries=16, show_spinner=False)
def _landscape(_ds: Dataset, fingerprint: str, what: str, metric: str, fixed: tuple) -> tuple:
    """The sweep, its best setting, the tie region and the permutation p-values (raw, Holm) against the best.

    Keyed on the dataset's content, the metric and only the parameters the sweep holds fixed: () for BM25 and
    LSA, (k1, b, d) for the fusions.
    """
    prep = cache.engine(_ds)
    base, held = Params(), None
    if what in ("rrf_k", "alpha"):
        k1, b, dims = fixed
        base = Params(k1=k1, b=b, dims=dims)
        held = _fixed(_ds, fingerprint, k1, b, dims)
    sw = tuning.sweep(_ds, what, metric, base, prep, held)
    best = tuning.best_setting(sw.values)
    ties = tuning.tie_region(sw.values, best)
    p, p_holm = tuning.versus_best(sw.values, best)
    return sw, best, ties, p, p_holm


@st.cache_data(max_entries=64, show_spinner=False)
def _explain(_ds: Dataset, fingerprint: str, qid: str, kind: str, k1: float, b: float, dims: int, alpha: float, rrf_k: float) -> list[dict]:
    """One question's fused list with each retriever's contribution to every document."""
    params = Params(k1=k1, b=b, dims=dims, alpha=alpha, rrf_k=rrf_k)
    return tuning.explain_fusion(_ds, qid, kind, params, cache.engine(_ds), _fixed(_ds, fingerprint, k1, b, dims))


# ------------------------------------------------------------------------------------------- moving the sliders


def _limit(name: str) -> float:
    """The slider's upper bound (the LSA dimensions: what the dataset allows)."""
    return cache.max_dims(cache.current_dataset()) if name == state.DIMS else state.SLIDERS[name].hi


def snap(name: str, value: float) -> float | int:
    """A parameter value on its slider: the nearest step (0.05 for k1, b, alpha; whole numbers for d and k), within range."""
    return state.SLIDERS[name].snap(value, _limit(name))


def move_sliders(setting: dict, how: str) -> None:
    """Set the sidebar sliders (a callback: it runs before app.py draws them) and leave a message saying where."""
    moved, changed = [], []
    for name, value in setting.items():
        v = snap(name, value)
        st.session_state[name] = v
        moved.append(f"{name} = {v:g}")
        if abs(float(v) - float(value)) > 1e-9:
            changed.append(f"{name} {float(value):g} → {v:g}")
    note = f" (snapped to the slider's steps: {', '.join(changed)})" if changed else ""
    st.session_state[KEY_FLASH] = f"{how}: the sidebar now holds {', '.join(moved)}{note}."


def on_pick(chart_key: str, names: tuple[str, ...]) -> None:
    """A click on the chart: move the sliders to the clicked setting."""
    event = st.session_state.get(chart_key)
    chosen = ((event or {}).get("selection", {}).get(PICK) or [{}])[0]
    setting = {n: chosen[n] for n in names if chosen.get(n) is not None}
    if setting:
        move_sliders(setting, "Moved to the clicked setting")


# ------------------------------------------------------------------------------------------- helpers


def tied_runs(axis: np.ndarray, tied: np.ndarray) -> pd.DataFrame:
    """Contiguous runs of tied settings on a one-parameter axis, each widened by half a step on both sides."""
    rows, i, n = [], 0, axis.size
    half = np.diff(axis) / 2 if n > 1 else np.array([0.5])
    while i < n:
        if not tied[i]:
            i += 1
            continue
        j = i
        while j + 1 < n and tied[j + 1]:
            j += 1
        rows.append({"start": axis[i] - (half[i - 1] if i > 0 else 0.0), "end": axis[j] + (half[j] if j < n - 1 else 0.0)})
        i = j + 1
    return pd.DataFrame(rows, columns=["start", "end"])


# ------------------------------------------------------------------------------------------- the page

ds = cache.current_dataset()
metric = state.metric_name()
label = state.metric_label(metric)
p_now = state.params()
dims_now = min(p_now.dims, cache.max_dims(ds))
n_q = int(ds.evaluated.size)

st.title("Tuning")
st.caption(
    f"**{escape_markdown(ds.name)}**: {label} (the sidebar's metric) over a grid of one retriever's settings, the others "
    f"held at the sidebar's values. **Tie region**: a setting can't be told apart from the best when the paired "
    f"bootstrap interval of (setting {MINUS} best) over the {n_q:,} questions holds zero ({stats.RESAMPLES:,} resamples, "
    f"seed {stats.SEED}, {stats.CONFIDENCE:.0%} percentile interval). **Significance**: the paired permutation "
    f"(sign-flip) test against the best, with Holm's correction for comparing many settings at once."
)
if n_q == 0:
    st.info("No question has a relevant document, so there is nothing to tune.", icon=":material/info:")
    st.stop()
if n_q < FEW:
    st.warning(
        f"Only {n_q} questions: the landscape is mostly noise. One or two questions changing rank move the mean, "
        "so the best setting is a lucky draw as much as a good value; read the tie region, not the peak.",
        icon=":material/warning:",
    )

flash = st.session_state.pop(KEY_FLASH, None)
if flash:
    st.success(flash, icon=":material/tune:")

choice = st.segmented_control("Tune", list(WHAT), default=list(WHAT)[0], key=KEY_WHAT, required=True, persist_state="session",
                              help="Which parameters to sweep; the others stay at the sidebar's values.")
what = WHAT[choice]
system = tuning.SYSTEM_OF[what]
fixed = (p_now.k1, p_now.b, dims_now) if what in ("rrf_k", "alpha") else ()

try:
    with st.spinner(f"Sweeping {choice} on {label}…"):
        sw, best, ties, p_raw, p_holm = _landscape(ds, ds.fingerprint, what, metric, fixed)
except InputError as err:
    st.error(f"Can't sweep {choice} on this dataset: {err}", icon=":material/error:")
    st.stop()

ev = cache.evaluation([metric])
current_vals = ev.values[system][metric]  # the sidebar's setting, exactly as every other page scores it
current = {n: {"k1": p_now.k1, "b": p_now.b, "dims": dims_now, "rrf_k": p_now.rrf_k, "alpha": p_now.alpha}[n] for n in sw.names}
best_setting = sw.setting(best)
means = sw.means
n_settings = int(means.size)
near = sw.nearest(**current)
on_grid = all(abs(float(sw.setting(near)[n]) - float(current[n])) < 1e-9 for n in sw.names)
best_vals = sw.values[best]

# --- the headline figures
c1, c2, c3 = st.columns(3)
c1.metric(f"current: {fmt_setting(current)}", f"{current_vals.mean():.6f}", border=True,
          help=f"{system}'s mean {label} at the sidebar's setting" + ("" if on_grid else " (between grid points)."))
c2.metric(f"best: {fmt_setting(best_setting)}", f"{means[best]:.6f}", border=True,
          help=f"The grid setting with the highest mean {label} (exact ties: the first in grid order).")
c3.metric("can't be told apart from the best", f"{ties.size} of {n_settings} settings", border=True,
          help="Settings whose paired bootstrap interval of (setting − best) holds zero, the best included.")

# --- the landscape
names = sw.names
intervals = ties.intervals
points = pd.DataFrame({n: [sw.setting(i)[n] for i in range(n_settings)] for n in names})
points = points.assign(mean=means, status=np.where(ties.tied, charts.TIED, charts.NOT_TIED),
                       low=intervals[:, 0], high=intervals[:, 1], p=p_raw, p_holm=p_holm)
marks = pd.DataFrame([
    {**best_setting, "what": charts.BEST, "mean": float(means[best])},
    {**current, "what": charts.CURRENT, "mean": float(current_vals.mean())},
])
chart_key = "tune_chart_" + what.replace(",", "_") + "_" + "_".join(f"{current[n]:g}" for n in names)  # a new chart after each move
spread = float(means.max() - means.min())
absolute = st.toggle("Scale from 0 to 1", key=KEY_ABSOLUTE, persist_state="session",
                     help="Off: the colours (heatmap) or the y axis (curves) stretch over the grid's own range, "
                          "which makes tiny differences look large.")
scale_text = "" if absolute else (
    f" The {'palette' if what == 'k1,b' else 'y axis'} spans the grid's own range, {means.min():.4f} to {means.max():.4f}"
    + (f": every setting can't be told apart from the best, so the {'colours' if what == 'k1,b' else 'ups and downs'} show noise."
       if ties.size == n_settings else "."))
if what == "k1,b":
    dk1, db = np.diff(sw.axes[0]).min() / 2, np.diff(sw.axes[1]).min() / 2
    cells = points.assign(k1_lo=points["k1"] - dk1, k1_hi=points["k1"] + dk1, b_lo=points["b"] - db, b_hi=points["b"] + db)
    chart = charts.tuning_heatmap(cells, marks, label, select=PICK, domain=(0.0, 1.0) if absolute else None)
    how = ("Click a cell to move the sidebar's k1 and b there. The star is the best setting, the diamond the "
           "sidebar's; faded cells marked × are worse than the best beyond noise, full-colour ones can't be told apart from it.")
else:
    axis = sw.axes[0]
    chart = charts.tuning_curve(points, tied_runs(axis, ties.tied), marks, names[0], AXIS_TITLE[what], label, select=PICK,
                                domain=(0.0, 1.0) if absolute else None)
    how = (f"Click near a point to move the sidebar's {names[0]} there. The star is the best setting, the dashed line "
           "the sidebar's; green points (on the shaded band) can't be told apart from the best, grey ones are worse beyond noise.")
st.altair_chart(chart, width="stretch", on_select=lambda: on_pick(chart_key, names), selection_mode=PICK, key=chart_key)
steps = {state.K1: "0.05", state.B: "0.05", state.ALPHA: "0.05", state.DIMS: "1", state.RRF_K: "1"}
st.caption(f"{how} Values snap to the sliders' steps ({', '.join(f'{n}: {steps[n]}' for n in names)}).{scale_text} "
           f"System: {system}, the other parameters at the sidebar's values; {n_settings} settings, {n_q:,} questions.")
for note in sw.notes:
    st.caption(f"Note: {escape_markdown(note)}")
st.button(f"Move the sliders to the best setting ({fmt_setting(best_setting)})", key=KEY_BEST, icon=":material/star:",
          on_click=move_sliders, args=(best_setting, "Moved to the best setting"), disabled=on_grid and near == best)

# --- significance
st.subheader("The current setting against the best")
others = np.arange(n_settings) != best
if on_grid:
    p_cur, p_cur_holm, family = float(p_raw[near]), float(p_holm[near]), n_settings - 1
    family_text = f"the {family} comparisons of every other grid setting with the best"
else:
    p_cur = float(significance.permutation_pvalues(current_vals - best_vals)[0])
    p_cur_holm = float(significance.holm(np.append(p_raw[others], p_cur))[-1])
    family = n_settings
    family_text = (f"the {n_settings - 1} comparisons of every other grid setting with the best, plus the current "
                   "setting, which lies between grid points")
exact = significance.is_exact(n_q)
method = (f"exact: all 2^{n_q} = {2 ** n_q:,} sign vectors" if exact
          else f"{significance.RESAMPLES:,} random sign vectors, seed {significance.SEED}")
diff = float(current_vals.mean() - best_vals.mean())
s1, s2, s3 = st.columns(3)
s1.metric(f"mean difference, current {MINUS} best", signed(diff, 4), border=True)
s2.metric("permutation p", p_text(p_cur), border=True, help="Two-sided paired randomisation test of the mean difference.")
s3.metric(f"Holm-adjusted p ({family} comparisons)", p_text(p_cur_holm), border=True,
          help="Holm's step-down correction over the whole family of comparisons with the best.")
raw_sig = int((p_raw[others] <= 0.05).sum())
holm_sig = int((p_holm[others] <= 0.05).sum())
if on_grid and near == best:
    verdict = "**The current setting is the best.**"
elif np.array_equal(current_vals, best_vals):
    verdict = "**The current setting scores exactly what the best scores**, question by question."
elif abs(diff) < 1e-12:
    verdict = "**The current setting ties with the best**: the same mean, on different questions."
elif p_cur_holm <= 0.05:
    verdict = (f"**The current setting is worse than the best beyond chance**, even after Holm's correction for "
               f"{family} comparisons (adjusted p = {p_text(p_cur_holm)}).")
elif p_cur <= 0.05:
    verdict = (f"**Alone, the current setting looks worse than the best** (p = {p_text(p_cur)}), **but not once the "
               f"{family} comparisons are accounted for** (Holm-adjusted p = {p_text(p_cur_holm)}): picking the best of "
               f"{n_settings} settings makes gaps like this one expected by chance.")
else:
    verdict = (f"**The current setting can't be told apart from the best** (p = {p_text(p_cur)}, "
               f"Holm-adjusted {p_text(p_cur_holm)}).")
st.markdown(
    f"{verdict} Compared with the best at once, some settings would look significant by chance alone; Holm's "
    f"correction holds the family-wise error at 0.05 over the family: {family_text}. Of the {n_settings - 1} other "
    f"grid settings, {raw_sig} differ from the best at p ≤ 0.05 before the correction and {holm_sig} after it."
)
st.caption(
    f"Paired randomisation test: each question's difference keeps or flips its sign with equal chance under the "
    f"null hypothesis; two-sided p ({method}), as scipy.stats.permutation_test computes it. "
    "Holm (1979): the sorted p-values are multiplied by m, m − 1, …, 1, kept monotone and capped at 1. "
    "The tie region on the chart compares each setting alone (no correction), so it is stricter: a setting outside "
    "it may still not differ from the best once the whole family is accounted for."
    + ("" if exact else
       f" With {significance.RESAMPLES:,} random sign vectors the smallest p-value is 2/{significance.RESAMPLES + 1:,} ≈ "
       f"{2 / (significance.RESAMPLES + 1):.4f}, so no Holm-adjusted p over {family} comparisons falls below "
       f"{min(1.0, family * 2 / (significance.RESAMPLES + 1)):.3f}.")
)

# --- held-out validation
st.subheader("Held-out validation: how much of the tuned score is over-fitting?")
max_folds = min(10, n_q)
if max_folds < 2:
    st.info("Cross-validation needs at least 2 questions.", icon=":material/info:")
else:
    if st.session_state.get(KEY_FOLDS, 0) > max_folds:  # a smaller dataset than the one the slider was set on
        st.session_state[KEY_FOLDS] = max_folds
    left, right = st.columns([1, 2], gap="large")
    with left:
        if max_folds > 2:
            folds = st.slider("folds", 2, max_folds, None if KEY_FOLDS in st.session_state else min(tuning.FOLDS, max_folds),
                              key=KEY_FOLDS, persist_state="session",
                              help=f"The questions are shuffled (numpy default_rng, seed {tuning.SEED}) and cut into this many folds.")
        else:
            folds = 2
            st.caption("2 folds: the most these questions allow.")
        cv = tuning.cross_validate(sw.values, folds, tuning.SEED)
        st.metric(f"tuned, in-sample ({label})", f"{cv.in_sample:.6f}", border=True,
                  help="The best setting's mean over the very questions it was chosen on.")
        st.metric(f"tuned, cross-validated ({label})", f"{cv.cross_validated:.6f}", border=True,
                  help="Each question scored by the setting chosen on the other folds, without it.")
        st.metric("optimism (in-sample − cross-validated)", signed(cv.optimism, 6), border=True)
    with right:
        table = pd.DataFrame({
            "fold": np.arange(1, folds + 1),
            "questions": cv.fold_sizes,
            "chosen on the other folds": [fmt_setting(sw.setting(c)) for c in cv.chosen],
            "train mean": cv.train_means,
            "test mean (held out)": cv.test_means,
        }).set_index("fold")
        st.dataframe(table.style.format({"train mean": "{:.4f}", "test mean (held out)": "{:.4f}"}), width="stretch")
        cur_mean = float(current_vals.mean())
        if cv.optimism > 1e-12:
            sentence = (f"Choosing the best of {n_settings} settings on all {n_q} questions reports {cv.in_sample:.4f}; "
                        f"on questions the choice never saw, the same procedure scores {cv.cross_validated:.4f}. "
                        f"The {cv.optimism:.4f} between them is over-fitting: the tuning fitted these particular questions, not the retriever.")
        else:
            sentence = (f"Here the cross-validated score ({cv.cross_validated:.4f}) is no lower than the in-sample one "
                        f"({cv.in_sample:.4f}): every fold chose a setting that did as well on its held-out questions.")
        gain = cv.cross_validated - cur_mean
        sentence += (f" The sidebar's setting scores {cur_mean:.4f}: " +
                     (f"tuning gains {gain:.4f} on unseen questions." if gain > 1e-12
                      else "tuning shows no gain that carries over to unseen questions."))
        st.markdown(sentence)
        st.caption(f"{folds}-fold cross-validation, seed {tuning.SEED}: for each fold the best setting on the other folds is "
                   "measured on the held-out fold; the cross-validated score is the mean over all questions, each measured once.")

# --- per-question oracle
st.subheader("Per-question oracle: the upper bound of a router")
oracle = tuning.oracle_of(ev, metric)
best_system = max(oracle.system_means, key=oracle.system_means.get)
o1, o2, o3 = st.columns(3)
o1.metric(f"oracle mean {label}", f"{oracle.mean:.4f}", border=True,
          help="The best system's value on each question, averaged: what a perfect router between the systems would reach.")
o2.metric(f"best single system: {best_system}", f"{oracle.system_means[best_system]:.4f}", border=True)
o3.metric("headroom for a router", signed(oracle.mean - oracle.system_means[best_system], 4), border=True)
alone = {s: sum(1 for w in oracle.winners if w == (s,)) for s in oracle.systems}
shared = {s: sum(1 for w in oracle.winners if s in w and len(w) > 1) for s in oracle.systems}
left, right = st.columns([1, 1], gap="large")
with left:
    sys_table = pd.DataFrame({
        "mean": [oracle.system_means[s] for s in oracle.systems],
        "below the oracle": [oracle.mean - oracle.system_means[s] for s in oracle.systems],
        "best alone on": [alone[s] for s in oracle.systems],
        "best, tied, on": [shared[s] for s in oracle.systems],
    }, index=pd.Index(list(oracle.systems), name="system"))
    st.dataframe(sys_table.style.format({"mean": "{:.4f}", "below the oracle": "{:.4f}"}), width="stretch")
with right:
    wins = pd.DataFrame([{"system": s, "how": h, "questions": c, "order": i}
                         for s in oracle.systems for i, (h, c) in enumerate((("alone", alone[s]), ("tied with another system", shared[s])))])
    st.altair_chart(charts.oracle_wins(wins), width="stretch")
all_tied = sum(1 for w in oracle.winners if len(w) == len(oracle.systems))
st.caption(
    f"For each of the {n_q} questions, the system (uploaded runs included) with the highest {label}; {all_tied} questions "
    "are ties between every system. The oracle chooses with hindsight, so its mean is an upper bound, not a result: "
    "a router that predicts the best system from the question alone reaches at most this."
)

# --- fusion explained
st.subheader("Fusion explained: who put each document there?")
depth = Params().fusion_depth
f1, f2 = st.columns([1, 3])
kind = f1.segmented_control("fusion", ["weighted", "RRF"], default="weighted", key=KEY_KIND, required=True, persist_state="session")
qids = [ds.query_ids[q] for q in ds.evaluated]
texts = {ds.query_ids[q]: " ".join(ds.query_texts[q].split()) for q in ds.evaluated}
qid = f2.selectbox("question", qids, key=KEY_QUESTION, persist_state="session",
                   format_func=lambda q: f"{q} — {texts[q][:110]}")
rows = _explain(ds, ds.fingerprint, qid, "weighted" if kind == "weighted" else "rrf",
                p_now.k1, p_now.b, dims_now, p_now.alpha, p_now.rrf_k)
st.markdown(f"**{escape_markdown(qid)}**: {escape_markdown(texts[qid])}")
if kind == "weighted":
    st.caption(f"Weighted fusion at alpha = {p_now.alpha:g}: each document scores alpha × min-max(BM25) + (1 − alpha) × "
               f"min-max(LSA), each min-max normalised over every document's score for this question (k1 = {p_now.k1:g}, b = {p_now.b:g}, d = {dims_now}).")
    x_title = "alpha × minmax(BM25) + (1 − alpha) × minmax(LSA)"
else:
    st.caption(f"Reciprocal Rank Fusion at k = {p_now.rrf_k:g}: a document gets 1/(k + rank) from each list whose top "
               f"{depth} holds it (k1 = {p_now.k1:g}, b = {p_now.b:g}, d = {dims_now}).")
    x_title = "1/(k + BM25 rank) + 1/(k + LSA rank)"
if not rows:
    st.info("Neither retriever returns a document for this question.", icon=":material/info:")
else:
    def row_label(r: dict) -> str:
        rank = f"#{r['fused_rank']}" if r["fused_rank"] else "not fused"
        return f"{rank} · {r['doc_id']}" + (f" ✓{r['grade']}" if r["grade"] else "")

    def note(r: dict) -> str:
        if not r["fused_rank"]:
            return "relevant, left out of the fused list"
        return {"BM25": "rescued by BM25", "LSA": "rescued by LSA", "both": f"in both top {depth}s"}.get(
            r["rescued_by"], f"in neither top {depth}: the sum put it here")

    parts = pd.DataFrame([
        {"row": row_label(r), "retriever": who, "contribution": r[col], "total": r["total"], "note": note(r),
         "doc_id": r["doc_id"], "grade": r["grade"], "fused_rank": str(r["fused_rank"] or "—"),
         "bm25_rank": str(r["bm25_rank"] or "—"), "lsa_rank": str(r["lsa_rank"] or "—")}
        for r in rows for who, col in (("BM25", "bm25"), ("LSA", "lsa"))
    ])
    st.altair_chart(charts.fusion_contributions(parts, x_title), width="stretch")
    def rank(r: int | None) -> str:
        return "—" if r is None else str(r)

    shown = pd.DataFrame([{
        "document": r["doc_id"], "grade": r["grade"], "fused rank": rank(r["fused_rank"]), "BM25 rank": rank(r["bm25_rank"]),
        "LSA rank": rank(r["lsa_rank"]), "from BM25": r["bm25"], "from LSA": r["lsa"], "total": r["total"],
        "rescued by": r["rescued_by"] or ("neither" if r["fused_rank"] else ""),
    } for r in rows])
    st.dataframe(shown.style.format({"from BM25": "{:.4f}", "from LSA": "{:.4f}", "total": "{:.4f}"}), width="stretch",
                 hide_index=True, column_config={c: st.column_config.TextColumn(c, help="— = not in the list")
                                                 for c in ("fused rank", "BM25 rank", "LSA rank")})
    st.caption(
        f"Rows: the fused top {depth} and every relevant document (✓ and its grade). 'Rescued by' names the retriever "
        f"that alone had the document in its top {depth}"
        + (": RRF fuses only those lists, so without that retriever the document would not be in the fused list."
           if kind == "RRF" else
           ". The weighted fusion scores every document, so one in neither top list ('neither') can still enter "
           "the fused list on the sum of two middling scores.")
    )
