"""The batch clients' shared types: requests, results, statuses, limits, SDK errors, the report."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from ...engine.messages import Usage
from ...engine.requests import SummaryResponse


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
    usage: Usage | None = None  # what a failed answer (a refusal, an empty one) was billed


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


# tsum's own cap per batch, below the APIs' (256 / 200 MB): a batch is built in memory,
# so this bounds the memory of a run (TSUM_BATCH_MAX_BYTES / _REQUESTS lower it further).
DEFAULT_LIMITS = BatchLimits(max_requests=100_000, max_bytes=32 * 1024 * 1024)


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

    sdk = provider.sdk()
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


@dataclass(slots=True)
class BatchReport:
    """What a --batch run did: its rounds, batches and results (manifest and end line)."""

    rounds: int = 0
    planned_ahead: bool = False  # schedule independent of summary text: all firings at once
    resumed: list[str] = field(default_factory=list)  # in flight when the run started
    submitted: list[str] = field(default_factory=list)  # created by this run
    requests_submitted: int = 0
    results_ok: int = 0
    results_failed: int = 0
    usage: Usage = field(default_factory=Usage)  # of the results read by this run

    def to_json(self) -> dict[str, Any]:
        return {
            "rounds": self.rounds,
            "planned_ahead": self.planned_ahead,
            "batches_resumed": self.resumed,
            "batches_submitted": self.submitted,
            "requests_submitted": self.requests_submitted,
            "results_ok": self.results_ok,
            "results_failed": self.results_failed,
            "input_tokens": self.usage.input_tokens,
            "output_tokens": self.usage.output_tokens,
        }

    def line(self) -> str:
        parts = [f"batch: {self.rounds} round(s)", f"{len(self.submitted)} batch(es) submitted"]
        if self.resumed:
            parts.append(f"{len(self.resumed)} resumed")
        parts.append(f"{self.requests_submitted} requests sent")
        parts.append(f"{self.results_ok} results ok, {self.results_failed} failed")
        return ", ".join(parts)
