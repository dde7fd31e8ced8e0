"""OpenTelemetry GenAI traces and agent telemetry in OTLP JSON (formats/otel_records.py).

Follows the GenAI semantic conventions of open-telemetry/semantic-conventions **v1.40.0**
(commit 7fe53730, ``model/gen-ai/registry.yaml``; status "Development", so names may
change), plus the agents' own telemetry: Claude Code's ``claude_code.*`` events and
``claude_code.llm_request`` / ``claude_code.tool`` spans (code.claude.com/docs/en/
monitoring-usage) and Gemini CLI's ``gemini_cli.*`` events (google-gemini/gemini-cli
``docs/cli/telemetry.md``).

- Sessions: ``gen_ai.conversation.id``, else ``session.id`` (the agents' standard
  attribute), else the trace id; signals in time order.
- A model call: a span whose ``gen_ai.operation.name`` is ``chat``, ``generate_content``
  or ``text_completion``, a span with ``gen_ai.usage.*`` and no operation name (older
  instrumentations), or a ``claude_code.llm_request`` span; without such spans in a
  session, the ``claude_code.api_request`` / ``gemini_cli.api_response`` log events (with
  spans they are the same calls: not counted twice). Usage: semconv's
  ``gen_ai.usage.input_tokens`` already holds the cached tokens
  (``gen_ai.usage.cache_read.input_tokens``, ``cache_creation.input_tokens``); Claude
  Code's ``input_tokens`` does not (input = input + cache read + cache creation); Gemini's
  ``input_token_count`` does, plus ``tool_token_count``; output adds ``thoughts_token_count``.
  Claude Code's summarizer request (``query_source: compact``) belongs to its compaction:
  left out, counted in a warning.
- Content, when the agent recorded it (opt-in everywhere): ``gen_ai.input.messages`` —
  what follows the last assistant message is new (a user message: the person's turn;
  ``tool_call_response`` parts: tool results) — and ``gen_ai.output.messages`` (text,
  reasoning, ``tool_call`` parts). Without content, a ``claude_code.interaction`` span or a
  ``user_prompt`` event is the person's turn (its ``prompt`` / ``user_prompt`` attribute
  when recorded, else an empty ``[prompt]`` block), and ``execute_tool`` / ``claude_code.tool``
  spans or ``tool_result`` / ``tool_call`` events are the tool calls of the call before them.
- Compactions: a ``claude_code.compaction`` event (``pre_tokens``; not when ``success`` is
  false), a ``gemini_cli.chat_compression`` event (``tokens_before``), and the first span
  of a run carrying ``gen_ai.conversation.compacted: true``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from ..engine.messages import (
    Block,
    Compaction,
    Conversation,
    Message,
    OtherBlock,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from .assembly import PendingAssistant, freeze_all
from .content_parts import PartNames, json_or_text, parts_to_blocks
from .otel_records import LOG, SPAN, Signal, is_export, signals
from .source import Record, Source, Warn, count_field, session_stem

NAME = "otel"
DESCRIPTION = (
    "OpenTelemetry GenAI traces and agent telemetry (OTLP JSON: resourceSpans / resourceLogs)"
)

USAGE_KEYS = ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens")
CALL_OPERATIONS = frozenset({"chat", "generate_content", "text_completion"})
TOOL_OPERATION = "execute_tool"
CONTAINERS = frozenset({"invoke_agent", "create_agent", "invoke_workflow"})  # hold the calls


def sniff(head: list[Record]) -> bool:
    return bool(head) and is_export(head[0].obj)


def _is(signal: Signal, agent: str, event: str) -> bool:
    """``claude_code.api_request``, or ``api_request`` from that agent's service."""
    if signal.name == f"{agent}.{event}":
        return True
    service = str(signal.attrs.get("service.name") or "").replace("-", "_")
    return signal.name == event and agent in service


def _count(attrs: dict[str, Any], key: str, warn: Warn) -> int:
    return count_field(attrs.get(key), key, warn)


def usage_of(signal: Signal, warn: Warn) -> Usage | None:
    """A call's usage from semconv, Claude Code or Gemini CLI attributes."""
    a = signal.attrs
    if "gen_ai.usage.input_tokens" in a or "gen_ai.usage.output_tokens" in a:
        return Usage(
            _count(a, "gen_ai.usage.input_tokens", warn),
            _count(a, "gen_ai.usage.output_tokens", warn),
            _count(a, "gen_ai.usage.cache_read.input_tokens", warn),
            _count(a, "gen_ai.usage.cache_creation.input_tokens", warn),
        )
    if "input_token_count" in a:  # Gemini CLI
        return Usage(
            _count(a, "input_token_count", warn) + _count(a, "tool_token_count", warn),
            _count(a, "output_token_count", warn) + _count(a, "thoughts_token_count", warn),
            _count(a, "cached_content_token_count", warn),
        )
    if "input_tokens" in a or "output_tokens" in a:  # Claude Code: input is the uncached part
        read = _count(a, "cache_read_tokens", warn)
        created = _count(a, "cache_creation_tokens", warn)
        return Usage(
            _count(a, "input_tokens", warn) + read + created,
            _count(a, "output_tokens", warn),
            read,
            created,
        )
    return None


def _model(a: dict[str, Any]) -> str | None:
    for key in ("gen_ai.response.model", "gen_ai.request.model", "model"):
        if isinstance(a.get(key), str) and a[key]:
            return str(a[key])
    return None


def _is_call_span(s: Signal) -> bool:
    """A model call: by operation name, or (instrumentations older than the operation
    name) a span with GenAI usage and no operation name."""
    if s.kind != SPAN:
        return False
    operation = s.attrs.get("gen_ai.operation.name")
    if operation is None and any(k in s.attrs for k in USAGE_KEYS):
        return True
    return operation in CALL_OPERATIONS or s.name == "claude_code.llm_request"


def _is_call_log(s: Signal) -> bool:
    return s.kind == LOG and (
        _is(s, "claude_code", "api_request") or _is(s, "gemini_cli", "api_response")
    )


def _session_key(s: Signal) -> str:
    for key in ("gen_ai.conversation.id", "session.id"):
        if isinstance(s.attrs.get(key), str) and s.attrs[key]:
            return str(s.attrs[key])
    return s.trace_id


def read(records: Iterator[Record], source: Source) -> Iterator[Conversation]:
    sessions: dict[str, list[Signal]] = {}
    for record in records:
        if not is_export(record.obj):
            why = "not an OTLP export (no 'resourceSpans' or 'resourceLogs' list)"
            source.bad_record(record, why)
            continue
        for signal in signals(record):
            sessions.setdefault(_session_key(signal) or session_stem(source), []).append(signal)
    for key, items in sessions.items():
        items.sort(key=lambda s: s.time)
        conv = _Builder(key, source, any(_is_call_span(s) for s in items)).build(items)
        if conv.messages:
            yield conv


class _Builder:
    def __init__(self, key: str, source: Source, spans: bool) -> None:
        self.conv = Conversation(key, source.display, NAME)
        self.source = source
        self.spans = spans  # call spans present: the api_request / api_response logs repeat them
        self.out: list[Message | PendingAssistant] = []
        self.compacted = False
        self.summarizer = 0
        self.tool_number = 0
        self.answered: set[str] = set()  # tool calls whose result is already in
        self.unread: dict[str, int] = {}  # other signals, by name

    def build(self, items: list[Signal]) -> Conversation:
        for signal in items:
            self._signal(signal)
        self.conv.messages = freeze_all(self.out)
        if self.unread:
            names = ", ".join(f"{n} ×{c}" for n, c in sorted(self.unread.items())[:6])
            self.conv.warnings.append(
                f"{sum(self.unread.values())} signal(s) that are not messages left out ({names})"
            )
        if self.summarizer:
            self.conv.warnings.append(
                f"{self.summarizer} summarizer request(s) of Claude Code's compaction"
                " (query_source: compact) left out: part of the recorded compaction"
            )
        return self.conv

    def _signal(self, s: Signal) -> None:
        a = s.attrs
        warn = self.source.warner(s.record)
        if s.kind == SPAN and a.get("gen_ai.conversation.compacted") is True:
            if not self.compacted:
                self._compaction(None, "otel:gen_ai.conversation.compacted")
            self.compacted = True
        elif s.kind == SPAN and _is_call_span(s):
            self.compacted = False
        if _is_call_span(s) or (_is_call_log(s) and not self.spans):
            if a.get("query_source") == "compact":
                self.summarizer += 1
                return
            self._call(s, warn)
        elif (
            s.name == "claude_code.interaction"
            or _is(s, "claude_code", "user_prompt")
            or _is(s, "gemini_cli", "user_prompt")
        ):
            prompt = a.get("user_prompt", a.get("prompt"))
            block: Block = (
                TextBlock(prompt) if isinstance(prompt, str) and prompt else OtherBlock("prompt")
            )
            self.out.append(UserMessage((block,)))
        elif (
            a.get("gen_ai.operation.name") == TOOL_OPERATION
            or s.name == "claude_code.tool"
            or (
                s.kind == LOG
                and (_is(s, "claude_code", "tool_result") or _is(s, "gemini_cli", "tool_call"))
            )
        ):
            self._tool(s)
        elif _is(s, "claude_code", "compaction"):
            if str(a.get("success", "true")).lower() != "false":
                self._compaction(a.get("pre_tokens"), "otel:claude_code.compaction")
        elif _is(s, "gemini_cli", "chat_compression"):
            self._compaction(a.get("tokens_before"), "otel:gemini_cli.chat_compression")
        elif not _is_call_log(s) and a.get("gen_ai.operation.name") not in CONTAINERS:
            self.unread[s.name or "(unnamed)"] = self.unread.get(s.name or "(unnamed)", 0) + 1

    def _compaction(self, before: Any, source: str) -> None:
        pre = (
            int(before) if isinstance(before, (int, float, str)) and str(before).isdigit() else None
        )
        self.conv.compactions.append(Compaction(len(self.out), source, pre))

    def _call(self, s: Signal, warn: Warn) -> None:
        for message in _new_input(json_or_text(s.attrs.get("gen_ai.input.messages"))):
            if isinstance(message, ToolResultMessage) and message.tool_call_id in self.answered:
                continue  # its execute_tool span came first
            self.out.append(message)
        blocks = _output_blocks(json_or_text(s.attrs.get("gen_ai.output.messages")))
        self.out.append(PendingAssistant(blocks, usage_of(s, warn), _model(s.attrs)))

    def _tool(self, s: Signal) -> None:
        a = s.attrs
        name = str(
            a.get("gen_ai.tool.name")
            or a.get("tool_name")
            or a.get("function_name")
            or a.get("name")
            or "unknown"
        )
        call_id = a.get("gen_ai.tool.call.id")
        if not isinstance(call_id, str) or not call_id:
            self.tool_number += 1
            call_id = f"otel_call_{self.tool_number}"
        last = next((m for m in reversed(self.out) if isinstance(m, PendingAssistant)), None)
        if last is not None and not any(
            isinstance(b, ToolUseBlock) and b.id == call_id for b in last.blocks
        ):
            args = json_or_text(
                a.get("gen_ai.tool.call.arguments", a.get("tool_input", a.get("function_args")))
            )
            last.blocks.append(ToolUseBlock(call_id, name, args))
        result = a.get("gen_ai.tool.call.result", a.get("error") or "")
        text = result if isinstance(result, str) else orjson.dumps(result).decode()
        failed = str(a.get("success", "true")).lower() == "false"
        self.answered.add(call_id)
        self.out.append(ToolResultMessage(call_id, text, failed))


OTEL_PARTS = PartNames(
    text=("text", "content"),
    thinking=("reasoning", "content"),
    tool_call=("tool_call", "id", "name", "arguments"),
)


def _parts_text(parts: Any) -> list[Block]:
    return parts_to_blocks(parts if isinstance(parts, list) else [], OTEL_PARTS)


def _output_blocks(messages: Any) -> list[Block]:
    first = messages[0] if isinstance(messages, list) and messages else None
    return _parts_text(first.get("parts")) if isinstance(first, dict) else []


def _new_input(messages: Any) -> list[Message]:
    """The input messages after the last assistant message: the person's new message, or
    the tool results the call answers."""
    if not isinstance(messages, list):
        return []
    last = max(
        (i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "assistant"),
        default=-1,
    )
    out: list[Message] = []
    for message in messages[last + 1 :]:
        if not isinstance(message, dict) or message.get("role") in ("system", None):
            continue
        parts = message.get("parts")
        for part in parts if isinstance(parts, list) else []:
            if isinstance(part, dict) and part.get("type") == "tool_call_response":
                result = part.get("result")
                text = result if isinstance(result, str) else orjson.dumps(result).decode()
                out.append(ToolResultMessage(str(part.get("id") or "").strip(), text))
        texts = [b for b in _parts_text(parts) if isinstance(b, TextBlock)]
        if message.get("role") == "user" and texts:
            out.append(UserMessage(tuple(texts)))
    return out
