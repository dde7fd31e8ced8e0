"""Gemini CLI headless output (``gemini -p … --output-format stream-json``).

One JSON event per line, each with ``type`` and ``timestamp`` (gemini-cli
``packages/core/src/output/types.ts``):

- ``init`` (``session_id``, ``model``) starts a run; events written before a file's first
  ``init`` with no ``result`` among them (a leading ``message``) belong to that run, while
  events that end with a ``result`` before any ``init`` are a run of their own (the file
  was cut at the front). Several runs can share a file (a
  script appending each run's output): consecutive runs with the same ``session_id``
  (``--resume``) continue one conversation, a new id starts the next. The conversation
  is named by its ``session_id``.
- ``message`` with ``role: "user"`` → the person's prompt (PERSON, starts a turn).
  ``role: "assistant"`` is model text, streamed as ``delta`` chunks: the chunks of one
  reply are joined into one text block — a chunk is not a model call.
- ``tool_use`` (``tool_name``, ``tool_id``, ``parameters``) → a ToolUseBlock of the
  current model reply; ``tool_result`` (``tool_id``, ``status``, ``output`` /
  ``error.message``) → a ToolResultMessage (``status: "error"`` → an error result). Text
  or a tool call after a tool result is the next model call.
- ``result`` (``status``, ``stats``) ends a run. The stats are the run's totals, not per
  call: ``input_tokens`` (prompt, cache included), ``output_tokens``, ``total_tokens``
  (which also counts thoughts), ``cached``. They become the usage of the run's LAST call
  (input = ``input_tokens``, output = ``total_tokens - input_tokens``, cache read =
  ``cached``); the run's earlier calls carry a zero usage, so the run's tokens are counted
  once and none is estimated on top (``inspect``'s largest context is then the run's
  total prompt, an upper bound).
- ``error`` events (``severity`` warning / error) are notices the CLI printed, never
  sent to the model: left out, counted in one warning per conversation. A run whose
  ``result`` says ``status: "error"`` is named in a warning; a run with no ``result`` (cut
  off) keeps its calls without usage (estimated), with a warning.
- The CLI's own notice that ``-p`` / ``--prompt`` is deprecated is written as an
  ``assistant`` message before the model is called (``deprecateText`` in gemini-cli
  ``packages/cli/src/nonInteractiveCli.ts``; seen in shun-shobon/gemicord's ``log.jsonl``):
  the model never wrote or saw it, so it is left out with a warning naming its line.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..engine.messages import (
    AssistantMessage,
    Block,
    Conversation,
    Message,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from .fields import counts, str_or_none
from .source import Record, Source, record_conversation

NAME = "gemini-stream"
DESCRIPTION = "Gemini CLI headless output (gemini -p … --output-format stream-json)"

# The event types and the fields each one must carry (types.ts): detection requires them.
REQUIRED = {
    "init": ("session_id",),
    "message": ("role", "content"),
    "tool_use": ("tool_name", "tool_id"),
    "tool_result": ("tool_id", "status"),
    "error": ("message",),
    "result": ("status",),
}
DISTINCTIVE = frozenset({"init", "tool_use", "tool_result", "result"})
PROMPT_FLAG_NOTICE = "The --prompt (-p) flag has been deprecated"


def is_event(obj: dict[str, Any]) -> bool:
    """A Gemini stream-json event: a known ``type`` with that type's required fields."""
    fields = REQUIRED.get(obj.get("type"))  # type: ignore[arg-type]
    return fields is not None and all(f in obj for f in fields)


def sniff(head: list[Record]) -> bool:
    # every record an event of this format, and one that no other format has
    return (
        bool(head)
        and all(is_event(r.obj) for r in head)
        and any(r.obj["type"] in DISTINCTIVE or "delta" in r.obj for r in head)
    )


def usage_from_stats(stats: Any, warn: Any) -> Usage | None:
    if not isinstance(stats, dict) or not any(
        k in stats for k in ("input_tokens", "output_tokens", "total_tokens")
    ):
        return None
    keys = ("input_tokens", "output_tokens", "total_tokens", "cached")
    prompt, output, total, cached = counts(stats, "stats.", keys, warn)
    # total_tokens also counts thoughts (and tool-use prompts): Gemini bills them as output
    return Usage(prompt, max(output, total - prompt), cached)


class _Run:
    """The messages of one run (init … result) being read."""

    def __init__(self, line: int | None) -> None:
        self.line = line
        self.messages: list[Message] = []
        self.open: list[Block] | None = None  # blocks of the model reply being streamed
        self.calls: list[int] = []  # indices (in messages) of this run's model replies

    def assistant(self) -> list[Block]:
        if self.open is None:
            self.open = []
            self.calls.append(len(self.messages))
            self.messages.append(AssistantMessage(()))  # filled in by close()
        return self.open

    def close(self) -> None:
        if self.open is not None:
            self.messages[self.calls[-1]] = AssistantMessage(tuple(self.open))
            self.open = None

    def text(self, text: str) -> None:
        blocks = self.assistant()
        if blocks and isinstance(blocks[-1], TextBlock):
            blocks[-1] = TextBlock(blocks[-1].text + text)  # the next chunk of the same text
        elif text:
            blocks.append(TextBlock(text))

    def finish(self, usage: Usage | None, model: str | None) -> None:
        self.close()
        for n, index in enumerate(self.calls):
            msg = self.messages[index]
            assert isinstance(msg, AssistantMessage)
            last = n == len(self.calls) - 1
            call_usage = (usage if last else Usage()) if usage is not None else None
            self.messages[index] = AssistantMessage(msg.blocks, call_usage, model)


class _Conversation:
    def __init__(self, conv: Conversation, session: str) -> None:
        self.conv = conv
        self.session = session
        self.notices: list[str] = []


def _content(obj: dict[str, Any]) -> str:
    content = obj.get("content")
    return content if isinstance(content, str) else "" if content is None else str(content)


def _result_text(obj: dict[str, Any]) -> str:
    if isinstance(obj.get("output"), str):
        return str(obj["output"])
    error = obj.get("error")
    if isinstance(error, dict):
        return str(error.get("message", ""))
    return "" if obj.get("output") is None else str(obj["output"])


def _unfinished(current: _Conversation | None, run: _Run) -> None:
    if run.calls and current is not None:
        current.conv.warnings.append(
            f"the run at line {run.line} has no result record (cut off?): its calls are estimated"
        )


def read(records: Iterator[Record], source: Source) -> Iterator[Conversation]:
    current: _Conversation | None = None
    run: _Run | None = None
    model: str | None = None
    count = 0

    def end_run(usage: Usage | None) -> None:
        nonlocal run
        if run is not None and current is not None:
            run.finish(usage, model)
            current.conv.messages.extend(run.messages)
        run = None

    def finish() -> Iterator[Conversation]:
        if current is None:
            return
        if current.notices:
            current.conv.warnings.append(
                f"{len(current.notices)} error event(s) left out: notices the CLI printed,"
                f" never sent to the model ({', '.join(current.notices[:8])})"
            )
        yield current.conv

    def cut_run(record: Record) -> None:
        """Events no init started (the file was cut at the front): a run of its own."""
        nonlocal current, run, count
        count += 1
        current = _Conversation(
            record_conversation(NAME, source, record, count, ()),
            "",
        )
        run = _Run(record.line)

    def event(record: Record) -> None:
        obj = record.obj
        kind = obj["type"]
        where = f"line {record.line}" if record.line is not None else f"[{record.item}]"
        assert current is not None and run is not None
        if kind == "message":
            if obj["role"] == "user":
                run.close()
                run.messages.append(UserMessage((TextBlock(_content(obj)),)))
            elif obj["role"] == "assistant" and _content(obj).startswith(PROMPT_FLAG_NOTICE):
                source.dropped(
                    record, "the CLI's --prompt deprecation notice left out (no model call)"
                )
            elif obj["role"] == "assistant":
                run.text(_content(obj))
            else:
                source.dropped(record, f"message of unknown role {obj['role']!r} left out")
        elif kind == "tool_use":
            run.assistant().append(
                ToolUseBlock(str(obj["tool_id"]), str(obj["tool_name"]), obj.get("parameters"))
            )
        elif kind == "tool_result":
            run.close()
            run.messages.append(
                ToolResultMessage(str(obj["tool_id"]), _result_text(obj), obj["status"] == "error")
            )
        elif kind == "error":
            current.notices.append(where)
        elif kind == "result":
            usage = usage_from_stats(obj.get("stats"), source.warner(record))
            if obj["status"] != "success":
                error = obj.get("error")
                what = (
                    f"{error.get('type', '')}: {error.get('message', '')}"
                    if isinstance(error, dict)
                    else repr(obj["status"])
                )
                current.conv.warnings.append(f"{where}: the run ended with an error ({what})")
            if usage is not None and not run.calls and usage.total_tokens:
                source.dropped(
                    record, f"the run's {usage.total_tokens} tokens are not read: no model reply"
                )
            end_run(usage)

    early: list[Record] = []  # events before the first init, whose run is not known yet
    for record in records:
        obj = record.obj
        kind = obj.get("type")
        if not is_event(obj):
            source.bad_record(
                record, f"not a Gemini CLI stream-json event (type {kind!r} without its fields)"
            )
            continue
        if kind == "init":
            session = str(obj["session_id"])
            if run is not None:
                _unfinished(current, run)
                end_run(None)
            if current is None or current.session != session:
                yield from finish()
                count += 1
                conv = record_conversation(NAME, source, record, count, ("session_id",))
                current = _Conversation(conv, session)
            run = _Run(record.line)
            model = str_or_none(obj.get("model"))
            for held in early:  # written before the init of their run (no result between)
                event(held)
            early.clear()
            continue
        if current is None or run is None:
            if current is None and kind != "result":
                early.append(record)  # the first run's init may still come
                continue
            cut_run(early[0] if early else record)
            for held in early:
                event(held)
            early.clear()
        event(record)
    if early:  # no init came: the file was cut at the front
        cut_run(early[0])
        for held in early:
            event(held)
    if run is not None:
        _unfinished(current, run)
        end_run(None)
    yield from finish()
