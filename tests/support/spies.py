"""Counting a method's calls in a test, the method still doing its work."""

from __future__ import annotations

from typing import Any

import pytest


def spy(monkeypatch: pytest.MonkeyPatch, cls: type, name: str) -> list[int]:
    """Count the calls of ``cls.name`` (a list, one entry per call)."""
    calls: list[int] = []
    method = getattr(cls, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return method(*args, **kwargs)

    monkeypatch.setattr(cls, name, counted)
    return calls
