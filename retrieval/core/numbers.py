"""Numbers written for reading, one rule each, for the library's sentences, the command line and the app alike: the
true minus, a signed difference, an interval, a p-value (bare, as a table cell, or as "p = ...")."""

from __future__ import annotations

MINUS = "\u2212"  # a true minus, as every signed number is written for reading


def signed(x: float, digits: int = 3) -> str:
    """A difference with its sign and a true minus: +0.012, −0.081 (0.000 when it rounds to zero).

    Examples
    --------
    >>> signed(-0.0812), signed(0.0004), signed(0.5, 1)
    ('−0.081', '0.000', '+0.5')
    """
    s = f"{x:+.{digits}f}"
    return s[1:] if float(s) == 0 else s.replace("-", MINUS)


def about(x: float) -> str:
    """A gain to two significant digits with its sign and a true minus: +0.041, −0.0059."""
    return f"{x:+.2g}".replace("-", MINUS)


def interval_text(low: float, high: float, digits: int = 3) -> str:
    """An interval as [−0.081, +0.107]."""
    return f"[{signed(low, digits)}, {signed(high, digits)}]"


def p_text(p: float) -> str:
    """A p-value for reading: 0.132, < 0.001, 1 (three decimals; 1 from 0.9995 up)."""
    return "1" if p >= 0.9995 else f"{p:.3f}" if p >= 0.001 else "< 0.001"


def p_is(p: float) -> str:
    """The same p-value said in a sentence (`p_text`'s rule): 'p = 0.006', 'p < 0.001', 'p = 1'."""
    text = p_text(p)
    return f"p {text}" if text.startswith("<") else f"p = {text}"
