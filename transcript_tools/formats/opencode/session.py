"""One TypeScript-OpenCode session (its messages, each with its parts) → a Conversation.

Shared by the JSON reader (``opencode``: ``opencode export`` files and the storage
folder) and the SQLite reader (``database.py``: the newer ``message`` / ``part`` tables,
whose ``data`` column holds the same JSON). The shapes are OpenCode's ``MessageV2``
(packages/opencode/src/session/message-v2.ts in sst/opencode):

- a message ``info``: ``id``, ``sessionID``, ``role`` (``user`` / ``assistant``);
  an assistant's ``modelID``, ``tokens`` (``input``, ``output``, ``reasoning``,
  ``cache.read``, ``cache.write``), ``error``, and ``summary: true`` on the assistant
  message that holds a compaction summary.
- parts: ``text`` (``synthetic``: written by OpenCode, not typed; ``ignored``),
  ``reasoning``, ``tool`` (``callID``, ``tool``, ``state.status`` / ``input`` /
  ``output`` / ``error``), ``file``, ``step-start`` / ``step-finish`` (one model call;
  ``tokens`` as above), ``compaction`` (the user message that asked for a compaction),
  and bookkeeping (``snapshot``, ``patch``, ``agent``, ``retry``, ``subtask``).

Mapping: a user message with a typed (non-synthetic) text is the person's (starts a
turn); one with only synthetic text is the runtime's (``INJECTED``). An assistant
message is one model call per ``step-finish`` (its tool results follow the call); its
usage is the step's ``tokens`` (else the message's): input = ``input`` + cache read +
cache write (the whole prompt), output = ``output`` + ``reasoning``. The message's
``tokens`` cross-check its steps: a warning where they match neither the steps' sum nor
the last step. A ``summary`` assistant message is a recorded compaction: its text rides
as an ``INJECTED`` user message (never a turn, not a call) and the ``compaction`` user
message that asked for it is that same Compaction, not a message.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...engine.messages import (
    INJECTED,
    PERSON,
    SYNTHETIC_MODEL,
    AssistantMessage,
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
from ..fields import counts, str_or_empty, str_or_none

COMPACTION_SOURCE = "opencode:summary"
# What OpenCode sends the model for a call left pending / running (an interrupted run):
# toModelMessages in packages/opencode/src/session/message-v2.ts
INTERRUPTED = "[Tool execution was interrupted]"
BOOKKEEPING_PARTS = frozenset({"snapshot", "patch", "agent", "retry", "step-start"})
# What the model is sent for a user message's ``subtask`` part (a command run by a
# sub-agent): toModelMessages in message-v2.ts. OpenCode's shell (``!command``) writes the
# same words as a synthetic text part, then an assistant message no model wrote
# (``modelID: ""``, zero tokens: ``shell()`` in packages/opencode/src/session/prompt.ts).
USER_RAN_TOOL = "The following tool was executed by the user"
# A file or folder the person attached is read into synthetic text parts when the prompt is
# made; toModelMessages then leaves the file part itself out.
SENT_AS_TEXT = frozenset({"text/plain", "application/x-directory"})


@dataclass(slots=True)
class StoredMessage:
    """A message's ``info`` and its parts, and where it was read (for warnings)."""

    info: dict[str, Any]
    parts: list[Any]
    where: str


@dataclass(slots=True)
class _Builder:
    conv: Conversation
    notes: list[str] = field(default_factory=list)

    def note(self, where: str, what: str) -> None:
        self.notes.append(f"{where}: {what}")


def session_name(session_id: str, parent_id: Any) -> str:
    """A child (sub-agent) session is named after its parent: ``parent/child``."""
    return f"{parent_id}/{session_id}" if isinstance(parent_id, str) and parent_id else session_id


def usage_from_tokens(tokens: Any, warn: Any = None) -> Usage | None:
    """OpenCode's ``tokens`` → Usage; None when absent or all zero (then estimated)."""
    if not isinstance(tokens, dict):
        return None
    raw_cache = tokens.get("cache")
    cache: dict[str, Any] = raw_cache if isinstance(raw_cache, dict) else {}
    read, write = counts(cache, "tokens.cache.", ("read", "write"), warn)
    fresh, output, reasoning = counts(tokens, "tokens.", ("input", "output", "reasoning"), warn)
    if not (fresh or read or write or output + reasoning):
        return None
    return Usage(fresh + read + write, output + reasoning, read, write)


def _user(b: _Builder, msg: StoredMessage) -> None:
    blocks: list[Block] = []
    typed = False
    for i, part in enumerate(msg.parts):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            if part.get("ignored") or not str_or_empty(part.get("text")):
                continue
            typed = typed or not part.get("synthetic")
            blocks.append(TextBlock(str_or_empty(part.get("text"))))
        elif kind == "file":
            mime = str(part.get("mime") or "")
            if mime in SENT_AS_TEXT:
                continue  # its content rides in the synthetic text parts beside it
            blocks.append(OtherBlock("image" if mime.startswith("image/") else "file", part))
        elif kind == "subtask":
            blocks.append(TextBlock(USER_RAN_TOOL))  # OpenCode's words, not typed
        elif kind == "compaction":
            b.conv.compactions.append(Compaction(len(b.conv.messages), COMPACTION_SOURCE))
            return  # the request for a compaction: the Compaction itself, not a message
        elif kind in BOOKKEEPING_PARTS:
            continue
        else:
            b.note(msg.where, f"part {i} of type {kind!r} left out")
    if not blocks:
        b.note(msg.where, "user message with no text left out")
        return
    b.conv.messages.append(UserMessage(tuple(blocks), PERSON if typed else INJECTED))


def _summary(b: _Builder, msg: StoredMessage) -> None:
    text = "\n\n".join(
        str_or_empty(p.get("text"))
        for p in msg.parts
        if isinstance(p, dict) and str_or_empty(p.get("text"))
    )
    usage = usage_from_tokens(msg.info.get("tokens"))
    pre = usage.input_tokens if usage else None
    index = len(b.conv.messages)
    comps = b.conv.compactions
    if comps and comps[-1].source == COMPACTION_SOURCE and comps[-1].message_index == index:
        comps[-1] = Compaction(index, COMPACTION_SOURCE, pre)  # its request, now with a size
    else:
        comps.append(Compaction(index, COMPACTION_SOURCE, pre))
    if text:
        b.conv.messages.append(UserMessage((TextBlock(text),), INJECTED))
    else:
        b.note(msg.where, "compaction summary with no text")


def _assistant(b: _Builder, msg: StoredMessage) -> None:
    info = msg.info
    model = str_or_none(info.get("modelID"))
    steps: list[tuple[list[Block], list[Message], Usage | None, bool]] = []
    blocks: list[Block] = []
    results: list[Message] = []
    pruned: list[int] = []
    for i, part in enumerate(msg.parts):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            if str_or_empty(part.get("text")):
                blocks.append(TextBlock(str_or_empty(part.get("text"))))
        elif kind == "reasoning":
            if str_or_empty(part.get("text")):
                blocks.append(OtherBlock("thinking", str_or_empty(part.get("text"))))
        elif kind == "tool":
            state = part.get("state") if isinstance(part.get("state"), dict) else {}
            call_id = str(part.get("callID") or part.get("id") or "")
            blocks.append(
                ToolUseBlock(call_id, str(part.get("tool") or "unknown"), state.get("input"))
            )
            status = state.get("status")
            if status == "completed":
                results.append(ToolResultMessage(call_id, str(state.get("output") or "")))
                timing = state.get("time")
                if isinstance(timing, dict) and timing.get("compacted"):
                    pruned.append(i)
            elif status == "error":
                results.append(ToolResultMessage(call_id, str(state.get("error") or ""), True))
            else:  # pending / running: OpenCode answers the call for the model (toModelMessages)
                results.append(ToolResultMessage(call_id, INTERRUPTED, True))
        elif kind == "file":
            blocks.append(OtherBlock("file", part))
        elif kind == "step-finish":
            steps.append((blocks, results, usage_from_tokens(part.get("tokens")), True))
            blocks, results = [], []
        elif kind in BOOKKEEPING_PARTS:
            continue
        else:
            b.note(msg.where, f"part {i} of type {kind!r} left out")
    if pruned:
        b.note(
            msg.where,
            f"{len(pruned)} tool output(s) OpenCode pruned (state.time.compacted; parts"
            f" {', '.join(map(str, pruned[:8]))}): read whole, as first sent",
        )
    if blocks or results or not steps:
        steps.append((blocks, results, None, False))  # content after the last step-finish
    recorded = [s[2] for s in steps if s[3]]
    whole = usage_from_tokens(info.get("tokens"))
    if all(u is None for u in recorded) and len(steps) == 1:
        steps[0] = (steps[0][0], steps[0][1], whole, False)
    elif whole is not None and any(u is not None for u in recorded):
        total = sum((u for u in recorded if u is not None), Usage())
        if whole not in (total, recorded[-1]):
            b.note(
                msg.where,
                f"message tokens ({whole.total_tokens}) match neither its steps' sum"
                f" ({total.total_tokens}) nor its last step; the steps' are used",
            )
    if all(not s[0] and not s[1] for s in steps) and info.get("error"):
        error = info["error"]
        name = error.get("name") if isinstance(error, dict) else error
        b.note(msg.where, f"assistant message with error {name!r} and no content left out")
        return
    if info.get("modelID") == "" and whole is None and not any(s[3] for s in steps):
        model = SYNTHETIC_MODEL  # the shell's record of a command the person ran: no call
    for step_blocks, step_results, usage, _ in steps:
        if not step_blocks and not step_results and usage is None and len(steps) > 1:
            continue  # an empty tail after the last step
        b.conv.messages.append(AssistantMessage(tuple(step_blocks), usage, model))
        b.conv.messages.extend(step_results)


def build_conversation(
    session_id: str, path: str, fmt: str, messages: list[StoredMessage], line: int | None = None
) -> Conversation:
    """The Conversation of one session's stored messages, in order; notes in ``warnings``."""
    b = _Builder(Conversation(session_id, path, fmt, line=line))
    for msg in messages:
        role = msg.info.get("role")
        if role == "user":
            _user(b, msg)
        elif role == "assistant" and msg.info.get("summary") is True:
            _summary(b, msg)
        elif role == "assistant":
            _assistant(b, msg)
        else:
            b.note(msg.where, f"message of role {role!r} left out")
    b.conv.warnings.extend(b.notes)
    return b.conv
