"""The Tuning page's parts: the landscape of one retriever's grid (computed once per dataset, metric and held
parameters in the dataset's engine), the moves of the sidebar's sliders, the significance verdict, held-out
validation, the per-question oracle and one question's fusion explained."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np
import pandas as pd
import streamlit as st

from retrieval import significance, stats, tuning
from retrieval.dataset import Dataset
from retrieval.errors import InputError
from retrieval.experiment import Evaluation
from retrieval.params import Params

from . import cache, charts, state
from .format import MINUS, clip, fmt_setting, p_text, signed
from .markdown import escape_markdown

WHAT = {  # selector label -> the library's parameter key
    "k1 × b (BM25)": "k1,b",
    "LSA dimensions": "dims",
    "RRF constant": "rrf_k",
    "alpha (weighted fusion)": "alpha",
}
AXIS_TITLE = {"dims": "LSA dimensions d", "rrf_k": "RRF constant k"}
KEY_WHAT, KEY_FOLDS, KEY_BEST, KEY_KIND, KEY_QUESTION = "tune_what", "tune_folds", "tune_to_best", "tune_fusion", "tune_question"
KEY_ABSOLUTE = "tune_absolute"
KEY_FLASH = "tune_flash"  # the message of the last slider move, shown once
PICK = "pick"  # the charts' point selection
FEW = 50  # below this many questions the page warns that the landscape is mostly noise
ALPHA_LEVEL = 0.05
STEPS = {state.K1: "0.05", state.B: "0.05", state.ALPHA: "0.05", state.DIMS: "1", state.RRF_K: "1"}  # the sliders' steps, written
FUSED = ("rrf_k", "alpha")  # the sweeps that hold the fused members fixed at the sidebar's values
MEMO = "tuning"  # the engine cache's kind (retrieval.engine.CACHE_SIZES) of everything computed here


# ------------------------------------------------------------------------------------------- computed once, in the engine


class Landscape(NamedTuple):
    """A sweep, its best setting, the tie region and the permutation p-values (raw, Holm) against the best."""

    sweep: tuning.Sweep
    best: int
    ties: tuning.TieRegion
    p: np.ndarray
    p_holm: np.ndarray


def held_fixed(what: str, params: Params, extra: tuple = ()) -> tuple:
    """What a sweep of `what` holds at the sidebar's values, as a cache key: for the fusions the members, what
    they read (k1, b, d), the fusion depth and the content fingerprint of each member that is an extra source
    (None for a registered retriever); nothing for BM25 and LSA."""
    if what not in FUSED:
        return ()
    prints = {x.name: x.fingerprint for x in extra}
    return (float(params.k1), float(params.b), int(params.dims), int(params.fusion_depth), tuple(params.members),
            tuple(prints.get(m) for m in params.members))


def held_params(held: tuple) -> Params:
    """The parameters a fusion sweep holds (`held_fixed`'s), the others the article's; more than two members get
    weight 1 each, which neither RRF nor these parts read."""
    k1, b, dims, depth, members, _ = held
    return Params(k1=k1, b=b, dims=dims, fusion_depth=depth, members=members,
                  weights=(1.0,) * len(members) if len(members) > 2 else None)


def fixed(ds: Dataset, held: tuple, extra: tuple = ()) -> tuning.Fixed:
    """The fused members at the sidebar's values with their rankings and scores: what the fusion sweeps and
    explanations hold fixed (kept in the dataset's engine, keyed by `held_fixed`'s values: never by an object)."""
    return cache.engine(ds).memo.get(MEMO, ("fixed", held),
                                     lambda: tuning.fixed_parts(ds, held_params(held), cache.engine(ds), extra))


def landscape(ds: Dataset, what: str, metric: str, held: tuple, extra: tuple = ()) -> Landscape:
    """The sweep of `what` on `metric` with its best, ties and p-values, kept in the dataset's engine.

    Keyed on the metric and only what the sweep holds fixed: `held` is () for BM25 and LSA, `held_fixed`'s
    values for the fusions (`extra`: the sources the fingerprints in `held` stand for); the engine itself is the
    dataset's (by content).
    """
    def make() -> Landscape:
        base, parts = Params(), None
        if what in FUSED:
            base, parts = held_params(held), fixed(ds, held, extra)
        sw = tuning.sweep(ds, what, metric, base, cache.engine(ds), parts, extra)
        best = tuning.best_setting(sw.values)
        ties = tuning.tie_region(sw.values, best)
        p, p_holm = tuning.versus_best(sw.values, best)
        return Landscape(sw, best, ties, p, p_holm)

    return cache.engine(ds).memo.get(MEMO, ("landscape", what, metric, tuple(held)), make)


def explain(ds: Dataset, qid: str, kind: str, params: Params, extra: tuple = ()) -> list[dict]:
    """One question's fused list with each member's contribution to every document (kept in the engine)."""
    held = held_fixed("rrf_k", params, extra)
    key = ("explain", qid, kind, held, params.fusion_weights(), float(params.rrf_k))
    return cache.engine(ds).memo.get(
        MEMO, key, lambda: tuning.explain_fusion(ds, qid, kind, params, cache.engine(ds), fixed(ds, held, extra)))


# ------------------------------------------------------------------------------------------- moving the sliders


def snap(name: str, value: float) -> float | int:
    """A parameter value on its slider: the nearest step (0.05 for k1, b, alpha; whole numbers for d and k),
    within range (for d, what the dataset in use allows)."""
    hi = cache.max_dims(cache.current_dataset()) if name == state.DIMS else state.SLIDERS[name].hi
    return state.SLIDERS[name].snap(value, hi)


def move_message(how: str, wanted: dict, snapped: dict) -> str:
    """The message after a move: where the sliders now are, and which values the steps changed."""
    moved = [f"{n} = {snapped[n]:g}" for n in wanted]
    changed = [f"{n} {float(v):g} → {snapped[n]:g}" for n, v in wanted.items() if abs(float(snapped[n]) - float(v)) > 1e-9]
    note = f" (snapped to the slider's steps: {', '.join(changed)})" if changed else ""
    return f"{how}: the sidebar now holds {', '.join(moved)}{note}."


def move_sliders(setting: dict, how: str) -> None:
    """Set the sidebar sliders (a callback: it runs before app.py draws them) and leave a message saying where."""
    snapped = {name: snap(name, value) for name, value in setting.items()}
    for name, value in snapped.items():
        st.session_state[name] = value
    st.session_state[KEY_FLASH] = move_message(how, setting, snapped)


def picked_setting(event: dict | None, names: tuple[str, ...]) -> dict:
    """The setting a chart click selected (only the swept parameters it carries), {} when none."""
    chosen = ((event or {}).get("selection", {}).get(PICK) or [{}])[0]
    return {n: chosen[n] for n in names if chosen.get(n) is not None}


def on_pick(chart_key: str, names: tuple[str, ...]) -> None:
    """A click on the chart: move the sliders to the clicked setting."""
    setting = picked_setting(st.session_state.get(chart_key), names)
    if setting:
        move_sliders(setting, "Moved to the clicked setting")


# ------------------------------------------------------------------------------------------- the view


@dataclass(frozen=True)
class View:
    """What every section of the page reads: the dataset, the metric, the sweep and the sidebar's setting in it."""

    ds: Dataset
    metric: str
    label: str
    params: Params  # the sidebar's, d capped at what the dataset allows
    what: str
    choice: str
    land: Landscape
    ev: Evaluation
    current: dict  # the sidebar's value of each swept parameter
    current_vals: np.ndarray  # the sidebar's setting, per question, exactly as every other page scores it
    near: int  # the grid setting nearest to it
    on_grid: bool

    @property
    def n_q(self) -> int:
        """Questions with a relevant document."""
        return int(self.ds.evaluated.size)

    @property
    def system(self) -> str:
        """The swept system."""
        return tuning.SYSTEM_OF[self.what]

    @property
    def system_text(self) -> str:
        """The swept system as Markdown, a fusion with its members (user strings when they are runs: escaped)."""
        if self.what not in FUSED:
            return self.system
        return f"{self.system} of {members_text(self.params.members)}"

    @property
    def n_settings(self) -> int:
        """Settings in the grid."""
        return int(self.land.sweep.means.size)

    @property
    def best_setting(self) -> dict:
        """The best grid setting."""
        return self.land.sweep.setting(self.land.best)


def members_text(members: tuple[str, ...]) -> str:
    """The fused members as Markdown: 'BM25 + dense', each name escaped."""
    return " + ".join(escape_markdown(m) for m in members)


def axis_title(what: str, members: tuple[str, ...]) -> str:
    """A curve's x-axis title (plain text, not Markdown): alpha names the member it weighs."""
    return f"alpha (weight of {members[0]})" if what == "alpha" else AXIS_TITLE[what]


def offered(members: tuple[str, ...]) -> list[str]:
    """The sweeps the page offers: the alpha sweep only for exactly two fused systems (alpha weighs the first)."""
    return [c for c, w in WHAT.items() if w != "alpha" or len(members) == 2]


def no_alpha_text(members: tuple[str, ...]) -> str:
    """Why the alpha sweep is not offered (Markdown)."""
    n = len(members)
    why = ("a single fused system has weight 1" if n == 1 else
           f"with {n} each has its own weight, set in the sidebar, and alpha is not used")
    return (f"No alpha sweep: alpha weighs the first of exactly two fused systems (1 {MINUS} alpha the second); "
            f"the sidebar fuses {members_text(members)}: {why}. Choose two fused systems in the sidebar to sweep alpha.")


def current_setting(names: tuple[str, ...], params: Params) -> dict:
    """The sidebar's value of each swept parameter."""
    return {n: getattr(params, n) for n in names}


def on_the_grid(sw: tuning.Sweep, near: int, current: dict) -> bool:
    """True when the sidebar's setting is the grid setting `near` exactly."""
    return all(abs(float(sw.setting(near)[n]) - float(current[n])) < 1e-9 for n in sw.names)


def header(ds: Dataset, label: str) -> None:
    """The title, what the page computes, and the notices for too few questions; stops when there are none."""
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


def choose_view(ds: Dataset) -> View:
    """The sweep selector, then the sweep (stops with an error when the dataset can't be swept)."""
    metric = state.metric_name()
    label = state.metric_label(metric)
    p = cache.current_params()
    p = replace(p, dims=min(p.dims, cache.max_dims(ds)))
    options = offered(p.members)
    if st.session_state.get(KEY_WHAT) not in (None, *options):  # the alpha sweep, no longer offered
        st.session_state[KEY_WHAT] = options[0]
    choice = st.segmented_control("Tune", options, default=options[0], key=KEY_WHAT, required=True, persist_state="session",
                                  help="Which parameters to sweep; the others stay at the sidebar's values.")
    if len(options) < len(WHAT):
        st.caption(no_alpha_text(p.members))
    what = WHAT[choice]
    extra = cache.current_extra(ds)
    try:
        with st.spinner(f"Sweeping {choice} on {label}…"):
            land = landscape(ds, what, metric, held_fixed(what, p, extra), extra)
    except InputError as err:
        st.error(f"Can't sweep {choice} on this dataset: {escape_markdown(str(err))}", icon=":material/error:")
        st.stop()
    ev = cache.evaluation([metric])
    sw = land.sweep
    current = current_setting(sw.names, p)
    near = sw.nearest(**current)
    return View(ds, metric, label, p, what, choice, land, ev, current, ev.values[tuning.SYSTEM_OF[what]][metric], near,
                on_the_grid(sw, near, current))


def headline(v: View) -> None:
    """The current setting's mean, the best's and how many settings can't be told apart from it."""
    means = v.land.sweep.means
    c1, c2, c3 = st.columns(3)
    c1.metric(f"current: {fmt_setting(v.current)}", f"{v.current_vals.mean():.6f}", border=True,
              help=f"{v.system}'s mean {v.label} at the sidebar's setting" + ("" if v.on_grid else " (between grid points)."))
    c2.metric(f"best: {fmt_setting(v.best_setting)}", f"{means[v.land.best]:.6f}", border=True,
              help=f"The grid setting with the highest mean {v.label} (exact ties: the first in grid order).")
    c3.metric("can't be told apart from the best", f"{v.land.ties.size} of {v.n_settings} settings", border=True,
              help="Settings whose paired bootstrap interval of (setting − best) holds zero, the best included.")


# ------------------------------------------------------------------------------------------- the landscape


def tied_runs(axis: np.ndarray, tied: np.ndarray) -> pd.DataFrame:
    """Contiguous runs of tied settings on a one-parameter axis, each widened by half a step on both sides
    (not past the axis's ends)."""
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


def points_frame(land: Landscape) -> pd.DataFrame:
    """One row per grid setting: its parameters, mean, tie status, interval against the best and p-values."""
    sw, ties = land.sweep, land.ties
    n = sw.means.size
    points = pd.DataFrame({name: [sw.setting(i)[name] for i in range(n)] for name in sw.names})
    return points.assign(mean=sw.means, status=np.where(ties.tied, charts.TIED, charts.NOT_TIED),
                         low=ties.intervals[:, 0], high=ties.intervals[:, 1], p=land.p, p_holm=land.p_holm)


def marks_frame(best: dict, best_mean: float, current: dict, current_mean: float) -> pd.DataFrame:
    """The two marks on the chart: the best setting and the sidebar's."""
    return pd.DataFrame([
        {**best, "what": charts.BEST, "mean": float(best_mean)},
        {**current, "what": charts.CURRENT, "mean": float(current_mean)},
    ])


def heatmap_cells(points: pd.DataFrame, k1_axis: np.ndarray, b_axis: np.ndarray) -> pd.DataFrame:
    """The k1 x b points as cells: each spans half the smallest step on either side of its setting."""
    dk1, db = np.diff(k1_axis).min() / 2, np.diff(b_axis).min() / 2
    return points.assign(k1_lo=points["k1"] - dk1, k1_hi=points["k1"] + dk1, b_lo=points["b"] - db, b_hi=points["b"] + db)


def chart_key(what: str, current: dict) -> str:
    """The chart's widget key: a new chart (no stale selection) after every move of the sliders."""
    return "tune_chart_" + what.replace(",", "_") + "_" + "_".join(f"{v:g}" for v in current.values())


def scale_text(heatmap: bool, means: np.ndarray, all_tied: bool) -> str:
    """What the stretched colour scale or y axis spans, and a warning when every difference on it is noise."""
    return (
        f" The {'palette' if heatmap else 'y axis'} spans the grid's own range, {means.min():.4f} to {means.max():.4f}"
        + (f": every setting can't be told apart from the best, so the {'colours' if heatmap else 'ups and downs'} show noise."
           if all_tied else "."))


def how_to_read(what: str, names: tuple[str, ...]) -> str:
    """How to read and click the chart."""
    if what == "k1,b":
        return ("Click a cell to move the sidebar's k1 and b there. The star is the best setting, the diamond the "
                "sidebar's; faded cells marked × are worse than the best beyond noise, full-colour ones can't be told apart from it.")
    return (f"Click near a point to move the sidebar's {names[0]} there. The star is the best setting, the dashed line "
            "the sidebar's; green points (on the shaded band) can't be told apart from the best, grey ones are worse beyond noise.")


def steps_text(names: tuple[str, ...]) -> str:
    """The swept sliders' steps: 'k1: 0.05, b: 0.05'."""
    return ", ".join(f"{n}: {STEPS[n]}" for n in names)


def landscape_chart(v: View) -> None:
    """The heatmap (k1 x b) or the curve (one parameter), clickable, with how to read it and the move-to-best button."""
    sw, land = v.land.sweep, v.land
    names, means = sw.names, sw.means
    points = points_frame(land)
    marks = marks_frame(v.best_setting, means[land.best], v.current, v.current_vals.mean())
    key = chart_key(v.what, v.current)
    absolute = st.toggle("Scale from 0 to 1", key=KEY_ABSOLUTE, persist_state="session",
                         help="Off: the colours (heatmap) or the y axis (curves) stretch over the grid's own range, "
                              "which makes tiny differences look large.")
    domain = (0.0, 1.0) if absolute else None
    if v.what == "k1,b":
        chart = charts.tuning_heatmap(heatmap_cells(points, *sw.axes), marks, v.label, select=PICK, domain=domain)
    else:
        chart = charts.tuning_curve(points, tied_runs(sw.axes[0], land.ties.tied), marks, names[0], axis_title(v.what, v.params.members), v.label,
                                    select=PICK, domain=domain)
    st.altair_chart(chart, width="stretch", on_select=lambda: on_pick(key, names), selection_mode=PICK, key=key)
    scale = "" if absolute else scale_text(v.what == "k1,b", means, land.ties.size == v.n_settings)
    st.caption(f"{how_to_read(v.what, names)} Values snap to the sliders' steps ({steps_text(names)}).{scale} "
               f"System: {v.system_text}, the other parameters at the sidebar's values; {v.n_settings} settings, {v.n_q:,} questions.")
    for note in sw.notes:
        st.caption(f"Note: {escape_markdown(note)}")
    st.button(f"Move the sliders to the best setting ({fmt_setting(v.best_setting)})", key=KEY_BEST, icon=":material/star:",
              on_click=move_sliders, args=(v.best_setting, "Moved to the best setting"), disabled=v.on_grid and v.near == land.best)


# ------------------------------------------------------------------------------------------- significance


class Versus(NamedTuple):
    """The current setting against the best: its p-values and the family Holm's correction ran over."""

    p: float
    p_holm: float
    family: int
    family_text: str


def versus_best(land: Landscape, v_current: np.ndarray, on_grid: bool, near: int) -> Versus:
    """On the grid, the sweep's own p-values of the current setting; between grid points, its permutation p
    against the best, Holm-corrected together with the other settings' (a family one larger)."""
    n = land.p.size
    if on_grid:
        return Versus(float(land.p[near]), float(land.p_holm[near]), n - 1,
                      f"the {n - 1} comparisons of every other grid setting with the best")
    others = np.arange(n) != land.best
    p = float(significance.permutation_pvalues(v_current - land.sweep.values[land.best])[0])
    p_holm = float(significance.holm(np.append(land.p[others], p))[-1])
    return Versus(p, p_holm, n, f"the {n - 1} comparisons of every other grid setting with the best, plus the current "
                                "setting, which lies between grid points")


def verdict(is_best: bool, identical: bool, diff: float, vs: Versus, n_settings: int) -> str:
    """The plain verdict on the current setting against the best, in bold."""
    if is_best:
        return "**The current setting is the best.**"
    if identical:
        return "**The current setting scores exactly what the best scores**, question by question."
    if abs(diff) < 1e-12:
        return "**The current setting ties with the best**: the same mean, on different questions."
    if vs.p_holm <= ALPHA_LEVEL:
        return (f"**The current setting is worse than the best beyond chance**, even after Holm's correction for "
                f"{vs.family} comparisons (adjusted p = {p_text(vs.p_holm)}).")
    if vs.p <= ALPHA_LEVEL:
        return (f"**Alone, the current setting looks worse than the best** (p = {p_text(vs.p)}), **but not once the "
                f"{vs.family} comparisons are accounted for** (Holm-adjusted p = {p_text(vs.p_holm)}): picking the best of "
                f"{n_settings} settings makes gaps like this one expected by chance.")
    return (f"**The current setting can't be told apart from the best** (p = {p_text(vs.p)}, "
            f"Holm-adjusted {p_text(vs.p_holm)}).")


def significant_counts(land: Landscape) -> tuple[int, int]:
    """How many settings other than the best differ from it at p ≤ 0.05, before and after Holm's correction."""
    others = np.arange(land.p.size) != land.best
    return int((land.p[others] <= ALPHA_LEVEL).sum()), int((land.p_holm[others] <= ALPHA_LEVEL).sum())


def method_text(n_q: int) -> str:
    """How the permutation test drew its sign vectors."""
    if significance.is_exact(n_q):
        return f"exact: all 2^{n_q} = {2 ** n_q:,} sign vectors"
    return f"{significance.RESAMPLES:,} random sign vectors, seed {significance.SEED}"


def floor_text(family: int, resamples: int = significance.RESAMPLES) -> str:
    """The smallest p-value random sign vectors can give, and the floor it puts under Holm's adjusted p."""
    return (f" With {resamples:,} random sign vectors the smallest p-value is 2/{resamples + 1:,} ≈ "
            f"{2 / (resamples + 1):.4f}, so no Holm-adjusted p over {family} comparisons falls below "
            f"{min(1.0, family * 2 / (resamples + 1)):.3f}.")


def significance_section(v: View) -> None:
    """The current setting against the best: the difference, both p-values, the verdict and the method."""
    st.subheader("The current setting against the best")
    best_vals = v.land.sweep.values[v.land.best]
    vs = versus_best(v.land, v.current_vals, v.on_grid, v.near)
    diff = float(v.current_vals.mean() - best_vals.mean())
    s1, s2, s3 = st.columns(3)
    s1.metric(f"mean difference, current {MINUS} best", signed(diff, 4), border=True)
    s2.metric("permutation p", p_text(vs.p), border=True, help="Two-sided paired randomisation test of the mean difference.")
    s3.metric(f"Holm-adjusted p ({vs.family} comparisons)", p_text(vs.p_holm), border=True,
              help="Holm's step-down correction over the whole family of comparisons with the best.")
    raw_sig, holm_sig = significant_counts(v.land)
    said = verdict(v.on_grid and v.near == v.land.best, bool(np.array_equal(v.current_vals, best_vals)), diff, vs, v.n_settings)
    st.markdown(
        f"{said} Compared with the best at once, some settings would look significant by chance alone; Holm's "
        f"correction holds the family-wise error at 0.05 over the family: {vs.family_text}. Of the {v.n_settings - 1} other "
        f"grid settings, {raw_sig} differ from the best at p ≤ 0.05 before the correction and {holm_sig} after it."
    )
    st.caption(
        f"Paired randomisation test: each question's difference keeps or flips its sign with equal chance under the "
        f"null hypothesis; two-sided p ({method_text(v.n_q)}), as scipy.stats.permutation_test computes it. "
        "Holm (1979): the sorted p-values are multiplied by m, m − 1, …, 1, kept monotone and capped at 1. "
        "The tie region on the chart compares each setting alone (no correction), so it is stricter: a setting outside "
        "it may still not differ from the best once the whole family is accounted for."
        + ("" if significance.is_exact(v.n_q) else floor_text(vs.family))
    )


# ------------------------------------------------------------------------------------------- held-out validation


def folds_table(cv: tuning.CrossValidation, sw: tuning.Sweep) -> pd.DataFrame:
    """One row per fold: its size, the setting chosen on the other folds, its mean there and on the fold."""
    return pd.DataFrame({
        "fold": np.arange(1, cv.folds + 1),
        "questions": cv.fold_sizes,
        "chosen on the other folds": [fmt_setting(sw.setting(c)) for c in cv.chosen],
        "train mean": cv.train_means,
        "test mean (held out)": cv.test_means,
    }).set_index("fold")


def validation_text(in_sample: float, cross_validated: float, n_settings: int, n_q: int, current_mean: float) -> str:
    """What cross-validation says: the over-fitting in the tuned score, and what tuning gains on unseen questions."""
    optimism = in_sample - cross_validated
    if optimism > 1e-12:
        text = (f"Choosing the best of {n_settings} settings on all {n_q} questions reports {in_sample:.4f}; "
                f"on questions the choice never saw, the same procedure scores {cross_validated:.4f}. "
                f"The {optimism:.4f} between them is over-fitting: the tuning fitted these particular questions, not the retriever.")
    else:
        text = (f"Here the cross-validated score ({cross_validated:.4f}) is no lower than the in-sample one "
                f"({in_sample:.4f}): every fold chose a setting that did as well on its held-out questions.")
    gain = cross_validated - current_mean
    return text + (f" The sidebar's setting scores {current_mean:.4f}: " +
                   (f"tuning gains {gain:.4f} on unseen questions." if gain > 1e-12
                    else "tuning shows no gain that carries over to unseen questions."))


def validation_section(v: View) -> None:
    """k-fold cross-validation of the tuning: the folds slider, in-sample beside held-out, the folds' table."""
    st.subheader("Held-out validation: how much of the tuned score is over-fitting?")
    max_folds = min(10, v.n_q)
    if max_folds < 2:
        st.info("Cross-validation needs at least 2 questions.", icon=":material/info:")
        return
    if st.session_state.get(KEY_FOLDS, 0) > max_folds:  # a smaller dataset than the one the slider was set on
        st.session_state[KEY_FOLDS] = max_folds
    sw = v.land.sweep
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
        st.metric(f"tuned, in-sample ({v.label})", f"{cv.in_sample:.6f}", border=True,
                  help="The best setting's mean over the very questions it was chosen on.")
        st.metric(f"tuned, cross-validated ({v.label})", f"{cv.cross_validated:.6f}", border=True,
                  help="Each question scored by the setting chosen on the other folds, without it.")
        st.metric("optimism (in-sample − cross-validated)", signed(cv.optimism, 6), border=True)
    with right:
        st.dataframe(folds_table(cv, sw).style.format({"train mean": "{:.4f}", "test mean (held out)": "{:.4f}"}), width="stretch")
        st.markdown(validation_text(cv.in_sample, cv.cross_validated, v.n_settings, v.n_q, float(v.current_vals.mean())))
        st.caption(f"{folds}-fold cross-validation, seed {tuning.SEED}: for each fold the best setting on the other folds is "
                   "measured on the held-out fold; the cross-validated score is the mean over all questions, each measured once.")


# ------------------------------------------------------------------------------------------- the oracle


def oracle_tables(oracle: tuning.Oracle) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each system's mean, its gap to the oracle and the questions it is best on (alone, or tied), and the same
    counts as rows for the chart."""
    alone = {s: sum(1 for w in oracle.winners if w == (s,)) for s in oracle.systems}
    shared = {s: sum(1 for w in oracle.winners if s in w and len(w) > 1) for s in oracle.systems}
    table = pd.DataFrame({
        "mean": [oracle.system_means[s] for s in oracle.systems],
        "below the oracle": [oracle.mean - oracle.system_means[s] for s in oracle.systems],
        "best alone on": [alone[s] for s in oracle.systems],
        "best, tied, on": [shared[s] for s in oracle.systems],
    }, index=pd.Index(list(oracle.systems), name="system"))
    wins = pd.DataFrame([{"system": s, "how": h, "questions": c, "order": i}
                         for s in oracle.systems for i, (h, c) in enumerate((("alone", alone[s]), ("tied with another system", shared[s])))])
    return table, wins


def oracle_section(v: View) -> None:
    """The per-question oracle over every system: its mean, the best single system, and who wins where."""
    st.subheader("Per-question oracle: the upper bound of a router")
    oracle = tuning.oracle_of(v.ev, v.metric)
    best_system = max(oracle.system_means, key=oracle.system_means.get)
    o1, o2, o3 = st.columns(3)
    o1.metric(f"oracle mean {v.label}", f"{oracle.mean:.4f}", border=True,
              help="The best system's value on each question, averaged: what a perfect router between the systems would reach.")
    o2.metric(f"best single system: {escape_markdown(best_system)}", f"{oracle.system_means[best_system]:.4f}", border=True)
    o3.metric("headroom for a router", signed(oracle.mean - oracle.system_means[best_system], 4), border=True)
    table, wins = oracle_tables(oracle)
    left, right = st.columns([1, 1], gap="large")
    left.dataframe(table.style.format({"mean": "{:.4f}", "below the oracle": "{:.4f}"}), width="stretch")
    right.altair_chart(charts.oracle_wins(wins), width="stretch")
    all_tied = sum(1 for w in oracle.winners if len(w) == len(oracle.systems))
    st.caption(
        f"For each of the {v.n_q} questions, the system (uploaded runs included) with the highest {v.label}; {all_tied} questions "
        "are ties between every system. The oracle chooses with hindsight, so its mean is an upper bound, not a result: "
        "a router that predicts the best system from the question alone reaches at most this."
    )


# ------------------------------------------------------------------------------------------- fusion explained


def rank_text(r: int | None) -> str:
    """A rank, or — for a document not in the list."""
    return "—" if not r else str(r)


def row_label(r: dict) -> str:
    """A document's row on the chart: its fused rank, its id and ✓grade when relevant."""
    rank = f"#{r['fused_rank']}" if r["fused_rank"] else "not fused"
    return f"{rank} · {r['doc_id']}" + (f" ✓{r['grade']}" if r["grade"] else "")


def holding(r: dict, n_members: int) -> str:
    """How the members' own top lists hold a document: 'out' (it is not in the fused list), else 'one' of them,
    'every' one, 'some' or 'none'."""
    held = r["in_top"]
    if not r["fused_rank"]:
        return "out"
    if len(held) == 1:
        return "one"
    if held and len(held) == n_members:
        return "every"
    return "some" if held else "none"


def holders_text(r: dict, n_members: int) -> str:
    """Which fused systems' own top lists hold a fused document, plainly: 'BM25 only', 'both', 'all 3', 'BM25,
    dense', 'none'; '' for a document outside the fused list."""
    held, two = ", ".join(r["in_top"]), n_members == 2
    return {"out": "", "one": f"{held} only", "every": "both" if two else f"all {n_members}", "some": held,
            "none": "neither" if two else "none"}[holding(r, n_members)]


def contribution_note(r: dict, depth: int, n_members: int) -> str:
    """Why the document is in the fused list (or that it is a relevant one left out): the chart's text."""
    held, two = ", ".join(r["in_top"]), n_members == 2
    return {"out": "relevant, left out of the fused list", "one": f"only in {held}'s top {depth}",
            "every": f"in both top {depth}s" if two else f"in all {n_members} top {depth}s",
            "some": f"in the top {depth}s of {held}",
            "none": f"in {'neither' if two else 'no'} top {depth}: the sum put it here"}[holding(r, n_members)]


def contribution_parts(rows: list[dict], depth: int, members: tuple[str, ...]) -> pd.DataFrame:
    """One chart row per document and member: the member's contribution and rank, with what the tooltip shows."""
    return pd.DataFrame([
        {"row": row_label(r), "retriever": m, "contribution": r["contributions"][m], "total": r["total"],
         "note": contribution_note(r, depth, len(members)), "doc_id": r["doc_id"], "grade": r["grade"],
         "fused_rank": rank_text(r["fused_rank"]), "rank": rank_text(r["ranks"][m])}
        for r in rows for m in members
    ], columns=["row", "retriever", "contribution", "total", "note", "doc_id", "grade", "fused_rank", "rank"])


def top_column(depth: int) -> str:
    """The table's column naming the fused systems whose own top list holds the document."""
    return f"in the top {depth} of"


def contribution_table(rows: list[dict], members: tuple[str, ...], depth: int) -> pd.DataFrame:
    """One row per document: its fused rank, its rank in each member, each member's contribution, the total, and
    which members' own top `depth` hold it."""
    return pd.DataFrame([{
        "document": r["doc_id"], "grade": r["grade"], "fused rank": rank_text(r["fused_rank"]),
        **{f"{m} rank": rank_text(r["ranks"][m]) for m in members},
        **{f"from {m}": r["contributions"][m] for m in members},
        "total": r["total"], top_column(depth): holders_text(r, len(members)),
    } for r in rows])


def held_text(p: Params) -> str:
    """The parameters the fused registered retrievers read, at the sidebar's values: 'k1 = 1.2, b = 0.75, d = 6'."""
    parts = ([f"k1 = {p.k1:g}", f"b = {p.b:g}"] if "BM25" in p.members else []) + ([f"d = {p.dims}"] if "LSA" in p.members else [])
    return ", ".join(parts)


def fusion_formula(kind: str, p: Params, depth: int) -> tuple[str, str]:
    """The fusion's formula at the sidebar's values, as a caption (Markdown: the member names escaped) and as the
    chart's axis title (plain text)."""
    members, names = p.members, members_text(p.members)
    held = held_text(p)
    held = f", {held}" if held else ""
    if kind == "weighted":
        if len(members) == 2 and p.weights is None:
            a, b = (escape_markdown(m) for m in members)
            return (f"Weighted fusion of {names} at alpha = {p.alpha:g}: each document scores alpha × min-max({a}) + "
                    f"(1 − alpha) × min-max({b}), each min-max normalised over every document's score for this question "
                    f"(fused from each top {depth}{held}).",
                    f"alpha × minmax({members[0]}) + (1 − alpha) × minmax({members[1]})")
        weights = p.fusion_weights()
        terms = [f"{w:g} × min-max({escape_markdown(m)})" for m, w in zip(members, weights)]
        return (f"Weighted fusion of {names} with the sidebar's weights: each document scores {' + '.join(terms)}, each "
                f"min-max normalised over every document's score for this question (fused from each top {depth}{held}).",
                " + ".join(f"{w:g} × minmax({m})" for m, w in zip(members, weights)))
    return (f"Reciprocal Rank Fusion of {names} at k = {p.rrf_k:g}: a document gets 1/(k + rank) from each list whose "
            f"top {depth} holds it{f' ({held[2:]})' if held else ''}.", " + ".join(f"1/(k + {m} rank)" for m in members))


def fusion_section(v: View) -> None:
    """One question's fused list: who put each document there, as a chart and a table."""
    st.subheader("Fusion explained: who put each document there?")
    ds, p = v.ds, v.params
    members, depth = p.members, p.fusion_depth
    f1, f2 = st.columns([1, 3])
    kind = f1.segmented_control("fusion", ["weighted", "RRF"], default="weighted", key=KEY_KIND, required=True, persist_state="session")
    qids = [ds.query_ids[q] for q in ds.evaluated]
    texts = {ds.query_ids[q]: " ".join(ds.query_texts[q].split()) for q in ds.evaluated}
    qid = f2.selectbox("question", qids, key=KEY_QUESTION, persist_state="session",
                       format_func=lambda q: f"{q} — {texts[q][:110]}")
    rows = explain(ds, qid, "weighted" if kind == "weighted" else "rrf", p, cache.current_extra(ds))
    st.markdown(f"**{escape_markdown(qid)}**: {escape_markdown(clip(texts[qid]))}")
    caption, x_title = fusion_formula(kind, p, depth)
    st.caption(caption)
    if not rows:
        st.info(f"No fused system ({members_text(members)}) returns a document for this question.", icon=":material/info:")
        return
    st.altair_chart(charts.fusion_contributions(contribution_parts(rows, depth, members), x_title, members, cache.systems(ds)), width="stretch")
    contributions = {f"from {m}": "{:.4f}" for m in members}
    st.dataframe(contribution_table(rows, members, depth).style.format({**contributions, "total": "{:.4f}"}),
                 width="stretch", hide_index=True,
                 column_config={c: st.column_config.TextColumn(c, help="— = not in the list")
                                for c in ("fused rank", *(f"{m} rank" for m in members))})
    st.caption(
        f"Rows: the fused top {depth} and every relevant document (✓ and its grade). '{top_column(depth)}' names, for "
        f"every document of the fused list, relevant or not, the fused systems ({members_text(members)}) whose own top "
        f"{depth} holds it; one alone ('… only') is the one that brought it in"
        + (": RRF fuses only those lists, so without that system the document would not be in the fused list."
           if kind == "RRF" else
           ". The weighted fusion scores every document, so one in no member's top list can still enter the fused "
           "list on the sum of middling scores.")
    )
