"""The providers' batch APIs (half price, results within 24 hours) behind one small protocol.

``submit`` (requests keyed by ``custom_id``) → a batch id; ``poll`` → its status;
``results`` → a stream of ``BatchResult`` (a ``SummaryResponse`` or an error).
The ``custom_id`` of a request is its response-cache key (64 hex digits: within
Anthropic's ``^[a-zA-Z0-9_-]{1,64}$``), so a result goes straight into the cache
under the key the synchronous path would use. Request bodies are built exactly
as the synchronous providers build them (one user message, ``max_tokens``, the
model, the temperature if set).

Importing this package never imports an SDK: ``batch_client`` imports the
provider's module only when asked for it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from ...errors import ProviderConfigError
from ..base import Provider, SummaryResponse


@dataclass(frozen=True, slots=True)
class BatchItem:
    """One summary request inside a batch."""

    custom_id: str  # the response-cache key
    prompt: str
    model: str
    max_tokens: int


@dataclass(frozen=True, slots=True)
class BatchStatus:
    batch_id: str
    state: str  # the API's own word (in_progress, ended, completed, expired, ...)
    ended: bool  # no further processing: results (if any) can be read
    counts: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class BatchResult:
    custom_id: str
    response: SummaryResponse | None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class BatchLimits:
    """Per-batch limits of an API; a smaller value splits sooner (tests, memory)."""

    max_requests: int
    max_bytes: int


class BatchClient(Protocol):
    provider_name: str
    limits: BatchLimits

    def encode(self, item: BatchItem) -> bytes:
        """The item's request as the API takes it (compact JSON, UTF-8): its size counts."""
        ...

    async def submit(self, requests: list[bytes]) -> str:
        """One batch of encoded requests (held as bytes: a third of a str's memory)."""
        ...

    async def poll(self, batch_id: str) -> BatchStatus: ...

    def results(self, batch_id: str) -> AsyncIterator[BatchResult]: ...

    async def cancel(self, batch_id: str) -> BatchStatus: ...


BATCH_PROVIDERS = ("anthropic", "openai")
# tsum's own cap per batch, below the APIs' (256 / 200 MB): a batch is built in memory,
# so this bounds the memory of a run (TSUM_BATCH_MAX_BYTES / _REQUESTS lower it further).
DEFAULT_LIMITS = BatchLimits(max_requests=100_000, max_bytes=32 * 1024 * 1024)


def batch_client(provider: Provider, limits: BatchLimits | None = None) -> BatchClient:
    """The batch client sharing ``provider``'s SDK client, key, base URL and request shape."""
    name = getattr(provider, "name", "")
    if name == "anthropic":
        from .anthropic_batch import AnthropicBatchClient

        return AnthropicBatchClient(provider, limits)  # type: ignore[arg-type]
    if name == "openai":
        from .openai_batch import OpenAIBatchClient

        return OpenAIBatchClient(provider, limits)  # type: ignore[arg-type]
    raise ProviderConfigError(
        f"--batch needs --provider anthropic or openai (the {name or 'given'} provider has no batch API)"
    )


def exact(data: bytes) -> bytes:
    """A copy of exactly ``len(data)`` bytes. orjson's output keeps its working buffer
    (measured: ~12x the length for a 40 KB prompt), and a batch holds thousands of them."""
    return memoryview(data).tobytes()


def merge_limits(api: BatchLimits, override: BatchLimits | None) -> BatchLimits:
    override = override or DEFAULT_LIMITS
    return BatchLimits(
        min(api.max_requests, override.max_requests), min(api.max_bytes, override.max_bytes)
    )


def sdk_error(provider: Any, exc: BaseException) -> Exception | None:
    """A sanitized ``ProviderCallError`` for an SDK exception (None: not the SDK's)."""
    from ..retry import ProviderCallError, public_url, status_error

    sdk = provider.sdk
    name = provider.name
    if isinstance(exc, sdk.APIStatusError):
        return status_error(
            name, exc.status_code, headers=exc.response.headers, error_type=exc.type
        )
    if isinstance(exc, sdk.APITimeoutError):
        return ProviderCallError(f"{name}: batch API timed out", retryable=True)
    if isinstance(exc, sdk.APIConnectionError):
        cause = type(exc.__cause__).__name__ if exc.__cause__ else "unknown"
        return ProviderCallError(
            f"{name}: connection error ({cause}) to {public_url(provider._base_url)}",
            retryable=True,
        )
    if isinstance(exc, ValueError | provider.base_error):
        return ProviderCallError(f"{name}: batch API error ({type(exc).__name__})")
    return None
