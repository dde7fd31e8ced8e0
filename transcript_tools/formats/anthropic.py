"""Anthropic Messages conversations, and the content-block helpers Claude Code shares.

Layouts, all auto-detected:

- one conversation per record: ``{"system": str | [blocks], "messages": [{role, content}]}``
  (a JSONL line, or a whole ``.json`` file; a request body with ``model``/``tools`` is fine);
- one message per record (``{"role", "content", "usage"?}`` lines, e.g. saved responses);
- claude-trace style API captures: ``{"request": {"body": {...}}, "response": {"body": {...}
  | "body_raw": "event: ...SSE..."}}``. Every request carries the whole history, so each
  chain of requests (same first message, growing) becomes ONE conversation: its last
  request plus that request's response. The usage of every response in the chain is put
  on the assistant message it produced, so each API call is counted once.

Blocks: text; tool_use / server_tool_use → ToolUseBlock; tool_result → ToolResultMessage
(``is_error`` kept; a user message holding tool results never starts a turn, and any text
beside the results is appended to the last result); thinking / redacted_thinking →
``OtherBlock("thinking")``; image / document and anything else → ``OtherBlock(type)``; a
user message that is a single image → UserImageMessage. Usage: ``input_tokens`` is
input + cache creation + cache read (the whole prompt), cache fields kept as subsets.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import orjson

from ..messages import (
    AssistantMessage,
    Block,
    Conversation,
    Message,
    OtherBlock,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    Usage,
    UserImageMessage,
    UserMessage,
)
from ..tokens import usage_from_anthropic as usage_from_anthropic  # (Claude Code's reader too)
from .source import Record, Source, conversation_id, session_stem

NAME = "anthropic"
DESCRIPTION = (
    "Anthropic Messages ({system, messages:[{role, content blocks}]} per line or per file;"
    " claude-trace request/response captures)"
)

# Block types that only the Anthropic API uses (OpenAI has tool_calls / role "tool").
SPECIFIC_BLOCKS = frozenset(
    {"tool_use", "tool_result", "thinking", "redacted_thinking", "document", "server_tool_use"}
)
OPENAI_ROLES = frozenset({"system", "developer", "tool", "function"})


# ---- shared block helpers (Claude Code uses them too) ---------------------------------


def _int(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def block_from_anthropic(block: Any) -> Block | None:
    """One non-tool-result content block → Block (None for empty / unusable)."""
    if isinstance(block, str):
        return TextBlock(block)
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        return TextBlock(text) if isinstance(text, str) else None
    if kind in ("tool_use", "server_tool_use"):
        return ToolUseBlock(
            str(block.get("id", "")), str(block.get("name") or "unknown"), block.get("input")
        )
    if kind == "thinking":
        return OtherBlock("thinking", block.get("thinking") or "")
    if kind == "redacted_thinking":
        return OtherBlock("thinking", None)
    return OtherBlock(str(kind or "unknown"), block)


def blocks_from_anthropic(content: Any) -> list[Block]:
    if isinstance(content, str):
        return [TextBlock(content)] if content else []
    if not isinstance(content, list):
        return []
    out = []
    for raw in content:
        block = block_from_anthropic(raw)
        if block is not None:
            out.append(block)
    return out


def tool_result_text(content: Any) -> str:
    """The content of a tool_result block as text; non-text parts become ``[kind]``."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return str(content)
    parts = []
    for part in content:
        if isinstance(part, dict):
            if part.get("type") == "text" and isinstance(part.get("text"), str):
                parts.append(part["text"])
            else:
                parts.append(f"[{part.get('type', 'unknown')}]")
        elif isinstance(part, str):
            parts.append(part)
    return "\n".join(parts)


def tool_results(content: list[Any]) -> list[Message]:
    """A user content list holding tool_result blocks → ToolResultMessages.

    Text beside the results (reminders the client appended) is added to the last result:
    it reached the model in the same user message, which never starts a turn.
    """
    out: list[Message] = []
    extra: list[str] = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            out.append(
                ToolResultMessage(
                    str(block.get("tool_use_id", "")),
                    tool_result_text(block.get("content")),
                    block.get("is_error") is True,
                )
            )
        else:
            b = block_from_anthropic(block)
            if isinstance(b, TextBlock):
                extra.append(b.text)
            elif isinstance(b, OtherBlock):
                extra.append(f"[{b.kind}]")
    if extra and out:
        last = out[-1]
        assert isinstance(last, ToolResultMessage)
        out[-1] = dataclasses.replace(last, content="\n".join([last.content, *extra]))
    return out


def has_tool_result(content: Any) -> bool:
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def user_message(blocks: list[Block]) -> Message:
    """User blocks → UserImageMessage when they are one image, else UserMessage."""
    if len(blocks) == 1 and isinstance(blocks[0], OtherBlock) and blocks[0].kind == "image":
        data = blocks[0].data
        source = data.get("source") if isinstance(data, dict) else None
        if isinstance(source, dict):
            payload = source.get("data", source.get("url", source))
            return UserImageMessage(str(source.get("media_type", "")), payload)
        return UserImageMessage("", data)
    return UserMessage(tuple(blocks))


def system_text(system: Any) -> str:
    if isinstance(system, str):
        return system
    if isinstance(system, list):
        return "\n".join(
            b.get("text", "") if isinstance(b, dict) else str(b) for b in system if b is not None
        )
    return ""


# ---- detection ---------------------------------------------------------------------------


def _anthropic_messages(msgs: Any) -> bool:
    """Messages that use Anthropic-only block types and no OpenAI-only fields."""
    if not isinstance(msgs, list):
        return False
    specific = False
    for msg in msgs:
        if not isinstance(msg, dict):
            return False
        if msg.get("role") in OPENAI_ROLES or "tool_calls" in msg:
            return False
        content = msg.get("content")
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict):
                    kind = block.get("type")
                    if kind in SPECIFIC_BLOCKS or (kind == "image" and "source" in block):
                        specific = True
    return specific


def _is_trace(obj: dict[str, Any]) -> bool:
    return isinstance(obj.get("request"), dict) and "response" in obj


def _is_anthropic_trace(obj: dict[str, Any]) -> bool:
    """An API capture of a Messages call (not of some other API logged the same way)."""
    request = obj["request"]
    if "anthropic" in str(request.get("url", "")) or "/v1/messages" in str(request.get("url", "")):
        return True
    body = request.get("body")
    if isinstance(body, dict) and ("system" in body or _anthropic_messages(body.get("messages"))):
        return True
    return _trace_response(obj.get("response")) is not None


def sniff(head: list[Record]) -> bool:
    if not head:
        return False
    first = head[0].obj
    if _is_trace(first):
        return any(_is_anthropic_trace(r.obj) for r in head if _is_trace(r.obj))
    if isinstance(first.get("messages"), list):
        msgs = first["messages"]
        if any(isinstance(m, dict) and m.get("role") in OPENAI_ROLES for m in msgs):
            return False
        if "system" in first and all(isinstance(m, dict) and "role" in m for m in msgs):
            return True  # a top-level system prompt is Anthropic's shape, never OpenAI's
        return _anthropic_messages(msgs)
    # one message per record
    if not all(isinstance(r.obj.get("role"), str) for r in head):
        return False
    return _anthropic_messages([r.obj for r in head])


# ---- reading -----------------------------------------------------------------------------


class _Bad(ValueError):
    pass


def _convert(msgs: list[Any], system: Any, out: list[Message]) -> list[int]:
    """Append the messages of a request to ``out``; return, per request message, the index
    in ``out`` of the first Message it produced."""
    starts: list[int] = []
    text = system_text(system)
    if text:
        out.append(SystemMessage(text))
    for i, msg in enumerate(msgs):
        starts.append(len(out))
        if not isinstance(msg, dict):
            raise _Bad(f"messages[{i}]: a message must be an object")
        out.extend(_message(msg, f"messages[{i}]: "))
    return starts


def _message(msg: dict[str, Any], where: str = "") -> list[Message]:
    role = msg.get("role")
    content = msg.get("content")
    if content is not None and not isinstance(content, (str, list)):
        raise _Bad(f"{where}content must be a string or an array of blocks")
    if role == "assistant":
        model = msg.get("model")
        return [
            AssistantMessage(
                tuple(blocks_from_anthropic(content)),
                usage_from_anthropic(msg.get("usage")),
                model if isinstance(model, str) else None,
            )
        ]
    if role == "user":
        if has_tool_result(content):
            assert isinstance(content, list)
            return tool_results(content)
        return [user_message(blocks_from_anthropic(content))]
    if role == "system":
        return [SystemMessage(system_text(content))]
    raise _Bad(f"{where}unknown role {role!r} (expected user or assistant)")


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
            blocks[_int(event.get("index"))] = dict(event["content_block"])
        elif kind == "content_block_delta" and isinstance(event.get("delta"), dict):
            index, delta = _int(event.get("index")), event["delta"]
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
    usages: list[tuple[int, Usage]]  # (messages in the request, usage of its response)


class _Traces:
    """API captures grouped into chains; only the last request of each chain is kept."""

    def __init__(self) -> None:
        self.chains: list[_Chain] = []
        self.open: dict[bytes, _Chain] = {}

    def add(self, record: Record) -> None:
        request = record.obj.get("request")
        body = request.get("body") if isinstance(request, dict) else None
        if (
            not isinstance(body, dict)
            or not isinstance(body.get("messages"), list)
            or not body["messages"]
        ):
            return  # not a Messages call (token counting, telemetry, ...)
        msgs = body["messages"]
        key = orjson.dumps(msgs[0], option=orjson.OPT_SORT_KEYS)
        response = _trace_response(record.obj.get("response"))
        usage = usage_from_anthropic(response.get("usage")) if response else None
        chain = self.open.get(key)
        if chain is None or len(msgs) < chain.length:
            chain = _Chain(record, response, len(msgs), [])
            self.open[key] = chain
            self.chains.append(chain)
        chain.record, chain.response, chain.length = record, response, len(msgs)
        if usage is not None:
            chain.usages.append((len(msgs), usage))

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
                starts = _convert(msgs, body.get("system"), conv.messages)
            except _Bad as exc:
                source.bad(chain.record.error(source.display, f"request {exc}"))
                continue
            for n, usage in chain.usages:
                target = conv.messages[starts[n]] if n < len(starts) else None
                if isinstance(target, AssistantMessage):
                    conv.messages[starts[n]] = dataclasses.replace(target, usage=usage)
            yield conv


def read(records: Iterator[Record], source: Source) -> Iterator[Conversation]:
    per_message: Conversation | None = None
    traces = _Traces()
    index = 0
    for record in records:
        obj = record.obj
        if _is_trace(obj):
            traces.add(record)
            continue
        msgs = obj.get("messages")
        if isinstance(msgs, list):
            index += 1
            conv = Conversation(
                conversation_id(obj, source, index, record, ("id", "session_id", "conversation_id")), source.display, NAME, line=record.line
            )
            try:
                _convert(msgs, obj.get("system"), conv.messages)
            except _Bad as exc:
                source.bad(record.error(source.display, str(exc)))
                continue
            yield conv
            continue
        if per_message is None:
            per_message = Conversation(session_stem(source), source.display, NAME, line=record.line)
        try:
            per_message.messages.extend(_message(obj))
        except _Bad as exc:
            source.bad(record.error(source.display, str(exc)))
    if per_message is not None:
        yield per_message
    yield from traces.conversations(source)
