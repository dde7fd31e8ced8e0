"""Cline's ``ui_messages.json``: what the person saw, and each model call's usage.

A JSON array of ``ClineMessage`` records (cline ``src/shared/ExtensionMessage.ts``):
``{"ts", "type": "say" | "ask", "say" | "ask": kind, "text", "images", "partial",
"conversationHistoryIndex", ...}``. Roo Code and Kilo Code write the same records.

- ``say: "api_req_started"`` is one model request; its ``text`` is JSON
  (``ClineApiReqInfo``) with ``tokensIn`` (input not from the cache), ``tokensOut``,
  ``cacheWrites``, ``cacheReads``, ``cost`` and, for a failed request, ``cancelReason``.
  Usage: input = tokensIn + cacheWrites + cacheReads (the whole prompt, as for the
  Anthropic API), output = tokensOut. Its ``conversationHistoryIndex`` is the index of the
  last API-history message sent, so the reply it produced is the next message.
- ``say: "task"`` and ``say: "user_feedback"`` are what the person typed.
- Read alone (no API history beside it), the log gives the session: the person's
  messages, one assistant message per request holding the ``text`` / ``reasoning`` /
  ``completion_result`` and the tools it used (``tool``, ``command``), and
  ``command_output`` as tool results. Everything else is left out with one warning.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from ..engine.messages import (
    AssistantMessage,
    Block,
    Message,
    OtherBlock,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from .fields import counts, str_or_empty
from .source import Record, Source

PERSON_SAYS = frozenset({"task", "user_feedback"})
TEXT_SAYS = frozenset({"text", "completion_result"})


def kind(obj: dict[str, Any]) -> str:
    return str_or_empty(obj.get("say") if obj.get("type") == "say" else obj.get("ask"))


def is_record(obj: dict[str, Any]) -> bool:
    return obj.get("type") in ("say", "ask") and "ts" in obj and bool(kind(obj))


def _int(value: Any) -> int | None:
    if type(value) is int:
        return value
    if isinstance(value, str) and value.lstrip("-").isdigit():
        return int(value)  # some exporters write every field as a string
    return None


def _json(text: Any) -> dict[str, Any] | None:
    if not isinstance(text, str):
        return None
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


@dataclass(frozen=True, slots=True)
class Request:
    """One ``api_req_started`` record."""

    place: str  # "[12]": the record's element in the file
    record: Record
    history_index: int | None  # conversationHistoryIndex
    usage: Usage | None
    failed: bool  # cancelReason set: the request did not complete


def request(record: Record, source: Source) -> Request:
    info = _json(record.obj.get("text")) or {}
    warn = source.warner(record)
    usage = None
    if any(k in info for k in ("tokensIn", "tokensOut")):
        reads, writes, given, output = counts(
            info, "", ("cacheReads", "cacheWrites", "tokensIn", "tokensOut"), warn
        )
        usage = Usage(given + writes + reads, output, reads, writes)
    return Request(
        f"[{record.item}]" if record.item is not None else f"line {record.line}",
        record,
        _int(record.obj.get("conversationHistoryIndex")),
        usage,
        "cancelReason" in info,
    )


def requests(records: list[Record], source: Source) -> list[Request]:
    return [request(r, source) for r in records if kind(r.obj) == "api_req_started"]


def is_partial(obj: dict[str, Any]) -> bool:
    return obj.get("partial") in (True, "True", "true")


def is_person(obj: dict[str, Any], requested: bool) -> bool:
    """What the person typed: ``task`` / ``user_feedback``, or the task said as the first
    ``text`` before any request (``requested``: an ``api_req_started`` came before)."""
    if obj.get("type") != "say" or is_partial(obj):
        return False
    what = kind(obj)
    return what in PERSON_SAYS or (what == "text" and not requested)


def person_records(records: list[Record]) -> int:
    count, requested = 0, False
    for record in records:
        count += is_person(record.obj, requested)
        requested = requested or kind(record.obj) == "api_req_started"
    return count


def _images(obj: dict[str, Any]) -> list[Block]:
    images = obj.get("images")
    return [OtherBlock("image", i) for i in images] if isinstance(images, list) else []


class Alone:
    """The messages of a UI log read without its API history."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.out: list[Message] = []
        self.blocks: list[Block] | None = None
        self.index = -1
        self.usage: Usage | None = None
        self.failed = False  # the open request was cancelled (cancelReason)
        self.place = ""  # where the open request's record is
        self.requests = 0
        self.results: list[ToolResultMessage] = []  # the open call's, written after it
        self.command: int | None = None  # the open call's command result (in results)
        self.left_out: dict[str, tuple[int, str]] = {}

    def _close(self) -> None:
        if self.blocks is not None:
            if not self.blocks and self.failed:  # a failed request that wrote nothing
                del self.out[self.index]
                count, first = self.left_out.get(
                    "api_req_started (failed, nothing written)", (0, self.place)
                )
                self.left_out["api_req_started (failed, nothing written)"] = (count + 1, first)
            else:
                self.out[self.index] = AssistantMessage(tuple(self.blocks), self.usage)
            self.blocks = None
        self.out.extend(self.results)
        self.results, self.command = [], None

    def _call(self) -> list[Block]:
        if self.blocks is None:  # model output before any request record: its own call
            self._start(None)
        assert self.blocks is not None
        return self.blocks

    def _start(self, req: Request | None) -> None:
        self._close()
        self.blocks, self.index = [], len(self.out)
        self.usage, self.failed = (req.usage, req.failed) if req else (None, False)
        self.out.append(AssistantMessage(()))

    def add(self, record: Record) -> None:
        obj = record.obj
        what = kind(obj)
        place = f"[{record.item}]" if record.item is not None else f"line {record.line}"
        text = str_or_empty(obj.get("text"))
        if is_partial(obj):
            what = f"{what} (partial)"  # a streaming leftover; its final version follows
        elif is_person(obj, self.requests > 0):
            self._close()
            self.out.append(UserMessage((TextBlock(text), *_images(obj))))
            return
        elif obj.get("type") == "say" and what == "api_req_started":
            req = request(record, self.source)
            self.requests += 1
            self._start(req)
            self.place = place
            return
        elif obj.get("type") == "say" and what in TEXT_SAYS:
            if text:
                self._call().append(TextBlock(text))
            return
        elif obj.get("type") == "say" and what == "reasoning":
            self._call().append(OtherBlock("thinking", text))
            return
        elif what in ("followup", "plan_mode_respond") and obj.get("type") == "ask":
            info = _json(text) or {}
            said = info.get("question", info.get("response", text))
            if said:
                self._call().append(TextBlock(str(said)))  # the model's question / plan
            return
        elif what in ("tool", "command"):
            tool = _json(text) if what == "tool" else None
            name = str(tool.get("tool", "tool")) if tool else "execute_command"
            call_id = f"ui{record.item if record.item is not None else record.line}"
            self._call().append(ToolUseBlock(call_id, name, tool if tool else text))
            content = "" if what == "command" else str((tool or {}).get("content", "") or "")
            self.results.append(ToolResultMessage(call_id, content))
            self.command = len(self.results) - 1 if what == "command" else None
            return
        elif what == "command_output" and self.command is not None:
            # a command's output arrives in chunks: all of them are its one result
            result = self.results[self.command]
            joined: str = f"{result.content}\n{text}" if result.content else text
            self.results[self.command] = ToolResultMessage(result.tool_call_id, joined)
            return
        count, first = self.left_out.get(what, (0, place))
        self.left_out[what] = (count + 1, first)

    def finish(self) -> list[Message]:
        self._close()
        if self.left_out:
            shown = ", ".join(
                f"{k or '?'}×{n} (first {p})" for k, (n, p) in sorted(self.left_out.items())
            )
            total = sum(n for n, _ in self.left_out.values())
            self.source.noted(
                f"{total} UI record(s) left out, not messages the model was sent: {shown}"
            )
        return self.out
