"""tsum's own JSONL form of the Message model: one message per line.

Lines (``kind`` tells the variant)::

    {"kind":"session","session_id":"..."}                      optional header
    {"kind":"system","text":"..."}
    {"kind":"user","blocks":[{"type":"text","text":"..."}, ...]}
    {"kind":"user_image","media_type":"image/png","data":...}
    {"kind":"assistant","blocks":[...],"usage":{...},"model":"..."}   usage/model optional
    {"kind":"tool_result","tool_call_id":"...","content":"...","is_error":false}

Blocks: ``{"type":"text","text"}``, ``{"type":"tool_use","id","name","input"}``,
``{"type":"other","kind","data"}``. Serialization round-trips exactly.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from ..engine.messages import (
    ORIGINS,
    PERSON,
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
from .fields import str_or_none
from .source import Record, Source, session_stem

NAME = "native"
DESCRIPTION = "tsum's own JSONL (one Message per line, `kind` field)"
KINDS = frozenset({"session", "system", "user", "user_image", "assistant", "tool_result"})


def sniff(head: list[Record]) -> bool:
    return bool(head) and all(r.obj.get("kind") in KINDS and r.line for r in head)


# ---- serialization -------------------------------------------------------


def usage_to_json(usage: Usage) -> dict[str, int]:
    out = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
    if usage.cache_read_tokens:
        out["cache_read_tokens"] = usage.cache_read_tokens
    if usage.cache_creation_tokens:
        out["cache_creation_tokens"] = usage.cache_creation_tokens
    return out


def _block_to_json(block: Block) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    out: dict[str, Any] = {"type": "other", "kind": block.kind}
    if block.data is not None:
        out["data"] = block.data
    return out


def message_to_json(message: Message) -> dict[str, Any]:
    if isinstance(message, SystemMessage):
        return {"kind": "system", "text": message.text}
    if isinstance(message, UserMessage):
        out: dict[str, Any] = {
            "kind": "user",
            "blocks": [_block_to_json(b) for b in message.blocks],
        }
        if message.origin != PERSON:  # omitted for a person: older native files stay valid
            out["origin"] = message.origin
        return out
    if isinstance(message, UserImageMessage):
        out = {"kind": "user_image", "media_type": message.media_type}
        if message.data is not None:
            out["data"] = message.data
        return out
    if isinstance(message, AssistantMessage):
        out = {"kind": "assistant", "blocks": [_block_to_json(b) for b in message.blocks]}
        if message.usage is not None:
            out["usage"] = usage_to_json(message.usage)
        if message.model is not None:
            out["model"] = message.model
        return out
    return {
        "kind": "tool_result",
        "tool_call_id": message.tool_call_id,
        "content": message.content,
        "is_error": message.is_error,
    }


def iter_message_lines(
    messages: Iterable[Message], session_id: str | None = None
) -> Iterator[bytes]:
    """Native JSONL lines (each ending in a newline), with a session header when an id is given."""
    dumps = orjson.dumps
    if session_id is not None:
        yield dumps({"kind": "session", "session_id": session_id}) + b"\n"
    for message in messages:
        yield dumps(message_to_json(message)) + b"\n"


def write_messages(
    path: str | Path, messages: Iterable[Message], session_id: str | None = None
) -> None:
    with open(path, "wb") as handle:
        handle.writelines(iter_message_lines(messages, session_id))


# ---- parsing ---------------------------------------------------------------


class _Bad(ValueError):
    pass


def _str(obj: dict[str, Any], key: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        raise _Bad(f"field {key!r} must be a string")
    return value


def _usage(value: Any) -> Usage:
    if not isinstance(value, dict):
        raise _Bad("usage must be an object")
    try:
        return Usage(
            int(value.get("input_tokens", 0)),
            int(value.get("output_tokens", 0)),
            int(value.get("cache_read_tokens", 0)),
            int(value.get("cache_creation_tokens", 0)),
        )
    except (TypeError, ValueError):
        raise _Bad("usage token counts must be integers") from None


def _block(value: Any) -> Block:
    if not isinstance(value, dict):
        raise _Bad("a block must be an object")
    kind = value.get("type")
    if kind == "text":
        return TextBlock(_str(value, "text"))
    if kind == "tool_use":
        return ToolUseBlock(_str(value, "id"), _str(value, "name"), value.get("input"))
    if kind == "other":
        return OtherBlock(_str(value, "kind"), value.get("data"))
    raise _Bad(f"unknown block type {kind!r}")


def _blocks(obj: dict[str, Any]) -> tuple[Block, ...]:
    blocks = obj.get("blocks")
    if not isinstance(blocks, list):
        raise _Bad("field 'blocks' must be an array")
    return tuple(_block(b) for b in blocks)


def message_from_json(obj: dict[str, Any]) -> Message:
    kind = obj.get("kind")
    if kind == "system":
        return SystemMessage(_str(obj, "text"))
    if kind == "user":
        origin = obj.get("origin", PERSON)
        if origin not in ORIGINS:
            raise _Bad(f"unknown origin {origin!r} (expected one of: {', '.join(ORIGINS)})")
        return UserMessage(_blocks(obj), origin)
    if kind == "user_image":
        return UserImageMessage(obj.get("media_type", ""), obj.get("data"))
    if kind == "assistant":
        usage = _usage(obj["usage"]) if obj.get("usage") is not None else None
        return AssistantMessage(_blocks(obj), usage, str_or_none(obj.get("model")))
    if kind == "tool_result":
        return ToolResultMessage(
            _str(obj, "tool_call_id"), _str(obj, "content"), bool(obj.get("is_error", False))
        )
    raise _Bad(f"unknown kind {kind!r} (expected one of: {', '.join(sorted(KINDS))})")


def read(records: Iterator[Record], source: Source) -> Iterator[Conversation]:
    conv = Conversation(session_id=session_stem(source), path=source.display, format=NAME)
    for record in records:
        if record.obj.get("kind") == "session":
            sid = record.obj.get("session_id")
            if isinstance(sid, str) and sid:
                conv.session_id = sid
            continue
        try:
            conv.messages.append(message_from_json(record.obj))
        except _Bad as exc:
            source.bad_record(record, str(exc))
    yield conv
