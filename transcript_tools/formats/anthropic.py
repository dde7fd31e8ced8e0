"""Anthropic Messages conversations.

Layouts, all auto-detected:

- one conversation per record: ``{"system": str | [blocks], "messages": [{role, content}]}``
  (a JSONL line, or a whole ``.json`` file; a request body with ``model``/``tools`` is fine);
- one message per record (``{"role", "content", "usage"?}`` lines, e.g. saved responses);
- claude-trace API captures (``{"request": ..., "response": ...}``): grouped and read by
  ``claude_trace``, as conversations of this format.

How blocks and usage map to the Message model: ``anthropic_api``.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..engine.messages import Conversation
from . import claude_trace
from .anthropic_api import (
    OPENAI_ROLES,
    BadMessage,
    anthropic_messages,
    convert_messages,
    message_from_anthropic,
)
from .source import Record, Source, record_conversation, session_stem

NAME = claude_trace.NAME  # "anthropic": captures read as conversations of this format
DESCRIPTION = (
    "Anthropic Messages ({system, messages:[{role, content blocks}]} per line or per file;"
    " claude-trace request/response captures)"
)


def sniff(head: list[Record]) -> bool:
    if not head:
        return False
    first = head[0].obj
    if claude_trace.is_trace(first):
        return claude_trace.sniff(head)
    if isinstance(first.get("messages"), list):
        msgs = first["messages"]
        if any(isinstance(m, dict) and m.get("role") in OPENAI_ROLES for m in msgs):
            return False
        if "system" in first and all(isinstance(m, dict) and "role" in m for m in msgs):
            return True  # a top-level system prompt is Anthropic's shape, never OpenAI's
        return anthropic_messages(msgs)
    # one message per record
    if not all(isinstance(r.obj.get("role"), str) for r in head):
        return False
    return anthropic_messages([r.obj for r in head])


def read(records: Iterator[Record], source: Source) -> Iterator[Conversation]:
    per_message: Conversation | None = None
    traces = claude_trace.Traces(source)
    index = 0
    for record in records:
        obj = record.obj
        if claude_trace.is_trace(obj):
            traces.add(record)
            continue
        msgs = obj.get("messages")
        if isinstance(msgs, list):
            index += 1
            conv = record_conversation(
                NAME, source, record, index, ("id", "session_id", "conversation_id")
            )
            try:
                convert_messages(msgs, obj.get("system"), conv.messages, source.warner(record))
            except BadMessage as exc:
                source.bad_record(record, str(exc))
                continue
            yield conv
            continue
        if per_message is None:
            per_message = Conversation(session_stem(source), source.display, NAME, line=record.line)
        try:
            per_message.messages.extend(message_from_anthropic(obj, "", source.warner(record)))
        except BadMessage as exc:
            source.bad_record(record, str(exc))
    if per_message is not None:
        yield per_message
    yield from traces.conversations(source)
