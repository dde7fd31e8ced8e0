"""Continue's chat sessions (``~/.continue/sessions/<session id>.json``).

One JSON object per file: ``sessionId``, ``title``, ``workspaceDirectory`` and
``history``, a list of items ``{"message": {"role", "content", "id"}, "contextItems",
"promptLogs", "reasoning", "editorState", …}``. (``sessions.json`` beside them is the
index of titles, not a transcript: reading it says so.)

- ``user`` → the person's prompt (starts a turn). ``content`` is a string or a list of
  parts (``text``, ``imageUrl`` → ``[image]``). The ``contextItems`` the person attached
  (files, selections: ``name``, ``content``) are sent with the prompt: their text rides
  in the same message, before the typed text.
- ``assistant`` → one model call: ``reasoning.text`` → a thinking block, then the
  content, then ``toolCalls`` (``id``, ``function.name`` / ``arguments``). ``thinking``
  messages (newer versions) become a thinking block of the next assistant message.
  ``tool`` → the result of ``toolCallId``; ``system`` → system message.
- Usage: Continue records none. Its ``promptLogs`` (on the assistant item) hold the exact
  prompt and completion of each call (``prompt``, ``completion``, ``modelTitle``): the
  call's usage is tsum's estimate of those texts (``tokens.estimate_text_tokens``), the
  closest thing to what was sent — its system rules and template included, which the
  history alone lacks. Several logs on one item are summed on it (a warning); an entry
  that is not an object is left out (a warning). Without prompt logs, tsum estimates the
  call from the history as for any format.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..engine.messages import (
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
    UserMessage,
)
from ..engine.tokens import estimate_text_tokens
from ..errors import UnknownFormatError
from .content_parts import json_or_text, text_of
from .fields import nested, str_or_empty
from .source import Record, Source, record_conversation

NAME = "continue"
DESCRIPTION = "Continue chat sessions (~/.continue/sessions/<id>.json)"

ROLES = frozenset({"user", "assistant", "thinking", "tool", "system"})
INDEX_KEYS = ("sessionId", "title", "dateCreated")


class SessionIndexError(UnknownFormatError):
    """Continue's ``sessions.json``: the list of sessions, not a session."""


def _is_index(head: list[Record]) -> bool:
    return all(r.item is not None and all(k in r.obj for k in INDEX_KEYS) for r in head)


def sniff(head: list[Record]) -> bool:
    if head and _is_index(head):
        return True
    if len(head) != 1:
        return False
    obj = head[0].obj
    history = obj.get("history")
    return (
        isinstance(history, list)
        and ("sessionId" in obj or "workspaceDirectory" in obj)
        and all(isinstance(h, dict) and isinstance(h.get("message"), dict) for h in history[:8])
    )


def _content(content: Any) -> list[Block]:
    if isinstance(content, str):
        return [TextBlock(content)] if content else []
    blocks: list[Block] = []
    for part in content if isinstance(content, list) else ():
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            if part["text"]:
                blocks.append(TextBlock(part["text"]))
        elif part.get("type") == "imageUrl":
            blocks.append(OtherBlock("image", part))
        elif part:
            blocks.append(OtherBlock(str(part.get("type") or "part"), part))
    return blocks


def _context(items: Any) -> list[Block]:
    blocks: list[Block] = []
    for item in items if isinstance(items, list) else ():
        if isinstance(item, dict) and isinstance(item.get("content"), str) and item["content"]:
            name = item.get("name") or item.get("description") or "context"
            blocks.append(TextBlock(f"{name}\n{item['content']}"))
    return blocks


def _tool_calls(calls: Any) -> list[Block]:
    blocks: list[Block] = []
    for call in calls if isinstance(calls, list) else ():
        if not isinstance(call, dict):
            continue
        raw = call.get("function")
        function: dict[str, Any] = raw if isinstance(raw, dict) else {}
        args = json_or_text(function.get("arguments"))
        blocks.append(
            ToolUseBlock(str(call.get("id") or ""), str(function.get("name") or "unknown"), args)
        )
    return blocks


def prompt_log_usage(logs: Any, where: str, notes: list[str]) -> Usage | None:
    """The estimate of a history item's prompt logs: their prompts in, completions out."""
    if not isinstance(logs, list) or not logs:
        return None
    total: Usage | None = None
    read = 0
    for i, log in enumerate(logs):
        if not isinstance(log, dict) or not isinstance(log.get("prompt"), str):
            notes.append(f"{where}: promptLogs[{i}] is not a prompt log; left out")
            continue
        completion = str_or_empty(log.get("completion"))
        usage = Usage(estimate_text_tokens(log["prompt"]), estimate_text_tokens(completion))
        total = usage if total is None else total + usage
        read += 1
    if read > 1:
        notes.append(f"{where}: {read} prompt logs on one message; their estimates are summed")
    return total


def _history(history: list[Any], notes: list[str]) -> list[Message]:
    out: list[Message] = []
    thinking: list[Block] = []
    for i, item in enumerate(history):
        where = f"history[{i}]"
        message = item.get("message") if isinstance(item, dict) else None
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            role = message.get("role") if isinstance(message, dict) else None
            notes.append(f"{where}: not a message (role {role!r}); left out")
            continue
        role = message["role"]
        blocks = _content(message.get("content"))
        if role == "user":
            blocks = _context(item.get("contextItems")) + blocks
            if not blocks:
                notes.append(f"{where}: empty user message left out")
                continue
            out.append(UserMessage(tuple(blocks)))
        elif role == "thinking":
            thinking.extend(
                OtherBlock("thinking", b.text) for b in blocks if isinstance(b, TextBlock)
            )
        elif role == "assistant":
            reasoning = item.get("reasoning")
            if isinstance(reasoning, dict) and isinstance(reasoning.get("text"), str):
                thinking.append(OtherBlock("thinking", reasoning["text"]))
            blocks = [*thinking, *blocks, *_tool_calls(message.get("toolCalls"))]
            thinking = []
            usage = prompt_log_usage(item.get("promptLogs"), where, notes)
            out.append(AssistantMessage(tuple(blocks), usage, _model(item.get("promptLogs"))))
        elif role == "tool":
            text = text_of(blocks, " ")
            out.append(ToolResultMessage(str(message.get("toolCallId") or ""), text))
        else:
            out.append(SystemMessage(text_of(blocks, " ")))
    if thinking:
        notes.append("thinking after the last assistant message left out")
    return out


def _model(logs: Any) -> str | None:
    for log in logs if isinstance(logs, list) else ():
        if isinstance(log, dict):
            model = nested(log, "completionOptions", "model")
            return str(model or log.get("modelTitle") or "") or None
    return None


def read(records: Iterator[Record], source: Source) -> Iterator[Conversation]:
    for index, record in enumerate(records, 1):
        obj = record.obj
        if index == 1 and _is_index([record]):
            raise SessionIndexError(
                source.display,
                None,
                "Continue's session index (sessions.json), not a session: read the"
                " <session id>.json files beside it",
            )
        if not isinstance(obj.get("history"), list):
            source.bad_record(record, "a Continue session has a 'history' list")
            continue
        conv = record_conversation(NAME, source, record, index, ("sessionId",))
        notes: list[str] = []
        conv.messages = _history(obj["history"], notes)
        conv.warnings.extend(notes)
        yield conv
