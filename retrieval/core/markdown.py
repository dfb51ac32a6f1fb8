"""User text made inert for Markdown: the one escaping rule, for the app's st.markdown (ui/markdown.py) and the
library's Markdown reports (evaluation/comparison.py's table, read by GitHub and CommonMark). Nothing a user typed or
uploaded (a file name, an id, a document, a run tag) becomes markup, a link, an image, KaTeX, a shortcode, HTML or a
table's cell border.
"""

from __future__ import annotations

import re
import string

from .words import escape_control

_PUNCT = frozenset(string.punctuation)
# What a renderer changes in plain text *after* parsing, where a backslash escape no longer shows: a GFM autolink
# (http://, https://, www., an e-mail address: Streamlit's renderer and GitHub's alike), an emoji or logo shortcode
# (:smile:, :streamlit:; of the names made of digits only :100: and :1234: exist, so `file:3:` stays plain) and
# Streamlit's typographic replacements (a lone ->, <-, <->, --, >=, <=, ~=). A word holding one is shown as a code
# span: inert, and copied as typed.
_AUTOLINK = re.compile(r"https?://|www\.|[-.\w+]+@[-\w]+(?:\.[-\w]+)+", re.IGNORECASE)
_NUMBER_EMOJI = frozenset({"100", "1234"})
_REPLACED = frozenset({"->", "<-", "<->", "--", ">=", "<=", "~="})


def _turned_by_renderer(word: str) -> bool:
    """Whether the renderer would turn (part of) this whitespace-free word into a link, an emoji or a symbol."""
    if word in _REPLACED or _AUTOLINK.search(word):
        return True
    return any(
        not name.isdigit() or name in _NUMBER_EMOJI
        for name in (m.group(1) for m in re.finditer(r"(?=:([A-Za-z0-9_+-]+):)", word))
    )


def _code_span(word: str) -> str:
    """A word as a Markdown code span: fenced by one backtick more than its longest run of them (padded when it
    starts or ends with one), so its every character is shown as it is."""
    fence = "`" * (max((len(run) for run in re.findall(r"`+", word)), default=0) + 1)
    pad = " " if word.startswith("`") or word.endswith("`") else ""
    return f"{fence}{pad}{word}{pad}{fence}"


def _word(word: str) -> str:
    """One word made inert: a code span when the renderer would turn it, else every ASCII punctuation escaped."""
    if _turned_by_renderer(word):
        return _code_span(word)
    return "".join("\\" + c if c in _PUNCT else c for c in word)


def escape_markdown(text: str) -> str:
    """Text made inert for Markdown: one line (whitespace collapsed to single spaces, any other control character
    written as an escape such as ``\\x1b``) and every ASCII punctuation backslash-escaped, except a word the renderer
    would still turn into a link, an emoji or a symbol (`http://x`, `a@b.c`, `:streamlit:`, `->`), shown as a code
    span instead. A ``|`` is always escaped outside any code span, so that it splits no table cell. No invisible
    character is added: what a person copies is what was written.

    Examples
    --------
    >>> escape_markdown("*a* | <b>")
    '\\\\*a\\\\* \\\\| \\\\<b\\\\>'
    >>> escape_markdown("see http://x|y")
    'see `http://x`\\\\|y'
    """
    words = escape_control(re.sub(r"\s+", " ", str(text))).split(" ")
    return " ".join("\\|".join(_word(part) if part else "" for part in w.split("|")) for w in words)
