"""Anthropic managed-agent session event logs (Claude Managed Agents, ``/v1/sessions/{id}/events``).

One event per JSONL line (``{"id", "type", "processed_at", ...}``) — or wrapped as a widely
published exporter writes it, ``{"role", "kind", "time", "raw": {<the event>}}``, read
inside ``raw`` — or the list endpoint's response saved whole (``{"data": [events…],
"next_page": …}``); the whole file is one session, named by the file. Event types follow ``{domain}.{action}``:

- ``user.message`` (``content`` blocks) → the person's message (PERSON, starts a turn);
  ``user.define_outcome`` → the task statement (its ``description``; the ``rubric`` is
  the grader's, not sent as the task), also PERSON.
- ``agent.message`` (text blocks), ``agent.thinking`` (→ thinking blocks),
  ``agent.tool_use`` / ``agent.mcp_tool_use`` / ``agent.custom_tool_use`` (``id``,
  ``name``, ``input``) → the blocks of one model call. A call is what lies between
  ``span.model_request_start`` and the next start; without span events, the agent events
  between two results or user events.
- ``agent.tool_result`` / ``agent.mcp_tool_result`` (``tool_use_id``), ``user.tool_result``
  and ``user.custom_tool_result`` (``custom_tool_use_id``) → ToolResultMessages
  (``is_error`` kept): observations, never a turn.
- ``span.model_request_end`` → the call's usage, ``model_usage`` (or ``usage``) with
  ``input_tokens``, ``output_tokens``, ``cache_creation_input_tokens``,
  ``cache_read_input_tokens`` (input = all three, as for the Anthropic API). A request
  that ended with usage but produced no event (``is_error``) is a warning.
- ``session.usage`` (``usage``): the session's cumulative total so far; the last one is
  compared with the sum of the calls, and a difference is a warning.
- ``agent.thread_context_compacted`` → a recorded compaction (the runtime compacted the
  history) at that place.
- Not messages: ``session.status_*`` / ``session.updated`` / ``session.error`` / other
  ``span.*`` events / ``user.interrupt`` / ``user.tool_confirmation`` (lifecycle and
  approvals, skipped silently); ``system.message`` → a system message. Any other type is
  left out with one warning per type at its first line — among them the stream-only
  previews ``event_start`` / ``event_delta`` of a saved stream that opted in to
  ``event_deltas[]`` (never in the stored history: the events they preview follow them),
  which detection accepts beside the ``{domain}.{action}`` events.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..engine.messages import (
    AssistantMessage,
    Block,
    Compaction,
    Conversation,
    Message,
    OtherBlock,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from .anthropic_api import blocks_from_anthropic, tool_result_text, usage_from_anthropic
from .content_parts import text_of
from .source import Record, Source, session_stem

NAME = "managed-agents"
DESCRIPTION = "Anthropic managed-agent session event logs (/v1/sessions/{id}/events as JSONL)"

USER_TYPES = frozenset({"user.message", "user.define_outcome"})
CALL_TYPES = frozenset(
    {
        "agent.message",
        "agent.thinking",
        "agent.tool_use",
        "agent.mcp_tool_use",
        "agent.custom_tool_use",
    }
)
RESULT_TYPES = frozenset(
    {"agent.tool_result", "agent.mcp_tool_result", "user.tool_result", "user.custom_tool_result"}
)
SILENT_TYPES = frozenset(
    {
        "session.status_running",
        "session.status_idle",
        "session.status_rescheduled",
        "session.status_terminated",
        "session.updated",
        "session.error",
        "session.deleted",
        "span.outcome_evaluation_start",
        "span.outcome_evaluation_ongoing",
        "span.outcome_evaluation_end",
        "user.interrupt",
        "user.tool_confirmation",
    }
)
SPAN_START, SPAN_END, USAGE, COMPACTED = (
    "span.model_request_start",
    "span.model_request_end",
    "session.usage",
    "agent.thread_context_compacted",
)
KNOWN = (
    USER_TYPES
    | CALL_TYPES
    | RESULT_TYPES
    | SILENT_TYPES
    | {SPAN_START, SPAN_END, USAGE, COMPACTED, "system.message"}
)
# Stream-only preview events (the events-and-streaming reference's "Event deltas").
STREAM_ONLY = frozenset({"event_start", "event_delta"})
# Events only this format has (a plain "user.message" could be anything's).
DISTINCTIVE = (
    CALL_TYPES
    | RESULT_TYPES
    | {
        SPAN_START,
        SPAN_END,
        USAGE,
        "user.define_outcome",
        "session.status_running",
        "session.status_idle",
    }
)


def unwrap(obj: dict[str, Any]) -> dict[str, Any]:
    """The API's event itself: a widely published exporter writes each one as
    ``{"role", "kind", "time", "raw": {<the event>}}``; other records are the event."""
    raw = obj.get("raw")
    if "type" not in obj and isinstance(raw, dict) and isinstance(raw.get("type"), str):
        return raw
    return obj


def _events(head: list[Record]) -> list[dict[str, Any]]:
    if len(head) == 1 and isinstance(head[0].obj.get("data"), list):  # the list endpoint's page
        return [e for e in head[0].obj["data"][:8] if isinstance(e, dict)]
    return [unwrap(r.obj) for r in head]


def sniff(head: list[Record]) -> bool:
    events = _events(head)
    return (
        bool(events)
        and all(
            isinstance(e.get("type"), str) and ("." in e["type"] or e["type"] in STREAM_ONLY)
            for e in events
        )
        and any(e["type"] in DISTINCTIVE for e in events)
    )


def _usage(obj: dict[str, Any], source: Source, record: Record) -> Usage | None:
    usage = obj.get("model_usage", obj.get("usage"))
    return usage_from_anthropic(usage, source.warner(record)) if usage else None


class _Session:
    def __init__(self, source: Source, conv: Conversation) -> None:
        self.source = source
        self.conv = conv
        self.out: list[Message] = []
        self.blocks: list[Block] | None = None  # the open call's blocks
        self.call_index = -1  # where the open call's message is in out
        self.usage: dict[int, Usage] = {}  # usage by message index
        self.pending: Usage | None = None  # a request's usage that came before its events
        self.pending_at: Record | None = None
        self.total: tuple[Usage, Record] | None = None  # the last session.usage
        self.unknown: dict[str, tuple[int, Record]] = {}

    def _open(self) -> list[Block]:
        if self.blocks is None:
            self.blocks = []
            self.call_index = len(self.out)
            self.out.append(AssistantMessage(()))
            if self.pending is not None:
                self.usage[self.call_index] = self.pending
                self.pending = None
        return self.blocks

    def _close(self) -> None:
        if self.blocks is not None:
            self.out[self.call_index] = AssistantMessage(tuple(self.blocks))
            self.blocks = None

    def _lost(self) -> None:
        """A request's usage with no event of its own: said, never silently dropped."""
        if self.pending is not None and self.pending_at is not None:
            self.source.dropped(
                self.pending_at,
                f"a model request with usage ({self.pending.total_tokens} tokens) but no"
                " agent event; its tokens are not counted",
            )
        self.pending = None

    def add(self, record: Record, obj: dict[str, Any]) -> None:
        kind = obj.get("type")
        warn = self.source.warner(record)
        if kind in CALL_TYPES:
            blocks = self._open()
            if kind == "agent.message":
                blocks.extend(blocks_from_anthropic(obj.get("content"), warn))
            elif kind == "agent.thinking":
                text = obj.get("thinking", obj.get("content"))
                blocks.append(OtherBlock("thinking", text))
            else:
                blocks.append(
                    ToolUseBlock(
                        str(obj.get("id", "")), str(obj.get("name") or "unknown"), obj.get("input")
                    )
                )
        elif kind in RESULT_TYPES:
            self._close()
            call_id = obj.get("tool_use_id", obj.get("custom_tool_use_id", ""))
            self.out.append(
                ToolResultMessage(
                    str(call_id), tool_result_text(obj.get("content")), obj.get("is_error") is True
                )
            )
        elif kind in USER_TYPES:
            self._close()
            if kind == "user.define_outcome":
                text = obj.get("description")
                blocks = [TextBlock(text)] if isinstance(text, str) and text else []
            else:
                blocks = blocks_from_anthropic(obj.get("content"), warn)
            self.out.append(UserMessage(tuple(blocks)))
        elif kind == SPAN_START:
            self._close()
            self._lost()
        elif kind == SPAN_END:
            usage = _usage(obj, self.source, record)
            if usage is None:
                return
            if self.blocks is not None and self.call_index not in self.usage:
                self.usage[self.call_index] = usage
            else:  # ended before its events were written (they are buffered): the next call's
                self._lost()
                self.pending, self.pending_at = usage, record
        elif kind == USAGE:
            usage = _usage(obj, self.source, record)
            if usage is not None:
                self.total = (usage, record)
        elif kind == COMPACTED:
            self._close()
            self.conv.compactions.append(Compaction(len(self.out), "managed-agents:compacted"))
        elif kind == "system.message":
            self._close()
            self.out.append(SystemMessage(text_of(blocks_from_anthropic(obj.get("content")), " ")))
        elif kind not in SILENT_TYPES:
            name = kind if isinstance(kind, str) else repr(kind)
            count, first = self.unknown.get(name, (0, record))
            self.unknown[name] = (count + 1, first)

    def finish(self) -> Conversation:
        self._close()
        self._lost()
        for kind, (count, first) in self.unknown.items():
            self.source.dropped(first, f"{count} event(s) of type {kind!r} left out")
        for index, usage in self.usage.items():
            msg = self.out[index]
            assert isinstance(msg, AssistantMessage)
            self.out[index] = AssistantMessage(msg.blocks, usage, msg.model)
        self.conv.messages = self.out
        if self.total is not None:
            total, record = self.total
            summed = sum(self.usage.values(), Usage())
            if (total.input_tokens, total.output_tokens) != (
                summed.input_tokens,
                summed.output_tokens,
            ):
                self.source.dropped(
                    record,
                    f"session.usage says {total.input_tokens} input / {total.output_tokens}"
                    f" output tokens, the calls' usage sums to {summed.input_tokens} /"
                    f" {summed.output_tokens}",
                )
        return self.conv


def read(records: Iterator[Record], source: Source) -> Iterator[Conversation]:
    session: _Session | None = None
    for record in records:
        obj = unwrap(record.obj)
        if session is None:
            session = _Session(
                source, Conversation(session_stem(source), source.display, NAME, line=record.line)
            )
        page = obj.get("data")
        if isinstance(page, list) and "type" not in obj:
            for i, event in enumerate(page):
                if isinstance(event, dict):
                    session.add(Record(event, record.line, i), event)
                else:
                    source.bad_record(record, f"data[{i}]: an event must be an object")
            continue
        if not isinstance(obj.get("type"), str):
            source.bad_record(record, "not a session event (no 'type')")
            continue
        session.add(record if obj is record.obj else Record(obj, record.line, record.item), obj)
    if session is not None:
        yield session.finish()
