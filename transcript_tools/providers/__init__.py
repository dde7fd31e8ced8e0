"""Summary providers: a registry of self-registering classes; importing tsum never imports an SDK."""

from __future__ import annotations

from typing import Any

from ..engine.requests import SummaryOutcome, SummaryRequest, SummaryResponse
from .base import Provider
from .registry import get_provider, provider_names, register

__all__ = [
    "PROVIDER_NAMES",
    "Provider",
    "SummaryOutcome",
    "SummaryRequest",
    "SummaryResponse",
    "get_provider",
    "provider_names",
    "register",
]


def __getattr__(name: str) -> Any:
    if name == "PROVIDER_NAMES":  # the built-in names, computed from their classes on first use
        from . import registry

        return registry.builtin_names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
