"""Tuning's words: its numbers and settings as plain text, and a sentence in pieces.

The library writes no Markdown. A finding's sentence is a tuple of `Piece`s, each a run of plain text and whether it is
the sentence's stressed part (the headline): joined, they are the plain sentence the command line prints (`plain`);
the app renders the stressed pieces in bold (ui/tuning.py). Numbers read as the app writes them: a true minus, two
significant digits for a gain (`about`), a p-value to three decimals (`p_is`).
"""

from __future__ import annotations

from typing import NamedTuple

from ...core.numbers import MINUS, about, p_is

__all__ = ["MINUS", "Piece", "about", "expectation_text", "names_text", "p_is", "plain", "setting_text", "stress"]


class Piece(NamedTuple):
    """A run of a sentence's plain text; `stressed`: part of its headline (the app's bold)."""

    text: str
    stressed: bool = False


def stress(text: str) -> Piece:
    """A stressed piece: the headline, or a part of it."""
    return Piece(text, True)


def plain(pieces: tuple[Piece, ...]) -> str:
    """The pieces joined: the plain sentence."""
    return "".join(p.text for p in pieces)


def names_text(names: tuple[str, ...]) -> str:
    """Swept parameters for reading: 'k1 and b', 'd', 'RRF k and d', 'the text analysis, k1 and b'."""
    said = [{"dims": "d", "rrf_k": "RRF k", "analysis": "the text analysis"}.get(n, n) for n in names]
    return " and ".join(said) if len(said) < 3 else ", ".join(said[:-1]) + " and " + said[-1]


def setting_text(setting: dict) -> str:
    """A setting for reading: 'k1 = 1.2, b = 0.75'."""
    return ", ".join(f"{n} = {v}" if isinstance(v, str) else f"{n} = {v:g}" for n, v in setting.items())


def expectation_text(gain: float, measured: float) -> str:
    """What a tuned setting gains on new questions, the cross-validated `gain`, beside the gain `measured` on the
    questions it was chosen on (best − current), each to two significant digits (`about`): said as one number when
    they read the same."""
    g, m = about(gain), about(measured)
    if g == m:
        return f"Expect about {g} on new questions too, as measured on these very questions."
    if gain < measured:
        return f"Expect about {g}, not the {m} measured on these very questions."
    return f"Expect about {g} on new questions, more than the {m} measured on these very questions."
