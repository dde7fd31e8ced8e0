"""Aider's request log (``.aider.llm.history``; plain text, no usage).

Blocks: a ``TO LLM <iso time>`` line, then the whole request as role-prefixed lines
(``SYSTEM …``, ``USER …``, ``ASSISTANT …``; each message opened by a ``-------`` line),
then ``LLM RESPONSE <iso time>`` and the reply as ``ASSISTANT …`` lines. One response is
one model call.

Every request repeats the whole context, so the conversation is rebuilt from the
requests, as for claude-trace captures: requests that extend one another form a chain,
and each chain is ONE session — its last request plus that request's response. What is
compared is the dialogue only (the person's prompts, replies, and Aider's runtime
messages): Aider rebuilds the system prompt, the repository map and the files' contents
for every request (they change as files are edited, and the system prompt changes with
``/ask`` / ``/code``), and appends its reminder to the LAST user message of a request
only — so a user message matches a later copy that lacks that tail. A request that
extends no open chain starts a new session: a history Aider summarized (its front
rewritten), ``/clear``, or a separate context such as architect mode's editor calls,
which interleave with the architect's chat.

Messages: SYSTEM → SystemMessage; the repository map and file contents → INJECTED user
messages; Aider's runtime messages → INJECTED, command / lint output → OBSERVATION
(common.py); other user messages are the person's and start turns. The canned replies
Aider writes after its own messages ("Ok.", "Ok, I will use that as …") are not model
calls: they are left out, counted in a warning. No usage: every call is estimated.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from ...engine.messages import AssistantMessage, Conversation, SystemMessage, TextBlock, UserMessage
from ..source import Source
from .common import is_canned, is_context, stem, strip_ansi, user_origin

NAME = "aider-llm"
DESCRIPTION = "Aider request log (.aider.llm.history: every request and response, plain text)"
SUFFIX = ".aider.llm.history"

HEADER = re.compile(r"(TO LLM|LLM RESPONSE) (\d{4}-\d\d-\d\dT\S*)\s*$")
BOUNDARY = "-------"
ROLES = {"SYSTEM": "system", "USER": "user", "ASSISTANT": "assistant"}


def sniff_text(head: bytes) -> bool:
    text = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    return re.match(rb"(TO LLM|LLM RESPONSE) \d{4}-\d\d-\d\dT", text) is not None


@dataclass(slots=True)
class _Msg:
    role: str
    lines: list[str]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


@dataclass(slots=True)
class _Block:
    request: bool
    line: int
    messages: list[_Msg] = field(default_factory=list)


def _blocks(text: str, source: Source) -> list[_Block]:
    blocks: list[_Block] = []
    current: _Block | None = None
    open_msg: _Msg | None = None  # the message lines are being added to
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the file's final newline
    for lineno, raw in enumerate(lines, 1):
        line = raw[:-1] if raw.endswith("\r") else raw
        # Hot path (one call per line of a log that repeats the whole context per request):
        # plain string tests first, the regular expression only for a likely header.
        word, _, body = line.partition(" ")
        name = ROLES.get(word)
        if name is not None and current is not None:
            if open_msg is None or open_msg.role != name:
                open_msg = _Msg(name, [])
                current.messages.append(open_msg)
            open_msg.lines.append(body)
            continue
        header = HEADER.match(line) if word in ("TO", "LLM") else None
        if header:
            current = _Block(header.group(1) == "TO LLM", lineno)
            blocks.append(current)
            open_msg = None
            continue
        if line == BOUNDARY:
            open_msg = None
            continue
        if not line:
            continue  # an empty message (Aider writes an empty line for it), or a blank line
        if current is None or name is None:
            what = (
                "text before the first 'TO LLM' line"
                if current is None
                else "not a SYSTEM/USER/ASSISTANT line"
            )
            if lineno == len(lines) and not text.endswith("\n"):
                # Aider appends to the log while it runs: a cut last line is normal
                source.noted(
                    "incomplete last line (the writer may still be running) (skipped)", lineno
                )
            else:
                source.bad_line(lineno, what)
            continue
    return blocks


@dataclass(slots=True)
class _Call:
    request: _Block
    response: _Block | None
    reply_at: int  # where its reply sits in the dialogue: the request's dialogue length


@dataclass(slots=True)
class _Chain:
    calls: list[_Call] = field(default_factory=list)
    expected: list[_Msg] = field(default_factory=list)  # dialogue of the last request + its reply
    reminded: int = -1  # index in ``expected`` of the last request's final user message


def _classify(messages: list[_Msg]) -> list[tuple[_Msg, int | None]]:
    """Each message with its index in the dialogue — None for the system prompt, the
    context messages and the canned replies to them, which Aider rebuilds every time."""
    out: list[tuple[_Msg, int | None]] = []
    index = 0
    after_context = False
    for msg in messages:
        context = msg.role == "user" and is_context(msg.text)
        if msg.role == "system" or context or (after_context and is_canned(msg.text)):
            out.append((msg, None))
        else:
            out.append((msg, index))
            index += 1
        after_context = context
    return out


def _dialogue(messages: list[_Msg]) -> list[_Msg]:
    return [msg for msg, index in _classify(messages) if index is not None]


def _extends(chain: _Chain, dialogue: list[_Msg]) -> bool:
    if len(dialogue) <= len(chain.expected):
        return False
    for i, (old, new) in enumerate(zip(chain.expected, dialogue, strict=False)):
        if old.role != new.role:
            return False
        if old.lines == new.lines:
            continue
        # Aider's reminder was appended to the earlier request's last user message
        if not (i == chain.reminded and new.lines and old.lines[: len(new.lines)] == new.lines):
            return False
    return True


def _chains(blocks: list[_Block], source: Source) -> list[_Chain]:
    chains: list[_Chain] = []
    pending: tuple[_Chain, _Call] | None = None  # the request waiting for its response
    for block in blocks:
        if not block.request:
            if pending is None:
                source.bad_line(block.line, "a response without its request")
                continue
            chain, call = pending
            call.response = block
            # the reply joins what the next request of this chain must start with
            chain.expected = [*chain.expected, *block.messages]
            pending = None
            continue
        dialogue = _dialogue(block.messages)
        owner = next((c for c in reversed(chains) if _extends(c, dialogue)), None)
        if owner is None:
            owner = _Chain()
            chains.append(owner)
        call = _Call(block, None, len(dialogue))
        owner.calls.append(call)
        owner.expected = dialogue
        owner.reminded = len(dialogue) - 1
        pending = (owner, call)
    return chains


def _conversation(chain: _Chain, name: str, source: Source) -> Conversation:
    conv = Conversation(name, source.display, NAME, line=chain.calls[0].request.line)
    # where each recorded response sits in the dialogue: those are the model calls
    replies = {c.reply_at for c in chain.calls if c.response is not None}
    last = chain.calls[-1]
    messages = list(last.request.messages)
    if last.response is not None:
        messages.extend(last.response.messages)
    canned = 0
    for msg, index in _classify(messages):
        text = msg.text
        if msg.role == "system":
            conv.messages.append(SystemMessage(text))
        elif msg.role == "user":
            conv.messages.append(UserMessage((TextBlock(text),), user_origin(text)))
        elif is_canned(text) and index not in replies:
            canned += 1  # written by Aider, not by a model call
        else:
            conv.messages.append(AssistantMessage((TextBlock(text),)))
    if canned:
        conv.warnings.append(
            f"{canned} canned repl{'y' if canned == 1 else 'ies'} Aider wrote itself ('Ok.' …) left"
            " out: no model call made them"
        )
    return conv


def read_text(text: str, source: Source) -> Iterator[Conversation]:
    chains = _chains(_blocks(strip_ansi(text), source), source)
    base = stem(source, SUFFIX)
    for index, chain in enumerate(chains, 1):
        yield _conversation(chain, f"{base}#{index}" if len(chains) > 1 else base, source)
