"""Markdown made from user text: the one escaping function every user string goes through before st.markdown,
and highlighted words on top of it. Nothing a user typed or uploaded (a file name, an id, a document, a run
tag) becomes markup, a link, an image, KaTeX or a shortcode.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping

from retrieval.analyses.teaching import token_spans

_PUNCT = frozenset(string.punctuation)
HIGHLIGHT_COLORS = ("red", "orange", "yellow", "green", "blue", "violet", "gray", "grey", "primary")
# What Streamlit's renderer changes in plain text *after* parsing, where a backslash escape no longer shows: a GFM
# autolink (http://, https://, www., an e-mail address), an emoji or logo shortcode (:smile:, :streamlit:; of the
# names made of digits only :100: and :1234: exist, so `file:3:` stays plain) and its typographic replacements
# (a lone ->, <-, <->, --, >=, <=, ~=). A word holding one is shown as a code span: inert, and copied as typed.
_AUTOLINK = re.compile(r"https?://|www\.|[-.\w+]+@[-\w]+(?:\.[-\w]+)+", re.IGNORECASE)
_SHORTCODE = re.compile(r":([A-Za-z0-9_+-]+):")
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


def escape_markdown(text: str) -> str:
    """Text made inert for st.markdown: whitespace collapsed to single spaces and every ASCII punctuation
    backslash-escaped, except a word the renderer would still turn into a link, an emoji or a symbol (`http://x`,
    `a@b.c`, `:streamlit:`, `->`), shown as a code span instead. No invisible character is added: what a person
    copies is what was written."""
    words = re.sub(r"\s+", " ", str(text)).split(" ")
    return " ".join(
        _code_span(w) if _turned_by_renderer(w) else "".join("\\" + c if c in _PUNCT else c for c in w) for w in words
    )


def bold(markdown: str) -> str:
    """Markdown already made safe (`escape_markdown`, or the library's words around escaped names) set in bold: how
    the app renders the phrase a library finding stresses."""
    return f"**{markdown}**"


def highlight_markdown(text: str, colors: Mapping[str, str]) -> str:
    """Markdown of `text`, escaped, with each token found in `colors` (token -> palette colour) on a coloured
    background in bold: ``:green-background[**word**]``. The text itself never becomes markup."""
    text = re.sub(r"\s+", " ", str(text)).strip()
    out: list[str] = []
    at = 0
    for start, end, token in token_spans(text):
        color = colors.get(token)
        if color is None:
            continue
        if color not in HIGHLIGHT_COLORS:
            raise ValueError(f"unknown highlight colour {color!r}")
        out.append(escape_markdown(text[at:start]) if at < start else "")
        out.append(f":{color}-background[**{escape_markdown(text[start:end])}**]")
        at = end
    out.append(escape_markdown(text[at:]))
    return "".join(out)
