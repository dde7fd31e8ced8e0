"""pi coding-agent sessions (``~/.pi/agent/sessions/--<cwd>--/<time>_<uuid>.jsonl``).

The schema is pi's own: badlogic/pi-mono ``packages/coding-agent/src/core/session-manager.ts``
(entry types), ``core/messages.ts`` (``convertToLlm``: what the model is sent) and
``packages/ai/src/types.ts`` (``Usage``), read at commit 83378aad (session version 3).

- A ``session`` header (``id``, ``cwd``, ``version``: absent in version 1, then 2, 3),
  then entries linked by ``id`` / ``parentId`` into a tree: ``/tree`` and ``/fork``
  branch it, and the file keeps every branch. The branch read is the one pi resumes —
  from the last entry back to the root (``buildSessionContext``); entries on other
  branches are left out, counted in one warning. Version 1 files have no ids: file order.
- ``message`` entries hold the message: ``user`` (PERSON: a turn), ``assistant`` (one
  model call: ``text``, ``thinking``, ``toolCall`` blocks; ``usage``), ``toolResult``
  (the result of ``toolCallId``), ``bashExecution`` (a ``!`` command the person ran: its
  output is sent as a user message, an OBSERVATION; ``excludeFromContext`` ones are never
  sent and are left out), ``custom`` / ``hookMessage`` (an extension's message: INJECTED).
- ``custom_message`` entries are an extension's messages sent to the model (INJECTED);
  ``branch_summary`` the summary of an abandoned branch (INJECTED).
- ``compaction`` (``summary``, ``tokensBefore``, ``firstKeptEntryId``) is pi's compaction:
  a recorded Compaction, its summary an INJECTED message from there on.
- ``model_change`` / ``thinking_level_change`` / ``session_info`` / ``label`` / ``custom``
  are settings and extension state, not messages (the model of a call is named on it).
- Usage: ``input`` (the uncached prompt), ``cacheRead``, ``cacheWrite``, ``output``; the
  whole prompt is their sum (pi subtracts OpenAI's cached tokens from ``prompt_tokens``:
  ``providers/openai-completions.ts``), so input = input + cacheRead + cacheWrite.
- An assistant message with ``stopReason`` ``error`` and no content is an API error pi
  logged, not a reply: left out with a warning.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..engine.messages import (
    INJECTED,
    OBSERVATION,
    AssistantMessage,
    Block,
    Compaction,
    Conversation,
    Message,
    TextBlock,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from .anthropic_api import tool_result_text
from .content_parts import PartNames, parts_to_blocks
from .fields import counts, int_or_none, str_or_none
from .source import Record, Source, Warn, session_stem

NAME = "pi"
DESCRIPTION = (
    "pi coding-agent sessions (~/.pi/agent/sessions/*.jsonl: a session header, an entry tree)"
)

ENTRY_TYPES = frozenset(
    {
        "message",
        "model_change",
        "thinking_level_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
    }
)
SETTINGS = frozenset({"model_change", "thinking_level_change", "label", "session_info", "custom"})
COMPACTION_SOURCE = "pi:compaction"


def sniff(head: list[Record]) -> bool:
    if not head:
        return False
    first = head[0].obj
    if first.get("type") != "session" or not isinstance(first.get("id"), str):
        return False
    if "version" not in first and "cwd" not in first:
        return False
    return all(r.obj.get("type") in ENTRY_TYPES for r in head[1:3])


def usage_from_pi(usage: Any, warn: Warn) -> Usage | None:
    """pi's ``Usage`` → Usage: the whole prompt is input + cacheRead + cacheWrite."""
    if not isinstance(usage, dict):
        return None
    keys = ("cacheRead", "cacheWrite", "input", "output")
    read, written, fresh, output = counts(usage, "usage.", keys, warn)
    return Usage(fresh + read + written, output, read, written)


PI_PARTS = PartNames(
    thinking=("thinking", "thinking"), tool_call=("toolCall", "id", "name", "arguments")
)


def _blocks(content: Any) -> list[Block]:
    return parts_to_blocks(content, PI_PARTS)


def _message(msg: dict[str, Any], record: Record, source: Source) -> Message | None:
    role = msg.get("role")
    warn = source.warner(record)
    if role == "user":
        return UserMessage(tuple(_blocks(msg.get("content"))))
    if role == "assistant":
        blocks = _blocks(msg.get("content"))
        if not blocks and msg.get("stopReason") == "error":
            warn(
                f"an API error pi logged ({str(msg.get('errorMessage'))[:80]!r}), not a reply; left out"
            )
            return None
        model = str_or_none(msg.get("model"))
        return AssistantMessage(tuple(blocks), usage_from_pi(msg.get("usage"), warn), model)
    if role == "toolResult":
        text = tool_result_text(msg.get("content"))
        return ToolResultMessage(str(msg.get("toolCallId") or ""), text, msg.get("isError") is True)
    if role == "bashExecution":
        if msg.get("excludeFromContext") is True:
            return None  # a !! command: never sent to the model
        text = f"Ran `{msg.get('command')}`\n{msg.get('output') or ''}".rstrip()
        return UserMessage((TextBlock(text),), OBSERVATION)
    if role in ("custom", "hookMessage", "branchSummary", "compactionSummary"):
        content = msg.get("content", msg.get("summary"))
        return UserMessage(tuple(_blocks(content)), INJECTED)
    warn(f"message of role {role!r} left out")
    return None


def _branch(entries: list[Record]) -> tuple[list[Record], int]:
    """The entries from the root to the last entry, and how many are on other branches."""
    by_id = {r.obj["id"]: r for r in entries if isinstance(r.obj.get("id"), str)}
    if not by_id:
        return entries, 0
    path: list[Record] = []
    seen: set[int] = set()
    current: Record | None = entries[-1]
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        path.append(current)
        parent = current.obj.get("parentId")
        current = by_id.get(parent) if isinstance(parent, str) else None
    path.reverse()
    return path, len(entries) - len(path)


def read(records: Iterator[Record], source: Source) -> Iterator[Conversation]:
    header: Record | None = None
    entries: list[Record] = []
    for record in records:
        kind = record.obj.get("type")
        if kind == "session" and header is None:
            header = record
        elif kind in ENTRY_TYPES:
            entries.append(record)
        else:
            source.dropped(record, f"entry of unknown type {kind!r} left out")
    session_id = str(header.obj.get("id")) if header else session_stem(source)
    conv = Conversation(session_id, source.display, NAME, line=header.line if header else None)
    path, other = _branch(entries)
    for record in path:
        _add(conv, record, source)
    if other:
        conv.warnings.append(
            f"{other} entries on other branches of the session tree left out"
            " (the branch ending at the last entry is read)"
        )
    yield conv


def _add(conv: Conversation, record: Record, source: Source) -> None:
    obj = record.obj
    kind = obj["type"]
    if kind in SETTINGS:
        return
    if kind == "message" and isinstance(obj.get("message"), dict):
        message = _message(obj["message"], record, source)
    elif kind == "custom_message":
        message = UserMessage(tuple(_blocks(obj.get("content"))), INJECTED)
    elif kind == "branch_summary":
        message = UserMessage((TextBlock(str(obj.get("summary") or "")),), INJECTED)
    elif kind == "compaction":
        summary = str(obj.get("summary") or "")
        pre = int_or_none(obj.get("tokensBefore"))
        conv.compactions.append(Compaction(len(conv.messages), COMPACTION_SOURCE, pre, summary))
        message = UserMessage((TextBlock(summary),), INJECTED)
    else:
        source.dropped(record, f"{kind} entry without a message left out")
        return
    if message is not None:
        conv.messages.append(message)
