"""How numbers are written in tables (the report, ``nbvslr fidelity``, ``nbvslr compare``):
one formatter for errors, one for sizes m, one placeholder for a missing value."""

from __future__ import annotations

import math

MISSING = "n/a"
"""What a table shows for a missing or undefined number (NaN, None, no such row)."""


def _missing(x) -> bool:
    try:
        return x is None or not math.isfinite(float(x))
    except (TypeError, ValueError):
        return True


def number(x, digits: int = 3) -> str:
    """``x`` with ``digits`` decimals; ``MISSING`` for None, NaN or an infinity. A rounding
    residue such as -2.5e-16 (an error of 0 summed in floating point) is written as 0."""
    if _missing(x):
        return MISSING
    text = f"{float(x):.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def signed(x, digits: int = 4) -> str:
    """``x`` with its sign and ``digits`` decimals (``+0.0123``); ``MISSING`` when missing."""
    if _missing(x):
        return MISSING
    return f"{float(x):+.{digits}f}"


def m_text(x) -> str:
    """A size m: whole sizes as integers, interpolated ones to one decimal (``83.4``);
    ``MISSING`` for None, NaN or an infinity."""
    if _missing(x):
        return MISSING
    return f"{float(x):.0f}" if float(x).is_integer() else f"{float(x):.1f}"
