"""Scalar fields of a log's JSON, read the one way every reader reads them: a value of
another type is the field's default, never an exception (a bool is not a number)."""

from __future__ import annotations

from typing import Any

from .source import Warn, count_field


def str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def str_or_empty(value: Any) -> str:
    return value if isinstance(value, str) else ""


def int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def nested(value: Any, *keys: str) -> Any:
    """``value[k1][k2]…`` through nested JSON objects; None where a step is not an object."""
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def int_or_zero(value: Any) -> int:
    """A JSON number (an integer or a float, truncated) as an int; anything else is 0."""
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def counts(obj: dict[str, Any], prefix: str, keys: tuple[str, ...], warn: Warn | None) -> list[int]:
    """Token counts: ``source.count_field`` of each of ``keys`` of ``obj``, in order, named
    ``prefix + key``."""
    return [count_field(obj.get(key), prefix + key, warn) for key in keys]
