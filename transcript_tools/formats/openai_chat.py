"""OpenAI Chat Completions conversations.

Three layouts: JSONL with one message per line (the whole file is one
conversation); JSONL with one ``{"messages": [...]}`` conversation per line; a
whole ``.json`` file holding such an object (as agent runners save them, e.g.
mini-swe-agent's ``.traj.json``). Usage per call is read from the assistant
message's ``usage``, or nested in the saved response
(``extra.response.usage`` / ``response.usage``), and its model the same way.

Turns (docs/spec.md, "Turns"): text-protocol agents (mini-swe-agent 1.x and the like) send the
environment's output back as a ``user`` message with no tool call. Such a message is an
observation, not a person: it never starts a turn. It is recognised after a model call by
the agent's own marker — a ``trajectory_format`` naming mini-swe-agent (every user
message there after the task statement is the runtime's: observations, format-error and
timeout notices, also a format-error notice before the first recorded reply, since
mini-swe-agent does not record a reply it rejected) — or, in any log, by content that
opens with mini-swe-agent's ``<returncode>`` observation tag. Where mini-swe-agent's
``info.model_stats.api_calls`` counts more calls than the trajectory records, a warning
says so: those calls' tokens are not in the recorded usage.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

from ..engine.messages import (
    OBSERVATION,
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
    UserImageMessage,
    UserMessage,
)
from .content_parts import json_or_text, text_of
from .fields import counts, nested, str_or_none
from .source import (
    MAX_TOKENS_PER_CALL,
    Record,
    Source,
    Warn,
    count_field,
    record_conversation,
    session_stem,
)

NAME = "openai"
DESCRIPTION = (
    "OpenAI Chat Completions messages (JSONL per message, {messages:[...]} per line or per file)"
)

ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
# Roles some runners append that carry no model-visible message (mini-swe-agent's final "exit").
IGNORED_ROLES = frozenset({"exit"})
PART_KINDS = {
    "image_url": "image",
    "input_image": "image",
    "image": "image",
    "input_audio": "audio",
    "audio": "audio",
    "file": "file",
    "input_file": "file",
    "refusal": "refusal",
}


# Event types of agents' stream outputs (Gemini CLI's stream-json: init, message, tool_use,
# tool_result, result): their messages have a role too, but their other events have none.
FOREIGN_EVENT_TYPES = frozenset({"init", "tool_use", "tool_result", "result"})


def _foreign(obj: dict[str, Any]) -> bool:
    """A record no Chat Completions log holds: another format's event (docs/formats.md:
    "Gemini CLI headless output", Detection)."""
    kind = obj.get("type")
    return kind in FOREIGN_EVENT_TYPES or (kind == "message" and "delta" in obj)


def sniff(head: list[Record]) -> bool:
    if not head:
        return False
    if any(_foreign(r.obj) for r in head):
        return False  # never chosen for a file whose records are not all messages
    first = head[0].obj
    if isinstance(first.get("messages"), list):
        msgs = first["messages"]
        return not msgs or (isinstance(msgs[0], dict) and "role" in msgs[0])
    return isinstance(first.get("role"), str) and ("content" in first or "tool_calls" in first)


class BadMessage(ValueError):
    pass


def _parts(content: Any) -> list[TextBlock | OtherBlock]:
    """Content (a string, None, or a list of parts) → blocks."""
    if content is None:
        return []
    if isinstance(content, str):
        return [TextBlock(content)] if content else []
    if not isinstance(content, list):
        raise BadMessage(
            f"content must be a string or an array of parts, got {type(content).__name__}"
        )
    blocks: list[TextBlock | OtherBlock] = []
    for part in content:
        if isinstance(part, str):
            blocks.append(TextBlock(part))
            continue
        if not isinstance(part, dict):
            raise BadMessage("a content part must be an object")
        kind = part.get("type", "text")
        if kind in ("text", "input_text", "output_text"):
            text = part.get("text")
            if isinstance(text, str):
                blocks.append(TextBlock(text))
        else:
            blocks.append(OtherBlock(PART_KINDS.get(kind, str(kind)), part))
    return blocks


def _text(content: Any) -> str:
    """Plain text of content; non-text parts as [kind]."""
    return text_of(_parts(content), " ", kinds=True)


def usage_from_openai(usage: Any, warn: Warn | None = None) -> Usage | None:
    """``{"prompt_tokens","completion_tokens",...}`` → Usage (prompt includes cached tokens).

    Counts that are not numbers, or cannot be true, are 0 (``source.count_field``)."""
    if not isinstance(usage, dict):
        return None
    if "prompt_tokens" not in usage and "completion_tokens" not in usage:
        return None
    details = usage.get("prompt_tokens_details")
    cached = (
        count_field(details.get("cached_tokens"), "usage.cached_tokens", warn)
        if isinstance(details, dict)
        else 0
    )
    prompt, completion = counts(usage, "usage.", ("prompt_tokens", "completion_tokens"), warn)
    return Usage(prompt, completion, cached)


def _saved_responses(msg: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Where a message's usage and model are read, in order: the message, its ``extra``
    and its ``response``, each followed by the response it holds (mini-swe-agent keeps
    them in ``extra.response``)."""
    for holder in (msg, msg.get("extra"), msg.get("response")):
        if isinstance(holder, dict):
            yield holder
            if isinstance(holder.get("response"), dict):
                yield holder["response"]


def _message_usage(msg: dict[str, Any], warn: Warn | None = None) -> Usage | None:
    for holder in _saved_responses(msg):
        usage = usage_from_openai(holder.get("usage"), warn)
        if usage is not None:
            return usage
    return None


def _message_model(msg: dict[str, Any]) -> str | None:
    """The model that wrote the message, read where its usage is."""
    for holder in _saved_responses(msg):
        if holder.get("model") is not None:
            return str_or_none(holder["model"])
    return None


def _tool_calls(msg: dict[str, Any]) -> list[Block]:
    blocks: list[Block] = []
    calls = msg.get("tool_calls") or []
    if not isinstance(calls, list):
        raise BadMessage("tool_calls must be an array")
    for call in calls:
        if not isinstance(call, dict):
            raise BadMessage("a tool call must be an object")
        fn = call.get("function") or {}
        if isinstance(fn, dict):
            name = fn.get("name")
            args: Any = json_or_text(fn.get("arguments"))  # models do emit broken JSON
        else:
            name = args = None
        call_id = call.get("id", "")
        name = name or "unknown"
        blocks.append(
            ToolUseBlock(
                call_id if type(call_id) is str else str(call_id),
                name if type(name) is str else str(name),
                args,
            )
        )
    legacy = msg.get("function_call")
    if isinstance(legacy, dict):
        blocks.append(
            ToolUseBlock("", str(legacy.get("name") or "unknown"), legacy.get("arguments"))
        )
    return blocks


def _assistant_usage(msg: dict[str, Any], warn: Warn | None = None) -> Usage | None:
    # Fast path for the common shape ({"prompt_tokens": int, "completion_tokens": int});
    # anything else goes through the general reader.
    usage = msg.get("usage")
    if type(usage) is dict and "prompt_tokens_details" not in usage:
        prompt = usage.get("prompt_tokens")
        completion = usage.get("completion_tokens")
        if (
            type(prompt) is int
            and type(completion) is int
            and 0 <= prompt <= MAX_TOKENS_PER_CALL
            and 0 <= completion <= MAX_TOKENS_PER_CALL
        ):
            return Usage(prompt, completion)
    return _message_usage(msg, warn)


def message_from_openai(msg: dict[str, Any], warn: Warn | None = None) -> Message | None:
    """One Chat Completions message dict → Message (None for ignored roles); ``warn``
    hears of usage counts that are not numbers or cannot be true."""
    role = msg.get("role")
    content = msg.get("content")
    # Fast paths for the common roles (per-message hot path); same results as the
    # general code below.
    if role == "assistant":
        return _assistant(msg, content, warn)
    if type(content) is str:
        if role == "tool":
            call_id = msg.get("tool_call_id") or msg.get("name") or ""
            return ToolResultMessage(
                call_id if type(call_id) is str else str(call_id),
                content,
                bool(msg.get("is_error", False)),
            )
        if role == "user":
            return UserMessage((TextBlock(content),) if content else ())
    if role in IGNORED_ROLES:
        return None
    if role not in ROLES:
        raise BadMessage(f"unknown role {role!r} (expected one of: {', '.join(sorted(ROLES))})")
    if role in ("system", "developer"):
        return SystemMessage(content if type(content) is str else _text(content))
    if role == "user":
        blocks = _parts(content)
        if (
            blocks
            and all(isinstance(b, OtherBlock) and b.kind == "image" for b in blocks)
            and len(blocks) == 1
        ):
            only = cast(OtherBlock, blocks[0])  # the all(isinstance(...)) above does not narrow
            return UserImageMessage("", only.data)
        return UserMessage(tuple(blocks))
    # tool / legacy function result
    call_id = msg.get("tool_call_id") or msg.get("name") or ""
    return ToolResultMessage(str(call_id), _text(content), bool(msg.get("is_error", False)))


def _assistant(msg: dict[str, Any], content: Any, warn: Warn | None = None) -> AssistantMessage:
    if content is None or content == "":
        blocks: tuple[Block, ...] = ()
    elif type(content) is str:
        blocks = (TextBlock(content),)
    else:
        blocks = tuple(_parts(content))
    reasoning = msg.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning:
        blocks = (OtherBlock("thinking", reasoning), *blocks)
    if msg.get("tool_calls") or "function_call" in msg:
        blocks = (*blocks, *_tool_calls(msg))
    return AssistantMessage(blocks, _assistant_usage(msg, warn), _message_model(msg))


OBSERVATION_PREFIXES = ("<returncode>",)  # mini-swe-agent's observation template


def _agent_runtime_speaks(obj: dict[str, Any]) -> bool:
    """True when every user message after the first model call is the runtime's."""
    fmt = obj.get("trajectory_format")
    return isinstance(fmt, str) and fmt.startswith("mini-swe-agent")


def mark_observations(messages: list[Message], runtime_speaks: bool = False) -> None:
    """Re-mark, in place, the user messages that are an environment's output (see above)."""
    called = False
    for i, message in enumerate(messages):
        if type(message) is AssistantMessage:
            called = True
        elif type(message) is UserMessage and not called and runtime_speaks:
            called = True  # the task statement; what follows is the runtime's
        elif type(message) is UserMessage and called:
            first = message.blocks[0] if message.blocks else None
            text = first.text.lstrip() if isinstance(first, TextBlock) else ""
            if runtime_speaks or text.startswith(OBSERVATION_PREFIXES):
                messages[i] = UserMessage(message.blocks, OBSERVATION)


def _check_api_calls(
    obj: dict[str, Any], conv: Conversation, source: Source, record: Record
) -> None:
    """mini-swe-agent counts every model call in ``info.model_stats.api_calls``, also the
    ones whose reply it rejected and did not record."""
    counted = nested(obj, "info", "model_stats", "api_calls")
    if type(counted) is not int:
        return
    kept = sum(1 for m in conv.messages if type(m) is AssistantMessage)
    if counted > kept:
        source.dropped(
            record,
            f"info.model_stats.api_calls is {counted} but the trajectory records {kept} model"
            f" call(s): {counted - kept} call(s) left no message (a reply rejected, or a call"
            " that failed); tokens they used are not in the recorded usage",
        )


def read(records: Iterator[Record], source: Source) -> Iterator[Conversation]:
    per_message: Conversation | None = None
    index = 0
    for record in records:
        obj = record.obj
        msgs = obj.get("messages")
        if isinstance(msgs, list):
            index += 1
            # one conversation per record; numbered when the file holds several
            conv = record_conversation(NAME, source, record, index)
            warn = source.warner(record)
            for i, msg in enumerate(msgs):
                try:
                    if not isinstance(msg, dict):
                        raise BadMessage("a message must be an object")
                    message = message_from_openai(msg, warn)
                except BadMessage as exc:
                    source.bad_record(record, f"messages[{i}]: {exc}")
                    continue
                if message is not None:
                    conv.messages.append(message)
            runtime_speaks = _agent_runtime_speaks(obj)
            mark_observations(conv.messages, runtime_speaks)
            if runtime_speaks:
                _check_api_calls(obj, conv, source, record)
            yield conv
            continue
        if per_message is None:
            per_message = Conversation(session_stem(source), source.display, NAME, line=record.line)
        try:
            message = message_from_openai(obj, source.warner(record))
        except BadMessage as exc:
            source.bad_record(record, str(exc))
            continue
        if message is not None:
            per_message.messages.append(message)
    if per_message is not None:
        mark_observations(per_message.messages)
        yield per_message
