"""The provider protocol: one async call from a rendered prompt to summary text.

The session engine never calls a provider itself: it hands out a
``SummaryRequest`` and takes back a ``SummaryOutcome``. Drivers (inline,
concurrent pool, cache) sit between the two.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..engine.requests import SummaryRequest, SummaryResponse


class Provider(Protocol):
    """A summary provider. Implementations: offline, anthropic, openai."""

    name: str
    key_env: str | None  # env var that must hold the key, or None

    @property
    def default_model(self) -> str: ...

    def identity(self, model: str | None) -> dict[str, Any]:
        """Everything besides the prompt that determines the response (cache key; never secrets)."""
        ...

    async def complete(self, prompt: str, model: str | None, max_tokens: int) -> SummaryResponse:
        """One call. Raise ProviderError on failure (retryable or not)."""
        ...


class RequestProvider(Provider, Protocol):
    """A provider that takes the whole request (its messages too), not only the prompt.
    Executors call ``complete_request`` when a provider has it."""

    async def complete_request(self, request: SummaryRequest, model: str) -> SummaryResponse: ...
