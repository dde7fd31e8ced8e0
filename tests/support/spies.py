"""Counting a method's calls in a test, the method still doing its work."""

from __future__ import annotations

from typing import Any

import pytest


def spy(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> list[int]:
    """Count the calls of ``owner.name``, a class's method or a module's function (a list,
    one entry per call)."""
    calls: list[int] = []
    method = getattr(owner, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return method(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls
