"""ui/markdown.py and ui/format.py: user text made inert for Markdown, numbers written for reading."""

from __future__ import annotations

import re

import pytest

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
    unescaped = re.sub(r"\\[!-/:-@\[-`{-~]", "", out.replace("\u2060", ""))  # drop every backslash escape
    assert not set(unescaped) & set("<>*_`[]()#!:$|{}~\\-=@.")


def test_escape_markdown_breaks_what_the_renderer_would_turn_into_links_or_symbols():
    assert "http\\:\u2060" in markdown.escape_markdown("http://x")
    assert "www\u2060\\." in markdown.escape_markdown("www.x")
    assert "\\-\u2060\\>" in markdown.escape_markdown("->")
    assert "@\u2060" in markdown.escape_markdown("a@b.c")
    assert "\\:\u2060streamlit" in markdown.escape_markdown(":streamlit:")
    assert markdown.escape_markdown("plain words 42") == "plain words 42"


def test_highlight_markdown_marks_whole_tokens_case_insensitively():
    md = markdown.highlight_markdown("Data export: the data-set (DATA)!", {"data": "orange"})
    assert md.count(":orange-background[**") == 3
    assert ":orange-background[**Data**]" in md and ":orange-background[**DATA**]" in md
    assert "\\(" in md and "\\)" in md and "\\!" in md
    assert markdown.highlight_markdown("metadata", {"data": "green"}) == "metadata"  # not a token of its own
    assert markdown.highlight_markdown("x <b>data</b>", {"data": "green"}) == "x \\<b\\>:green-background[**data**]\\<\\/b\\>"
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
