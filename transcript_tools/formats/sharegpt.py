"""ShareGPT conversations: ``{"conversations": [{"from", "value"}], "system"?, "tools"?}``.

One conversation per JSONL line or per element of a JSON array (also a single object
per file). ``from``: human / user → UserMessage; gpt / assistant / chatgpt / bard / bing /
model → AssistantMessage; system → SystemMessage; function_call → an AssistantMessage
with a ToolUseBlock per call (the value is JSON ``{"name", "arguments"}`` or a list of
them; the id is synthesized ``call_<n>``); observation / tool / function → the
ToolResultMessage of the oldest unanswered call. A top-level ``system`` string comes
first as a SystemMessage. ``tools`` (the tool schemas) is not a message and is not kept.
ShareGPT records no usage; tokens are estimated.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any

import orjson

from ..engine.messages import (
    AssistantMessage,
    Conversation,
    Message,
    SystemMessage,
    ToolResultMessage,
    ToolUseBlock,
    UserMessage,
)
from .content_parts import json_or_text
from .source import Record, Source, conversation_id

NAME = "sharegpt"
DESCRIPTION = "ShareGPT ({conversations:[{from, value}]} per line, per file or in a JSON array)"

USER = frozenset({"human", "user"})
ASSISTANT = frozenset({"gpt", "assistant", "chatgpt", "bard", "bing", "model"})
RESULT = frozenset({"observation", "tool", "function"})
KNOWN = USER | ASSISTANT | RESULT | {"system", "function_call"}


def _turns(obj: dict[str, Any]) -> Any:
    turns = obj.get("conversations")
    return turns if turns is not None else obj.get("conversation")


def sniff(head: list[Record]) -> bool:
    if not head:
        return False
    turns = _turns(head[0].obj)
    if not isinstance(turns, list):
        return False
    first = next((t for t in turns if isinstance(t, dict)), None)
    return first is None or ("from" in first and "value" in first)


class _Bad(ValueError):
    pass


def _calls(value: str, counter: int) -> list[ToolUseBlock]:
    try:
        parsed = orjson.loads(value)
    except orjson.JSONDecodeError:
        return [ToolUseBlock(f"call_{counter + 1}", "unknown", value)]
    items = parsed if isinstance(parsed, list) else [parsed]
    blocks = []
    for item in items:
        counter += 1
        if isinstance(item, dict):
            args = json_or_text(item.get("arguments", item.get("parameters")))
            blocks.append(ToolUseBlock(f"call_{counter}", str(item.get("name") or "unknown"), args))
        else:
            blocks.append(ToolUseBlock(f"call_{counter}", "unknown", item))
    return blocks


def conversation_messages(obj: dict[str, Any]) -> list[Message]:
    """The messages of one ShareGPT record (raises ``_Bad`` with the offending index)."""
    turns = _turns(obj)
    if not isinstance(turns, list):
        raise _Bad("'conversations' must be an array")
    out: list[Message] = []
    system = obj.get("system")
    if isinstance(system, str) and system:
        out.append(SystemMessage(system))
    pending: deque[str] = deque()  # calls still waiting for their observation
    counter = 0
    last_call = ""
    for i, turn in enumerate(turns):
        if not isinstance(turn, dict):
            raise _Bad(f"conversations[{i}]: a message must be an object")
        who, value = turn.get("from"), turn.get("value")
        if not isinstance(value, str):
            raise _Bad(f"conversations[{i}]: 'value' must be a string")
        if who in USER:
            out.append(UserMessage.text(value))
        elif who in ASSISTANT:
            out.append(AssistantMessage.text(value))
        elif who == "system":
            out.append(SystemMessage(value))
        elif who == "function_call":
            blocks = _calls(value, counter)
            counter += len(blocks)
            pending.extend(b.id for b in blocks)
            last_call = blocks[-1].id
            out.append(AssistantMessage(tuple(blocks)))
        elif who in RESULT:
            call_id = pending.popleft() if pending else (last_call or f"call_{counter + 1}")
            out.append(ToolResultMessage(call_id, value))
        else:
            raise _Bad(
                f"conversations[{i}]: unknown 'from' {who!r} (expected one of: {', '.join(sorted(KNOWN))})"
            )
    return out


def read(records: Iterator[Record], source: Source) -> Iterator[Conversation]:
    index = 0
    for record in records:
        index += 1
        obj = record.obj
        session_id = conversation_id(
            obj, source, index, record, ("id", "conversation_id", "session_id")
        )
        try:
            messages = conversation_messages(obj)
        except _Bad as exc:
            source.bad_record(record, str(exc))
            continue
        yield Conversation(session_id, source.display, NAME, messages, line=record.line)
