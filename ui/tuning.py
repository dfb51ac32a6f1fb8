"""The Tuning page's parts: the landscape of one retriever's grid (computed once per dataset, metric and held
parameters, kept in the dataset's engine's memo), the moves of the sidebar's sliders, the
significance verdict (the library's rule: retrieval.analyses.tuning.verdict, what `python -m retrieval tune` says
too), held-out validation, the per-question oracle and one question's fusion explained."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from retrieval.analyses import grids, tuning
from retrieval.core.errors import InputError
from retrieval.core.memo import Memo, SharedMemo
from retrieval.core.params import SPECS, Params
from retrieval.corpus.dataset import Dataset
from retrieval.corpus.text import Analysis
from retrieval.engine.engine import TUNING, VERDICTS
from retrieval.evaluation import significance, stats
from retrieval.evaluation.experiment import Evaluation
from retrieval.retrievers import bm25
from retrieval.retrievers.systems import Sources

from . import cache, charts, state
from .format import MINUS, clip, fmt_setting, p_text, signed
from .markdown import escape_markdown

WHAT = {  # selector label -> the library's parameter key
    "k1 × b (BM25)": "k1,b",
    "LSA dimensions": "dims",
    "RRF constant": "rrf_k",
    "alpha (weighted fusion)": "alpha",
    "alpha × d": "alpha,dims",
    "RRF k × d": "rrf_k,dims",
    "k1 × d": "k1,dims",
    "text analysis × k1 × b": "analysis",
}
AXIS_TITLE = {"dims": "LSA dimensions d", "rrf_k": "RRF constant k", "k1": "BM25 k1"}
KEY_WHAT, KEY_FOLDS, KEY_BEST, KEY_KIND, KEY_QUESTION = (
    "tune_what",
    "tune_folds",
    "tune_to_best",
    "tune_fusion",
    "tune_question",
)
KEY_ABSOLUTE = "tune_absolute"
KEY_FLASH = "tune_flash"  # the message of the last slider move, shown once
PICK = "pick"  # the charts' point selection
FEW = 50  # below this many questions the page warns that the landscape is mostly noise
ALPHA_LEVEL = tuning.ALPHA_LEVEL  # Holm's family-wise level (the library's verdict rule)
STEPS = {
    state.K1: "0.05",
    state.B: "0.05",
    state.ALPHA: "0.05",
    state.DIMS: "1",
    state.RRF_K: "1",
}  # the sliders' steps, written
FUSED = ("rrf_k", "alpha", *tuning.JOINT)  # the sweeps of a fusion: they hold the fused members' other parameters
HOLDS = {  # what a fusion sweep holds at the sidebar's values (besides the members and the fusion depth)
    "rrf_k": ("k1", "b", "dims"),
    "alpha": ("k1", "b", "dims"),
    "alpha,dims": ("k1", "b"),
    "rrf_k,dims": ("k1", "b"),
    "k1,dims": ("b", "alpha"),
}
EDGE_ZONE = tuning.EDGE_ZONE  # the best is "at the edge" in the outer tenth of an axis's settings (the library's rule)
GAIN_EPS = tuning.GAIN_EPS  # a cross-validated gain at or below this is no gain
UNJUDGED = "unjudged"  # the grade of a document no judgement of the question names
GRADE_HELP = (
    f"A grade is the judgement's (0: judged not relevant); '{UNJUDGED}': no judgement of this question "
    "names the document, so whether it is relevant is not known."
)
CHART_ROWS = 15  # the fusion chart draws at most this many documents (the table holds them all)
ORACLE_WIDTH = (
    450  # px: the oracle's table with all its columns in view, and its chart beside it where the page is wide
)
MEMO = TUNING  # the engine memo's kind (engine.CACHE_SIZES) of everything computed here
VERSUS = VERDICTS  # its kind of the current setting's tests against the best (small: many, one per slider value)


# ------------------------------------------------------------------------------------------- computed once, beside the engine


class Landscape(NamedTuple):
    """A sweep, its best setting, the tie region and the permutation p-values (raw, Holm) against the best."""

    sweep: tuning.Sweep
    best: int
    ties: tuning.TieRegion
    p: np.ndarray
    p_holm: np.ndarray
    resamples: int = significance.RESAMPLES  # the permutation test's random sign vectors (when not exact)


QUESTION_SIDE = ("query_words", "k3")  # how BM25 counts a repeated question word: held by every sweep that scores BM25


def held_fixed(what: str, params: Params, sources: Sources = ()) -> tuple:
    """What a sweep of `what` holds at the sidebar's values, as a cache key: for the fusions the (name, value)
    pairs of `HOLDS[what]` and of BM25's repeated question words (and the members' weights when the k1 x d sweep
    fuses more than two), the fusion depth, the members and the content fingerprint of each member that is an
    uploaded source (None for a registered retriever); for BM25's own sweeps its repeated question words; nothing
    for LSA. The text analysis is not in it: everything is kept in the memo of the engine built for it (`kept`),
    and `held_params` and `own_params` give the library that engine's analysis."""
    words = tuple((n, SPECS[n].cast(getattr(params, n))) for n in QUESTION_SIDE)
    if what not in FUSED:
        return (words,) if tuning.SYSTEM_OF[what] == "BM25" else ()
    prints = {x.name: x.fingerprint for x in sources}
    pairs = tuple((n, SPECS[n].cast(getattr(params, n))) for n in HOLDS[what]) + words
    if what == "k1,dims" and len(params.members) > 2:
        pairs += (("weights", params.fusion_weights()),)
    return (pairs, int(params.fusion_depth), tuple(params.members), tuple(prints.get(m) for m in params.members))


def held_params(held: tuple, analysis: Analysis = Analysis()) -> Params:
    """The parameters a fusion sweep holds (`held_fixed`'s) with the text analysis of the engine it runs on (an
    engine answers only for its own), the others the article's; more than two members get weight 1 each unless
    held, which neither RRF nor the alpha and d sweeps read."""
    pairs, depth, members, _ = held
    values = dict(pairs)
    if len(members) > 2:
        values.setdefault("weights", (1.0,) * len(members))
    return Params(fusion_depth=depth, members=members, stemmer=analysis.stemmer, stopwords=analysis.stopwords, **values)


def own_params(held: tuple, analysis: Analysis) -> Params:
    """The parameters BM25's and LSA's own sweeps hold (`held_fixed`'s: BM25's rule for repeated question words, or
    nothing) with the text analysis of the engine they run on, the others the article's."""
    return Params(stemmer=analysis.stemmer, stopwords=analysis.stopwords, **(dict(held[0]) if held else {}))


def kept(ds: Dataset) -> Memo | SharedMemo:
    """The memo of the dataset's engine, where everything computed here is kept."""
    return cache.engine(ds).memo


def fixed(ds: Dataset, held: tuple, sources: Sources = ()) -> tuning.Fixed:
    """The fused members at the sidebar's values with their rankings and scores: what the fusion sweeps and
    explanations hold fixed (kept beside the dataset's engine, keyed by `held_fixed`'s values: never by an object)."""
    engine = cache.engine(ds)  # the memo is this engine's: its text analysis is the one held
    return kept(ds).get(
        MEMO, ("fixed", held), lambda: tuning.fixed_parts(ds, held_params(held, engine.analysis), engine, sources)
    )


def landscape(ds: Dataset, what: str, metric: str, held: tuple, sources: Sources = ()) -> Landscape:
    """The sweep of `what` on `metric` with its best, ties and p-values, kept beside the dataset's engine.

    Keyed on the metric and only what the sweep holds fixed: `held` is () for BM25 and LSA, `held_fixed`'s
    values for the fusions (`sources`: the sources the fingerprints in `held` stand for); the engine itself is the
    dataset's (by content).
    """

    def make() -> Landscape:
        engine = cache.engine(ds)  # the memo is this engine's: its text analysis is the one held
        base, parts = own_params(held, engine.analysis), None
        if what in FUSED:
            base = held_params(held, engine.analysis)
            parts = fixed(ds, held, sources) if what in ("rrf_k", "alpha") else None
        sw = (
            bm25_sweep(ds, metric, held)
            if what == "k1,b"
            else tuning.sweep(ds, what, metric, base, engine, parts, sources)
        )
        best = tuning.best_setting(sw.values)
        ties = tuning.tie_region(sw.values, best)
        resamples = tuning.sign_vectors_for(sw.means.size, ALPHA_LEVEL)
        p, p_holm = tuning.versus_best(sw.values, best, resamples)
        return Landscape(sw, best, ties, p, p_holm, resamples)

    return kept(ds).get(MEMO, ("landscape", what, metric, tuple(held)), make)


def bm25_sweep(ds: Dataset, metric: str, held: tuple) -> tuning.Sweep:
    """BM25's k1 x b sweep (`held`: `held_fixed`'s for it), kept beside the dataset's engine: the k1 x b landscape's,
    and what the text analysis sweep is compared with (`grids.compare`)."""
    engine = cache.engine(ds)
    return kept(ds).get(
        MEMO,
        ("sweep", "k1,b", metric, tuple(held)),
        lambda: tuning.sweep(ds, "k1,b", metric, own_params(held, engine.analysis), engine),
    )


def explain(ds: Dataset, qid: str, kind: str, params: Params, sources: Sources = ()) -> list[dict]:
    """One question's fused list with each member's contribution to every document (kept beside the engine)."""
    held = held_fixed("rrf_k", params, sources)
    key = ("explain", qid, kind, held, params.fusion_weights(), float(params.rrf_k))
    return kept(ds).get(
        MEMO, key, lambda: tuning.explain_fusion(ds, qid, kind, params, cache.engine(ds), fixed(ds, held, sources))
    )


# ------------------------------------------------------------------------------------------- moving the sliders


def snap(name: str, value: float) -> float | int:
    """A parameter value on its slider: the nearest step (0.05 for k1, b, alpha; whole numbers for d and k),
    within range (for d, what the dataset in use allows)."""
    hi = cache.max_dims(cache.current_dataset()) if name == state.DIMS else state.SLIDERS[name].hi
    return state.SLIDERS[name].snap(value, hi)


def move_message(how: str, wanted: dict, snapped: dict) -> str:
    """The message after a move: where the sliders now are, and which values the steps changed."""
    moved = fmt_setting({n: snapped[n] for n in wanted})
    changed = [
        f"{n} {float(v):g} → {snapped[n]:g}"
        for n, v in wanted.items()
        if not isinstance(v, str) and abs(float(snapped[n]) - float(v)) > 1e-9
    ]
    note = f" (snapped to the slider's steps: {', '.join(changed)})" if changed else ""
    return f"{how}: the sidebar now holds {moved}{note}."


def move_sliders(setting: dict, how: str) -> None:
    """Set the sidebar sliders (a callback: it runs before app.py draws them) and leave a message saying where; an
    analysis ('snowball/lucene') sets the stemmer and the stop words."""
    snapped = {name: value if name == "analysis" else snap(name, value) for name, value in setting.items()}
    for name, value in snapped.items():
        if name == "analysis":
            st.session_state[state.STEMMER], st.session_state[state.STOPWORDS] = value.split("/")
        else:
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


# ------------------------------------------------------------------------------------------- the verdict


# The rule and its words are the library's (retrieval.analyses.tuning: `verdict`), so the page and `python -m
# retrieval tune` say the same for the same numbers; the page keeps the costly part (a permutation test and a
# bootstrap of a setting between grid points) in its memo, per slider value.
Versus = tuning.Versus
Signals = tuning.Signals
verdict_kind = tuning.verdict_kind
offers_best = tuning.offers_best
p_is = tuning.p_is
about = tuning.about


def words_markdown(words: tuple[tuning.Piece, ...]) -> str:
    """A finding's words as Markdown: its stressed pieces (the headline) in bold. The words are the library's own
    (parameter names and values, numbers, the metric's label), no user string, so nothing in them needs escaping."""
    return "".join(f"**{w.text}**" if w.stressed else w.text for w in words)


def verdict_text(s: Signals, what: str, best: str, label: str) -> str:
    """The verdict as the page shows it: `tuning.verdict_words` in Markdown, its headline in bold."""
    return words_markdown(tuning.verdict_words(s, what, best, label))


def verdict_markdown(v: tuning.Verdict) -> str:
    """A verdict as the page shows it (its words, the headline in bold)."""
    return words_markdown(v.words)


def versus_best(land: Landscape, v_current: np.ndarray, on_grid: bool, near: int) -> Versus:
    """On the grid, the sweep's own p-values of the current setting; between grid points, its permutation p
    against the best, Holm-corrected together with the other settings' (a family one larger): `tuning.versus_current`."""
    return tuning.versus_current(
        land.sweep.values, land.best, land.p, land.p_holm, v_current, on_grid, near, land.resamples
    )


def judge(
    ds: Dataset,
    what: str,
    metric: str,
    held: tuple,
    land: Landscape,
    current: dict,
    current_vals: np.ndarray,
    cv: tuning.CrossValidation | None,
    label: str,
) -> tuning.Verdict:
    """The verdict on the sidebar's setting (`current`, scoring `current_vals`): the library's `tuning.verdict` on the
    landscape, its comparison with the best (p-values and tie) kept in the app's memo per setting."""
    sw = land.sweep
    near, on_grid = tuning.place(sw, current)

    def compare() -> tuple[
        Versus, bool
    ]:  # between grid points a permutation test and a bootstrap: kept, not redone per rerun
        return (
            versus_best(land, current_vals, on_grid, near),
            tuning.tied_with_best(sw.values, land.best, land.ties, current_vals, on_grid, near),
        )

    # the current setting's values are fixed by the sweep's held values and the swept ones (seeded tests: exact)
    key = ("versus", what, metric, tuple(held), tuple(sorted(current.items())))
    versus, tied = kept(ds).get(VERSUS, key, compare)
    return tuning.verdict(
        sw,
        land.best,
        land.ties,
        land.p,
        land.p_holm,
        current,
        current_vals,
        cv,
        label,
        land.resamples,
        versus=versus,
        current_tied=tied,
    )


# The edge rule and its finding are the library's (retrieval.analyses.tuning: `edge_findings`), what `python -m
# retrieval tune` prints too; the page adds where to go past the sidebar's slider.
edge_sides = tuning.edge_sides
bounds = tuning.bounds


def edge_markdown(e: tuning.Edge) -> str:
    """The warning for a best at the edge of the range searched (the finding's words, its headline in bold); past the
    sidebar's slider, where to go."""
    past = (
        f" The sidebar's slider stops at {e.slider_end:g}; the command line scores larger values "
        f"(`python -m retrieval evaluate --{e.name.replace('_', '-')} …`)."
        if e.slider_end is not None
        else ""
    )
    return words_markdown(e.words) + past


def edge_warnings(sw: tuning.Sweep, best: int, dims_limit: int) -> list[str]:
    """One warning per swept parameter whose best lies at an open edge of its axis (`tuning.edge_findings`)."""
    return [edge_markdown(e) for e in tuning.edge_findings(sw, best, dims_limit)]


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
    folds: int  # cross-validation's folds (the slider's, 0 when there are too few questions)
    cv: tuning.CrossValidation | None
    verdict: tuning.Verdict  # the library's verdict on the sidebar's setting (`judge`)

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
    return f"alpha (weight of {members[0]})" if what.split(",")[0] == "alpha" else AXIS_TITLE[what.split(",")[0]]


def offered(members: tuple[str, ...]) -> list[str]:
    """The sweeps the page offers: the alpha sweeps only for exactly two fused systems (alpha weighs the first), the
    joint sweeps with d only when LSA is fused (and k1 × d when BM25 is too)."""
    out = []
    for label, w in WHAT.items():
        if w in tuning.JOINT:
            try:
                tuning.check_joint_members(w, members)
            except InputError:
                continue
        elif w == "alpha" and len(members) != 2:
            continue
        out.append(label)
    return out


def no_alpha_text(members: tuple[str, ...]) -> str:
    """Why the alpha sweep is not offered (Markdown)."""
    n = len(members)
    why = (
        "a single fused system has weight 1"
        if n == 1
        else f"with {n} each has its own weight, set in the sidebar, and alpha is not used"
    )
    return (
        f"No alpha sweep: alpha weighs the first of exactly two fused systems (1 {MINUS} alpha the second); "
        f"the sidebar fuses {members_text(members)}: {why}. Choose two fused systems in the sidebar to sweep alpha."
    )


def no_joint_text(members: tuple[str, ...]) -> str:
    """Why joint sweeps with d are missing (Markdown), '' when none is."""
    if "LSA" not in members:
        return (
            f"No joint sweep with d: it varies LSA's dimensions inside the fusion, and the sidebar fuses "
            f"{members_text(members)}. Add LSA to the fused systems to sweep it together with the fusion."
        )
    if "BM25" not in members:
        return f"No k1 × d sweep: the sidebar fuses {members_text(members)}, without BM25."
    return ""


def current_setting(names: tuple[str, ...], params: Params) -> dict:
    """The sidebar's value of each swept parameter (the analysis as 'stemmer/stop words')."""
    return tuning.current_setting(names, params)


def held_values(what: str, p: Params) -> str:
    """What a sweep holds at the sidebar's values, plainly (Markdown): 'k1 = 1.2, b = 0.75 (BM25), d = 6 (LSA), each
    member's top 10'; '' for BM25's and LSA's own sweeps, which read nothing else."""
    if what not in FUSED:
        return ""
    reader = {"k1": "BM25", "b": "BM25", "dims": "LSA"}
    parts = [
        f"{'d' if n == 'dims' else n} = {getattr(p, n):g}" + (f" ({reader[n]})" if n in reader else "")
        for n in HOLDS[what]
        if reader.get(n) in (None, *p.members) and not (n == "alpha" and len(p.members) != 2)
    ]
    if what == "k1,dims" and len(p.members) != 2:
        parts.append(
            "the weights " + ", ".join(f"{escape_markdown(m)} {w:g}" for m, w in zip(p.members, p.fusion_weights()))
        )
    return ", ".join([*parts, f"each member's top {p.fusion_depth}"])


names_text = tuning.names_text  # swept parameters for reading: 'k1 and b', 'd', 'RRF k and d' (the verdict's words)


def held_text_of(v: View) -> str:
    """What the page says about the parameters a sweep does not vary (Markdown)."""
    names = names_text(v.land.sweep.names)
    if v.what == "analysis":
        return (
            f"Swept: every text analysis (stemmer / stop words) with k1 and b; held at the sidebar's values: "
            f"{bm25.question_words_text(v.params.query_words, v.params.k3)}. Each analysis other than the sidebar's is indexed once for this sweep."
        )
    if v.what not in FUSED:
        return f"{v.system} reads only {names}: nothing else is held."
    held = held_values(v.what, v.params)
    text = f"Swept: {names}; held at the sidebar's values: {held}."
    if v.what in ("alpha", "rrf_k") and "LSA" in v.params.members:
        joint = "alpha × d" if v.what == "alpha" else "RRF k × d"
        text += (
            f" So the best {names} is the best *at d = {v.params.dims}*, not overall: another d changes what LSA "
            f"brings to the fusion. Sweep **{joint}** to vary both."
        )
    return text


def alpha_note(v: View) -> str:
    """When the best alpha leaves one member almost alone (at most 0.1 of the weight on the other), say so."""
    if "alpha" not in v.land.sweep.names or len(v.params.members) != 2:
        return ""
    a = float(v.best_setting["alpha"])
    if 0.1 < a < 0.9:
        return ""
    lead = v.params.members[0] if a >= 0.9 else v.params.members[1]
    return (
        f"At the best alpha ({a:g}) the fusion is nearly {escape_markdown(lead)} alone: "
        f"{1 - a if a >= 0.9 else a:.2g} of the weight goes to the other member."
    )


def header(ds: Dataset, label: str) -> bool:
    """The title, what the page computes, and the notices for too few questions; False when there are none."""
    n_q = int(ds.evaluated.size)
    st.title("Tuning")
    st.caption(
        f"**{escape_markdown(ds.name)}**: {label} (the sidebar's metric) over a grid of one or two parameters, the others "
        f"held at the sidebar's values. **Tie region**: a setting can't be told apart from the best when the paired "
        f"bootstrap interval of (setting {MINUS} best) over the {n_q:,} questions holds zero ({stats.RESAMPLES:,} resamples, "
        f"seed {stats.SEED}, {stats.CONFIDENCE:.0%} percentile interval), each setting alone. **Significance**: the paired "
        f"permutation (sign-flip) test against the best, with Holm's correction for comparing many settings at once."
    )
    if n_q == 0:
        st.info("No question has a relevant document, so there is nothing to tune.", icon=":material/info:")
        return False
    if n_q < FEW:
        st.warning(
            f"Only {n_q} questions: the landscape is mostly noise. One or two questions changing rank move the mean, "
            "so the best setting is a lucky draw as much as a good value; read the tie region, not the peak.",
            icon=":material/warning:",
        )
    flash = st.session_state.pop(KEY_FLASH, None)
    if flash:
        st.success(flash, icon=":material/tune:")
    return True


def max_folds(n_q: int) -> int:
    """The most folds cross-validation offers: 10, or one question per fold."""
    return min(10, n_q)


def chosen_folds(n_q: int) -> int:
    """The folds slider's value (before it is drawn: the verdict reads it), within what the questions allow; 0 when
    there are too few questions to cross-validate."""
    top = max_folds(n_q)
    if top < 2:
        return 0
    if st.session_state.get(KEY_FOLDS, 0) > top:  # a smaller dataset than the one the slider was set on
        st.session_state[KEY_FOLDS] = top
    return int(st.session_state.get(KEY_FOLDS) or min(tuning.FOLDS, top)) if top > 2 else 2


def choose_view(ds: Dataset) -> View | None:
    """The sweep selector, then the sweep (None, with an error, when the dataset can't be swept)."""
    metric = state.metric_name()
    label = state.metric_label(metric)
    p = cache.ranking_params(ds)
    options = offered(p.members)
    if st.session_state.get(KEY_WHAT) not in (None, *options):  # a sweep no longer offered
        st.session_state[KEY_WHAT] = options[0]
    choice = st.segmented_control(
        "Tune",
        options,
        default=options[0],
        key=KEY_WHAT,
        required=True,
        persist_state="session",
        help="Which parameters to sweep: one alone, or two of different systems together "
        "(the fusion with LSA's d); the others stay at the sidebar's values.",
    )
    notes = [
        t
        for t in (
            (no_alpha_text(p.members) if "alpha" not in (WHAT[o] for o in options) else ""),
            no_joint_text(p.members),
        )
        if t
    ]
    for note in notes:
        st.caption(note)
    what = WHAT[choice]
    sources = cache.current_sources(ds)
    held = held_fixed(what, p, sources)
    try:
        with st.spinner(f"Sweeping {choice} on {label}…"):
            land = landscape(ds, what, metric, held, sources)
    except InputError as err:
        st.error(f"Can't sweep {choice} on this dataset: {escape_markdown(str(err))}", icon=":material/error:")
        return None
    ev = cache.evaluation([metric])
    sw = land.sweep
    current = current_setting(sw.names, p)
    current_vals = ev.values[tuning.SYSTEM_OF[what]][metric]
    folds = chosen_folds(int(ds.evaluated.size))
    cv = tuning.cross_validate(sw.values, folds, tuning.SEED) if folds else None
    said = judge(ds, what, metric, held, land, current, current_vals, cv, label)
    return View(ds, metric, label, p, what, choice, land, ev, current, current_vals, folds, cv, said)


def headline(v: View) -> None:
    """The current setting's mean, the best's, how many settings tie with it; the verdict and the edge warnings."""
    means = v.land.sweep.means
    c1, c2, c3 = st.columns(3)
    c1.metric(
        "current (sidebar)",
        f"{v.current_vals.mean():.6f}",
        border=True,
        help=f"{v.system}'s mean {v.label} at the sidebar's setting, {fmt_setting(v.current)}"
        + ("." if v.verdict.on_grid else " (between grid points)."),
    )
    c2.metric(
        "best of the grid",
        f"{means[v.land.best]:.6f}",
        border=True,
        help=f"The grid setting with the highest mean {v.label}, {fmt_setting(v.best_setting)} (exact ties: the first in grid order).",
    )
    c3.metric(
        "tied with the best",
        f"{v.land.ties.size} / {v.n_settings}",
        border=True,
        help="Settings whose paired bootstrap interval of (setting − best) holds zero, each compared alone "
        "(uncorrected), the best included; out of every setting of the grid.",
    )
    st.caption(
        f"Current: {fmt_setting(v.current)}{'' if v.verdict.on_grid else ' (between grid points)'} · best: "
        f"{fmt_setting(v.best_setting)} · {v.land.ties.size} of {v.n_settings} settings can't be told apart from the best."
    )
    st.markdown(verdict_markdown(v.verdict))
    if v.what == "analysis":  # its coarse grid's ends are said beside the finer k1 x b sweep's (`analysis_chart`)
        return
    for warning in edge_warnings(v.land.sweep, v.land.best, cache.engine(v.ds).max_dims()):
        st.warning(warning, icon=":material/open_in_full:")


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
        rows.append(
            {"start": axis[i] - (half[i - 1] if i > 0 else 0.0), "end": axis[j] + (half[j] if j < n - 1 else 0.0)}
        )
        i = j + 1
    return pd.DataFrame(rows, columns=["start", "end"])


def points_frame(land: Landscape) -> pd.DataFrame:
    """One row per grid setting: its parameters, mean, tie status, interval against the best and p-values."""
    sw, ties = land.sweep, land.ties
    n = sw.means.size
    points = pd.DataFrame({name: [sw.setting(i)[name] for i in range(n)] for name in sw.names})
    return points.assign(
        mean=sw.means,
        status=np.where(ties.tied, charts.TIED, charts.NOT_TIED),
        low=ties.intervals[:, 0],
        high=ties.intervals[:, 1],
        p=land.p,
        p_holm=land.p_holm,
    )


def marks_frame(best: dict, best_mean: float, current: dict, current_mean: float) -> pd.DataFrame:
    """The two marks on the chart: the best setting and the sidebar's."""
    return pd.DataFrame(
        [
            {**best, "what": charts.BEST, "mean": float(best_mean)},
            {**current, "what": charts.CURRENT, "mean": float(current_mean)},
        ]
    )


def heatmap_cells(points: pd.DataFrame, k1_axis: np.ndarray, b_axis: np.ndarray) -> pd.DataFrame:
    """The k1 x b points as cells: each spans half the smallest step on either side of its setting."""
    dk1, db = np.diff(k1_axis).min() / 2, np.diff(b_axis).min() / 2
    return points.assign(
        k1_lo=points["k1"] - dk1, k1_hi=points["k1"] + dk1, b_lo=points["b"] - db, b_hi=points["b"] + db
    )


def joint_heatmap(
    points: pd.DataFrame,
    marks: pd.DataFrame,
    first: str,
    first_title: str,
    label: str,
    select: str | None = None,
    domain: tuple[float, float] | None = None,
) -> alt.LayerChart:
    """A joint sweep as a heatmap: d across (one column per value, evenly spaced: the values are not), the first
    parameter up; settings tied with the best (each alone) at full colour, the others faded and marked ×; the
    best cell's star, the sidebar's diamond (on the nearest cell when it lies between). With `select`, a click
    selects the cell's (first, dims) in a point selection of that name; with `domain`, the colours span it."""
    dims = sorted(points["dims"].unique().tolist())
    firsts = sorted(points[first].unique().tolist(), reverse=True)
    x = alt.X("dims:O", title="LSA dimensions d", sort=dims, axis=alt.Axis(labelAngle=0, labelOverlap=True))
    y = alt.Y(f"{first}:O", title=first_title, sort=firsts, axis=alt.Axis(labelExpr="format(datum.value, '~g')"))
    tooltip = charts._landscape_tooltip([first, "dims"], label)
    color = alt.Color(
        "mean:Q",
        title=label,
        scale=alt.Scale(scheme="viridis", **({"domain": list(domain)} if domain else {})),
        legend=alt.Legend(orient="right", format=".4f", gradientLength=260, tickCount=5),
    )
    rect = (
        alt.Chart(points)
        .mark_rect(stroke="white", strokeWidth=0.6)
        .encode(
            x=x,
            y=y,
            color=color,
            tooltip=tooltip,
            opacity=alt.Opacity(
                "status:N",
                title=None,
                scale=alt.Scale(domain=[charts.TIED, charts.NOT_TIED], range=[1.0, 0.22]),
                legend=alt.Legend(
                    orient="top", direction="vertical", symbolType="square", symbolSize=180, labelLimit=400
                ),
            ),
        )
    )
    crosses = (
        alt.Chart(points[points["status"] == charts.NOT_TIED])
        .mark_text(text="×", fontSize=12, color="#495057")
        .encode(x=x, y=y)
    )
    shapes = alt.Scale(domain=[charts.BEST, charts.CURRENT], range=[charts._STAR, "diamond"])
    fills = alt.Scale(domain=list(charts._MARK_COLORS), range=list(charts._MARK_COLORS.values()))
    marked = (
        alt.Chart(marks)
        .mark_point(filled=True, size=300, stroke="black", strokeWidth=1.3, opacity=1)
        .encode(
            x=x,
            y=y,
            shape=alt.Shape("what:N", scale=shapes, legend=None),
            color=alt.Color(
                "what:N",
                title=None,
                scale=fills,
                legend=alt.Legend(orient="top", symbolStrokeColor="black", symbolStrokeWidth=1, symbolSize=160),
            ),
            tooltip=[
                alt.Tooltip("what:N", title=" "),
                alt.Tooltip(f"{first}:Q"),
                alt.Tooltip("dims:Q"),
                alt.Tooltip("mean:Q", format=".4f", title=label),
            ],
        )
    )
    layers = [rect, crosses, marked]
    if select:  # an invisible cell on top catches the click, on the colour or on a mark
        layers.append(
            alt.Chart(points)
            .mark_rect(opacity=0.001, color="white", cursor="pointer")
            .encode(x=x, y=y, tooltip=tooltip)
            .add_params(alt.selection_point(name=select, fields=[first, "dims"], on="click", clear="dblclick"))
        )
    return (
        alt.layer(*layers)
        .resolve_scale(color="independent", shape="independent")
        .properties(height=max(300, 22 * len(firsts) + 80))
    )


def chart_key(what: str, current: dict) -> str:
    """The chart's widget key: a new chart (no stale selection) after every move of the sliders."""
    return "tune_chart_" + what.replace(",", "_") + "_" + "_".join(f"{v:g}" for v in current.values())


def scale_text(heatmap: bool, means: np.ndarray, all_tied: bool) -> str:
    """What the stretched colour scale or y axis spans, and a warning when every difference on it is noise."""
    return (
        f" The {'palette' if heatmap else 'y axis'} spans the grid's own range, {means.min():.4f} to {means.max():.4f}"
        + (
            f": every setting can't be told apart from the best, so the {'colours' if heatmap else 'ups and downs'} show noise."
            if all_tied
            else "."
        )
    )


def how_to_read(what: str, names: tuple[str, ...]) -> str:
    """How to read and click the chart."""
    if len(names) == 2:
        cell = (
            "the diamond the sidebar's"
            if what == "k1,b"
            else "the diamond the sidebar's (on the nearest cell when it lies between grid values)"
        )
        return (
            f"Click a cell to move the sidebar's {names[0]} and {'d' if names[1] == 'dims' else names[1]} there. The star "
            f"is the best setting, {cell}; faded cells marked × are worse than the best by their own bootstrap "
            "interval, full-colour ones can't be told apart from it (each compared alone, uncorrected)."
        )
    return (
        f"Click near a point to move the sidebar's {names[0]} there. The star is the best setting, the dashed line "
        "the sidebar's; green points (on the shaded band) can't be told apart from the best, grey ones are worse "
        "by their own bootstrap interval (each compared alone, uncorrected)."
    )


def steps_text(names: tuple[str, ...]) -> str:
    """The swept sliders' steps: 'k1: 0.05, b: 0.05'."""
    return ", ".join(f"{n}: {STEPS[n]}" for n in names)


def grid_text(sw: tuning.Sweep) -> str:
    """The grid's size: '21 alpha × 19 d = 399 settings'; '200 settings' for one parameter."""
    if len(sw.names) == 1:
        return f"{sw.means.size} settings"
    sizes = " × ".join(
        f"{a.size} {'d' if n == 'dims' else 'analyses' if n == 'analysis' else n}" for n, a in zip(sw.names, sw.axes)
    )
    return f"{sizes} = {sw.means.size} settings"


def joint_cost_text(sw: tuning.Sweep) -> str:
    """What a joint sweep computed, and that it is kept (Markdown)."""
    d = sw.axes[1]
    return (
        f"d takes {d.size} values from 1 to {d[-1]:g} (denser where d is small: {', '.join(f'{x:g}' for x in d[:6])}, …); "
        f"each is one LSA fit, computed once for this dataset, metric and held values and kept."
    )


def analysis_table(v: View) -> pd.DataFrame:
    """One row per text analysis: its best k1 and b, that mean, k1 x b tuned for it by cross-validation (the folds
    slider's folds), and the gain of that over the sidebar's setting; the sidebar's analysis and the best marked."""
    sw = v.land.sweep
    rows = tuning.analysis_rows(sw, v.current_vals, v.folds or tuning.FOLDS, tuning.SEED)
    best = v.best_setting["analysis"]
    here = v.current["analysis"]
    return pd.DataFrame(
        {
            "stemmer / stop words": [
                r.analysis + (" ★" if r.analysis == best else "") + (" (sidebar)" if r.analysis == here else "")
                for r in rows
            ],
            "best k1": [r.best["k1"] for r in rows],
            "best b": [r.best["b"] for r in rows],
            f"best {v.label}": [r.best_mean for r in rows],
            "cross-validated": [r.cross_validated for r in rows],
            "gain over the sidebar's": [signed(r.gain, 4) for r in rows],
        }
    )


def analysis_chart(v: View) -> None:
    """The analysis sweep: each analysis's best k1 x b and its cross-validated gain, and the move-to-best button."""
    st.markdown(held_text_of(v))
    st.dataframe(
        analysis_table(v).style.format(
            {f"best {v.label}": "{:.4f}", "cross-validated": "{:.4f}", "best k1": "{:g}", "best b": "{:g}"}
        ),
        width="stretch",
        hide_index=True,
    )
    sw = v.land.sweep
    st.caption(
        f"★ the best setting of the whole grid ({fmt_setting(v.best_setting)}). Per analysis: the best of its "
        f"{sw.shape[1]} k1 × {sw.shape[2]} b settings on every question, then k1 and b tuned by "
        f"{v.folds or tuning.FOLDS}-fold cross-validation (seed {tuning.SEED}): each question scored at the setting "
        f"chosen without it, and that mean's gain over the sidebar's setting ({v.current_vals.mean():.4f}). "
        f"{grid_text(sw)}, {v.n_q:,} questions; the verdict above compares the sidebar's setting with the best of all."
    )
    fine = bm25_sweep(v.ds, v.metric, held_fixed("k1,b", v.params))  # the finer grid, at the sidebar's analysis
    st.markdown(grids.compare(sw, fine, v.current_vals, v.folds or tuning.FOLDS, tuning.SEED).text)
    best_button(v)


def best_button(v: View) -> None:
    """The move-to-best button (not when every setting ties with the best, nor when the sidebar is there)."""
    land = v.land
    if offers_best(v.verdict.kind):
        verb = (
            "Move the sliders to" if v.verdict.kind == "tune" else "Try"
        )  # the verdict found no finding: the best is a hint
        st.button(
            f"{verb} the best setting ({fmt_setting(v.best_setting)})",
            key=KEY_BEST,
            icon=":material/star:",
            on_click=move_sliders,
            args=(v.best_setting, "Moved to the best setting"),
        )
    elif v.verdict.kind != "best":
        st.caption(
            f"No move to the best is offered: every setting scores the same here ({land.ties.size} of {v.n_settings} "
            "can't be told apart from the best)."
        )


def landscape_chart(v: View) -> None:
    """The heatmap (k1 x b, or a joint sweep) or the curve (one parameter), clickable, with how to read it and the
    move-to-best button (not when every setting ties with the best, nor when the sidebar is there); for the text
    analyses, their table (`analysis_chart`)."""
    if v.what == "analysis":
        analysis_chart(v)
        return
    sw, land = v.land.sweep, v.land
    names, means = sw.names, sw.means
    points = points_frame(land)
    current = sw.setting(v.verdict.near) if len(names) == 2 and v.what != "k1,b" else v.current
    marks = marks_frame(v.best_setting, means[land.best], current, v.current_vals.mean())
    key = chart_key(v.what, v.current)
    st.markdown(held_text_of(v))
    note = alpha_note(v)
    if note:
        st.caption(note)
    absolute = st.toggle(
        "Scale from 0 to 1",
        key=KEY_ABSOLUTE,
        persist_state="session",
        help="Off: the colours (heatmap) or the y axis (curves) stretch over the grid's own range, "
        "which makes tiny differences look large.",
    )
    domain = (0.0, 1.0) if absolute else None
    if v.what == "k1,b":
        chart = charts.tuning_heatmap(heatmap_cells(points, *sw.axes), marks, v.label, select=PICK, domain=domain)
    elif len(names) == 2:
        chart = joint_heatmap(
            points, marks, names[0], axis_title(v.what, v.params.members), v.label, select=PICK, domain=domain
        )
    else:
        chart = charts.tuning_curve(
            points,
            tied_runs(sw.axes[0], land.ties.tied),
            marks,
            names[0],
            axis_title(v.what, v.params.members),
            v.label,
            select=PICK,
            domain=domain,
        )
    st.altair_chart(chart, width="stretch", on_select=lambda: on_pick(key, names), selection_mode=PICK, key=key)
    scale = "" if absolute else scale_text(len(names) == 2, means, land.ties.size == v.n_settings)
    st.caption(
        f"{how_to_read(v.what, names)} Values snap to the sliders' steps ({steps_text(names)}).{scale} "
        f"System: {v.system_text}; {grid_text(sw)}, {v.n_q:,} questions."
    )
    if v.what in tuning.JOINT:
        st.caption(joint_cost_text(sw))
    for n in sw.notes:
        st.caption(f"Note: {escape_markdown(n)}")
    best_button(v)


# ------------------------------------------------------------------------------------------- significance


def significant_counts(land: Landscape) -> tuple[int, int]:
    """How many settings other than the best differ from it at p ≤ 0.05, before and after Holm's correction."""
    others = np.arange(land.p.size) != land.best
    return int((land.p[others] <= ALPHA_LEVEL).sum()), int((land.p_holm[others] <= ALPHA_LEVEL).sum())


def method_text(n_q: int, resamples: int = significance.RESAMPLES) -> str:
    """How the permutation test drew its sign vectors."""
    if significance.is_exact(n_q, resamples):
        return f"exact: all 2^{n_q} = {2**n_q:,} sign vectors"
    return f"{resamples:,} random sign vectors, seed {significance.SEED}"


def floor_text(family: int, resamples: int = significance.RESAMPLES) -> str:
    """The smallest p-value random sign vectors can give, and the floor it puts under Holm's adjusted p."""
    return (
        f" With {resamples:,} random sign vectors the smallest p-value is 2/{resamples + 1:,} ≈ "
        f"{2 / (resamples + 1):.4f}, so no Holm-adjusted p over {family} comparisons falls below "
        f"{min(1.0, family * 2 / (resamples + 1)):.3f}."
    )


def significance_section(v: View) -> None:
    """The current setting against the best: the difference, both p-values, how many settings differ, the method."""
    st.subheader("The current setting against the best")
    vs = v.verdict.versus
    diff = float(v.current_vals.mean() - v.land.sweep.means[v.land.best])
    s1, s2, s3 = st.columns(3)
    s1.metric(f"current {MINUS} best", signed(diff, 4), border=True, help=f"Mean difference in {v.label}, in-sample.")
    s2.metric(
        "p, alone",
        p_text(vs.p),
        border=True,
        help="Two-sided paired randomisation test of the mean difference, this comparison alone (uncorrected).",
    )
    s3.metric(
        "p, Holm",
        p_text(vs.p_holm),
        border=True,
        help=f"Holm's step-down correction over the whole family of comparisons with the best ({vs.family}).",
    )
    raw_sig, holm_sig = significant_counts(v.land)
    st.markdown(
        f"Compared with the best at once, some settings would look significant by chance alone; Holm's correction "
        f"holds the family-wise error at 0.05 over the family: {vs.family_text}. Of the {v.n_settings - 1} other grid "
        f"settings, {raw_sig} differ from the best at p ≤ 0.05 before the correction and {holm_sig} after it. "
        "The verdict at the top reads the corrected p."
    )
    st.caption(
        f"Paired randomisation test: each question's difference keeps or flips its sign with equal chance under the "
        f"null hypothesis; two-sided p ({method_text(v.n_q, v.land.resamples)}), as scipy.stats.permutation_test computes it. "
        "Holm (1979): the sorted p-values are multiplied by m, m − 1, …, 1, kept monotone and capped at 1. "
        "The tie region on the chart compares each setting alone (no correction), so it is stricter: a setting outside "
        "it may still not differ from the best once the whole family is accounted for."
        + (
            ""
            if significance.is_exact(v.n_q, v.land.resamples)
            else floor_text(vs.family, v.land.resamples)
            + f" ({v.land.resamples:,} = enough sign vectors for that floor to be at "
            f"most half of {ALPHA_LEVEL:g}, so the corrected test can reject.)"
        )
    )


# ------------------------------------------------------------------------------------------- held-out validation


def folds_table(cv: tuning.CrossValidation, sw: tuning.Sweep) -> pd.DataFrame:
    """One row per fold: its size, the setting chosen on the other folds, its mean there and on the fold."""
    return pd.DataFrame(
        {
            "fold": np.arange(1, cv.folds + 1),
            "questions": cv.fold_sizes,
            "chosen on the other folds": [fmt_setting(sw.setting(c)) for c in cv.chosen],
            "train mean": cv.train_means,
            "test mean (held out)": cv.test_means,
        }
    ).set_index("fold")


def validation_text(in_sample: float, cross_validated: float, n_settings: int, n_q: int, current_mean: float) -> str:
    """What cross-validation says: the over-fitting in the tuned score, and what tuning gains on unseen questions."""
    optimism = in_sample - cross_validated
    if optimism > 1e-12:
        text = (
            f"Choosing the best of {n_settings} settings on all {n_q} questions reports {in_sample:.4f}; "
            f"on questions the choice never saw, the same procedure scores {cross_validated:.4f}. "
            f"The {optimism:.4f} between them is over-fitting: the tuning fitted these particular questions, not the retriever."
        )
    else:
        text = (
            f"Here the cross-validated score ({cross_validated:.4f}) is no lower than the in-sample one "
            f"({in_sample:.4f}): every fold chose a setting that did as well on its held-out questions."
        )
    gain = cross_validated - current_mean
    return text + (
        f" The sidebar's setting scores {current_mean:.4f}: "
        + (
            f"tuning gains {gain:.4f} on unseen questions."
            if gain > GAIN_EPS
            else "tuning shows no gain that carries over to unseen questions."
        )
    )


def validation_section(v: View) -> None:
    """k-fold cross-validation of the tuning: the folds slider, in-sample beside held-out, the folds' table."""
    st.subheader("Held-out validation: how much of the tuned score is over-fitting?")
    if v.cv is None:
        st.info("Cross-validation needs at least 2 questions.", icon=":material/info:")
        return
    sw, cv, top = v.land.sweep, v.cv, max_folds(v.n_q)
    left, _ = st.columns([1, 2])
    if top > 2:
        left.slider(
            "folds",
            2,
            top,
            None if KEY_FOLDS in st.session_state else v.folds,
            key=KEY_FOLDS,
            persist_state="session",
            help=f"The questions are shuffled (numpy default_rng, seed {tuning.SEED}) and cut into this many folds.",
        )
    else:
        left.caption("2 folds: the most these questions allow.")
    m1, m2, m3 = st.columns(3)
    m1.metric(
        "tuned, in-sample",
        f"{cv.in_sample:.6f}",
        border=True,
        help=f"The best setting's mean {v.label} over the very questions it was chosen on.",
    )
    m2.metric(
        "cross-validated",
        f"{cv.cross_validated:.6f}",
        border=True,
        help=f"Tuned, then measured on held-out questions: each question's {v.label} at the setting chosen on the "
        "other folds, without it.",
    )
    m3.metric(
        "optimism", signed(cv.optimism, 4), border=True, help="In-sample minus cross-validated: the over-fitting."
    )
    st.markdown(validation_text(cv.in_sample, cv.cross_validated, v.n_settings, v.n_q, float(v.current_vals.mean())))
    st.dataframe(
        folds_table(cv, sw).style.format({"train mean": "{:.4f}", "test mean (held out)": "{:.4f}"}), width="stretch"
    )
    st.caption(
        f"{v.folds}-fold cross-validation, seed {tuning.SEED}: for each fold the best setting on the other folds is "
        "measured on the held-out fold; the cross-validated score is the mean over all questions, each measured once."
    )


# ------------------------------------------------------------------------------------------- the oracle


def oracle_tables(oracle: tuning.Oracle) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each system's mean, its gap to the oracle and the questions it is best on (alone, or tied), and the same
    counts as rows for the chart."""
    alone = {s: sum(1 for w in oracle.winners if w == (s,)) for s in oracle.systems}
    shared = {s: sum(1 for w in oracle.winners if s in w and len(w) > 1) for s in oracle.systems}
    table = pd.DataFrame(
        {
            "mean": [oracle.system_means[s] for s in oracle.systems],
            "below the oracle": [oracle.mean - oracle.system_means[s] for s in oracle.systems],
            "best alone on": [alone[s] for s in oracle.systems],
            "best, tied, on": [shared[s] for s in oracle.systems],
        },
        index=pd.Index(list(oracle.systems), name="system"),
    )
    wins = pd.DataFrame(
        [
            {"system": s, "how": h, "questions": c, "order": i}
            for s in oracle.systems
            for i, (h, c) in enumerate((("alone", alone[s]), ("tied with another system", shared[s])))
        ]
    )
    return table, wins


def oracle_section(v: View) -> None:
    """The per-question oracle over every system: its mean, the best single system, and who wins where."""
    st.subheader("Per-question oracle: the upper bound of a router")
    oracle = tuning.oracle_of(v.ev, v.metric)
    best_system = max(oracle.system_means, key=oracle.system_means.get)
    o1, o2, o3 = st.columns(3)
    o1.metric(
        "oracle",
        f"{oracle.mean:.4f}",
        border=True,
        help=f"The best system's {v.label} on each question, averaged: what a perfect router between the systems would reach.",
    )
    o2.metric(
        "best single system",
        f"{oracle.system_means[best_system]:.4f}",
        border=True,
        help=f"The system with the highest mean {v.label}, named below.",
    )
    o3.metric(
        "headroom",
        signed(oracle.mean - oracle.system_means[best_system], 4),
        border=True,
        help="Oracle minus the best single system: what a router could add at most.",
    )
    st.caption(
        f"Mean {v.label}: the oracle {oracle.mean:.4f}; the best single system, {escape_markdown(best_system)}, "
        f"{oracle.system_means[best_system]:.4f}."
    )
    table, wins = oracle_tables(oracle)
    with st.container(
        horizontal=True, wrap=True, gap="medium"
    ):  # side by side at 1440 px; at 1024 the table whole, the chart below
        st.dataframe(table.style.format({"mean": "{:.4f}", "below the oracle": "{:.4f}"}), width=ORACLE_WIDTH)
        with st.container(width=ORACLE_WIDTH):
            st.altair_chart(charts.oracle_wins(wins), width="stretch")
    all_tied = sum(1 for w in oracle.winners if len(w) == len(oracle.systems))
    st.caption(
        f"For each of the {v.n_q} questions, the system (uploaded runs included) with the highest {v.label}; {all_tied} questions "
        "are ties between every system. The oracle chooses with hindsight, so its mean is an upper bound, not a result: "
        "a router that predicts the best system from the question alone reaches at most this."
    )


# ------------------------------------------------------------------------------------------- fusion explained


def list_rank_text(r: int | None) -> str:
    """A rank, or — for a document not in the list."""
    return "—" if not r else str(r)


def grade_text(r: dict) -> str:
    """A document's grade as the fusion's table and tooltip show it: the judged grade ("0": judged not relevant), or
    "unjudged" when no judgement of the question names the document (which is not a judgement that it is not)."""
    return str(r["grade"]) if r["judged"] else UNJUDGED


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
    return {
        "out": "",
        "one": f"{held} only",
        "every": "both" if two else f"all {n_members}",
        "some": held,
        "none": "neither" if two else "none",
    }[holding(r, n_members)]


def contribution_note(r: dict, depth: int, n_members: int) -> str:
    """Why the document is in the fused list (or that it is a relevant one left out): the chart's text. Only a
    relevant document is rescued: one member alone brought it in (`rescued_by`)."""
    held, two = ", ".join(r["in_top"]), n_members == 2
    rescued = r.get("rescued_by")
    if holding(r, n_members) == "one" and rescued in r["in_top"]:
        return f"relevant, rescued by {rescued}"
    return {
        "out": "relevant, left out of the fused list",
        "one": f"only in {held}'s top {depth}",
        "every": f"in both top {depth}s" if two else f"in all {n_members} top {depth}s",
        "some": f"in the top {depth}s of {held}",
        "none": f"in {'neither' if two else 'no'} top {depth}: the sum put it here",
    }[holding(r, n_members)]


def contribution_parts(rows: list[dict], depth: int, members: tuple[str, ...]) -> pd.DataFrame:
    """One chart row per document and member: the member's contribution and rank, with what the tooltip shows."""
    return pd.DataFrame(
        [
            {
                "row": row_label(r),
                "retriever": m,
                "contribution": r["contributions"][m],
                "total": r["total"],
                "note": contribution_note(r, depth, len(members)),
                "doc_id": r["doc_id"],
                "grade": grade_text(r),
                "fused_rank": list_rank_text(r["fused_rank"]),
                "rank": list_rank_text(r["ranks"][m]),
            }
            for r in rows
            for m in members
        ],
        columns=["row", "retriever", "contribution", "total", "note", "doc_id", "grade", "fused_rank", "rank"],
    )


def top_column(depth: int) -> str:
    """The table's column naming the fused systems whose own top list holds the document."""
    return f"in the top {depth} of"


def contribution_table(rows: list[dict], members: tuple[str, ...], depth: int) -> pd.DataFrame:
    """One row per document: its fused rank, its rank in each member, each member's contribution, the total, and
    which members' own top `depth` hold it."""
    return pd.DataFrame(
        [
            {
                "document": r["doc_id"],
                "grade": grade_text(r),
                "fused rank": list_rank_text(r["fused_rank"]),
                **{f"{m} rank": list_rank_text(r["ranks"][m]) for m in members},
                **{f"from {m}": r["contributions"][m] for m in members},
                "total": r["total"],
                top_column(depth): holders_text(r, len(members)),
            }
            for r in rows
        ]
    )


def held_text(p: Params) -> str:
    """The parameters the fused registered retrievers read, at the sidebar's values: 'k1 = 1.2, b = 0.75, d = 6'."""
    parts = ([f"k1 = {p.k1:g}", f"b = {p.b:g}"] if "BM25" in p.members else []) + (
        [f"d = {p.dims}"] if "LSA" in p.members else []
    )
    return ", ".join(parts)


def weighted_list_text(depth: int, n_members: int) -> str:
    """What the weighted fusion's list is: every document competes, so one in no member's top list can enter it (the
    rows' "in neither top 10: the sum put it here")."""
    return (
        f"every document competes and the fused list keeps the top {depth}, so a document in "
        f"{'neither' if n_members == 2 else 'no'} member's own top {depth} can enter it on the sum"
    )


def fusion_formula(kind: str, p: Params, depth: int) -> tuple[str, str]:
    """The fusion's formula at the sidebar's values, as a caption (Markdown: the member names escaped) and as the
    chart's axis title (plain text)."""
    members, names = p.members, members_text(p.members)
    held = held_text(p)
    at = f" (the members at {held})" if held else ""
    held = f", {held}" if held else ""
    if kind == "weighted":
        if len(members) == 2 and p.weights is None:
            a, b = (escape_markdown(m) for m in members)
            return (
                f"Weighted fusion of {names} at alpha = {p.alpha:g}: each document scores alpha × min-max({a}) + "
                f"(1 − alpha) × min-max({b}), each min-max normalised over every document's score for this question; "
                f"{weighted_list_text(depth, len(members))}{at}.",
                f"alpha × minmax({members[0]}) + (1 − alpha) × minmax({members[1]})",
            )
        weights = p.fusion_weights()
        terms = [f"{w:g} × min-max({escape_markdown(m)})" for m, w in zip(members, weights)]
        return (
            f"Weighted fusion of {names} with the sidebar's weights: each document scores {' + '.join(terms)}, each "
            f"min-max normalised over every document's score for this question; "
            f"{weighted_list_text(depth, len(members))}{at}.",
            " + ".join(f"{w:g} × minmax({m})" for m, w in zip(members, weights)),
        )
    return (
        f"Reciprocal Rank Fusion of {names} at k = {p.rrf_k:g}: a document gets 1/(k + rank) from each list whose "
        f"top {depth} holds it{f' ({held[2:]})' if held else ''}.",
        " + ".join(f"1/(k + {m} rank)" for m in members),
    )


def chart_rows(rows: list[dict], limit: int = CHART_ROWS) -> tuple[list[dict], int]:
    """The rows the chart draws (the first `limit`, in the table's order: the fused list, then the relevant
    documents left out of it) and how many more the table holds."""
    return rows[:limit], max(0, len(rows) - limit)


def more_text(shown: int, more: int) -> str:
    """The line under a bounded chart."""
    return f"The chart shows the first {shown} documents; {more} more are in the table below." if more else ""


def fusion_section(v: View) -> None:
    """One question's fused list: who put each document there, as a chart and a table."""
    st.subheader("Fusion explained: who put each document there?")
    ds, p = v.ds, v.params
    members, depth = p.members, p.fusion_depth
    f1, f2 = st.columns([1, 2])
    kind = f1.segmented_control(
        "fusion", ["weighted", "RRF"], default="weighted", key=KEY_KIND, required=True, persist_state="session"
    )
    qids = [ds.query_ids[q] for q in ds.evaluated]
    texts = {ds.query_ids[q]: " ".join(ds.query_texts[q].split()) for q in ds.evaluated}
    qid = f2.selectbox(
        "question", qids, key=KEY_QUESTION, persist_state="session", format_func=lambda q: f"{q} — {texts[q][:110]}"
    )
    rows = explain(ds, qid, "weighted" if kind == "weighted" else "rrf", p, cache.current_sources(ds))
    st.markdown(f"**{escape_markdown(qid)}**: {escape_markdown(clip(texts[qid]))}")
    caption, x_title = fusion_formula(kind, p, depth)
    st.caption(caption)
    if not rows:
        st.info(
            f"No fused system ({members_text(members)}) returns a document for this question.", icon=":material/info:"
        )
        return
    drawn, more = chart_rows(rows)
    st.altair_chart(
        charts.fusion_contributions(contribution_parts(drawn, depth, members), x_title, members, cache.systems(ds)),
        width="stretch",
    )
    if more:
        st.caption(more_text(len(drawn), more))
    contributions = {f"from {m}": "{:.4f}" for m in members}
    st.dataframe(
        contribution_table(rows, members, depth).style.format({**contributions, "total": "{:.4f}"}),
        width="stretch",
        hide_index=True,
        column_config={
            "grade": st.column_config.TextColumn("grade", help=GRADE_HELP),
            **{
                c: st.column_config.TextColumn(c, help="— = not in the list")
                for c in ("fused rank", *(f"{m} rank" for m in members))
            },
        },
    )
    st.caption(
        f"Rows: the fused top {depth} and every relevant document (✓ and its grade). {GRADE_HELP} "
        f"'{top_column(depth)}' names, for "
        f"every document of the fused list, relevant or not, the fused systems ({members_text(members)}) whose own top "
        f"{depth} holds it; one alone ('… only') is the one that brought it in, and a relevant document it brought in "
        "is one it rescued"
        + (
            ": RRF fuses only those lists, so without that system the document would not be in the fused list."
            if kind == "RRF"
            else ". The weighted fusion scores every document, so one in no member's top list can still enter the fused "
            "list on the sum of middling scores."
        )
    )
