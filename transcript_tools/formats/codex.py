"""Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl``).

Each line is ``{"timestamp", "type", "payload"}``. Mapping:

- ``session_meta``: ``payload.id`` is the session id; ``base_instructions`` → SystemMessage.
- ``response_item`` ``message``: role assistant → text of an AssistantMessage; developer /
  system → SystemMessage; user → UserMessage when it is the human's prompt, else a
  SystemMessage. Codex logs every prompt twice (the ``response_item`` and an ``event_msg``
  ``user_message`` next to it) and injects context as user messages too (AGENTS.md,
  ``<environment_context>``, ``<user_instructions>``) that have no ``user_message`` event.
  So a user item is a prompt when a ``user_message`` event sits next to it; when a file has
  no such events at all, every user item that does not look like an injection is one.
  Counting the pair once keeps prompts from being doubled.
- ``reasoning`` → ``OtherBlock("thinking")`` (summary text); ``function_call`` /
  ``custom_tool_call`` / ``local_shell_call`` → ToolUseBlock; ``web_search_call`` →
  ``OtherBlock("web_search")`` (server side, no result item); ``*_output`` →
  ToolResultMessage. The items one model call produces (reasoning, text, tool calls) form
  one AssistantMessage.
- Usage: each ``event_msg`` ``token_count`` with ``info`` counts one model call;
  ``info.last_token_usage`` (``input_tokens`` already includes ``cached_input_tokens``) goes
  on the assistant message of that call. Where the event sits depends on the version:
  after the call's items (0.104), before them (0.34), or before and again after them
  (0.55–0.58); a repeat (same ``total_token_usage``) is skipped. Two calls are always
  separated by an input (tool output, user message), so a count belongs to the latest
  call if that call has none yet, else to the next call that starts. A token_count never
  creates a message: the usage of a call that left no output item is added to a
  neighbouring call (a warning says so), so the usage on the messages sums to the
  billed total, which is checked against the log's final ``total_token_usage``.
- ``model_context_window`` → Conversation.context_window; ``compacted`` and its
  ``context_compacted`` event → one Compaction (``pre_tokens`` = the last call's total).
  The ``replacement_history`` is not replayed (tsum keeps the full history and marks where
  Codex compacted); its person messages' text is kept on the Compaction.
- A line of another ``type`` is skipped with a warning (one per type, at its first line;
  a ``type`` that is not a string, a warning of its own); a token count that is not a
  number is a warning naming the line (a numeric string is read). Event and item kinds
  tsum does not map (``agent_message``, ``ghost_snapshot``…) are UI echoes or bookkeeping,
  skipped silently.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from ..engine.messages import (
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
    UserImageMessage,
    UserMessage,
)
from .assembly import PendingAssistant, freeze_all
from .content_parts import json_or_text, text_of
from .fields import counts, int_or_zero, str_or_none
from .source import Record, Source, Warn, session_stem
from .switch import FormatSwitch

NAME = "codex"
DESCRIPTION = "Codex CLI rollouts (~/.codex/sessions/**/rollout-*.jsonl)"

LINE_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
CALL_ITEMS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
OUTPUT_ITEMS = frozenset(
    {"function_call_output", "custom_tool_call_output", "local_shell_call_output"}
)
INJECTION_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<INSTRUCTIONS>",
    "<permissions instructions>",
    "<user_shell_command>",
    "<turn_aborted>",
)


def sniff(head: list[Record]) -> bool:
    typed = [
        r.obj
        for r in head
        if type(r.obj.get("type")) is str  # a list is unhashable (and not a Codex line)
        and r.obj["type"] in LINE_TYPES
        and isinstance(r.obj.get("payload"), dict)
    ]
    return bool(typed) and len(typed) * 2 >= len(head)


class _Rollout:
    def __init__(self, source: Source) -> None:
        self.source = source
        self.conv = Conversation(session_stem(source), source.display, NAME)
        self.out: list[Message | PendingAssistant] = []
        self.model: str | None = None
        self.version: str | None = None  # session_meta.cli_version
        self.call: PendingAssistant | None = None  # one model call's output items
        self.latest: PendingAssistant | None = None  # the latest call, open or not
        self.waiting: Usage | None = None  # a count that came before its call's items
        self.waiting_line: int | None = None
        self.counts_first = False  # seen: a count before its call's items (0.34, 0.55–0.58)
        self.itemless: list[int] = []  # lines of counts whose call left no output item
        self.orphan: Usage | None = None  # item-less counts before any call
        self.last_total: Any = None
        self.billed = 0  # total tokens put on messages, checked against the log's total
        self.last_call_tokens: int | None = None
        self.user_at: int | None = None  # the user item a user_message event may confirm
        self.event_waiting = False  # a user_message event came before its item
        self.unconfirmed: set[int] = set()
        self.saw_user_event = False
        self.session_set = False
        self.switch = FormatSwitch(NAME, ("line", "lines"))
        self.warn: Warn = source.warn
        self.line: int | None = None  # the line being read

    def add(self, record: Record) -> None:
        obj = record.obj
        kind = obj.get("type")
        payload = obj.get("payload")
        self.warn = self.source.warner(record)  # for helpers that read this line's fields
        self.line = record.line
        if type(kind) is not str or kind not in LINE_TYPES:
            self.switch.skip(kind, record, self.source)
            return
        self.switch.started = True
        if not isinstance(payload, dict):
            self.source.bad_record(record, f"{kind} line without a 'payload' object")
            return
        if kind == "response_item":
            self._item(payload)
        elif kind == "event_msg":
            self._event(payload, record)
        elif kind == "turn_context":
            if isinstance(payload.get("model"), str):
                self.model = payload["model"]
        elif kind == "session_meta":
            self._meta(payload)
        elif kind == "compacted":
            self._compaction("codex:compacted", str_or_none(payload.get("message")))
            self._kept(payload.get("replacement_history"))

    def _meta(self, payload: dict[str, Any]) -> None:
        if isinstance(payload.get("cli_version"), str):
            self.version = self.conv.runtime_version = payload["cli_version"]
        if not self.session_set and isinstance(payload.get("id"), str):
            self.conv.session_id = payload["id"]
            self.session_set = True
        instructions = payload.get("base_instructions")
        text = instructions.get("text") if isinstance(instructions, dict) else instructions
        if isinstance(text, str) and text:
            self.out.append(SystemMessage(text))

    def _item(self, payload: dict[str, Any]) -> None:
        kind = payload.get("type")
        role = payload.get("role")
        if kind == "message" and role == "user":
            self._user(payload)
            return
        self.user_at = None
        self.event_waiting = False
        if kind == "message" and role == "assistant":
            self._open().blocks.extend(_content_blocks(payload.get("content"), self.warn))
        elif kind == "message":
            self._input()
            blocks = _content_blocks(payload.get("content"), self.warn)
            self.out.append(SystemMessage(text_of(blocks, kinds=True)))
        elif kind == "reasoning":
            self._open().blocks.append(_reasoning(payload))
        elif kind in CALL_ITEMS:
            name = payload.get("name") or (
                "local_shell" if kind == "local_shell_call" else "unknown"
            )
            call_id = payload.get("call_id") or payload.get("id") or ""
            args = payload.get("arguments", payload.get("input", payload.get("action")))
            self._open().blocks.append(ToolUseBlock(str(call_id), str(name), json_or_text(args)))
        elif kind == "web_search_call":
            self._open().blocks.append(OtherBlock("web_search", payload.get("action")))
        elif kind in OUTPUT_ITEMS:
            self._input()
            content, is_error = _output(payload)
            self.out.append(ToolResultMessage(str(payload.get("call_id", "")), content, is_error))
        elif kind in ("compaction", "compaction_summary"):
            self._compaction("codex:compaction")

    def _user(self, payload: dict[str, Any]) -> None:
        self._input()
        blocks = _content_blocks(payload.get("content"), self.warn)
        text = text_of(blocks, kinds=True)
        if text.lstrip().startswith(INJECTION_PREFIXES):
            self.out.append(SystemMessage(text))
            self.user_at = None
            return
        if len(blocks) == 1 and isinstance(blocks[0], OtherBlock) and blocks[0].kind == "image":
            part = blocks[0].data
            url = part.get("image_url") if isinstance(part, dict) else None
            self.out.append(UserImageMessage("", url if url is not None else part))
        else:
            self.out.append(UserMessage(tuple(blocks)))
        if self.event_waiting:
            self.event_waiting = False
            self.user_at = None
        else:
            self.user_at = len(self.out) - 1
            self.unconfirmed.add(self.user_at)

    def _event(self, payload: dict[str, Any], record: Record) -> None:
        kind = payload.get("type")
        if kind == "token_count":
            self._usage(payload.get("info"), record)
        elif kind == "user_message":
            self.saw_user_event = True
            if self.user_at is not None:
                self.unconfirmed.discard(self.user_at)
                self.user_at = None
            else:
                self.event_waiting = True
        elif kind == "task_started" and payload.get("model_context_window"):
            self.conv.context_window = (
                int_or_zero(payload["model_context_window"]) or self.conv.context_window
            )
        elif kind == "context_compacted":
            self._compaction("codex:context_compacted")

    def _open(self) -> PendingAssistant:
        if self.call is None:
            self.call = self.latest = PendingAssistant(model=self.model)
            self.out.append(self.call)
            if self.waiting is not None:  # its count came first (0.34, 0.55–0.58)
                self.call.usage, self.waiting = self.waiting, None
                self.counts_first = True
        return self.call

    def _input(self) -> None:
        """An input item (tool output, user or developer message, compaction): the model
        call before it is over, and a count still waiting for items had none."""
        self.call = None
        if self.waiting is not None:
            self._itemless(self.waiting, self.waiting_line)
            self.waiting = None

    def _usage(self, info: Any, record: Record) -> None:
        if not isinstance(info, dict):
            return  # rate-limit-only event
        if info.get("model_context_window"):
            self.conv.context_window = (
                int_or_zero(info["model_context_window"]) or self.conv.context_window
            )
        last = info.get("last_token_usage")
        total = info.get("total_token_usage")
        if not isinstance(last, dict):
            return
        if total is not None and total == self.last_total:
            return  # the same event again (Codex repeats it around the call's items)
        self.last_total = total
        warn = self.source.warner(record)
        keys = ("input_tokens", "output_tokens", "cached_input_tokens")
        usage = Usage(*counts(last, "last_token_usage.", keys, warn))
        self.billed += usage.total_tokens
        self.last_call_tokens = int_or_zero(last.get("total_tokens")) or usage.total_tokens
        # Two model calls are always separated by an input, so a count belongs to the
        # call whose items sit next to it with no input between.
        call, latest = self.call, self.latest
        if call is not None:
            if call.usage is None:  # after its items (0.104)
                call.usage = usage
                self.call = None
            else:  # a second count beside one call's items
                self._itemless(usage, record.line)
        elif latest is not None and latest.usage is None and not self.counts_first:
            latest.usage = usage  # after its items and their tool outputs
        else:  # before its items; a count still waiting then had none
            if self.waiting is not None:
                self._itemless(self.waiting, self.waiting_line)
            self.waiting, self.waiting_line = usage, record.line

    def _itemless(self, usage: Usage, line: int | None) -> None:
        # The count of a call that left no output item. No message of its own (a
        # token_count never creates one): its tokens go on the latest call, so the
        # recorded usage still sums to what the log billed.
        if line is not None:
            self.itemless.append(line)
        target = self.latest
        if target is None:
            self.orphan = usage if self.orphan is None else self.orphan + usage
        else:
            target.usage = usage if target.usage is None else target.usage + usage

    def _compaction(self, source: str, summary: str | None = None) -> None:
        # Between a tool output and the next call the turn was still running: only the
        # automatic check compacts there (a /compact comes between turns).
        mid_turn = bool(self.out) and isinstance(self.out[-1], ToolResultMessage)
        self._input()
        index = len(self.out)
        comps = self.conv.compactions
        if comps and comps[-1].message_index == index:
            # `compacted` and its `context_compacted` event are one compaction: the
            # summary text is the `compacted` item's, whichever line came first
            if summary is not None and comps[-1].summary is None:
                comps[-1] = replace(comps[-1], summary=summary)
            return
        comps.append(
            Compaction(
                index,
                source,
                self.last_call_tokens,
                summary,
                trigger="auto" if mid_turn else None,
                version=self.version,
                model=self.model,
                line=self.line,
            )
        )

    def _kept(self, history: Any) -> None:
        """The user messages a ``compacted`` item's ``replacement_history`` kept, and the
        text of the person's among them (Codex's injected context left out)."""
        comps = self.conv.compactions
        if not comps or not isinstance(history, list):
            return
        texts = _user_texts(history)
        person = tuple(t for t in texts if not t.lstrip().startswith(INJECTION_PREFIXES))
        comps[-1] = replace(comps[-1], kept_messages=len(texts), kept_texts=person)

    def finish(self) -> Conversation:
        if self.saw_user_event:
            for index in sorted(self.unconfirmed):  # context Codex injected as user messages
                message = self.out[index]
                if isinstance(message, UserMessage):
                    self.out[index] = SystemMessage(text_of(message.blocks, kinds=True))
        self._input()  # a count still waiting at the end: its items were never written
        if self.orphan is not None:
            first = next((m for m in self.out if isinstance(m, PendingAssistant)), None)
            if first is None:
                self.conv.warnings.append(
                    f"token_count events of {self.orphan.total_tokens} tokens but no model"
                    " output in the log: that usage is on no message"
                )
            else:
                first.usage = self.orphan if first.usage is None else first.usage + self.orphan
        if self.itemless:
            lines = ", ".join(str(n) for n in self.itemless[:5])
            self.conv.warnings.append(
                f"{len(self.itemless)} token_count(s) of model calls that left no output item"
                f" (line {lines}): their usage is added to a neighbouring call"
            )
        self._check_total()
        self.switch.report(self.source)
        self.conv.messages = freeze_all(self.out)
        return self.conv

    def _check_total(self) -> None:
        total = self.last_total
        logged = int_or_zero(total.get("total_tokens")) if isinstance(total, dict) else 0
        if logged and logged != self.billed:
            self.conv.warnings.append(
                f"the calls' token_count events sum to {self.billed} tokens but the log's"
                f" final total_token_usage says {logged}"
            )


def read(records: Iterator[Record], source: Source) -> Iterator[Conversation]:
    rollout = _Rollout(source)
    for record in records:
        rollout.add(record)
    yield rollout.finish()


# -- the parts of a rollout's items: content parts, reasoning, tool arguments and output --


def _content_blocks(content: Any, warn: Warn | None = None) -> list[Block]:
    if isinstance(content, str):
        return [TextBlock(content)]
    blocks: list[Block] = []
    for i, part in enumerate(content if isinstance(content, list) else ()):
        if not isinstance(part, dict) or not part.get("type"):
            if warn is not None:
                warn(f"content[{i}] is not a content part ({str(part)[:60]!r}); skipped")
            continue
        kind = part.get("type")
        if kind in ("input_text", "output_text", "text") and isinstance(part.get("text"), str):
            blocks.append(TextBlock(part["text"]))
        elif kind in ("input_image", "image"):
            blocks.append(OtherBlock("image", part))
        else:
            blocks.append(OtherBlock(str(kind), part))
    return blocks


def _reasoning(payload: dict[str, Any]) -> OtherBlock:
    parts = []
    for key in ("summary", "content"):
        for part in payload.get(key) or ():
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
    return OtherBlock("thinking", "\n".join(parts))


def _output(payload: dict[str, Any]) -> tuple[str, bool]:
    output = payload.get("output")
    if isinstance(output, dict):
        content = output.get("content", output.get("output", ""))
        return (
            content if isinstance(content, str) else text_of(_content_blocks(content), kinds=True)
        ), output.get("success") is False
    if isinstance(output, list):
        return text_of(_content_blocks(output), kinds=True), False
    return ("" if output is None else str(output)), False


def _user_texts(history: list[Any]) -> list[str]:
    """The text of each user message of a ``compacted`` item's ``replacement_history``
    (its parts were read, and warned of, as items already)."""
    return [
        text_of(_content_blocks(item.get("content"), lambda _: None), kinds=True)
        for item in history
        if isinstance(item, dict) and item.get("type") == "message" and item.get("role") == "user"
    ]
