"""The verdict on the current setting: one rule for the Tuning page and `python -m retrieval tune`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ...evaluation import significance, stats
from .crossval import CrossValidation
from .sweep import _DECIMALS, SEED, Sweep
from .ties import TieRegion
from .wording import Piece, about, expectation_text, names_text, p_is, plain, setting_text, stress

# ------------------------------------------------------------------------------------------- the verdict
#
# One rule, for the Tuning page (ui/tuning.py) and `python -m retrieval tune` alike: the current setting against the
# best of the grid, read from the paired permutation test with Holm's correction over the whole family of
# comparisons with the best (so picking the best of many settings is accounted for) and from cross-validation (so a
# gain is one that carries over to questions the choice never saw). The bootstrap's tie region (each setting alone,
# uncorrected) only decides "flat" (every setting tied with the best) and is quoted, never a verdict on its own.

ALPHA_LEVEL = 0.05  # the family-wise level of Holm's correction
GAIN_EPS = 1e-12  # a cross-validated gain at or below this is no gain


class Versus(NamedTuple):
    """The current setting against the best: its p-values and the family Holm's correction ran over."""

    p: float
    p_holm: float
    family: int
    family_text: str


def place(sweep: Sweep, current: dict) -> tuple[int, bool]:
    """The grid setting nearest to `current` (the swept parameters' values; missing ones: the sweep's base) and
    whether `current` is that grid setting exactly."""
    near = sweep.nearest(**current)
    at = sweep.setting(near)
    return near, all(
        at[n] == current.get(n, "/".join(sweep.base.analysis))
        if n == "analysis"
        else abs(float(at[n]) - float(current.get(n, getattr(sweep.base, n)))) < 1e-9
        for n in sweep.names
    )


def versus_current(
    values: np.ndarray,
    best: int,
    p: np.ndarray,
    p_holm: np.ndarray,
    current_values: np.ndarray,
    on_grid: bool,
    near: int,
    resamples: int = significance.RESAMPLES,
    seed: int = SEED,
) -> Versus:
    """The current setting against the best. On the grid, the sweep's own p-values of it (`p`, `p_holm`:
    `versus_best`'s); between grid points, its permutation p against the best (`resamples` sign vectors, `seed`),
    Holm-corrected together with the other settings' (a family one larger)."""
    n = int(np.asarray(p).size)
    if on_grid:
        return Versus(
            float(p[near]),
            float(p_holm[near]),
            n - 1,
            f"the {n - 1} comparisons of every other grid setting with the best",
        )
    v = np.asarray(values, dtype=np.float64)
    others = np.arange(n) != best
    alone = float(
        significance.permutation_pvalues(np.asarray(current_values, dtype=np.float64) - v[best], resamples, seed)[0]
    )
    adjusted = float(significance.holm(np.append(np.asarray(p)[others], alone))[-1])
    return Versus(
        alone,
        adjusted,
        n,
        f"the {n - 1} comparisons of every other grid setting with the best, plus the current "
        "setting, which lies between grid points",
    )


def tied_with_best(
    values: np.ndarray, best: int, ties: TieRegion, current_values: np.ndarray, on_grid: bool, near: int
) -> bool:
    """Whether the current setting can't be told apart from the best by the paired bootstrap, alone (uncorrected):
    on the grid, the tie region's answer; between grid points, its own interval (the tie region's resamples, seed
    and confidence)."""
    if on_grid:
        return bool(ties.tied[near])
    cur, top = np.asarray(current_values, dtype=np.float64), np.asarray(values, dtype=np.float64)[best]
    return bool(np.array_equal(cur, top)) or bool(
        stats.paired_bootstrap(cur, top, ties.resamples, ties.seed, ties.confidence).holds_zero
    )


class Signals(NamedTuple):
    """What the verdict weighs, each number computed from the sweep and the current setting."""

    n_settings: int
    n_tied: int  # settings whose bootstrap interval against the best holds zero, each alone (uncorrected), the best included
    all_same: bool  # every setting has the same mean
    at_best: bool  # the current setting is the best grid setting, scores exactly what it scores on every question, or
    # (between grid points) scores a higher mean than every grid setting
    current_tied: bool  # the current setting is in the (uncorrected) tie region
    diff: float  # current − best, in-sample
    p: float  # permutation p, current against the best, alone
    p_holm: float  # the same, Holm-adjusted over the family
    family: int
    gain: float | None  # cross-validated mean − the current setting's mean (None: too few questions to cross-validate)


def verdict_kind(s: Signals) -> str:
    """The verdict's rule, the first that applies:

    - ``same``: every setting has the same mean: nothing to tune;
    - ``flat``: every setting can't be told apart from the best (bootstrap, each alone): the best is a draw among equals;
    - ``best``: the current setting is the best (or scores exactly what it scores, or above it);
    - ``tune``: the best beats the current setting after Holm's correction, and tuning gains on held-out questions;
    - ``unstable``: the best beats it after Holm, but the gain does not carry over to held-out questions;
    - ``hint``: tuning gains on held-out questions, but no setting beats the current one after Holm;
    - ``keep``: neither: no gain on held-out questions, no setting beating the current one after Holm.
    """
    if s.all_same:
        return "same"
    if s.n_tied == s.n_settings:
        return "flat"
    if s.at_best:
        return "best"
    corrected = s.p_holm <= ALPHA_LEVEL
    gains = s.gain is not None and s.gain > GAIN_EPS
    if corrected:
        return "tune" if gains else "unstable"
    return "hint" if gains else "keep"


def offers_best(kind: str) -> bool:
    """Whether moving to the best is worth offering: not when everything ties with it, nor when the current setting
    is there (or above it)."""
    return kind not in ("same", "flat", "best")


def verdict_words(s: Signals, what: str, best: str, label: str) -> tuple[Piece, ...]:
    """The one plain verdict, in pieces (its headline stressed, `wording.Piece`): what `verdict_kind` decided, with the
    numbers it decided on; `what` names the swept parameters (`names_text`), `best` the best setting
    (`setting_text`), `label` the metric. Every sentence holds for the numbers: a gain is claimed only when
    cross-validation shows one, a setting beating another only after Holm's correction."""
    kind = verdict_kind(s)
    holm = f"Holm's correction for {s.family} comparisons (adjusted {p_is(s.p_holm)})"
    cv = (
        "cross-validation needs at least 2 questions"
        if s.gain is None
        else f"cross-validated, {about(s.gain)} {label} on questions the choice never saw"
    )
    alone = (
        f" Alone, the current setting looks worse than the best ({p_is(s.p)}"
        + ("" if s.current_tied else ", outside the tie region on the chart")
        + f"), but picking the best of {s.n_settings} settings makes gaps like this one expected by chance."
        if s.p <= ALPHA_LEVEL and s.diff < 0
        else ""
    )
    if kind == "same":
        return (
            stress("Every setting scores the same here"),
            Piece(f": all {s.n_settings} have the same mean {label}, so there is nothing to tune."),
        )
    if kind == "flat":
        return (
            stress("Every setting scores the same here, within noise"),
            Piece(
                f": all {s.n_settings} settings can't be told apart from the best ({best}), so the best is one draw "
                "among equals, not a value to move to."
            ),
        )
    if kind == "best":
        head = (
            (
                stress("The current setting scores above every setting of the grid"),
                Piece(f": {about(s.diff)} {label} over the best of the {s.n_settings} ({best})."),
            )
            if s.diff > 0
            else (stress(f"The current setting is the best of the {s.n_settings} settings."),)
        )
        if s.gain is None:
            return head
        if s.gain < -GAIN_EPS:
            return head + (
                Piece(
                    f" Expect less on new questions: tuning this way scores {about(s.gain)} {label} against it on "
                    "questions the choice never saw (cross-validated)."
                ),
            )
        return head + (
            Piece(
                f" On questions the choice never saw, tuning this way scores {about(s.gain)} {label} against it "
                "(cross-validated): no loss from over-fitting shows."
            ),
        )
    if kind == "tune":
        return (
            stress(f"Tuning {what} pays"),
            Piece(
                f": about {about(s.gain)} {label} on questions the choice never saw (cross-validated), and the best "
                f"({best}) beats the current setting even after {holm}. {expectation_text(s.gain, -s.diff)}"
            ),
        )
    if kind == "unstable":
        beats = stress(f"The best ({best}) beats the current setting on these questions")
        if s.gain is None:
            return (
                beats,
                Piece(f", even after {holm}, "),
                stress("but whether the gain carries over to new ones is unknown"),
                Piece(f" ({cv}). Treat the best as a hint, not a finding."),
            )
        return (
            beats,
            Piece(f", even after {holm}, "),
            stress("but the gain does not carry over to new ones"),
            Piece(f" ({cv}): the folds choose different settings. Treat the best as a hint, not a finding."),
        )
    if kind == "hint":
        return (
            stress(f"Tuning {what} may gain about {about(s.gain)} {label} on unseen questions"),
            Piece(" (cross-validated), "),
            stress(f"but no single setting beats the current one once {s.family} comparisons are corrected for"),
            Piece(f" (Holm-adjusted {p_is(s.p_holm)}): treat the best ({best}) as a hint, not a finding.{alone}"),
        )
    shown = (
        "there are too few questions to cross-validate (at least 2 are needed)"
        if s.gain is None
        else f"tuning shows no gain on unseen questions ({cv})"
    )
    return (
        stress("Keep the current setting"),
        Piece(
            f": no setting beats it once {s.family} comparisons are corrected for (Holm-adjusted {p_is(s.p_holm)}), "
            f"and {shown}.{alone}"
        ),
    )


def verdict_text(s: Signals, what: str, best: str, label: str) -> str:
    """The verdict as one plain text (`verdict_words` joined): what the command line prints."""
    return plain(verdict_words(s, what, best, label))


@dataclass(frozen=True, eq=False)
class Verdict:
    """The verdict on the current setting: its kind (`verdict_kind`), its words (`verdict_words`: plain text in
    pieces, the headline stressed), what it weighed, and where the current setting lies on the grid."""

    kind: str
    words: tuple[Piece, ...]  # the page renders the stressed pieces in bold; the terminal prints `plain`
    signals: Signals
    versus: Versus
    near: int  # the grid setting nearest to the current one
    on_grid: bool  # the current setting is that grid setting exactly

    @property
    def plain(self) -> str:
        """The verdict as one plain text: what the command line prints and the JSON's "text"."""
        return plain(self.words)

    @property
    def offers_best(self) -> bool:
        """Whether moving to the best is worth offering (`offers_best`)."""
        return offers_best(self.kind)


def verdict(
    sweep: Sweep,
    best: int,
    ties: TieRegion,
    p: np.ndarray,
    p_holm: np.ndarray,
    current: dict,
    current_values: np.ndarray,
    cv: CrossValidation | None,
    label: str | None = None,
    resamples: int = significance.RESAMPLES,
    seed: int = SEED,
    versus: Versus | None = None,
    current_tied: bool | None = None,
) -> Verdict:
    """The verdict on the current setting from a sweep's numbers: its best, tie region (`tie_region`), permutation
    p-values against the best with Holm's (`versus_best`, drawn with `resamples` sign vectors and `seed`), the
    current setting (`current`: the swept parameters' values) and its per-question values, and the cross-validation
    of the choice (`cv`, None when there are too few questions). `label` names the metric in the text (default: the
    sweep's metric name). `versus` and `current_tied`, when the caller kept them (`versus_current`,
    `tied_with_best`), are not computed again. The Tuning page and `python -m retrieval tune` both say this."""
    v = np.asarray(current_values, dtype=np.float64)
    near, on_grid = place(sweep, current)
    if versus is None:
        versus = versus_current(sweep.values, best, p, p_holm, v, on_grid, near, resamples, seed)
    if current_tied is None:
        current_tied = tied_with_best(sweep.values, best, ties, v, on_grid, near)
    means = sweep.means
    above = bool(
        np.round(v.mean(), _DECIMALS) > np.round(means[best], _DECIMALS)
    )  # between grid points, above the grid
    at_best = (on_grid and near == best) or bool(np.array_equal(v, sweep.values[best])) or above
    s = Signals(
        int(means.size),
        ties.size,
        bool(np.all(np.round(means, _DECIMALS) == np.round(means[0], _DECIMALS))),
        at_best,
        bool(current_tied),
        float(v.mean() - means[best]),
        float(versus.p),
        float(versus.p_holm),
        int(versus.family),
        None if cv is None else float(cv.cross_validated - v.mean()),
    )
    words = verdict_words(s, names_text(sweep.names), setting_text(sweep.setting(best)), label or sweep.metric)
    return Verdict(verdict_kind(s), words, s, versus, near, on_grid)
