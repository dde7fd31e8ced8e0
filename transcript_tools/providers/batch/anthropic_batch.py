"""Anthropic Message Batches: ``client.messages.batches`` create / retrieve / results / cancel."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson

from ..anthropic import AnthropicProvider, _to_response
from ..retry import ProviderCallError, refuse_if_offline
from ._guard import guarded
from .base import BatchItem, BatchLimits, BatchResult, BatchStatus, exact, merge_limits

# https://docs.anthropic.com/en/docs/build-with-claude/batch-processing (limits as of 2025)
API_LIMITS = BatchLimits(max_requests=100_000, max_bytes=256 * 1024 * 1024)


class AnthropicBatchClient:
    provider_name = "anthropic"

    def __init__(self, provider: AnthropicProvider, limits: BatchLimits | None = None) -> None:
        self._provider = provider
        self.limits = merge_limits(API_LIMITS, limits)

    def encode(self, item: BatchItem) -> bytes:
        """The synchronous call's body (``AnthropicProvider.body``), as batch params."""
        params = self._provider.body(item.prompt, item.model, item.max_tokens)
        return exact(orjson.dumps({"custom_id": item.custom_id, "params": params}))

    def _client(self) -> Any:
        refuse_if_offline(self.provider_name)
        return self._provider._client()

    async def submit(self, requests: list[bytes]) -> str:
        # What ``client.messages.batches.create(requests=...)`` sends (its body is
        # ``{"requests": [...]}`` POSTed to this path), through the same SDK client, but
        # already serialized: the SDK would copy and re-encode a batch of up to 256 MB.
        from anthropic.types.messages import MessageBatch

        payload = b'{"requests":[' + b",".join(requests) + b"]}"
        with guarded(self._provider):
            batch = await self._client().post(
                "/v1/messages/batches",
                content=payload,
                cast_to=MessageBatch,
                options={"headers": {"Content-Type": "application/json"}},
            )
        return str(batch.id)

    async def poll(self, batch_id: str) -> BatchStatus:
        with guarded(self._provider):
            batch = await self._client().messages.batches.retrieve(batch_id)
        return _status(batch)

    async def cancel(self, batch_id: str) -> BatchStatus:
        with guarded(self._provider):
            batch = await self._client().messages.batches.cancel(batch_id)
        return _status(batch)

    async def results(self, batch_id: str) -> AsyncIterator[BatchResult]:
        """Streamed line by line (the SDK's JSONL decoder): never the whole file in memory."""
        requested = self._provider.default_model
        with guarded(self._provider):
            decoder = await self._client().messages.batches.results(batch_id)
            async for line in decoder:
                yield _result(line, requested)


def _status(batch: Any) -> BatchStatus:
    counts = batch.request_counts
    return BatchStatus(
        batch_id=str(batch.id),
        state=str(batch.processing_status),
        ended=batch.processing_status == "ended",
        counts={
            name: int(getattr(counts, name, 0) or 0)
            for name in ("processing", "succeeded", "errored", "canceled", "expired")
        },
    )


def _result(line: Any, requested: str) -> BatchResult:
    custom_id = str(line.custom_id)
    result = line.result
    kind = getattr(result, "type", None)
    if kind == "succeeded":
        message = result.message
        model = getattr(message, "model", None) or requested
        try:
            return BatchResult(custom_id, _to_response(message, model))
        except ProviderCallError as exc:  # refusal, empty: a failed summary
            return BatchResult(custom_id, None, str(exc), exc.usage)
    if kind == "errored":
        error = getattr(getattr(result, "error", None), "error", None)
        code = getattr(error, "type", None)
        detail = f" ({code})" if isinstance(code, str) and code.replace("_", "").isalnum() else ""
        return BatchResult(custom_id, None, f"anthropic: batch request errored{detail}")
    return BatchResult(custom_id, None, f"anthropic: batch request {kind or 'not processed'}")
