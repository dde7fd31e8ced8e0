"""Every number format of the tables, reports and chart labels, one function each; and
``shown_places``, the one way a long list in a message is cut short."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

Unit = Literal["tokens", "usd"]


def grouped(value: object) -> str:
    """``1,234`` for an int, ``-`` for None, anything else as it is."""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return "-" if value is None else str(value)


def percent(value: float | None) -> str:
    """A share with one decimal, ``12.3%``; ``—`` for None."""
    return "—" if value is None else f"{value * 100:.1f}%"


def whole_percent(value: float | None) -> str:
    """A share rounded to a whole percent, ``12%``; ``-`` for None."""
    return "-" if value is None else f"{value:.0%}"


def compact(value: float | str | None) -> str:
    """Two or three digits: ``800``, ``1.5k``, ``12k``, ``1.5M``, ``12M``; ``-`` for None,
    a string (``auto``) as it is."""
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    for scale, suffix in ((1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.{0 if abs(value) >= 10 * scale else 1}f}{suffix}"
    return f"{value:.0f}"


def short(value: float | str) -> str:
    """Every significant digit up to six: ``800``, ``1.25k``, ``2M``; a string as it is."""
    if isinstance(value, str):
        return value
    for scale, suffix in ((1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:g}{suffix}"
    return f"{value:g}"


def kilo(value: float) -> str:
    """Thousands with one decimal, ``12.3k``, below a thousand whole: ``800``."""
    return f"{value / 1000:.1f}k" if value >= 1000 else f"{value:.0f}"


def tick_label(value: float, unit: Unit, decimals: int) -> str:
    """``$0.015`` for money; ``800``, ``1.5k``, ``2M`` for tokens."""
    if unit == "usd":  # a change can be negative: -$2, not $-2
        return f"{'-' if value < 0 else ''}${abs(value):.{decimals}f}"
    for scale, suffix in ((1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{round(value / scale, 3):g}{suffix}"
    return f"{round(value, decimals):g}"


def binary_size(size: int) -> str:
    """Bytes in the largest binary unit up to GiB: ``512 B``, ``1.5 KiB``, ``2.0 GiB``."""
    value = float(size)
    for unit in ("B", "KiB", "MiB"):
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def shown_places(
    items: Sequence[object], limit: int, more: str = ", … ({} more)", sep: str = ", "
) -> str:
    """The first ``limit`` items joined by ``sep``, then ``more`` (``{}``: how many are not shown)."""
    shown = sep.join(map(str, items[:limit]))
    return shown + (more.format(len(items) - limit) if len(items) > limit else "")
