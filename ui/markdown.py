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
_WORD_JOINER = "\u2060"  # invisible; breaks autolinks, shortcodes and typographic replacements
_JOIN_AFTER = frozenset(":@")
_JOIN_PAIRS = frozenset("<>-=~")
HIGHLIGHT_COLORS = ("red", "orange", "yellow", "green", "blue", "violet", "gray", "grey", "primary")


def escape_markdown(text: str) -> str:
    """Text made inert for st.markdown: whitespace collapsed to single spaces, every ASCII punctuation
    backslash-escaped, and a word joiner (U+2060) placed where the renderer would otherwise turn plain text
    into a link (``http:``, ``www.``, ``a@b``), a shortcode (``:streamlit:``) or a typographic symbol (``->``)."""
    text = re.sub(r"\s+", " ", str(text))
    out: list[str] = []
    for i, c in enumerate(text):
        nxt = text[i + 1] if i + 1 < len(text) else ""
        out.append("\\" + c if c in _PUNCT else c)
        if c in _JOIN_AFTER and nxt and not nxt.isspace():
            out.append(_WORD_JOINER)
        elif c in _JOIN_PAIRS and nxt in _JOIN_PAIRS:
            out.append(_WORD_JOINER)
        elif c in "wW" and nxt == "." and text[max(0, i - 2) : i + 1].lower() == "www":
            out.append(_WORD_JOINER)
    return "".join(out)


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
