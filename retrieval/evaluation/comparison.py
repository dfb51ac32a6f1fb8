"""The comparison table the IR field publishes (as ranx's ``compare``): every system's mean on each metric, the best
of each column in bold, and on each value a superscript of the letters of the systems it beats significantly.

Each system gets a short letter in table order (a, b, c, ...; ``q`` is left out, having no superscript form in
Unicode; beyond 25 systems every label is two letters, aa, ab, ...). A system *beats* another on a metric when
its mean is higher **and** the Holm-corrected p-value of the pair is below ``alpha`` (strictly).

The tests, each two-sided and paired over the questions that have a relevant document (the same questions for
every system, so each pair is tested on its per-question differences d = a - b):

``t-test``
    Student's paired t-test, the semantics of ``scipy.stats.ttest_rel``: t = mean(d) / (sd(d, ddof=1) / sqrt(n))
    on n - 1 degrees of freedom, p = 2 P(T >= |t|). It needs two questions at least. When every difference is
    zero (the two systems score the same on every question), scipy says NaN; here p = 1: nothing tells them apart.
``randomization``
    Fisher's randomization test (the paired sign-flip permutation test) of `significance`: exact over all 2^n
    sign vectors up to ``significance.EXACT_LIMIT`` of them, otherwise ``resamples`` (10,000) seeded draws.
``bootstrap``
    The paired bootstrap test, by the shifted-null method: the per-question differences are resampled with
    replacement (the resamples of `stats.indices`: the same draws as every bootstrap interval here, seed 0,
    5,000 resamples), and each resample's mean is centred on zero by subtracting the observed mean. The p-value
    is the share of centred resampled means at least as far from zero as the observed mean, counting the
    observed one as a resample too (as the randomization test's Monte Carlo p-value does, so that it is never 0):
    ``p = (1 + #{i : |m_i - m| >= |m|}) / (1 + resamples)``, with ``m`` the observed mean and ``m_i`` the i-th
    resample's; "as far" allows 100 machine epsilons (relative to |m|) so that rounding never decides.

Holm's step-down correction (`significance.holm`) is applied over all the pairs of systems, separately for each
metric: with k systems each metric is one family of k (k - 1) / 2 comparisons.

Renderers: `ComparisonTable.to_text` (aligned, for a terminal), `to_markdown`, `to_latex` (booktabs, the means
right-aligned), `to_csv` and `to_json` (strict JSON). Every user string (system names, metric labels) is escaped for the format it reaches.
"""

from __future__ import annotations

import csv
import io
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations, product

import numpy as np
from scipy import stats as scipy_stats

from ..core.errors import InputError
from ..core.markdown import escape_markdown
from ..core.words import escape_control, plural
from . import metrics, significance, stats
from .experiment import Evaluation, json_ready

TESTS = ("randomization", "t-test", "bootstrap")
TEST_NAMES = {  # how the table's statement and the app name each test
    "randomization": "Fisher's randomization test",
    "t-test": "paired t-test",
    "bootstrap": "paired bootstrap test",
}
DEFAULT_TEST = "randomization"
ALPHA = 0.05
DIGITS = 4  # decimals of the means
TEXT_WIDTH = 100  # the plain-text statement's lines wrap here

ALPHABET = "abcdefghijklmnoprstuvwxyz"  # the systems' letters: every Latin letter that has a superscript form
# their superscripts in Markdown; a comma (between two-letter labels, ᵃᵃ·ᵃᵇ) becomes a middle dot
SUPERSCRIPTS = dict(zip(ALPHABET + ",", "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻ·"))
_RTOL = 100 * np.finfo(np.float64).eps  # "at least as extreme" allows this much rounding (as significance.py)

# ------------------------------------------------------------------------------------------- escaping user strings

_LATEX = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "$": r"\$",
    "&": r"\&",
    "#": r"\#",
    "^": r"\^{}",
    "_": r"\_",
    "%": r"\%",
    "~": r"\textasciitilde{}",
    "<": "$<$",
    ">": "$>$",
    "|": "$|$",
}


def _one_line(text: str) -> str:
    """Whitespace runs (newlines included) as single spaces, other control characters as escapes."""
    return escape_control(" ".join(str(text).split()))


def escape_latex(text: str) -> str:
    """`text` as LaTeX that typesets it literally: one line, and each of ``\\ { } $ & # ^ _ % ~ < > |`` written as
    the command or escape that prints it. Characters beyond ASCII are kept as they are (pdflatex reads UTF-8 and
    sets the Latin letters; other scripts need XeLaTeX or LuaLaTeX).

    Examples
    --------
    >>> print(escape_latex("a_b & 50% {x}$"))
    a\\_b \\& 50\\% \\{x\\}\\$
    """
    return "".join(_LATEX.get(c, c) for c in _one_line(text))


# ------------------------------------------------------------------------------------------- the p-values


def _rows(diffs: np.ndarray, test: str) -> np.ndarray:
    """Differences as rows x questions of finite numbers, at least one question."""
    d = np.atleast_2d(np.asarray(diffs, dtype=np.float64))
    if d.ndim != 2:
        raise InputError(f"{test}: expected rows x questions, got shape {d.shape}")
    if d.shape[1] < 1:
        raise InputError(f"{test}: no question to compare")
    if not np.isfinite(d).all():
        raise InputError(f"{test}: the differences must be finite numbers")
    return d


def t_test_pvalues(diffs: np.ndarray) -> np.ndarray:
    """Two-sided paired t-test p-values of the mean of each row of `diffs` (rows x questions; 1-D is one row).

    t = mean(d) / (sd(d, ddof=1) / sqrt(n)) on n - 1 degrees of freedom, p = 2 P(T >= |t|), as
    ``scipy.stats.ttest_rel`` computes it; a row of zeros only (no difference at all) has p = 1 where scipy
    has NaN, and a constant non-zero row has p = 0 (t is infinite), as in scipy.

    Examples
    --------
    >>> round(float(t_test_pvalues([0.1, 0.2, 0.3, 0.0])[0]), 4)
    0.1027
    """
    d = _rows(diffs, "t-test")
    n = d.shape[1]
    if n < 2:
        raise InputError(f"t-test: needs at least 2 questions with a relevant document, got {n}")
    mean = d.mean(axis=1)
    sd = d.std(axis=1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / (sd / np.sqrt(n))
    p = 2 * scipy_stats.t.sf(np.abs(t), n - 1)
    p[(sd == 0) & (mean == 0)] = 1.0
    return np.minimum(p, 1.0)


def bootstrap_pvalues(diffs: np.ndarray, resamples: int = stats.RESAMPLES, seed: int = stats.SEED) -> np.ndarray:
    """Two-sided paired bootstrap p-values of the mean of each row of `diffs` (rows x questions; 1-D is one row),
    by the shifted-null method.

    Each row's questions are resampled with replacement `resamples` times (the draws of ``stats.indices(n,
    resamples, seed)``, shared by all rows; every row's resampled means at once from ``stats.means_by_counts``, one
    matrix product of the draws' counts per question); a resample's mean ``m_i``, centred on zero by the observed mean
    ``m``, is as extreme as the observation when ``|m_i - m| >= |m|`` (allowing 100 machine epsilons of |m|).
    ``p = (1 + number of extreme resamples) / (1 + resamples)``: the observation counts as one of the resamples,
    so p is never 0, and a row of zeros only has p = 1.

    Examples
    --------
    >>> float(bootstrap_pvalues([0.0, 0.0, 0.0])[0])
    1.0
    >>> float(bootstrap_pvalues([0.2, 0.2, 0.2], resamples=999)[0])  # every resample has the observed mean
    0.001
    """
    d = _rows(diffs, "bootstrap")
    if resamples < 1:
        raise InputError(f"resamples must be >= 1, got {resamples}")
    observed = d.mean(axis=1)
    centred = np.abs(stats.means_by_counts(d, resamples, seed) - observed[:, None])
    extreme = np.count_nonzero(centred >= (np.abs(observed) * (1 - _RTOL))[:, None], axis=1)
    return (1 + extreme) / (1 + resamples)


def check_options(test: str, alpha: float = ALPHA) -> None:
    """Reject an unknown test or an alpha outside (0, 1), naming the parameter."""
    if test not in TESTS:
        raise InputError(f"test: unknown test {test!r}; choose {', '.join(TESTS[:-1])} or {TESTS[-1]}")
    if not 0 < alpha < 1:  # NaN fails too
        raise InputError(f"alpha must be in (0, 1), got {alpha}")


def _settings(test: str, resamples: int | None, seed: int | None) -> tuple[int | None, int | None]:
    """The resamples and seed a test uses (each test's own defaults; none for the t-test)."""
    if test == "t-test":
        return None, None
    module = significance if test == "randomization" else stats
    return (module.RESAMPLES if resamples is None else int(resamples)), (module.SEED if seed is None else int(seed))


def pair_pvalues(
    diffs: np.ndarray, test: str = DEFAULT_TEST, resamples: int | None = None, seed: int | None = None
) -> np.ndarray:
    """Two-sided p-values of the mean of each row of `diffs` (rows x questions) by `test`: ``t-test``
    (`t_test_pvalues`), ``randomization`` (``significance.permutation_pvalues``) or ``bootstrap``
    (`bootstrap_pvalues`); `resamples` and `seed` default to the test's own (none for the t-test)."""
    check_options(test)
    resamples, seed = _settings(test, resamples, seed)
    if test == "t-test":
        return t_test_pvalues(diffs)
    if test == "randomization":
        return significance.permutation_pvalues(_rows(diffs, test), resamples, seed)
    return bootstrap_pvalues(diffs, resamples, seed)


# ------------------------------------------------------------------------------------------- the table


def letters(n: int) -> tuple[str, ...]:
    """The labels of n systems in table order: a, b, c, ... (25 letters, no q); beyond 25, aa, ab, ... for all.

    Examples
    --------
    >>> letters(3)
    ('a', 'b', 'c')
    >>> letters(26)[:2], letters(26)[-1]
    (('aa', 'ab'), 'ba')
    """
    width = 1
    while len(ALPHABET) ** width < n:
        width += 1
    return tuple("".join(p) for p in product(ALPHABET, repeat=width))[:n]


@dataclass(frozen=True)
class PairTest:
    """One pair of systems on one metric: `a` comes before `b` in the table."""

    metric: str
    a: str
    b: str
    mean_diff: float  # mean of a - mean of b
    p_value: float  # two-sided, uncorrected
    p_holm: float  # Holm-corrected over all the pairs of this metric
    winner: str | None  # a or b when it beats the other (higher mean and p_holm < alpha), else None


@dataclass(frozen=True)
class ComparisonTable:
    """Every system's mean on each metric and which systems each one beats significantly.

    `means[i][j]` is system i's mean of metric j; `pairs` has one `PairTest` per pair of systems per metric, in
    table order. `resamples` and `seed` are None for the t-test; `exact` says whether the randomization test
    enumerated every sign vector.
    """

    systems: tuple[str, ...]
    letters: tuple[str, ...]
    metrics: tuple[str, ...]
    means: tuple[tuple[float, ...], ...]
    pairs: tuple[PairTest, ...]
    test: str
    alpha: float
    questions: int
    resamples: int | None
    seed: int | None
    exact: bool

    def mean(self, system: str, metric: str) -> float:
        """A system's mean of a metric."""
        return self.means[self.systems.index(system)][self.metrics.index(metric)]

    def beats(self, system: str, metric: str) -> tuple[str, ...]:
        """The systems `system` beats significantly on `metric`, in table order."""
        won = {p.b if p.winner == p.a else p.a for p in self.pairs if p.metric == metric and p.winner == system}
        return tuple(s for s in self.systems if s in won)

    def best(self, metric: str) -> tuple[str, ...]:
        """The systems with the highest mean of `metric` (all of them on a tie)."""
        j = self.metrics.index(metric)
        top = max(row[j] for row in self.means)
        return tuple(s for s, row in zip(self.systems, self.means) if row[j] == top)

    def _sup(self, system: str, metric: str) -> str:
        """The letters of the systems `system` beats on `metric` (comma-separated when labels are two letters)."""
        label = dict(zip(self.systems, self.letters))
        return ("," if len(self.letters[0]) > 1 else "").join(label[s] for s in self.beats(system, metric))

    def statement(self, bold: str = "Bold", marks: str = "Superscript letters") -> str:
        """What the table shows and how it was tested (plain ASCII text, no user string, no Markdown or LaTeX
        syntax): the test, the correction and alpha. `bold` and `marks` name how the renderer shows the best value and the systems beaten."""
        k = len(self.systems)
        if self.test == "t-test":
            how = "two-sided, on n - 1 degrees of freedom"
        elif self.test == "randomization":
            how = (
                f"two-sided, all {2**self.questions:,} sign flips of the per-question differences"
                if self.exact
                else f"two-sided, {self.resamples:,} random sign flips of the per-question differences, seed {self.seed}"
            )
        else:
            how = f"two-sided, shifted null, {self.resamples:,} resamples of the questions, seed {self.seed}"
        pairs = k * (k - 1) // 2
        family = "the one pair of systems" if pairs == 1 else f"all {pairs} pairs of systems"
        correction = (
            f"Holm's step-down, over {family}, for each metric separately" if pairs else "none, a single system"
        )
        return (
            f"{bold}: the best mean of its column. {marks}: the systems it beats significantly, with a higher "
            f"mean and a Holm-corrected p < {self.alpha:g}. Test: {TEST_NAMES[self.test]} ({how}). Correction: "
            f"{correction}. Means over {plural(self.questions, 'question')} with a "
            "relevant document."
        )

    def _cells(self, labels: Mapping[str, str] | None, digits: int):
        """Per metric its label, and per system per metric (the mean's text, best or not, the superscript)."""
        heads = [(labels or {}).get(m, m) for m in self.metrics]
        best = [set(self.best(m)) for m in self.metrics]
        rows = [
            [(f"{row[j]:.{digits}f}", s in best[j], self._sup(s, m)) for j, m in enumerate(self.metrics)]
            for s, row in zip(self.systems, self.means)
        ]
        return heads, rows

    def to_text(self, labels: Mapping[str, str] | None = None, digits: int = DIGITS) -> str:
        """An aligned plain-text table for a terminal: the best of a column marked ``*``, the letters of the systems
        beaten in brackets (``0.4512* [ac]``), the statement under it (wrapped at TEXT_WIDTH). Names have their control characters escaped.
        `labels` maps a metric name to the header shown (the name by default)."""
        heads, rows = self._cells(labels, digits)
        grid = [["", "system", *map(escape_control, heads)]]
        for letter, s, cells in zip(self.letters, self.systems, rows):
            grid.append(
                [
                    letter,
                    escape_control(s),
                    *(f"{num}{'*' if top else ' '}{f' [{sup}]' if sup else ''}" for num, top, sup in cells),
                ]
            )
        widths = [max(len(r[c]) for r in grid) for c in range(len(grid[0]))]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in grid]
        return "\n".join(lines) + "\n\n" + textwrap.fill(self.statement("*", "[letters]"), TEXT_WIDTH) + "\n"

    def to_markdown(
        self,
        escape: Callable[[str], str] = escape_markdown,
        labels: Mapping[str, str] | None = None,
        digits: int = DIGITS,
        statement: bool = True,
    ) -> str:
        """A Markdown (GitHub) table: the best in bold, the letters of the systems beaten as Unicode superscripts
        (``**0.4512**ᵃᶜ``), then the statement (unless `statement` is False: a page may show it as a caption). Every
        system name and metric label goes through `escape` (core.markdown.escape_markdown by default, the one rule the
        app uses too);
        the statement holds no user string and no Markdown syntax."""
        heads, rows = self._cells(labels, digits)
        lines = ["| | system | " + " | ".join(escape(h) for h in heads) + " |", "|---|---|" + "---|" * len(heads)]
        for letter, s, cells in zip(self.letters, self.systems, rows):
            shown = [(f"**{num}**" if top else num) + "".join(SUPERSCRIPTS[c] for c in sup) for num, top, sup in cells]
            lines.append(f"| {letter} | {escape(s)} | " + " | ".join(shown) + " |")
        text = "\n".join(lines) + "\n"
        return text + "\n" + self.statement("Bold", "Superscripts") + "\n" if statement else text

    def to_latex(self, labels: Mapping[str, str] | None = None, digits: int = DIGITS) -> str:
        """A LaTeX table (``booktabs``: \\toprule, \\midrule, \\bottomrule) with the statement as its caption: the
        best in ``\\textbf``, the letters of the systems beaten as ``$^{ac}$``. Each metric is two columns,
        ``r@{}l``: its means right-aligned (so their digits line up), the letters just after them; its header is
        over the means. Every system name and metric label is escaped (`escape_latex`). Needs
        ``\\usepackage{booktabs}``."""
        heads, rows = self._cells(labels, digits)
        body = []
        for letter, s, cells in zip(self.letters, self.systems, rows):
            shown = [
                ((rf"\textbf{{{num}}}" if top else num), (f"$^{{{sup}}}$" if sup else "")) for num, top, sup in cells
            ]
            body.append(" & ".join([letter, escape_latex(s), *(x for pair in shown for x in pair)]) + r" \\")
        head = " & ".join(["", "System", *(f"{escape_latex(h)} &" for h in heads)])[:-2]  # the last: no letters' cell
        return (
            "\n".join(
                [
                    r"\begin{table}",
                    r"\centering",
                    rf"\begin{{tabular}}{{ll{'r@{}l' * len(heads)}}}",
                    r"\toprule",
                    head + r" \\",
                    r"\midrule",
                    *body,
                    r"\bottomrule",
                    r"\end{tabular}",
                    rf"\caption{{{escape_latex(self.statement('Bold', 'Superscripts'))}}}",
                    r"\end{table}",
                ]
            )
            + "\n"
        )

    def to_csv(self) -> str:
        """The table as CSV: a row per system with its letter, its name, and per metric its mean (every digit) and
        the letters of the systems it beats significantly (empty: none); the header names each metric as given
        (``ndcg@10``, ``ndcg@10 beats``)."""
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(["letter", "system", *(x for m in self.metrics for x in (m, f"{m} beats"))])
        for letter, s, row in zip(self.letters, self.systems, self.means):
            w.writerow([letter, s, *(x for m, v in zip(self.metrics, row) for x in (repr(float(v)), self._sup(s, m)))])
        return out.getvalue()

    def to_json(self) -> dict:
        """The table as a plain dict that ``json.dumps(..., allow_nan=False)`` accepts: the test and its settings,
        per system its letter, means and the systems it beats, the best per metric, and every pair's p-values."""
        return json_ready(
            {
                "test": self.test,
                "test_name": TEST_NAMES[self.test],
                "two_sided": True,
                "alpha": self.alpha,
                "correction": "holm",
                "family": "all pairs of systems, each metric separately",
                "questions": self.questions,
                "resamples": self.resamples,
                "seed": self.seed,
                "exact": self.exact,
                "metrics": list(self.metrics),
                "systems": [
                    {
                        "letter": letter,
                        "name": s,
                        "means": dict(zip(self.metrics, row)),
                        "beats": {m: list(self.beats(s, m)) for m in self.metrics},
                    }
                    for letter, s, row in zip(self.letters, self.systems, self.means)
                ],
                "best": {m: list(self.best(m)) for m in self.metrics},
                "pairs": [
                    {
                        "metric": p.metric,
                        "a": p.a,
                        "b": p.b,
                        "mean_diff": p.mean_diff,
                        "p_value": p.p_value,
                        "p_holm": p.p_holm,
                        "winner": p.winner,
                    }
                    for p in self.pairs
                ],
                "statement": self.statement(),
            }
        )


def table_from_values(
    values: Mapping[str, Mapping[str, np.ndarray]],
    metric_names: Sequence[str],
    test: str = DEFAULT_TEST,
    alpha: float = ALPHA,
    resamples: int | None = None,
    seed: int | None = None,
) -> ComparisonTable:
    """The comparison table of per-question values: ``values[system][metric]`` is an array over the same questions
    for every system (the table's order is `values`' order). Raises `InputError` for an unknown test, an alpha
    outside (0, 1), a metric some system lacks, or no question.

    Examples
    --------
    >>> import numpy as np
    >>> values = {"A": {"ndcg@10": np.array([.9, .8, .9, .7, .8, .9])},
    ...           "B": {"ndcg@10": np.array([.5, .4, .6, .3, .5, .4])},
    ...           "C": {"ndcg@10": np.array([.5, .5, .6, .4, .4, .5])}}
    >>> table = table_from_values(values, ["ndcg@10"], test="t-test")
    >>> table.beats("A", "ndcg@10"), table.best("ndcg@10")
    (('B', 'C'), ('A',))
    >>> print(table.to_text())  # doctest: +NORMALIZE_WHITESPACE
       system  ndcg@10
    a  A       0.8333* [bc]
    b  B       0.4500
    c  C       0.4833
    <BLANKLINE>
    *: the best mean of its column. [letters]: the systems it beats significantly, with a higher mean and a
    Holm-corrected p < 0.05. Test: paired t-test (two-sided, on n - 1 degrees of freedom). Correction: Holm's
    step-down, over all 3 pairs of systems, for each metric separately. Means over 6 questions with a relevant
    document.
    >>> print(table.to_markdown(statement=False))
    | | system | ndcg\\@10 |
    |---|---|---|
    | a | A | **0.8333**ᵇᶜ |
    | b | B | 0.4500 |
    | c | C | 0.4833 |
    <BLANKLINE>
    """
    check_options(test, alpha)
    systems = tuple(values)
    names = tuple(metric_names)
    if not systems:
        raise InputError("comparison: no system to compare")
    if not names:
        raise InputError("metrics: the list is empty")
    for s, m in product(systems, names):
        if m not in values[s]:
            raise InputError(f"metric {m!r} was not computed for {s!r}: computed are {', '.join(values[s])}")
    n = int(np.asarray(values[systems[0]][names[0]]).size)
    if n < 1:
        raise InputError("comparison: no question has a relevant document, so there is nothing to compare")
    resamples, seed = _settings(test, resamples, seed)
    means = tuple(tuple(float(np.mean(values[s][m])) for m in names) for s in systems)
    index = list(combinations(range(len(systems)), 2))
    pairs: list[PairTest] = []
    for j, m in enumerate(names):
        if not index:
            break
        diffs = np.stack(
            [
                np.asarray(values[systems[a]][m], dtype=np.float64)
                - np.asarray(values[systems[b]][m], dtype=np.float64)
                for a, b in index
            ]
        )
        p = pair_pvalues(diffs, test, resamples, seed)
        adjusted = significance.holm(p)
        for (a, b), raw, held in zip(index, p, adjusted):
            diff = means[a][j] - means[b][j]
            winner = None if held >= alpha or diff == 0 else systems[a] if diff > 0 else systems[b]
            pairs.append(PairTest(m, systems[a], systems[b], diff, float(raw), float(held), winner))
    exact = test == "randomization" and significance.is_exact(n, resamples)
    return ComparisonTable(
        systems, letters(len(systems)), names, means, tuple(pairs), test, float(alpha), n, resamples, seed, exact
    )


def compare_table(
    evaluation: Evaluation,
    metric_names: str | Sequence[str],
    test: str = DEFAULT_TEST,
    alpha: float = ALPHA,
    resamples: int | None = None,
    seed: int | None = None,
) -> ComparisonTable:
    """The comparison table of every system of an evaluation on the given metrics (names as ``--metrics`` takes
    them: a comma-separated string or a list; each must have been computed), by `test` at level `alpha`.

    Examples
    --------
    >>> from retrieval.corpus.dataset import load
    >>> from retrieval.engine.engine import evaluate
    >>> ev = evaluate(load("invented"), metric_names=["ndcg@10", "mrr"])
    >>> table = compare_table(ev, "ndcg@10,mrr", test="t-test")
    >>> table.systems, table.letters
    (('BM25', 'LSA', 'weighted', 'RRF'), ('a', 'b', 'c', 'd'))
    >>> round(table.mean("RRF", "ndcg@10"), 4), table.best("ndcg@10")
    (0.7512, ('RRF',))
    """
    check_options(test, alpha)
    names = [m.name for m in metrics.parse_list(metric_names)]
    computed = {m.name for m in evaluation.metrics}
    for m in names:
        if m not in computed:
            raise InputError(f"metric {m!r} was not computed: computed are {', '.join(sorted(computed))}")
    values = {s: {m: evaluation.values[s][m] for m in names} for s in evaluation.systems}
    return table_from_values(values, names, test, alpha, resamples, seed)
