"""claude-trace captures: request/response logs of the Anthropic Messages API.

A line is ``{"request": {"url", "headers", "body": {model, system, tools, messages}},
"response": {"status_code", "headers", "body": {...} | "body_raw": "event: ...SSE..."},
"logged_at"}``. Detected and read as part of the ``anthropic`` format (conversations say
``anthropic``); this module holds what is specific to captures.

Every request carries the whole history, so each chain of requests (same first message,
growing) becomes ONE conversation: its last request plus that request's response.
Requests are compared without ``cache_control`` (the client moves its cache breakpoints
from request to request; the conversation is the same). The usage of every recorded
response goes on the assistant message it produced, so each API call is counted once —
a request sent again unchanged (a retry) is another call: its usage is added to the same
message. Requests that are not Messages calls (token counting, telemetry) are skipped.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import orjson

from ..engine.messages import AssistantMessage, Conversation, Usage
from .anthropic_api import (
    BadMessage,
    anthropic_messages,
    convert_messages,
    usage_from_anthropic,
)
from .fields import nested
from .source import Record, Source, count_field, session_stem

NAME = (
    "anthropic"  # a capture is a conversation of the anthropic format (its reader calls this one)
)


def is_trace(obj: dict[str, Any]) -> bool:
    return isinstance(obj.get("request"), dict) and "response" in obj


def _is_anthropic_trace(obj: dict[str, Any]) -> bool:
    """An API capture of a Messages call (not of some other API logged the same way)."""
    request = obj["request"]
    if "anthropic" in str(request.get("url", "")) or "/v1/messages" in str(request.get("url", "")):
        return True
    body = request.get("body")
    if isinstance(body, dict) and ("system" in body or anthropic_messages(body.get("messages"))):
        return True
    return _trace_response(obj.get("response")) is not None


def sniff(head: list[Record]) -> bool:
    return any(_is_anthropic_trace(r.obj) for r in head if is_trace(r.obj))


def without_cache_control(value: Any) -> Any:
    """A request value with every ``cache_control`` key removed (at any depth)."""
    if isinstance(value, dict):
        return {k: without_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [without_cache_control(v) for v in value]
    return value


def response_from_sse(raw: str) -> dict[str, Any]:
    """Rebuild a Messages API response from its server-sent event stream."""
    message: dict[str, Any] = {"role": "assistant", "content": []}
    blocks: dict[int, dict[str, Any]] = {}
    json_parts: dict[int, list[str]] = {}
    usage: dict[str, Any] = {}
    for line in raw.splitlines():
        if not line.startswith("data:"):
            continue
        try:
            event = orjson.loads(line[5:].strip())
        except orjson.JSONDecodeError:
            continue
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        if kind == "message_start" and isinstance(event.get("message"), dict):
            start = event["message"]
            message["model"] = start.get("model")
            message["id"] = start.get("id")
            usage.update(start.get("usage") or {})
        elif kind == "content_block_start" and isinstance(event.get("content_block"), dict):
            blocks[count_field(event.get("index"), "index")] = dict(event["content_block"])
        elif kind == "content_block_delta" and isinstance(event.get("delta"), dict):
            index, delta = count_field(event.get("index"), "index"), event["delta"]
            block = blocks.setdefault(index, {"type": "text", "text": ""})
            if delta.get("type") == "text_delta":
                block["text"] = block.get("text", "") + str(delta.get("text", ""))
            elif delta.get("type") == "thinking_delta":
                block["thinking"] = block.get("thinking", "") + str(delta.get("thinking", ""))
            elif delta.get("type") == "input_json_delta":
                json_parts.setdefault(index, []).append(str(delta.get("partial_json", "")))
        elif kind == "message_delta":
            usage.update({k: v for k, v in (event.get("usage") or {}).items() if v is not None})
    for index, parts in json_parts.items():
        try:
            blocks[index]["input"] = orjson.loads("".join(parts) or "{}")
        except orjson.JSONDecodeError:
            blocks[index]["input"] = "".join(parts)
    message["content"] = [blocks[i] for i in sorted(blocks)]
    if usage:
        message["usage"] = usage
    return message


def _trace_response(response: Any) -> dict[str, Any] | None:
    if not isinstance(response, dict):
        return None
    body = response.get("body")
    if isinstance(body, dict) and body.get("type") == "message":
        return body
    raw = response.get("body_raw")
    if isinstance(raw, str) and "message_start" in raw:
        return response_from_sse(raw)
    return None


@dataclasses.dataclass(slots=True)
class _Chain:
    record: Record  # the latest request of the chain (earlier ones are not kept)
    response: dict[str, Any] | None
    length: int
    # (messages in the request, usage of its response, the request's record)
    usages: list[tuple[int, Usage, Record]]


class Traces:
    """API captures grouped into chains; only the last request of each chain is kept."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.chains: list[_Chain] = []
        self.open: dict[bytes, _Chain] = {}

    def add(self, record: Record) -> None:
        body = nested(record.obj, "request", "body")
        if (
            not isinstance(body, dict)
            or not isinstance(body.get("messages"), list)
            or not body["messages"]
        ):
            return  # not a Messages call (token counting, telemetry, ...)
        msgs = body["messages"]
        key = orjson.dumps(without_cache_control(msgs[0]), option=orjson.OPT_SORT_KEYS)
        response = _trace_response(record.obj.get("response"))
        usage = (
            usage_from_anthropic(response.get("usage"), self.source.warner(record))
            if response
            else None
        )
        chain = self.open.get(key)
        if chain is None or len(msgs) < chain.length:
            chain = _Chain(record, response, len(msgs), [])
            self.open[key] = chain
            self.chains.append(chain)
        chain.record, chain.response, chain.length = record, response, len(msgs)
        if usage is not None:
            chain.usages.append((len(msgs), usage, record))

    def conversations(self, source: Source) -> Iterator[Conversation]:
        stem = session_stem(source)
        for index, chain in enumerate(self.chains, 1):
            conv = Conversation(
                f"{stem}#{index}" if len(self.chains) > 1 else stem,
                source.display,
                NAME,
                line=chain.record.line,
            )
            body = chain.record.obj["request"]["body"]
            msgs = list(body["messages"])
            if chain.response is not None:
                msgs.append({**chain.response, "role": "assistant"})
            try:
                starts = convert_messages(
                    msgs, body.get("system"), conv.messages, source.warner(chain.record)
                )
            except BadMessage as exc:
                source.bad_record(chain.record, f"request {exc}")
                continue
            billed: set[int] = set()
            for n, usage, record in chain.usages:
                target = conv.messages[starts[n]] if n < len(starts) else None
                if not isinstance(target, AssistantMessage):
                    source.dropped(
                        record,
                        f"the response's usage ({usage.total_tokens} tokens) has no assistant"
                        " message in the conversation's last request (ignored)",
                    )
                    continue
                if n in billed and target.usage is not None:
                    usage = target.usage + usage  # the same request again: one more call
                billed.add(n)
                conv.messages[starts[n]] = dataclasses.replace(target, usage=usage)
            yield conv
