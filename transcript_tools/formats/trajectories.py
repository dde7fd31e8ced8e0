"""Agent run trajectories: SWE-agent ``.traj`` files and OpenHands event streams.

(mini-swe-agent's ``.traj.json`` holds plain Chat Completions ``messages`` and is read by
the ``openai`` reader.)

SWE-agent (``{"history": [...], "trajectory": [...], "info": ...}``): ``history`` is what
the model was sent, in Chat Completions shape (content strings or parts, ``tool_calls``,
``reasoning_content``). Function-calling runs answer with role ``tool`` messages
(``tool_call_ids``). Older text-action runs send each command's output back as a role
``user`` message: the command (``action``) becomes a ToolUseBlock ``action_<n>`` on the
assistant message and the output that follows it a ToolResultMessage, so both kinds of
run have the same shape — one turn per human prompt, the agent loop inside it.
Demonstration messages (``is_demo``) are instructions, mapped to SystemMessage. After the
agent's first message, any other role ``user`` message (a format-error notice such as
"Please always end with a command.") is the runtime's: OBSERVATION, never a turn. No usage.

OpenHands (``output.jsonl``: one instance per line with ``history`` and ``metrics``; or a
bare JSON array of events): system action → SystemMessage; user message → UserMessage
(INJECTED when it is the evaluation harness's canned "Please continue working on the
task…" reply);
an agent action with ``tool_call_metadata`` → AssistantMessage (the model's text plus a
ToolUseBlock; actions of the same LLM response are one message, its usage counted once,
from ``metrics.token_usages`` matched by ``response_id`` else
``model_response.usage``); observations with ``tool_call_metadata`` → ToolResultMessage;
``error`` observations → an error ToolResultMessage; agent ``message``/``finish`` without
metadata → AssistantMessage text. Recall / state-change events are bookkeeping: skipped.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from ..engine.messages import (
    INJECTED,
    OBSERVATION,
    PERSON,
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
from .content_parts import json_or_text
from .fields import nested, str_or_empty, str_or_none
from .openai_chat import BadMessage, message_from_openai, usage_from_openai
from .source import Record, Source, Warn, count_field, record_conversation, session_stem

NAME = "trajectory"
DESCRIPTION = "Agent trajectories: SWE-agent .traj (history) and OpenHands event streams"

SOURCES = frozenset({"agent", "user", "environment"})


def _is_event(obj: Any) -> bool:
    return (
        isinstance(obj, dict)
        and obj.get("source") in SOURCES
        and ("action" in obj or "observation" in obj)
    )


def _history_kind(obj: dict[str, Any]) -> str | None:
    history = obj.get("history")
    if not isinstance(history, list):
        return None
    first = next((h for h in history if isinstance(h, dict)), None)
    if first is None:
        return "swe-agent" if "trajectory" in obj else None
    if _is_event(first):
        return "openhands"
    if "role" in first:
        return "swe-agent"
    return None


def sniff(head: list[Record]) -> bool:
    if not head:
        return False
    if _history_kind(head[0].obj):
        return True
    return all(_is_event(r.obj) and "id" in r.obj for r in head)


# ---- SWE-agent ----------------------------------------------------------------------------


def _swe_agent(history: list[Any], conv: Conversation, record: Record, source: Source) -> None:
    out = conv.messages
    pending_action: str | None = None  # a text action waiting for its output
    seen_call = False
    actions = 0
    for i, msg in enumerate(history):
        if not isinstance(msg, dict):
            source.bad_record(record, f"history[{i}]: a message must be an object")
            continue
        role = msg.get("role")
        try:
            if role == "tool":
                ids = msg.get("tool_call_ids")
                call_id = ids[0] if isinstance(ids, list) and ids else msg.get("tool_call_id", "")
                content = msg.get("content")
                text = content if isinstance(content, str) else _parts_text(content)
                out.append(ToolResultMessage(str(call_id), text))
                pending_action = None
                continue
            if role == "user" and msg.get("is_demo"):
                out.append(SystemMessage(_parts_text(msg.get("content"))))
                continue
            if role == "user" and pending_action is not None:
                out.append(ToolResultMessage(pending_action, _parts_text(msg.get("content"))))
                pending_action = None
                continue
            message = message_from_openai(msg)
        except BadMessage as exc:
            source.bad_record(record, f"history[{i}]: {exc}")
            continue
        pending_action = None
        if isinstance(message, UserMessage) and seen_call:
            # docs/spec.md, "Turns": after the agent's first call every user message is the
            # runtime's (format-error notices, observations without an action): no turn
            message = UserMessage(message.blocks, OBSERVATION)
        seen_call = seen_call or isinstance(message, AssistantMessage)
        if isinstance(message, AssistantMessage) and not msg.get("tool_calls"):
            action = msg.get("action")
            if isinstance(action, str) and action.strip():
                actions += 1
                pending_action = f"action_{actions}"
                name = action.split(None, 1)[0]
                block = ToolUseBlock(pending_action, name, action.strip())
                message = dataclasses.replace(message, blocks=(*message.blocks, block))
        if message is not None:
            out.append(message)


def _parts_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if isinstance(content, list):
        return " ".join(
            p.get("text", "")
            if isinstance(p, dict) and p.get("type", "text") == "text"
            else f"[{_kind(p)}]"
            for p in content
        )
    raise BadMessage(f"content must be a string or an array of parts, got {type(content).__name__}")


def _kind(part: Any) -> str:
    kind = part.get("type", "unknown") if isinstance(part, dict) else "unknown"
    return "image" if kind == "image_url" else str(kind)


# ---- OpenHands ----------------------------------------------------------------------------


def _token_usages(obj: dict[str, Any], warn: Warn | None = None) -> dict[str, Usage]:
    usages = nested(obj, "metrics", "token_usages")
    found: dict[str, Usage] = {}
    for item in usages if isinstance(usages, list) else ():
        if isinstance(item, dict) and item.get("response_id"):
            found[str(item["response_id"])] = Usage(
                input_tokens=_count(item, "prompt_tokens", warn),
                output_tokens=_count(item, "completion_tokens", warn),
                cache_read_tokens=_count(item, "cache_read_tokens", warn),
                cache_creation_tokens=_count(item, "cache_write_tokens", warn),
            )
    return found


def _count(item: dict[str, Any], key: str, warn: Warn | None) -> int:
    value = item.get(key)
    if value is None or isinstance(value, bool):
        return 0
    return count_field(value, f"metrics.token_usages[].{key}", warn)


def _event_text(event: dict[str, Any]) -> str:
    args = event.get("args")
    if isinstance(args, dict) and isinstance(args.get("content"), str) and args["content"]:
        return args["content"]
    content = event.get("content")
    if isinstance(content, str) and content:
        return content
    return str_or_empty(event.get("message"))


def _response_parts(meta: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """(response id, assistant text, tool call arguments by call id) of a model_response."""
    response = meta.get("model_response")
    if not isinstance(response, dict):
        return "", "", {}
    choices = response.get("choices")
    msg = (
        choices[0].get("message")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict)
        else None
    )
    text, args = "", {}
    if isinstance(msg, dict):
        text = msg["content"] if isinstance(msg.get("content"), str) else ""
        for call in msg.get("tool_calls") or ():
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict):
                args[str(call.get("id"))] = json_or_text(fn.get("arguments"))
    return str(response.get("id") or ""), text, args


def _openhands(
    events: list[tuple[Any, Record]], conv: Conversation, usages: dict[str, Usage], source: Source
) -> None:
    """``events``: (event, the record to blame for a bad one)."""
    out = conv.messages
    counted: set[str] = set()
    open_id: str | None = None  # response of the latest assistant message, while it may grow
    open_at = -1
    for ev, record in events:
        if not isinstance(ev, dict):
            source.bad_record(record, "an event must be an object")
            continue
        action, observation, meta = (
            ev.get("action"),
            ev.get("observation"),
            ev.get("tool_call_metadata"),
        )
        if action == "system":
            out.append(SystemMessage(_event_text(ev)))
        elif action == "message" and ev.get("source") == "user":
            out.append(_user(ev))
            open_id = None
        elif action is not None and ev.get("source") == "agent" and isinstance(meta, dict):
            response_id, text, args = _response_parts(meta)
            call_id = str(meta.get("tool_call_id", ""))
            block = ToolUseBlock(
                call_id, str(meta.get("function_name") or action), args.get(call_id, ev.get("args"))
            )
            if response_id and response_id == open_id:
                prev = out[open_at]
                assert isinstance(prev, AssistantMessage)
                out[open_at] = dataclasses.replace(prev, blocks=(*prev.blocks, block))
                continue
            usage = None
            if response_id and response_id not in counted:
                counted.add(response_id)
                usage = usages.get(response_id) or usage_from_openai(
                    meta["model_response"].get("usage")
                )
            blocks: tuple[Block, ...] = ((TextBlock(text),) if text else ()) + (block,)
            model = nested(meta, "model_response", "model")
            out.append(AssistantMessage(blocks, usage, str_or_none(model)))
            open_id, open_at = response_id, len(out) - 1
        elif action in ("message", "finish") and ev.get("source") == "agent":
            out.append(AssistantMessage.text(_event_text(ev)))
            open_id = None
        elif observation is not None and isinstance(meta, dict):
            out.append(
                ToolResultMessage(
                    str(meta.get("tool_call_id", "")), _event_text(ev), observation == "error"
                )
            )
        elif observation == "error":
            out.append(ToolResultMessage(f"error_{ev.get('id', '')}", _event_text(ev), True))
        elif action is None and observation is None:
            source.bad_record(record, "an event needs an 'action' or an 'observation'")
    unmatched = len(set(usages) - counted)
    if unmatched:
        conv.warnings.append(
            f"{unmatched} recorded LLM responses match no event; their usage is not attached"
        )


def _user(ev: dict[str, Any]) -> Message:
    text = _event_text(ev)
    blocks: list[Block] = [TextBlock(text)]
    args = ev.get("args")
    for url in (args.get("image_urls") if isinstance(args, dict) else None) or ():
        blocks.append(OtherBlock("image", url))
    # OpenHands' evaluation harness answers the agent with a canned "user" message
    # (fake_user_response_fn): the runtime's, so it never starts a turn (docs/spec.md, "Turns")
    origin = INJECTED if text.lstrip().startswith(OPENHANDS_AUTO_REPLY) else PERSON
    return UserMessage(tuple(blocks), origin)


OPENHANDS_AUTO_REPLY = (
    "Please continue working on the task on whatever approach you think is suitable"
)


# ---- reading ------------------------------------------------------------------------------


def read(records: Iterator[Record], source: Source) -> Iterator[Conversation]:
    events: list[Record] = []
    index = 0
    for record in records:
        obj = record.obj
        kind = _history_kind(obj)
        if kind is None:
            if _is_event(obj):
                events.append(record)
            else:
                source.bad_record(record, "neither a trajectory (history) nor an agent event")
            continue
        index += 1
        conv = record_conversation(NAME, source, record, index, ("instance_id", "id", "session_id"))
        if kind == "openhands":
            _openhands(
                [(ev, record) for ev in obj["history"]],
                conv,
                _token_usages(obj, source.warner(record)),
                source,
            )
        else:
            _swe_agent(obj["history"], conv, record, source)
        yield conv
    if events:
        conv = Conversation(session_stem(source), source.display, NAME, line=events[0].line)
        _openhands([(r.obj, r) for r in events], conv, {}, source)
        yield conv
