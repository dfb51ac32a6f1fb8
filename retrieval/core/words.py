"""Counts written for reading: the one rule by which a number meets its noun (and its verb), for the command line's
messages, the library's and the app's alike."""

from __future__ import annotations

import re


def plural(n: int, word: str, many: str | None = None) -> str:
    """'1 question', '1,400 questions', '0 questions' (`many`: the plural when it is not word + s)."""
    return f"{n:,} {word if n == 1 else many or word + 's'}"


def agree(n: int, one: str, many: str) -> str:
    """The word that agrees with a count: agree(1, "is", "are") == "is", agree(3, "names", "name") == "name"."""
    return one if n == 1 else many


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def escape_control(text: str) -> str:
    """`text` with every control character (C0, DEL and C1: ESC, tab and newline too) written as an escape such as
    ``\\x1b``, so that a name can neither drive a terminal nor break a line.

    Examples
    --------
    >>> escape_control("run\\n1")
    'run\\\\x0a1'
    """
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))
