"""Summary providers: a lazy registry, so importing tsum never imports an SDK."""

from __future__ import annotations

from .base import Provider, SummaryOutcome, SummaryRequest, SummaryResponse
from .registry import PROVIDER_NAMES, get_provider

__all__ = [
    "PROVIDER_NAMES",
    "Provider",
    "SummaryOutcome",
    "SummaryRequest",
    "SummaryResponse",
    "get_provider",
]
