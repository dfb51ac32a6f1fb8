"""Numbers and settings written for reading: signed differences with a true minus, p-values, intervals."""

from __future__ import annotations

MINUS = "\u2212"


def signed(x: float, digits: int = 3) -> str:
    """A difference with its sign and a true minus: +0.012, −0.081 (0.000 when it rounds to zero)."""
    s = f"{x:+.{digits}f}"
    return s[1:] if float(s) == 0 else s.replace("-", MINUS)


def interval_text(low: float, high: float, digits: int = 3) -> str:
    """An interval as [−0.081, +0.107]."""
    return f"[{signed(low, digits)}, {signed(high, digits)}]"


def p_text(p: float) -> str:
    """A p-value for reading: 0.132, < 0.001, 1."""
    return "1" if p >= 0.9995 else f"{p:.3f}" if p >= 0.001 else "< 0.001"


def fmt_setting(setting: dict) -> str:
    """A setting for reading: k1 = 1.2, b = 0.75."""
    return ", ".join(f"{n} = {v:g}" for n, v in setting.items())
