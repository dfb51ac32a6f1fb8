"""ui/markdown.py and ui/format.py: user text made inert for Markdown, numbers written for reading."""

from __future__ import annotations

import doctest
import re

import pytest

from apptest import shown
from retrieval.core import markdown as core_markdown
from retrieval.core import numbers
from retrieval.evaluation import comparison
from ui import format as fmt
from ui import markdown


@pytest.mark.parametrize(
    "text",
    [
        "<b>bold</b> <script>alert(1)</script>",
        "**stars** _under_ `tick` [link](http://evil.example) ![img](x.png)",
        "# heading\n- item\n1. item",
        ":streamlit: :material/home: :red[red] :blue-background[bg]",
        "$x^2$ and $$y$$",
        "arrows -> <- <-> -- >= <= ~=",
        "http://example.com www.example.com mail@example.com",
        "back\\slash | pipe {brace} ~strike~",
    ],
)
def test_escape_markdown_leaves_no_live_markup(text):
    out = markdown.escape_markdown(text)
    assert "\n" not in out
    unescaped = re.sub(r"\\[!-/:-@\[-`{-~]", "", out)  # drop every backslash escape
    unescaped = re.sub(r"(`+)[^`]+?\1", "", unescaped)  # and every code span (shown as typed, never parsed)
    assert not set(unescaped) & set("<>*_`[]()#!:$|{}~\\-=@.")


def test_escape_markdown_shows_what_the_renderer_would_turn_into_links_or_symbols_as_code():
    assert markdown.escape_markdown("see http://x now") == "see `http://x` now"
    assert markdown.escape_markdown("www.x") == "`www.x`"
    assert markdown.escape_markdown("a -> b") == "a `->` b"
    assert markdown.escape_markdown("a@b.c") == "`a@b.c`"
    assert markdown.escape_markdown(":streamlit:") == "`:streamlit:`"
    assert markdown.escape_markdown("f.jsonl:100: bad") == "`f.jsonl:100:` bad"  # 💯 otherwise
    assert markdown.escape_markdown("tick`s") == "tick\\`s" and markdown.escape_markdown("`a`:x:") == "`` `a`:x: ``"
    assert markdown.escape_markdown("plain words 42") == "plain words 42"


@pytest.mark.parametrize(
    "text",
    [
        "corpus.jsonl:1: broken JSON",
        "hit@3 and ndcg@5",
        "d1 (grade 2): a-b",
        "x :3: y",
        "see http://e.x or mail@e.x -> :streamlit:",
        "`a` **b** $c$ :red[d]",
    ],
)
def test_escaped_text_is_copied_as_written_without_invisible_characters(text):
    """The word joiners (U+2060) once placed after every ':' and '@' were copied with the text (`corpus.jsonl:⁠1`):
    what the renderer shows of the escaped text (escapes resolved, code spans as they are) is the text itself."""
    out = markdown.escape_markdown(text)
    assert not re.search(r"[\u200b-\u200f\u2060-\u2064\ufeff]", out)
    assert shown(out) == text


def test_highlight_markdown_marks_whole_tokens_case_insensitively():
    md = markdown.highlight_markdown("Data export: the data-set (DATA)!", {"data": "orange"})
    assert md.count(":orange-background[**") == 3
    assert ":orange-background[**Data**]" in md and ":orange-background[**DATA**]" in md
    assert "\\(" in md and "\\)" in md and "\\!" in md
    assert markdown.highlight_markdown("metadata", {"data": "green"}) == "metadata"  # not a token of its own
    assert (
        markdown.highlight_markdown("x <b>data</b>", {"data": "green"})
        == "x \\<b\\>:green-background[**data**]\\<\\/b\\>"
    )
    with pytest.raises(ValueError):
        markdown.highlight_markdown("data", {"data": "#fff]"})


def test_signed_uses_a_true_minus_and_drops_the_sign_of_zero():
    assert fmt.signed(0.0123) == "+0.012"
    assert fmt.signed(-0.0814) == "\u22120.081"
    assert fmt.signed(-0.0004) == "0.000" and fmt.signed(0.0004) == "0.000"
    assert fmt.signed(-0.0814, 4) == "\u22120.0814"
    assert fmt.interval_text(-0.0814, 0.1071) == "[\u22120.081, +0.107]"


def test_p_text_reads_as_written_in_papers():
    assert fmt.p_text(1.0) == "1" and fmt.p_text(0.9996) == "1"
    assert fmt.p_text(0.1321) == "0.132"
    assert fmt.p_text(0.001) == "0.001" and fmt.p_text(0.00099) == "< 0.001"


def test_fmt_setting_lists_each_parameter():
    assert fmt.fmt_setting({"k1": 1.2, "b": 0.75}) == "k1 = 1.2, b = 0.75"
    assert fmt.fmt_setting({"dims": 6}) == "dims = 6"


# ------------------------------------------------------------------------------------------ one rule each, in the library


def test_the_library_s_rules_are_the_app_s_and_their_examples_hold():
    """MINUS, signed, interval_text and p_text are retrieval.core.numbers' (ui.format imports them), escape_markdown
    is retrieval.core.markdown's (ui.markdown and evaluation.comparison import it); their docstrings' examples run."""
    assert (fmt.MINUS, fmt.signed, fmt.p_text, fmt.interval_text) == (
        numbers.MINUS,
        numbers.signed,
        numbers.p_text,
        numbers.interval_text,
    )
    assert markdown.escape_markdown is core_markdown.escape_markdown is comparison.escape_markdown
    for module in (numbers, core_markdown):
        result = doctest.testmod(module)
        assert result.attempted and not result.failed


@pytest.mark.parametrize("p", [0.0, 0.0004, 0.00099, 0.001, 0.0064, 0.1321, 0.5, 0.9994, 0.9995, 1.0])
def test_p_is_says_p_text_in_a_sentence(p):
    said = fmt.p_text(p)
    assert numbers.p_is(p) == (f"p {said}" if said == "< 0.001" else f"p = {said}")


def test_a_pipe_splits_no_cell_even_in_a_word_shown_as_code():
    """A `|` inside a code span still ends a GitHub table's cell: the one escape writes it outside any code span."""
    out = markdown.escape_markdown("see http://x|y :smile:|z")
    assert out == "see `http://x`\\|y `:smile:`\\|z"
    assert shown(out) == "see http://x|y :smile:|z"
