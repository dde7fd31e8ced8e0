"""Reading a conversation back out of a rendered prompt, or from its messages.

Both give :class:`Blocks`: the conversation's blocks as parallel lists of role, tool
call id and content. From the messages (``SummaryRequest.messages``, what the engine
sends) nothing is parsed: the blocks are the formatted messages
(``transcript.formatted_blocks``) without their role prefixes. From a prompt alone
(a prompt rendered elsewhere, e.g. a cached one) the text between ``<messages>`` and
``</messages>`` is split at role prefixes, which misreads content holding a blank
line followed by a role prefix.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import compress
from operator import itemgetter
from typing import Any, cast

from ...engine.formatting import formatted_blocks
from ...engine.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResultMessage,
    ToolUseBlock,
    UserImageMessage,
    UserMessage,
    is_turn_start,
)
from .memo import Memo

_ROLE_PREFIX = r"(?:System|User|Assistant|Tool (?:Result|Error) \[[^\]\n]*\]):(?: |$)"
_HEAD = r"(?:(System|User|Assistant)|Tool (Result|Error) \[([^\]\n]*)\]):(?: |$)"
_HEAD_RE = re.compile(_HEAD)
# A block starts at a role prefix right after a blank line; content may itself hold
# blank lines, so a bare "\n\n" is not a boundary. The boundary and the role prefix
# after it are one match, so that ``split`` yields [text before the first boundary,
# role, tool result kind, call id, content, role, ...] in C, with no Python work per
# block.
_SPLIT_RE = re.compile(r"\n\n" + _HEAD)
_ROLE_NAMES = {
    "System": "system",
    "User": "user",
    "Assistant": "assistant",
    "Result": "result",
    "Error": "error",
}
_LINE_START_RE = re.compile(r"^" + _ROLE_PREFIX, re.MULTILINE)
OUTPUT_ROLES = frozenset(("result", "error"))  # a tool's output, as the blocks name it
TOOL_CALL_RE = re.compile(r"\[Tool: ([^\]\n]+)\]")
# A user-role message a person did not write (docs/spec.md, "Turns": observations, compaction
# summaries, reminders) is the role "runtime": never one of the person's requests. From
# messages the origin says so; from a prompt's text alone only a known opening can.
INJECTED_PREFIXES = ("This session is being continued from a previous conversation",)


@dataclass(slots=True)
class Blocks:
    """The conversation's blocks as parallel lists (no object per block)."""

    roles: list[str]  # system | user | runtime | assistant | result | error | fragment
    call_ids: list[str]
    contents: list[str]
    # The tool calls' own arguments, which the formatted text never shows: (index of
    # the assistant block, key kind "command" | "path" | "url" | "text", value), in
    # conversation order. Empty when read back from a prompt's text.
    tool_args: list[tuple[int, str, str]] = field(default_factory=list)
    # From messages with a memo: each block's memo entry (``MemoEntry``), where later
    # stages keep what they measured of it; None where the block has none.
    entries: list[MemoEntry] | None = field(default=None, compare=False, repr=False)


def conversation_span(prompt: str) -> tuple[int, int, int]:
    """The end of the instructions (where a template puts the previous summary) and the
    conversation's start and end: the last ``<messages>…</messages>`` pair's inside, else
    from the first line with a role prefix (none: the whole prompt)."""
    end = prompt.rfind("</messages>")
    if end != -1:
        start = prompt.rfind("<messages>", 0, end)
        if start != -1:
            return start, start + len("<messages>"), end
    match = _LINE_START_RE.search(prompt)
    at = 0 if match is None else match.start()
    return at, at, len(prompt)


def conversation_text(prompt: str) -> str:
    _, start, end = conversation_span(prompt)
    return prompt[start:end].strip("\n")


def has_text(text: str) -> bool:
    """``bool(text.strip())`` without the copy: isspace() stops at the first non-space."""
    return bool(text) and not text.isspace()


def parse_text(text: str) -> Blocks:
    parts = _SPLIT_RE.split(text)
    # Text before the first boundary: a block with its own role prefix, or the tail of
    # a message cut by the 30,000-character limit (or a prompt without role prefixes).
    first = parts[0]
    head = _HEAD_RE.match(first)
    if head is None:
        role, call_id, content = "fragment", "", first
    else:
        role = _ROLE_NAMES[head.group(1) or head.group(2)]
        call_id = head.group(3) or ""
        content = first[head.end() :]
    names = _ROLE_NAMES
    roles = [role]
    roles += [names[name or kind] for name, kind in zip(parts[1::4], parts[2::4], strict=True)]
    call_ids = [call_id]
    call_ids += [cid or "" for cid in parts[3::4]]
    contents = [content]
    contents += parts[4::4]
    for i, role in enumerate(roles):
        if role == "user" and contents[i].startswith(INJECTED_PREFIXES):
            roles[i] = "runtime"
    return Blocks(roles, call_ids, contents)


_ARG_KINDS = {
    "command": "command",
    "cmd": "command",
    "script": "command",
    "file_path": "path",
    "filePath": "path",
    "path": "path",
    "notebook_path": "path",
    "absolute_path": "path",
    "filename": "path",
    "file": "path",
    "url": "url",
}


def _arguments(value: Any) -> list[tuple[str, str]]:
    """(kind, text) for the arguments of one tool call that name a command, a path or a
    URL (by key, top level only); a free-form string argument (e.g. a patch) is "text"."""
    if isinstance(value, str):
        if value.startswith("{"):
            try:
                value = json.loads(value)
            except ValueError:
                return [("text", value)]
        else:
            return [("text", value)]
    if not isinstance(value, dict):
        return []
    found: list[tuple[str, str]] = []
    for key, arg in value.items():
        kind = _ARG_KINDS.get(key)
        if kind is None:
            if key == "input" and isinstance(arg, str):  # Codex apply_patch
                found.append(("text", arg))
            continue
        if isinstance(arg, list) and arg and all(isinstance(a, str) for a in arg):
            # ["bash", "-lc", "the command"]: the shell's script is the command
            arg = arg[2] if len(arg) == 3 and arg[1] in ("-c", "-lc") else " ".join(arg)
        if isinstance(arg, str) and has_text(arg):
            found.append((kind, arg.strip()))
    return found


_ROLES = {
    SystemMessage: "system",
    UserMessage: "user",
    UserImageMessage: "user",
    AssistantMessage: "assistant",
}
_PREFIX = {
    SystemMessage: "System: ",
    UserMessage: "User: ",
    UserImageMessage: "User: ",
    AssistantMessage: "Assistant: ",
}


# One message's block: role, tool call id, content without the role prefix, and the
# (kind, value) of its tool calls' arguments.
_Block = tuple[str, str, str, tuple[tuple[str, str], ...]]
# A message's memo entry: [the message, its formatted text, its block, what a summary
# measured of them (None until one did)]; a list, so that the last can be filled in.
MemoEntry = list[Any]
_BLOCK = itemgetter(2)


def _block(message: Message, text: str) -> _Block:
    """The block of ``message``, whose formatted text is ``text``."""
    arguments: tuple[tuple[str, str], ...] = ()
    if isinstance(message, AssistantMessage):
        arguments = tuple(
            argument
            for block in message.blocks
            if isinstance(block, ToolUseBlock) and block.input is not None
            for argument in _arguments(block.input)
        )
    if isinstance(message, ToolResultMessage):
        label = "Tool Error" if message.is_error else "Tool Result"
        prefix = f"{label} [{message.tool_call_id}]: "
        role = "error" if message.is_error else "result"
        return role, message.tool_call_id, text[len(prefix) :], arguments
    kind = type(message)  # the exact type first: one lookup for the usual case
    if kind not in _ROLES:
        kind = next(c for c in _ROLES if isinstance(message, c))
    role = "runtime" if kind is UserMessage and not is_turn_start(message) else _ROLES[kind]
    return role, "", text[len(_PREFIX[kind]) :], arguments


def blocks_from_messages(
    messages: Sequence[Message],
    max_tool_result_chars: int,
    max_chars: int,
    formatted: tuple[Sequence[str], bool] | None = None,
    memo: Memo[int, MemoEntry] | None = None,
    variants: Memo[str, MemoEntry] | None = None,
) -> Blocks:
    """The blocks of the formatted conversation, from the messages themselves.

    The same blocks ``parse`` reads from a prompt whose conversation holds no text that
    looks like a role prefix after a blank line: roles, tool call ids, and contents
    without their ``Role: `` prefix. A newest message cut to its tail by the
    ``max_chars`` limit has no prefix left: a ``fragment``. As in a prompt, newlines at
    the very start and end of the conversation are not content.

    ``formatted``: ``formatted_blocks(messages, max_tool_result_chars, max_chars)`` when
    the caller has it already (the engine's requests carry it). ``memo``: each message's
    block from earlier calls, by the message's ``id()`` (the memo holds the message, so
    the id is not reused while the entry exists), for the same formatted text only;
    ``variants``: those of messages formatted to another text than ``memo``'s (another
    ``max_tool_result_chars``), by that text.
    """
    if formatted is None:
        formatted = formatted_blocks(messages, max_tool_result_chars, max_chars)
    texts, cut = formatted
    kept = messages[len(messages) - len(texts) :]
    entries = _entries(kept, texts, memo, variants)
    if not entries:
        return Blocks([], [], [], [])
    blocks = map(_BLOCK, entries)
    roles, call_ids, contents, arguments = map(list, zip(*blocks, strict=True))
    tool_args = [
        (index, kind, value)
        for index in compress(range(len(arguments)), arguments)
        for kind, value in arguments[index]
    ]
    if cut:  # only the newest message's tail is left, without its role prefix
        roles[0], call_ids[0], contents[0] = "fragment", "", texts[0].lstrip("\n")
        tool_args = [arg for arg in tool_args if arg[0]]  # a tail's calls are not shown
    if contents:
        contents[-1] = contents[-1].rstrip("\n")
    return Blocks(roles, call_ids, contents, tool_args, entries if memo is not None else None)


def _entries(
    kept: Sequence[Message],
    texts: Sequence[str],
    memo: Memo[int, MemoEntry] | None,
    variants: Memo[str, MemoEntry] | None = None,
) -> list[MemoEntry]:
    """Each message's memo entry for its formatted text: from the memo or new (kept in
    the memo, or in ``variants`` when the memo holds the message with another text)."""
    # A session's consecutive requests show mostly the same messages with the same
    # formatted strings: those blocks come from the memo with identity checks only.
    known = memo.get_all(map(id, kept)) if memo is not None else [None] * len(kept)
    entries: list[MemoEntry | None] = [
        k if k is not None and k[0] is m and k[1] is t else None
        for k, m, t in zip(known, kept, texts, strict=True)
    ]
    for index in [i for i, entry in enumerate(entries) if entry is None]:
        message, text, entry = kept[index], texts[index], known[index]
        if entry is not None and entry[0] is message and entry[1] != text:
            entry = variants.get(text) if variants is not None else None
            if entry is None or entry[0] is not message:
                entries[index] = fresh = [message, text, _block(message, text), None]
                if variants is not None and entry is None:
                    variants.put(text, fresh)
                continue
        if entry is not None and entry[0] is message:  # its text is equal
            entries[index] = entry
            continue
        entries[index] = fresh = [message, text, _block(message, text), None]
        if memo is not None and entry is None:
            memo.put(id(message), fresh, len(text))
    return cast(list[MemoEntry], entries)  # no None left
