"""Markdown made from user text: the one escaping function every user string goes through before st.markdown
(retrieval.core.markdown.escape_markdown, the rule the library's Markdown reports use too), bold around what is
already safe, and highlighted words on top of it. Nothing a user typed or uploaded (a file name, an id, a document,
a run tag) becomes markup, a link, an image, KaTeX or a shortcode.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from retrieval.analyses.teaching import token_spans
from retrieval.core.markdown import escape_markdown

__all__ = ["HIGHLIGHT_COLORS", "bold", "escape_markdown", "highlight_markdown"]
HIGHLIGHT_COLORS = ("red", "orange", "yellow", "green", "blue", "violet", "gray", "grey", "primary")


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
