"""Cline, Roo Code and Kilo Code task folders (``…/tasks/<task id>/``).

A task folder holds ``api_conversation_history.json`` (the Anthropic-style messages sent
to the model, a JSON array of ``{"role", "content", "ts", ...}``) and ``ui_messages.json``
(what the person saw, ``cline_ui``). The folder is ONE session, named by the folder;
either file alone reads as that session too. A directory walk reads the pair once
(``inputs.expand_inputs`` leaves out a ``ui_messages.json`` whose API history is beside
it). Files renamed with a common prefix (``x.api_conversation_history.json`` +
``x.ui_messages.json``) pair alike.

API history → messages:

- ``assistant`` → AssistantMessage (text, ``tool_use``, thinking blocks). Usage: the
  UI log's ``api_req_started`` for that message (by ``conversationHistoryIndex``, else in
  order), else the message's own ``metrics.tokens`` (``prompt``, ``completion``,
  ``cached``; newer Cline), else none (estimated).
- ``user`` messages are the task, feedback, tool results and notices in one:
  ``tool_result`` blocks → ToolResultMessages (one holding the person's ``<feedback>`` or
  ``<answer>``, as Roo Code / Kilo Code send them, is the person's text); a text block
  ``[tool for '…'] Result: …`` answering a ``tool_use`` of the previous reply → that
  call's ToolResultMessage. The rest is one user message: PERSON (starts a turn) if it is
  the first message or holds what the person typed (``<task>``, ``<feedback>``,
  ``<answer>``, ``<user_message>``); else the runtime's (``[TASK RESUMPTION]`` notices,
  ``<environment_details>``: INJECTED) or the environment's (``[ERROR] You did not use a
  tool…`` and other tool output: OBSERVATION).
- Roo Code's sliding-window truncation (``src/core/context-management``) tags the
  messages it hides with ``truncationParent`` and inserts a marker (``isTruncationMarker``,
  "[Sliding window truncation: N messages hidden…]"): the marker is an INJECTED user
  message and a warning; the hidden messages are read whole (as Cline's own truncation).
- Recorded compactions: Roo Code / Kilo Code's condense summary (a message with
  ``isSummary: true``, kept as an INJECTED user message at its place), and Cline's
  ``summarize_task`` / ``condense`` tool calls (after their result).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..engine.messages import (
    INJECTED,
    OBSERVATION,
    PERSON,
    AssistantMessage,
    Block,
    Compaction,
    Conversation,
    Message,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from ..errors import InputError
from ..present.numbers import shown_places
from . import cline_ui
from .anthropic_api import blocks_from_anthropic, tool_result_text
from .fields import counts, nested, str_or_none
from .source import Record, Source, iter_records, read_sibling, session_stem

NAME = "cline"
DESCRIPTION = (
    "Cline / Roo Code / Kilo Code task folders (api_conversation_history.json + ui_messages.json)"
)

API_FILE = "api_conversation_history.json"
UI_FILE = "ui_messages.json"
PERSON_TAGS = ("<task>", "<feedback>", "<answer>", "<user_message>")
# What Roo Code / Kilo Code put in a tool_result when the person answers or gives feedback
# (attemptCompletionTool, askFollowupQuestionTool); a task is never sent as a result, and a
# file a tool read may well quote "<task>".
RESULT_PERSON_TAGS = ("<feedback>", "<answer>")
# Cline's text-protocol result: ``[name] Result:`` or ``[name for '<argument>'] Result:``
# (``toolDescription`` in src/core/task); the argument is the command, path, regex or
# question as given, so it can hold brackets and newlines (seen in mike4567/MRA04242026:
# ``[search_files for 'from ['"]@/lib/x['"]'] Result:``, multi-line questions).
TEXT_RESULT = re.compile(r"\[[\w.:-]{1,100}(?:\]| for '.*?'\]) Result:", re.DOTALL)
COMPACTING_TOOLS = frozenset({"summarize_task", "condense"})


def _is_api_message(obj: dict[str, Any]) -> bool:
    return obj.get("role") in ("user", "assistant") and "content" in obj


def _cline_text(obj: dict[str, Any]) -> bool:
    content = obj.get("content")
    text = (
        content
        if isinstance(content, str)
        else " ".join(b.get("text", "") for b in content if isinstance(b, dict))
        if isinstance(content, list)
        else ""
    )
    return any(tag in text for tag in ("<task>", "<environment_details>"))


def sniff(head: list[Record]) -> bool:
    if not head:
        return False
    if all(cline_ui.is_record(r.obj) for r in head):
        return True
    # the API history: Anthropic-style messages with Cline's ``ts`` and its task wrapper
    return (
        all(_is_api_message(r.obj) for r in head)
        and all("ts" in r.obj for r in head)
        and _cline_text(head[0].obj)
    )


def partner(path: str) -> tuple[str, str] | None:
    """(API history path, UI log path) of a task-folder file, or None for other names."""
    if path.endswith(API_FILE):
        return path, path[: -len(API_FILE)] + UI_FILE
    if path.endswith(UI_FILE):
        return path[: -len(UI_FILE)] + API_FILE, path
    return None


def _session_name(source: Source) -> str:
    path = Path(source.display)
    if path.name in (API_FILE, UI_FILE) and path.parent.name:
        return path.parent.name  # the task id
    stem = session_stem(source)
    for suffix in ("." + API_FILE[:-5], "." + UI_FILE[:-5]):
        if stem.endswith(suffix):
            return stem[: -len(suffix)]
    return stem


def _records_of(path: str, source: Source) -> tuple[Source, list[Record]] | None:
    """The records of the task folder's other file, read as the file itself would be;
    None where the folder has no such file."""
    data = read_sibling(path)
    if data is None:
        return None
    other = Source(path, source.skip_bad_lines, source.warn, path)
    try:
        return other, list(iter_records(other, data))
    except InputError as err:
        raise InputError(
            err.path, err.line, f"{err.message} (the other file of the task folder)", item=err.item
        ) from None


def _text(block: Block) -> str:
    return block.text if isinstance(block, TextBlock) else ""


def _origin(blocks: list[Block], first: bool) -> str | None:
    texts = " ".join(_text(b) for b in blocks)
    if first or any(tag in texts for tag in PERSON_TAGS):
        return None  # PERSON
    if texts.lstrip().startswith(("[TASK RESUMPTION]", "<environment_details>")):
        return INJECTED
    return OBSERVATION


class _History:
    """The API history being turned into messages."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.out: list[Message] = []
        self.starts: list[int] = []  # per history message, its first index in out
        self.assistant_at: dict[int, int] = {}  # history index → out index of assistant
        self.open_calls: list[str] = []
        self.compactions: list[Compaction] = []
        self.compact_after = False
        self.hidden: dict[Any, int] = {}  # Roo truncationId → messages tagged with it

    def add(self, i: int, record: Record) -> None:
        obj = record.obj
        self.starts.append(len(self.out))
        if not _is_api_message(obj):
            self.source.bad_record(
                record, "not an API history message (expected role user or assistant, and content)"
            )
            return
        warn = self.source.warner(record)
        content = obj["content"]
        if obj.get("isTruncationMarker") is True:  # Roo's sliding window (either role)
            hidden = self.hidden.get(obj.get("truncationId"), 0)
            self.source.dropped(
                record,
                "Roo Code's sliding-window truncation marker: kept as the runtime's notice;"
                f" the {hidden} message(s) it hid from later calls (truncationParent) are read"
                " whole, not as a compaction",
            )
            self.out.append(UserMessage(tuple(blocks_from_anthropic(content, warn)), INJECTED))
            self.open_calls = []
            return
        if obj.get("isSummary") is True:  # Roo / Kilo condense: the runtime's summary
            self.compactions.append(Compaction(len(self.out), "cline:isSummary"))
            self.out.append(UserMessage(tuple(blocks_from_anthropic(content, warn)), INJECTED))
            self.open_calls = []
            return
        if obj["role"] == "assistant":
            blocks = blocks_from_anthropic(content, warn)
            self.assistant_at[i] = len(self.out)
            model = nested(obj, "modelInfo", "modelId")
            self.out.append(
                AssistantMessage(tuple(blocks), _metrics(obj, warn), str_or_none(model))
            )
            self.open_calls = [b.id for b in blocks if isinstance(b, ToolUseBlock)]
            self.compact_after = any(
                isinstance(b, ToolUseBlock) and b.name in COMPACTING_TOOLS for b in blocks
            )
            return
        self._user(content, warn, first=not self.out)

    def _user(self, content: Any, warn: Any, first: bool) -> None:
        rest: list[Block] = []
        start = len(self.out)
        for raw in content if isinstance(content, list) else [content]:
            if isinstance(raw, dict) and raw.get("type") == "tool_result":
                said = tool_result_text(raw.get("content"))
                if any(tag in said for tag in RESULT_PERSON_TAGS):
                    # Roo Code / Kilo Code send the person's <feedback> / <answer> as the
                    # tool's result (attempt_completion, ask_followup_question): the person's
                    # words, as in Cline's text results below
                    rest.append(TextBlock(said))
                    continue
                call_id = str(raw.get("tool_use_id", ""))
                if call_id in self.open_calls:
                    self.open_calls.remove(call_id)
                self.out.append(
                    ToolResultMessage(
                        call_id, tool_result_text(raw.get("content")), raw.get("is_error") is True
                    )
                )
                continue
            for block in blocks_from_anthropic([raw] if isinstance(raw, dict) else raw, warn):
                text = _text(block)
                if (
                    self.open_calls
                    and TEXT_RESULT.match(text)
                    and not any(tag in text for tag in PERSON_TAGS)
                ):
                    self.out.append(ToolResultMessage(self.open_calls.pop(0), text))
                else:
                    rest.append(block)
        self.open_calls = []
        origin = _origin(rest, first) if rest else None
        last = self.out[-1] if len(self.out) > start else None
        if rest and origin is not None and isinstance(last, ToolResultMessage):
            # what Cline appends to a tool's output (<environment_details>, notices) reached
            # the model with it: it rides on the result, as for the Anthropic API
            extra = "\n".join(_text(b) or f"[{getattr(b, 'kind', 'block')}]" for b in rest)
            self.out[-1] = ToolResultMessage(
                last.tool_call_id, f"{last.content}\n{extra}", last.is_error
            )
        elif rest:
            self.out.append(
                UserMessage(tuple(rest)) if origin is None else UserMessage(tuple(rest), origin)
            )
        if self.compact_after:  # the history the next call is sent was compacted
            self.compactions.append(Compaction(len(self.out), "cline:summarize_task"))
            self.compact_after = False


def _metrics(obj: dict[str, Any], warn: Any) -> Usage | None:
    tokens = nested(obj, "metrics", "tokens")
    if not isinstance(tokens, dict) or "prompt" not in tokens:
        return None
    cached, prompt, completion = counts(
        tokens, "metrics.tokens.", ("cached", "prompt", "completion"), warn
    )
    return Usage(prompt, completion, cached)


def _apply_usage(
    history: _History, reqs: list[cline_ui.Request], conv: Conversation, ui_name: str
) -> None:
    """Each request's usage on the assistant message it produced; the rest in one warning."""
    by_index = all(r.history_index is not None for r in reqs)
    chosen: dict[int, cline_ui.Request] = {}
    unused: list[cline_ui.Request] = []
    if by_index:
        for req in reqs:
            assert req.history_index is not None
            target = history.assistant_at.get(req.history_index + 2)
            if target is None:
                unused.append(req)
            else:
                if target in chosen:
                    unused.append(chosen[target])  # retried: the last request made the reply
                chosen[target] = req
    else:
        done = [r for r in reqs if not r.failed]
        unused = [r for r in reqs if r.failed]
        targets = sorted(history.assistant_at.values())
        chosen = dict(zip(targets, done, strict=False))
        unused += done[len(targets) :]
    for target, req in chosen.items():
        msg = history.out[target]
        assert isinstance(msg, AssistantMessage)
        if req.usage is not None:
            history.out[target] = AssistantMessage(msg.blocks, req.usage, msg.model)
    if unused:
        tokens = sum((r.usage or Usage()).total_tokens for r in unused)
        places = shown_places([ui_name + r.place for r in unused], 8, " …")
        conv.warnings.append(
            f"{len(unused)} api_req_started record(s) with no reply in the API history"
            f" (failed or retried requests; {tokens} tokens not counted):"
            f" {places}"
        )


def _check_prompts(history: _History, ui: list[Record], conv: Conversation, ui_name: str) -> None:
    """The person's messages of the API history against the UI log's: a difference is said."""
    api = sum(1 for m in history.out if type(m) is UserMessage and m.origin == PERSON)
    shown = cline_ui.person_records(ui)
    if api != shown:
        conv.warnings.append(
            f"the API history has {api} message(s) the person wrote, {ui_name} shows {shown}"
            " (task / user_feedback records): turns follow the API history"
        )


def read(records: Iterator[Record], source: Source) -> Iterator[Conversation]:
    head = list(records)
    if not head:
        return
    conv = Conversation(_session_name(source), source.display, NAME, line=None)
    pair = partner(source.path)
    api: tuple[Source, list[Record]] | None = None
    ui: tuple[Source, list[Record]] | None = None
    if all(cline_ui.is_record(r.obj) for r in head[:8]):
        ui = (source, head)
        if pair:
            api = _records_of(pair[0], source)
    else:
        api = (source, head)
        if pair:
            ui = _records_of(pair[1], source)
    if api is None:
        assert ui is not None
        alone = cline_ui.Alone(source)
        for record in ui[1]:
            alone.add(record)
        conv.messages = alone.finish()
        yield conv
        return
    history = _History(api[0])
    for record in api[1]:
        parent = record.obj.get("truncationParent")
        if parent is not None:
            history.hidden[parent] = history.hidden.get(parent, 0) + 1
    for i, record in enumerate(api[1]):
        history.add(i, record)
    if ui is not None:
        _apply_usage(history, cline_ui.requests(ui[1], ui[0]), conv, ui[0].display)
        _check_prompts(history, ui[1], conv, ui[0].display)
    conv.messages = history.out
    conv.compactions = history.compactions
    yield conv
