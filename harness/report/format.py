"""Display rules for people, as tested functions.

>>> format_p(0.0004), format_p(0.0123), format_p(float("nan"))
('< 0.001', '0.012', '–')
>>> format_value(0.123456), format_value(1500.0, integer=True), format_delta(-0.01234)
('0.1235', '1500', '−0.0123')
"""

from __future__ import annotations

import math

DASH = "–"
MINUS = "−"


def format_value(value: float | None, digits: int = 4, integer: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return DASH
    if math.isinf(value):
        return "∞" if value > 0 else f"{MINUS}∞"
    if integer:
        return f"{round(value)}"
    return f"{value:.{digits}f}".replace("-", MINUS)


def format_delta(value: float | None, digits: int = 4) -> str:
    if value is None or math.isnan(value):
        return DASH
    sign = "+" if value > 0 else (MINUS if value < 0 else "±")
    return f"{sign}{abs(value):.{digits}f}"


def as_ascii(text: str) -> str:
    """Text for files and terminals meant for pasting (summary.md, ``harness compare``): numbers with the ASCII
    hyphen-minus that Python, awk and spreadsheets read (the report keeps the typographic minus), NaN as ``n/a``.

    >>> as_ascii(format_delta(-0.01234)), as_ascii(format_delta(0.0)), as_ascii(format_value(float("nan")))
    ('-0.0123', '0.0000', 'n/a')
    """
    if text == DASH:
        return "n/a"
    return text.replace(MINUS, "-").replace("±", "").replace("∞", "inf")


def format_p(p: float | None) -> str:
    """p-values below 0.001 print as '< 0.001', never '0.000'."""
    if p is None or math.isnan(p):
        return DASH
    if p < 0.001:
        return "< 0.001"
    return f"{p:.3f}"


def format_ci(low: float | None, high: float | None, digits: int = 4) -> str:
    if low is None or high is None or math.isnan(low) or math.isnan(high):
        return DASH
    return f"[{format_value(low, digits)}, {format_value(high, digits)}]"
