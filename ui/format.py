"""Numbers, settings and texts written for reading: signed differences with a true minus, p-values, intervals (the
library's rules, retrieval.core.numbers, which the pages import from here), and long texts cut to a bound
(PREVIEW_CHARS in tables and lists, FULL_CHARS for one document in full)."""

from __future__ import annotations

from retrieval.analyses.tuning import setting_text
from retrieval.core.numbers import MINUS, interval_text, p_is, p_text, signed  # noqa: F401 - the one rule of each
from retrieval.core.words import agree, plural  # noqa: F401 - the one rule of a count and its noun, the pages' too


def fmt_setting(setting: dict) -> str:
    """A setting for reading: k1 = 1.2, b = 0.75 (retrieval.analyses.tuning.setting_text: the verdict's words)."""
    return setting_text(setting)


PREVIEW_CHARS = 500  # a text in a table, a preview or a list is cut here: what a page sends stays bounded
FULL_CHARS = 200_000  # one document read in full is cut here (a 2 MB document would otherwise go whole to the browser)


def clip(text: str, limit: int = PREVIEW_CHARS) -> str:
    """At most `limit` characters of `text`; a cut text ends with an ellipsis and says its full length."""
    text = str(text)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters in all)"


def full_text_note(text: str, limit: int = FULL_CHARS) -> str:
    """What a person reads under a document shown in full: its length, and where it is cut when it is."""
    n = len(str(text))
    return f"{n:,} characters" + (f"; only the first {limit:,} are shown." if n > limit else ".")


def mb(n: int) -> str:
    """A size in bytes for reading: kB below 100 kB, MB from there."""
    return f"{n / 1e6:,.1f} MB" if n >= 100_000 else f"{n / 1e3:,.1f} kB"
