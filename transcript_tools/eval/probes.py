"""Deterministic artifact probes: the verbatim things an agent needs to carry on.

Drawn per message (each message once per conversation, see ``ProbeIndex``) from
what the summarizer is shown: user and assistant text, tool results cut to
``max_tool_result_chars`` (the prompt's cut), plus the tool calls' own arguments
(command lines and file paths), which the seed's format never shows but which an
agent continuing the work needs. System messages (always kept in the view) and
runtime injections are not probed. What one text holds is :mod:`.artifacts`'s
(``extract_text``). The rules, and the noise rules that drop what an agent would not
need, are in docs/eval.md; ``EXTRACTOR_VERSION`` changes
whenever they do, so scores made by another extractor are not compared blindly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..engine.messages import (
    INJECTED,
    PERSON,
    AssistantMessage,
    Message,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    UserMessage,
)
from .artifacts import COMMAND, CONSTRAINT, ERROR, PATH, REQUEST, extract_text
from .normalize import key_terms, normalize
from .patterns import _COMMAND_KEYS, _IDE_CONTEXT_RE, _IDE_TAG_RE, _PATH_KEYS, _SHELL_WORDS

EXTRACTOR_VERSION = 2  # 2: an IDE's context is no request's terms (Q1), its tags no symbol (R26)

REDACTED = "[REDACTED"  # sanitized corpora replace text with "[REDACTED_TEXT len=… sha=…]"


@dataclass(frozen=True, slots=True)
class Probe:
    """One thing the summary should carry: its kind, where it came from, its text."""

    kind: str
    message: int  # index in the conversation's messages
    turn: int
    text: str
    key: str  # normalized text (what is looked for)
    terms: tuple[str, ...] = ()  # key terms, for kinds recalled by coverage: ASCII ones first
    cjk_terms: tuple[str, ...] = ()  # the CJK ones among them (matched as substrings)

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": self.message, "turn": self.turn, "text": self.text}


def _text_of(message: Message, max_tool_result_chars: int) -> str:
    if isinstance(message, ToolResultMessage):
        return message.content[:max_tool_result_chars]
    blocks = getattr(message, "blocks", ())
    return " ".join(b.text for b in blocks if isinstance(b, TextBlock))


def _command_text(value: Any) -> str | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        value = " ".join(value)
        if value.startswith(("bash -lc ", "bash -c ", "sh -c ", "zsh -lc ")):
            value = value.split(" ", 2)[2]
    if not isinstance(value, str):
        return None
    first = value.strip().split("\n", 1)[0].strip()
    if " " not in first and first not in _SHELL_WORDS:
        return None  # an editor sub-command ("str_replace", "view"), not a shell command (R14)
    if "<<" in first or first.startswith(("cat >", "python -c", "python3 -c")) or len(first) > 160:
        return None  # heredocs and inline scripts: the content, not a command to remember
    return " ".join(first.split()) or None


def _tool_call_probes(block: ToolUseBlock) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    args = block.input
    if isinstance(args, str):
        try:
            import orjson

            args = orjson.loads(args)
        except ValueError:
            return out
    if not isinstance(args, dict):
        return out
    for key in _COMMAND_KEYS:
        command = _command_text(args.get(key))
        if command:
            out.append((COMMAND, command))
            break
    for key in _PATH_KEYS:
        value = args.get(key)
        if isinstance(value, str) and 2 < len(value) < 200 and "\n" not in value:
            out.append((PATH, value.strip()))
            break
    return out


def message_probes(
    message: Message, index: int, turn: int, max_tool_result_chars: int
) -> list[Probe]:
    """Every artifact probe of one message (requests are ``request_probe``'s)."""
    if isinstance(message, UserMessage):
        if message.origin == INJECTED:
            return []
        person = message.origin == PERSON
    elif isinstance(message, (AssistantMessage, ToolResultMessage)):
        person = False
    else:
        return []  # system messages stay in the view; images carry no text
    text = _text_of(message, max_tool_result_chars)
    if text.startswith(REDACTED):
        return []  # sanitized logs: nothing left to carry
    if person and "<ide_" in text:
        text = _IDE_TAG_RE.sub(" ", text)  # rule R26
    pairs = extract_text(
        text,
        person,
        tool=isinstance(message, ToolResultMessage),
    )
    if isinstance(message, AssistantMessage):
        for block in message.blocks:
            if isinstance(block, ToolUseBlock):
                pairs.extend(_tool_call_probes(block))
    out: list[Probe] = []
    for kind, text in pairs:
        key = normalize(text)
        if len(key) < 2:
            continue
        terms: tuple[str, ...] = ()
        if kind == CONSTRAINT:
            terms = tuple(key_terms(key))
            if len(terms) < 2:
                continue
        elif kind == ERROR:
            terms = tuple(key_terms(key.partition(": ")[2], limit=8))
        out.append(Probe(kind, index, turn, text, key, terms, _cjk(terms)))
    return out


def request_probe(message: Message, index: int, turn: int) -> Probe | None:
    """The request a person made in a message that starts a turn; None when it has
    fewer than 2 key terms ("yes", "continue", "go on": nothing to carry)."""
    if not isinstance(message, UserMessage) or message.origin != PERSON:
        return None
    text = _text_of(message, 0).strip()
    if text.startswith(REDACTED):
        return None
    if "</" in text:  # the IDE's context around the request is not what was asked (Q1)
        text = _IDE_CONTEXT_RE.sub("", text).strip()
    key = normalize(text)
    terms = tuple(key_terms(key))
    if len(terms) < 2:
        return None
    shown = text if len(text) <= 200 else text[:199] + "…"
    return Probe(REQUEST, index, turn, shown, key, terms, _cjk(terms))


def _cjk(terms: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(t for t in terms if not t.isascii())
