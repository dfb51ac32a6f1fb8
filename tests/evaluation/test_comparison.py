"""The comparison table (retrieval.evaluation.comparison) against independent implementations: scipy's ttest_rel
and permutation_test, every sign flip enumerated, a plain Holm and a plain bootstrap loop written here; its four
renderings: LaTeX that pdflatex compiles, Markdown that a CommonMark parser reads back, strict JSON, aligned text."""

from __future__ import annotations

import csv
import doctest
import html
import io
import itertools
import json
import os
import re
import shutil
import subprocess
import unicodedata
import warnings

import numpy as np
import pytest
from markdown_it import MarkdownIt
from scipy import stats as sps

from conftest import ROOT
from retrieval.core.errors import InputError
from retrieval.corpus.dataset import load
from retrieval.engine.engine import evaluate
from retrieval.evaluation import comparison
from retrieval.evaluation.comparison import table_from_values

ODD = "a_b & 50% {x}$"  # a system name LaTeX must survive
HOSTILE = ODD + " \\ ^ ~ # <b> | *x* \u00e9\nnext line"


def systems(arrays: dict[str, np.ndarray], metric: str = "m") -> dict[str, dict[str, np.ndarray]]:
    """One metric's per-question values per system, as table_from_values takes them."""
    return {s: {metric: np.asarray(v, dtype=np.float64)} for s, v in arrays.items()}


def random_systems(rng, n: int, k: int = 3, decimals: int | None = None) -> dict[str, np.ndarray]:
    """k systems of n questions each, some better than others."""
    out = {}
    for i in range(k):
        v = np.clip(rng.random(n) * 0.6 + 0.12 * i, 0, 1)
        out[f"s{i}"] = v.round(decimals) if decimals is not None else v
    return out


# ------------------------------------------------------------------------------------------- references


def holm_reference(p: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values, written plainly: the i-th smallest (1-based) times m - i + 1, never
    below the one before it, at most 1."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adjusted[i] = running
    return adjusted


def exact_randomization_reference(d: np.ndarray) -> float:
    """Two-sided p of the mean of d over all 2^n sign flips: the share of them whose mean is as far from zero as
    the observed mean (the null distribution is symmetric, so this is twice the smaller tail)."""
    observed = abs(float(np.mean(d)))
    hits = 0
    total = 0
    for signs in itertools.product((1.0, -1.0), repeat=d.size):
        total += 1
        if abs(float(np.mean(np.array(signs) * d))) >= observed * (1 - 1e-9):
            hits += 1
    return hits / total


def bootstrap_reference(d: np.ndarray, resamples: int, seed: int) -> float:
    """The shifted-null paired bootstrap p, as the module's docstring defines it, one resample at a time."""
    rng = np.random.default_rng(seed)
    m = float(np.mean(d))
    extreme = 0
    for _ in range(resamples):
        mi = float(np.mean(d[rng.choice(d.size, size=d.size)]))
        if abs(mi - m) >= abs(m) * (1 - 1e-12):
            extreme += 1
    return (1 + extreme) / (1 + resamples)


def pairs_of(table, metric: str = "m") -> dict[tuple[str, str], comparison.PairTest]:
    return {(p.a, p.b): p for p in table.pairs if p.metric == metric}


# ------------------------------------------------------------------------------------------- the tests' p-values


@pytest.mark.parametrize("n", [2, 3, 5, 14, 40, 300])
def test_t_test_p_values_equal_scipy_ttest_rel(n):
    rng = np.random.default_rng(n)
    for decimals in (None, 2):
        values = random_systems(rng, n, k=4, decimals=decimals)
        table = table_from_values(systems(values), ["m"], test="t-test")
        assert len(table.pairs) == 6
        for (a, b), pair in pairs_of(table).items():
            expected = sps.ttest_rel(values[a], values[b]).pvalue
            if np.isnan(expected):  # identical values on every question: see the next test
                continue
            assert pair.p_value == pytest.approx(float(expected), abs=1e-12, rel=1e-12), (a, b)


def test_t_test_edge_cases_beside_scipy():
    a = np.array([0.5, 0.2, 0.9, 0.4])
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # scipy's "catastrophic cancellation": the data are equal
        assert np.isnan(sps.ttest_rel(a, a).pvalue)  # scipy: NaN when nothing differs ...
        shifted = sps.ttest_rel(a + 0.1, a).pvalue  # a constant non-zero difference: an infinite t, p = 0 in both
    assert comparison.t_test_pvalues(a - a)[0] == 1.0  # ... here p = 1, as the docstring says
    assert comparison.t_test_pvalues(np.full(4, 0.1))[0] == pytest.approx(float(shifted), abs=1e-12)
    with pytest.raises(InputError, match=r"t-test.*at least 2 questions"):
        comparison.t_test_pvalues([0.3])


@pytest.mark.parametrize("n", [1, 2, 4, 7, 10])
def test_randomization_p_values_equal_every_sign_flip_enumerated(n):
    rng = np.random.default_rng(40 + n)
    for decimals in (None, 1):
        values = random_systems(rng, n, k=3, decimals=decimals)
        table = table_from_values(systems(values), ["m"], test="randomization")
        assert table.exact
        for (a, b), pair in pairs_of(table).items():
            expected = exact_randomization_reference(values[a] - values[b])
            assert pair.p_value == pytest.approx(expected, abs=1e-12), (a, b, decimals)


def test_randomization_p_values_agree_with_scipy_permutation_test_within_monte_carlo_error():
    rng = np.random.default_rng(5)
    n, resamples = 60, 10_000
    values = random_systems(rng, n, k=3)
    table = table_from_values(systems(values), ["m"], test="randomization")
    assert not table.exact and table.resamples == resamples and table.seed == 0
    for (a, b), pair in pairs_of(table).items():
        theirs = sps.permutation_test(
            (values[a], values[b]),
            lambda x, y, axis: np.mean(x - y, axis=axis),
            permutation_type="samples",
            vectorized=True,
            n_resamples=resamples,
            rng=11,
        ).pvalue
        # each p is twice a one-sided proportion q: two independent estimates differ by at most about
        # 5 x sqrt(2) x 2 sqrt(q (1 - q) / resamples)
        q = min(float(theirs) / 2, 0.5)
        assert abs(pair.p_value - theirs) < 5 * np.sqrt(2) * 2 * np.sqrt(max(q * (1 - q), 1e-4) / resamples), (a, b)


@pytest.mark.parametrize("n, decimals", [(1, None), (5, None), (12, 1), (30, None), (30, 1)])
def test_bootstrap_p_values_equal_a_plain_loop(n, decimals):
    rng = np.random.default_rng(90 + n)
    values = random_systems(rng, n, k=3, decimals=decimals)
    resamples, seed = 2000, 3
    table = table_from_values(systems(values), ["m"], test="bootstrap", resamples=resamples, seed=seed)
    assert (table.resamples, table.seed) == (resamples, seed)
    for (a, b), pair in pairs_of(table).items():
        assert pair.p_value == bootstrap_reference(values[a] - values[b], resamples, seed), (a, b)


def test_bootstrap_defaults_and_bounds():
    table = table_from_values(systems({"x": [0.1, 0.5, 0.9], "y": [0.1, 0.5, 0.9]}), ["m"], test="bootstrap")
    assert (table.resamples, table.seed) == (5000, 0)
    assert table.pairs[0].p_value == 1.0  # no difference at all
    assert comparison.bootstrap_pvalues(np.full(6, 0.3))[0] == 1 / 5001  # never 0: the observation counts once


# ------------------------------------------------------------------------------------------- Holm, who beats whom


@pytest.mark.parametrize("test", comparison.TESTS)
def test_holm_over_all_pairs_of_each_metric_equals_a_plain_reference(test):
    rng = np.random.default_rng(17)
    n = 25
    values = {s: {"m1": v, "m2": rng.random(n)} for s, v in random_systems(rng, n, k=5).items()}
    table = table_from_values(values, ["m1", "m2"], test=test)
    assert len(table.pairs) == 2 * 10
    for metric in ("m1", "m2"):
        mine = [p for p in table.pairs if p.metric == metric]
        assert [(p.a, p.b) for p in mine] == list(itertools.combinations(table.systems, 2))
        expected = holm_reference([p.p_value for p in mine])  # the family: this metric's 10 pairs alone
        assert [p.p_holm for p in mine] == pytest.approx(expected, abs=1e-15)


def test_beats_means_a_higher_mean_and_a_holm_p_below_alpha_strictly():
    # 5 questions, every one better by 0.1: the exact randomization p is 2 / 2^5 = 0.0625 (one pair: Holm keeps it)
    values = systems({"low": [0.1, 0.2, 0.3, 0.4, 0.5], "high": [0.2, 0.3, 0.4, 0.5, 0.6]})
    at = table_from_values(values, ["m"], test="randomization", alpha=0.0625)
    assert at.pairs[0].p_holm == 0.0625 and at.pairs[0].winner is None and at.beats("high", "m") == ()
    above = table_from_values(values, ["m"], test="randomization", alpha=0.07)
    assert above.pairs[0].winner == "high"
    assert above.beats("high", "m") == ("low",) and above.beats("low", "m") == ()
    assert above.pairs[0].mean_diff == pytest.approx(-0.1)  # low - high: the pair keeps the table's order


def test_best_marks_every_system_tied_at_the_top():
    table = table_from_values(systems({"a": [0.5, 0.7], "b": [0.7, 0.5], "c": [0.1, 0.2]}), ["m"], test="bootstrap")
    assert table.best("m") == ("a", "b")
    assert table.to_markdown(statement=False).count("**0.6000**") == 2


def test_the_letters_skip_q_and_grow_to_two_beyond_25_systems():
    assert comparison.letters(25)[-1] == "z" and "q" not in "".join(comparison.letters(25))
    many = comparison.letters(30)
    assert many[:3] == ("aa", "ab", "ac") and len(set(many)) == 30
    rng = np.random.default_rng(2)
    values = {f"s{i}": rng.random(8) * 0.1 for i in range(26)}
    values["top"] = np.full(8, 0.99)  # beats every other with the t-test (a constant gap: t is large)
    table = table_from_values(systems(values), ["m"], test="t-test")
    assert len(table.beats("top", "m")) == 26
    row = next(line for line in table.to_markdown(statement=False).splitlines() if "| top |" in line)
    assert "ᵃᵃ·ᵃᵇ·" in row
    assert "[aa,ab," in table.to_text() and "$^{aa,ab," in table.to_latex()


# ------------------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "kwargs, says",
    [
        ({"test": "wilcoxon"}, r"^test: unknown test 'wilcoxon'; choose randomization, t-test or bootstrap$"),
        ({"alpha": 0.0}, r"^alpha must be in \(0, 1\), got 0.0$"),
        ({"alpha": 1.0}, r"alpha must be in \(0, 1\)"),
        ({"alpha": float("nan")}, r"alpha must be in \(0, 1\), got nan"),
    ],
)
def test_bad_options_name_the_parameter(kwargs, says):
    with pytest.raises(InputError, match=says):
        table_from_values(systems({"a": [0.1, 0.2], "b": [0.3, 0.1]}), ["m"], **kwargs)


@pytest.fixture(scope="module")
def invented_evaluation():
    return evaluate(load("invented"), metric_names=["ndcg@10", "map@100"])


def test_an_unknown_or_uncomputed_metric_is_named(invented_evaluation):
    with pytest.raises(InputError, match="unknown metric 'foo'"):
        comparison.compare_table(invented_evaluation, "ndcg@10,foo")
    with pytest.raises(InputError, match=r"metric 'mrr' was not computed: computed are map@100, ndcg@10"):
        comparison.compare_table(invented_evaluation, ["mrr"])
    with pytest.raises(InputError, match="no question"):
        table_from_values(systems({"a": [], "b": []}), ["m"])


def test_the_evaluation_s_table_lists_every_system_and_metric(invented_evaluation):
    table = comparison.compare_table(invented_evaluation, " NDCG@10 , map@100,ndcg@10", test="t-test", alpha=0.1)
    assert table.systems == tuple(invented_evaluation.systems) and table.metrics == ("ndcg@10", "map@100")
    assert table.questions == 14 and table.alpha == 0.1
    for s in table.systems:
        assert table.mean(s, "map@100") == invented_evaluation.mean(s, "map@100")


# ------------------------------------------------------------------------------------------- renderings


@pytest.fixture(scope="module")
def hostile_table():
    """Four systems, the last one poor and named with everything LaTeX and Markdown would read as markup."""
    rng = np.random.default_rng(8)
    n = 20
    base = rng.random(n) * 0.5 + 0.4
    values = {"BM25": base, "LSA": base + rng.normal(0, 0.2, n), "RRF": base + 0.01, HOSTILE: base * 0.2}
    table = table_from_values(
        {s: {"ndcg@10": v, "ndcg_exp@5": v[::-1].copy()} for s, v in values.items()},
        ["ndcg@10", "ndcg_exp@5"],
        test="t-test",
    )
    assert table.beats("BM25", "ndcg@10") == (HOSTILE,)  # so superscripts are drawn
    return table


def _pdflatex() -> str:
    exe = shutil.which("pdflatex")
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("pdflatex is missing: .ci/run installs texlive-latex-base and texlive-latex-recommended")
        pytest.skip("pdflatex is not installed (apt-get install texlive-latex-base texlive-latex-recommended)")
    return exe


def test_the_latex_table_compiles_with_booktabs_and_escapes_every_name(hostile_table, tmp_path):
    exe = _pdflatex()
    tex = hostile_table.to_latex(labels={"ndcg@10": "nDCG@10 {a}", "ndcg_exp@5": "nDCG_exp@5 50%"})
    for rule in (r"\toprule", r"\midrule", r"\bottomrule"):
        assert tex.count(rule) == 1
    assert r"a\_b \& 50\% \{x\}\$ \textbackslash{} \^{} \textasciitilde{} \# $<$b$>$ $|$ *x* é next line" in tex
    assert r"nDCG\_exp@5 50\%" in tex and r"nDCG@10 \{a\}" in tex
    assert r"\textbf{" in tex and "$^{d}$" in tex
    doc = tmp_path / "table.tex"
    doc.write_text(
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n" + tex + "\\end{document}\n",
        encoding="utf-8",
    )
    out = subprocess.run(
        [exe, "-interaction=nonstopmode", "-halt-on-error", doc.name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout[-3000:]
    assert (tmp_path / "table.pdf").stat().st_size > 0
    log = (tmp_path / "table.log").read_text(errors="replace")
    assert "Missing character" not in log and "Undefined control sequence" not in log
    if shutil.which("pdftotext"):
        text = subprocess.run(["pdftotext", "table.pdf", "-"], cwd=tmp_path, capture_output=True, text=True).stdout
        # OT1's \_ is a drawn rule, which pdftotext reads as a space; it writes é as e and a combining accent
        text = unicodedata.normalize("NFC", text)
        assert re.search(r"a[_ ]b & 50% \{x\}\$ \\ \S \S # <b> \| \*x\* é next line", text), text


def _cells(markdown: str) -> list[list[str]]:
    """The table's cells as a CommonMark + GFM-tables parser reads them (text, entities decoded)."""
    rendered = MarkdownIt("commonmark").enable("table").render(markdown)
    rows = re.findall(r"<tr>(.*?)</tr>", rendered, re.S)
    return [
        [html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", r, re.S)]
        for r in rows
    ]


def test_the_markdown_table_escapes_names_and_reads_back_as_written(hostile_table):
    md = hostile_table.to_markdown(labels={"ndcg@10": "nDCG@10 *b*"})
    assert r"\*x\*" in md and r"\<b\>" in md and r"\|" in md and "<b>" not in md.replace(r"\<b\>", "")
    rows = _cells(md)
    assert rows[0] == ["", "system", "nDCG@10 *b*", "ndcg_exp@5"]
    assert [r[1] for r in rows[1:]] == ["BM25", "LSA", "RRF", " ".join(HOSTILE.split())]  # one line, as written
    assert all(len(r) == 4 for r in rows)  # the | in the name split no cell
    rendered = MarkdownIt("commonmark").enable("table").render(md)
    assert "<b>" not in rendered and "<em>" not in rendered.split("</table>")[0]
    bm25 = rows[1]
    assert bm25[2].startswith("0.") and bm25[2].endswith("ᵈ")  # beats d, the poor one
    assert "<strong>" in rendered  # the best of a column
    assert md.rstrip().endswith("Means over 20 questions with a relevant document.")
    assert "Holm" in md and "p < 0.05" in md and "paired t-test" in md


def _strict(text: str):
    def refuse(name):
        raise ValueError(f"not strict JSON: {name}")

    return json.loads(text, parse_constant=refuse)


def test_the_json_is_strict_and_holds_the_whole_table(hostile_table):
    data = _strict(json.dumps(hostile_table.to_json(), allow_nan=False))
    assert (data["test"], data["alpha"], data["correction"], data["questions"]) == ("t-test", 0.05, "holm", 20)
    assert [s["name"] for s in data["systems"]] == list(hostile_table.systems)
    assert [s["letter"] for s in data["systems"]] == ["a", "b", "c", "d"]
    assert data["systems"][0]["beats"]["ndcg@10"] == [HOSTILE]
    assert data["best"]["ndcg@10"] == ["RRF"]
    assert len(data["pairs"]) == 12
    for row, pair in zip(data["pairs"], hostile_table.pairs):
        assert (row["a"], row["b"], row["p_value"], row["p_holm"], row["winner"]) == (
            pair.a,
            pair.b,
            pair.p_value,
            pair.p_holm,
            pair.winner,
        )
    assert "Holm" in data["statement"]


def test_the_text_table_is_aligned_and_escapes_control_characters(hostile_table):
    text = hostile_table.to_text()
    lines = text.splitlines()
    table = lines[: len(hostile_table.systems) + 1]
    assert "\\x0a" in table[-1]  # the newline in the name, written as an escape: the row stays one line
    starts = {line.index("0.") for line in table[1:]}  # every first value starts in the same column
    assert len(starts) == 1
    assert re.search(r"^a\s+BM25\s+\d\.\d{4}\s+\[d\]", table[1])
    assert re.search(r"^c\s+RRF\s+\d\.\d{4}\*", table[3])
    assert all(len(line) <= comparison.TEXT_WIDTH for line in lines[len(table) + 1 :])


def test_the_statement_names_the_test_the_correction_and_alpha():
    values = systems({"a": np.linspace(0, 1, 20), "b": np.linspace(0, 1, 20)[::-1], "c": np.full(20, 0.5)})
    said = {t: table_from_values(values, ["m"], test=t, alpha=0.01).statement() for t in comparison.TESTS}
    assert "Fisher's randomization test (two-sided, 10,000 random sign flips" in said["randomization"]
    assert "paired t-test (two-sided" in said["t-test"]
    assert (
        "paired bootstrap test (two-sided, shifted null, 5,000 resamples of the questions, seed 0)" in said["bootstrap"]
    )
    for text in said.values():
        assert "Holm's step-down, over all 3 pairs of systems, for each metric separately" in text
        assert "p < 0.01" in text and text.isascii()
    small = table_from_values(systems({"a": [0.1, 0.2], "b": [0.3, 0.1]}), ["m"])
    assert "all 4 sign flips" in small.statement() and "over the one pair of systems" in small.statement()
    alone = table_from_values(systems({"a": [0.1, 0.2]}), ["m"]).statement()
    assert "Correction: none, a single system." in alone and "Superscript" in alone


def test_the_module_s_examples_run():
    result = doctest.testmod(comparison, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 15 and result.failed == 0


def test_the_ci_script_installs_pdflatex_when_missing():
    script = (ROOT / ".ci" / "run").read_text()
    assert "texlive-latex-base" in script and "texlive-latex-recommended" in script and "pdflatex" in script


def test_the_latex_means_are_right_aligned_with_the_letters_after_them(hostile_table):
    tex = hostile_table.to_latex()
    assert r"\begin{tabular}{llr@{}lr@{}l}" in tex  # per metric: the means right-aligned, then their letters
    lines = tex.splitlines()
    head = lines[lines.index(r"\toprule") + 1]
    assert head == r" & System & ndcg@10 & & ndcg\_exp@5 \\"  # each header over its means
    body = lines[lines.index(r"\midrule") + 1 : lines.index(r"\bottomrule")]
    for row, system, means in zip(body, hostile_table.systems, hostile_table.means):
        cells = row.removesuffix(r" \\").split(" & ")[-4:]
        assert len(cells) == 4, row
        for (num, sup), metric, value in zip((cells[:2], cells[2:]), hostile_table.metrics, means):
            digits = re.fullmatch(r"(?:\\textbf\{)?(\d\.\d{4})\}?", num)
            assert digits and float(digits.group(1)) == round(value, 4), num
            beaten = hostile_table._sup(system, metric)
            assert sup == (f"$^{{{beaten}}}$" if beaten else "")


def test_the_csv_holds_every_mean_and_the_systems_each_beats(hostile_table):
    rows = list(csv.reader(io.StringIO(hostile_table.to_csv())))
    assert rows[0] == ["letter", "system", "ndcg@10", "ndcg@10 beats", "ndcg_exp@5", "ndcg_exp@5 beats"]
    assert [r[1] for r in rows[1:]] == list(hostile_table.systems)  # the hostile name read back whole
    letter = dict(zip(hostile_table.systems, hostile_table.letters))
    for r, system in zip(rows[1:], hostile_table.systems):
        assert r[0] == letter[system]
        for j, m in enumerate(hostile_table.metrics):
            assert float(r[2 + 2 * j]) == hostile_table.mean(system, m)  # every digit
            assert r[3 + 2 * j] == "".join(letter[s] for s in hostile_table.beats(system, m))
