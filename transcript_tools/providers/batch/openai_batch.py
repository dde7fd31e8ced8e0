"""OpenAI Batch API: a JSONL file (``client.files.create``), ``client.batches``
create / retrieve / cancel, and the output and error files streamed back."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson

from ..openai import OpenAIProvider, _to_response
from ..retry import ProviderCallError, refuse_if_offline
from ..sdk import json_namespace
from ._guard import guarded
from .base import BatchItem, BatchLimits, BatchResult, BatchStatus, exact, merge_limits

# https://platform.openai.com/docs/guides/batch (limits as of 2025)
API_LIMITS = BatchLimits(max_requests=50_000, max_bytes=200 * 1024 * 1024)
ENDPOINT = "/v1/chat/completions"
ENDED = frozenset({"completed", "failed", "expired", "cancelled"})


class OpenAIBatchClient:
    provider_name = "openai"

    def __init__(self, provider: OpenAIProvider, limits: BatchLimits | None = None) -> None:
        self._provider = provider
        self.limits = merge_limits(API_LIMITS, limits)

    def encode(self, item: BatchItem) -> bytes:
        """The synchronous call's body (``OpenAIProvider.body``), as one request line."""
        body = self._provider.body(item.prompt, item.model, item.max_tokens)
        request = {"custom_id": item.custom_id, "method": "POST", "url": ENDPOINT, "body": body}
        return exact(orjson.dumps(request) + b"\n")

    def _client(self) -> Any:
        refuse_if_offline(self.provider_name)
        return self._provider._client()

    async def submit(self, requests: list[bytes]) -> str:
        data = b"".join(requests)
        client = self._client()
        with guarded(self._provider):
            uploaded = await client.files.create(
                file=("tsum-batch.jsonl", data, "application/jsonl"), purpose="batch"
            )
            batch = await client.batches.create(
                input_file_id=uploaded.id,
                endpoint=ENDPOINT,
                completion_window="24h",
                metadata={"tool": "tsum"},
            )
        return str(batch.id)

    async def poll(self, batch_id: str) -> BatchStatus:
        with guarded(self._provider):
            batch = await self._client().batches.retrieve(batch_id)
        return _status(batch)

    async def cancel(self, batch_id: str) -> BatchStatus:
        with guarded(self._provider):
            batch = await self._client().batches.cancel(batch_id)
        return _status(batch)

    async def results(self, batch_id: str) -> AsyncIterator[BatchResult]:
        """The output file, then the error file, each streamed line by line."""
        client = self._client()
        requested = self._provider.default_model
        with guarded(self._provider):
            batch = await client.batches.retrieve(batch_id)
            for file_id in (batch.output_file_id, batch.error_file_id):
                if not file_id:
                    continue
                async with client.files.with_streaming_response.content(file_id) as response:
                    async for text in response.iter_lines():
                        if text.strip():
                            yield _result(orjson.loads(text), requested)


def _status(batch: Any) -> BatchStatus:
    counts = batch.request_counts
    return BatchStatus(
        batch_id=str(batch.id),
        state=str(batch.status),
        ended=batch.status in ENDED,
        counts={
            name: int(getattr(counts, name, 0) or 0) for name in ("total", "completed", "failed")
        }
        if counts is not None
        else {},
    )


def _result(line: dict[str, Any], requested: str) -> BatchResult:
    custom_id = str(line.get("custom_id", ""))
    response = line.get("response") or {}
    status = response.get("status_code")
    body = response.get("body")
    if status == 200 and isinstance(body, dict):
        try:
            return BatchResult(custom_id, _to_response(json_namespace(body), requested))
        except ProviderCallError as exc:  # refusal, filtered, empty: a failed summary
            return BatchResult(custom_id, None, str(exc), exc.usage)
    error = line.get("error") or (body.get("error") if isinstance(body, dict) else None) or {}
    code = error.get("code") or error.get("type") if isinstance(error, dict) else None
    detail = f" ({code})" if isinstance(code, str) and code.replace("_", "").isalnum() else ""
    where = f"HTTP {status}" if isinstance(status, int) else "failed"
    return BatchResult(custom_id, None, f"openai: batch request {where}{detail}")
