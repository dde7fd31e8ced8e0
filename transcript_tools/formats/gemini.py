"""Gemini CLI chat logs (``~/.gemini/tmp/<project hash>/chats/session-*.jsonl``).

Line 1 is a header without ``type`` (``sessionId``, ``projectHash``, ``startTime``,
``lastUpdated``, ``kind``); then records ``{"id", "timestamp", "type", ...}`` and patch
lines ``{"$set": {...}}`` that update the header (``lastUpdated``). The same records in a
``messages`` array of one JSON object (the older ``session-*.json``) read alike.

- ``user`` → UserMessage (PERSON): ``content`` is a list of parts (``{"text"}``,
  ``{"inlineData"}``/``{"fileData"}`` → ``[image]``/``[file]``) or a string.
- ``gemini`` → AssistantMessage: ``thoughts`` (reasoning summaries) become thinking
  blocks, then ``content`` (a string), then one ToolUseBlock per ``toolCalls`` entry;
  the calls' ``result`` (``functionResponse.response.output`` / ``.error``) lives inside
  the same record and becomes the ToolResultMessages that follow (``status: "error"``
  → an error result). Gemini CLI rewrites a model record under the SAME ``id`` as it
  progresses (first without tool calls, then with calls and results): the last version
  of each id is the one read, at the place its first version was written, so each
  model call is counted once.
- ``tokens`` (one model call): Usage(input = ``input`` + ``tool`` (tool-use prompt),
  output = ``output`` + ``thoughts``, cache read = ``cached``) — the parts of Gemini's
  ``totalTokenCount``.
- ``info`` / ``error`` / ``warning`` records are notices shown to the person, never sent
  to the model: left out, counted in one warning per session. ``$set`` lines are applied
  to the header and are not messages.
- ``$set.messages`` is the model-facing history Gemini CLI rewrote
  (``ChatRecordingService.updateMessagesFromHistory``, google-gemini/gemini-cli
  packages/core/src/services/chatRecordingService.ts@016443b5): after a chat compression it
  starts with a new synthetic turn (an id never seen) holding the summary and leaves out
  earlier turns → a Compaction at that place (summary: the new turn's text; kept_texts:
  the person messages it kept; trigger "manual" right after a ``/compress`` record, else
  unknown). The messages read so far stay the run's transcript. A rewrite of known ids
  only (tool-output masking) is counted in one warning; tsum keeps the original text.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from ..engine.messages import (
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
)
from ..engine.person_fates import person_text
from ..present.numbers import shown_places
from .anthropic_api import user_message
from .fields import int_or_zero, nested, str_or_none
from .source import MAX_TOKENS_PER_CALL, Record, Source, session_stem

NAME = "gemini-cli"
DESCRIPTION = "Gemini CLI chat logs (~/.gemini/tmp/<hash>/chats/session-*.jsonl)"

MESSAGE_TYPES = frozenset({"user", "gemini"})
NOTICE_TYPES = frozenset({"info", "error", "warning"})
HEADER_KEYS = ("sessionId", "projectHash")
COMPACTION_SOURCE = "gemini-cli:chat-compression"
MANUAL_COMPRESS = "/compress"  # the slash command that compresses on request


def _is_header(obj: dict[str, Any]) -> bool:
    return "type" not in obj and all(k in obj for k in HEADER_KEYS)


def _is_record(obj: dict[str, Any]) -> bool:
    return obj.get("type") in MESSAGE_TYPES | NOTICE_TYPES and "id" in obj and "content" in obj


def sniff(head: list[Record]) -> bool:
    if not head:
        return False
    first = head[0].obj
    if _is_header(first):
        msgs = first.get("messages")
        return msgs is None or isinstance(msgs, list)
    # a file cut before its header: the records themselves are distinctive enough
    return any(r.obj.get("type") == "gemini" and _is_record(r.obj) for r in head)


def usage_from_gemini(tokens: Any) -> Usage | None:
    if not isinstance(tokens, dict) or not any(k in tokens for k in ("input", "output", "total")):
        return None
    return Usage(
        input_tokens=int_or_zero(tokens.get("input")) + int_or_zero(tokens.get("tool")),
        output_tokens=int_or_zero(tokens.get("output")) + int_or_zero(tokens.get("thoughts")),
        cache_read_tokens=int_or_zero(tokens.get("cached")),
    )


def _readable_tokens(tokens: Any) -> bool:
    """Every count present is an integer that can be true (``source.MAX_TOKENS_PER_CALL``),
    and there is at least input or output."""
    return (
        isinstance(tokens, dict)
        and any(k in tokens for k in ("input", "output"))
        and all(
            type(tokens[k]) is int and 0 <= tokens[k] <= MAX_TOKENS_PER_CALL
            for k in ("input", "output", "cached", "thoughts", "tool")
            if k in tokens
        )
    )


def _parts(content: Any) -> list[Block]:
    if isinstance(content, str):
        return [TextBlock(content)] if content else []
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return []
    blocks: list[Block] = []
    for part in content:
        if isinstance(part, str):
            blocks.append(TextBlock(part))
        elif isinstance(part, dict):
            if isinstance(part.get("text"), str):
                if not part.get("thought"):
                    blocks.append(TextBlock(part["text"]))
                else:
                    blocks.append(OtherBlock("thinking", part["text"]))
            elif "inlineData" in part or "fileData" in part:
                data = part.get("inlineData") or part.get("fileData")
                mime = str(data.get("mimeType", "")) if isinstance(data, dict) else ""
                blocks.append(OtherBlock("image" if mime.startswith("image/") else "file", part))
            elif part:
                blocks.append(OtherBlock(next(iter(part)), part))
    return blocks


def _result_text(result: Any) -> tuple[str, bool]:
    """The text of a tool call's ``result`` parts, and whether it reports an error."""
    texts: list[str] = []
    error = False
    for part in result if isinstance(result, list) else [result]:
        if not isinstance(part, dict):
            continue
        response = nested(part, "functionResponse", "response")
        if isinstance(response, dict):
            if "error" in response:
                error = True
                texts.append(str(response["error"]))
            elif "output" in response:
                out = response["output"]
                texts.append(out if isinstance(out, str) else str(out))
            else:
                texts.append(str(response))
        elif isinstance(part.get("text"), str):
            texts.append(part["text"])
    return "\n".join(texts), error


def _model(obj: dict[str, Any]) -> list[Message]:
    blocks: list[Block] = []
    for thought in obj.get("thoughts") or ():
        if isinstance(thought, dict):
            text = "\n".join(str(thought[k]) for k in ("subject", "description") if thought.get(k))
            blocks.append(OtherBlock("thinking", text))
    blocks.extend(_parts(obj.get("content")))
    results: list[Message] = []
    for call in obj.get("toolCalls") or ():
        if not isinstance(call, dict):
            continue
        call_id = str(call.get("id", ""))
        blocks.append(ToolUseBlock(call_id, str(call.get("name") or "unknown"), call.get("args")))
        if "result" in call:
            text, error = _result_text(call.get("result"))
            results.append(ToolResultMessage(call_id, text, error or call.get("status") == "error"))
    usage = usage_from_gemini(obj.get("tokens"))
    return [AssistantMessage(tuple(blocks), usage, str_or_none(obj.get("model"))), *results]


class _Session:
    """One session being read: the last version of each record id, in first-seen order."""

    def __init__(self, source: Source, header: dict[str, Any] | None, line: int | None) -> None:
        self.source = source
        self.header = dict(header or {})
        self.line = line
        self.order: list[str] = []
        self.latest: dict[str, Record] = {}
        self.notices: list[str] = []
        self.unknown: list[str] = []
        self.places: dict[str, str] = {}  # where the kept version of each record is
        self.history: list[str] = []  # ids of the model-facing history, as last known
        self.compactions: list[tuple[int, Compaction]] = []  # at a place in self.order
        self.rewrites: list[str] = []  # $set.messages that rewrote known turns in place
        self.previous: dict[str, Any] | None = None  # the record just before
        self.model: str | None = None  # the model of the latest model record

    def set_history(self, messages: list[Any], where: str) -> None:
        """A ``$set.messages``: a compaction when it brings a turn with text under an id
        never seen and leaves out earlier ones, else a rewrite in place (masking)."""
        turns = [m for m in messages if isinstance(m, dict) and "id" in m]
        ids = [str(m["id"]) for m in turns]
        known = set(self.history)
        new = [m for m in turns if str(m["id"]) not in known]
        summary = next((t for m in new if (t := _text(m.get("content")))), None)
        if summary is not None and known - set(ids):
            kept = tuple(
                t
                for m in turns
                if m.get("type") == "user"
                and str(m["id"]) in known
                and (t := _text(m.get("content")))
            )
            previous = self.previous or {}
            manual = previous.get("type") == "user" and _text(previous.get("content")).startswith(
                MANUAL_COMPRESS
            )
            comp = Compaction(
                0,
                COMPACTION_SOURCE,
                summary=summary,
                trigger="manual" if manual else None,
                model=self.model,
                kept_messages=len(kept),
                kept_texts=kept,
            )
            self.compactions.append((len(self.order), comp))
        else:
            self.rewrites.append(where)
        self.history = ids

    def add(self, record: Record, obj: dict[str, Any], where: str) -> None:
        kind = obj.get("type")
        self.previous = obj
        if kind in NOTICE_TYPES:
            self.notices.append(where)
            return
        if kind not in MESSAGE_TYPES:
            self.unknown.append(f"{where} ({kind!r})")
            return
        # a record without an id is its own message, never merged with another
        key = str(obj["id"]) if "id" in obj else f"@{record.line}:{record.item}:{where}"
        if key not in self.latest:
            self.order.append(key)
        if key not in self.history:
            self.history.append(key)
        if kind == "gemini" and isinstance(obj.get("model"), str):
            self.model = obj["model"]
        self.latest[key] = record  # a rewrite under the same id replaces the earlier version
        self.places[key] = where

    def conversation(self, fallback_id: str) -> Conversation:
        # named by the file, as Claude Code sessions are (the header's sessionId is a UUID)
        conv = Conversation(
            fallback_id,
            self.source.display,
            NAME,
            line=self.line,
        )
        unreadable: list[str] = []
        starts: list[int] = []  # the index of each record's first message
        for key in self.order:
            starts.append(len(conv.messages))
            obj = self.latest[key].obj
            if obj.get("type") == "user":
                conv.messages.append(user_message(_parts(obj.get("content"))))
                continue
            if "tokens" in obj and not _readable_tokens(obj["tokens"]):
                unreadable.append(self.places[key])
                obj = {k: v for k, v in obj.items() if k != "tokens"}  # estimated instead
            conv.messages.extend(_model(obj))
        starts.append(len(conv.messages))
        for place, comp in self.compactions:
            conv.compactions.append(replace(comp, message_index=starts[place]))
        if self.rewrites:
            conv.warnings.append(
                f"history rewritten in place {len(self.rewrites)} time(s) ($set.messages, e.g."
                f" tool-output masking): tsum keeps the original text ({shown_places(self.rewrites, 8)})"
            )
        if unreadable:
            conv.warnings.append(
                f"tokens of {len(unreadable)} model record(s) not read (expected integers from 0 to {MAX_TOKENS_PER_CALL:,};"
                f" estimated instead; {shown_places(unreadable, 8)})"
            )
        if self.notices:
            conv.warnings.append(
                f"{len(self.notices)} info/error record(s) left out: notices shown to the person,"
                f" never sent to the model ({shown_places(self.notices, 8)})"
            )
        if self.unknown:
            conv.warnings.append(
                f"{len(self.unknown)} record(s) of unknown type left out ({shown_places(self.unknown, 8)})"
            )
        return conv


def _text(content: Any) -> str:
    """The text a person would have written in ``content`` ("" for none)."""
    return person_text(user_message(_parts(content)))


def _place(record: Record, index: int | None = None) -> str:
    if record.line is not None:
        return f"line {record.line}"
    if index is not None:
        return f"messages[{index}]"
    return f"[{record.item}]"


def read(records: Iterator[Record], source: Source) -> Iterator[Conversation]:
    stem = session_stem(source)
    session: _Session | None = None
    for record in records:
        obj = record.obj
        if _is_header(obj):
            if isinstance(obj.get("messages"), list):  # the older one-object .json file
                whole = _Session(source, obj, record.line)
                for i, msg in enumerate(obj["messages"]):
                    if isinstance(msg, dict):
                        whole.add(Record(msg, record.line, record.item), msg, _place(record, i))
                    else:
                        source.bad_record(record, f"messages[{i}]: a record must be an object")
                yield whole.conversation(stem)
                continue
            if session is not None:
                yield session.conversation(stem)
            session = _Session(source, obj, record.line)
            continue
        if session is None:
            session = _Session(source, None, record.line)  # no header: a file cut at the front
        patch = obj.get("$set")
        if isinstance(patch, dict) and len(obj) == 1:
            if isinstance(patch.get("messages"), list):
                session.set_history(patch["messages"], _place(record))
            session.header.update(patch)
            continue
        if "type" not in obj:
            source.bad_record(record, "neither a Gemini CLI record (no 'type') nor a $set patch")
            continue
        session.add(record, obj, _place(record))
    if session is not None:
        yield session.conversation(stem)
