"""tau-bench and tau2-bench results: agent runs against an LLM user simulator.

tau2-bench (``{"timestamp", "info", "tasks", "simulations": [...]}``, one JSON object):
one session per simulation, named ``<task_id>/trial-<trial>``. A message is
``{"role", "content", "tool_calls": [{"id", "name", "arguments": {object}, "requestor"}]
| null, "usage": {"prompt_tokens", "completion_tokens"} | null, ...}``; tool results are
``{"role": "tool", "id", "content", "requestor", "error"}``.

- The user simulator plays the person: its text messages are PERSON and start turns. It
  is an LLM too, and its messages carry ``usage``/``cost`` — of the SIMULATOR's calls,
  never the agent's; the Message model has no usage on user messages, so only the
  agent's own calls (assistant ``usage``) enter ``cost_so_far``.
- In the telecom domain the simulator also calls tools on its own phone: its messages
  with ``tool_calls`` and the tool results with ``requestor: "user"`` go to the
  environment, never to the agent (tau2's orchestrator routes them USER -> ENV -> USER;
  a simulator message with text AND tool calls is routed the same way, its text is never
  delivered). They are left out, counted in one warning per simulation.
- The first message is usually the agent's fixed greeting: no model call wrote it
  (``usage: null``, ``raw_data: null``, ``cost: 0.0``). It stays in the history, before
  the first turn, with a zero Usage — the message model has no "not a call" marker, and
  without usage tsum would estimate it as a call costing the whole view.
- The agent's system prompt is not in the messages; the domain policy it carries
  (``info.environment_info.policy``, the bulk of it) becomes the first SystemMessage of
  every session, so estimates see what the agent saw (tau2's short wrapper text around
  the policy is not in the file).

tau-bench (the older layout: a JSON list of ``{task_id, reward, info, traj, trial}``):
``traj`` is the agent's Chat Completions message list (``tool_calls`` with JSON-string
arguments). The user simulator's replies are PERSON. The ReAct agents send tool output
back as user messages starting ``API output: ``: those are OBSERVATION.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..engine.messages import (
    OBSERVATION,
    AssistantMessage,
    Block,
    Conversation,
    Message,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from ..present.numbers import shown_places
from .fields import nested, str_or_empty, str_or_none
from .openai_chat import BadMessage, message_from_openai, usage_from_openai
from .source import Record, Source, session_stem

NAME = "tau-bench"
DESCRIPTION = "tau-bench / tau2-bench results (one session per simulation or task run)"

# A message no model call produced, as a call of zero tokens: left without usage it would
# be estimated as a call whose prompt is the whole view (the policy alone is ~6k tokens).
NO_CALL = Usage(0, 0)
OBSERVATION_PREFIX = "API output: "  # tau-bench ReAct agents' tool output, sent as a user message
SHOWN_INDICES = 8  # how many skipped message indices a warning lists


def _is_tau2(obj: dict[str, Any]) -> bool:
    sims = obj.get("simulations")
    return isinstance(sims, list) and (
        not sims or (isinstance(sims[0], dict) and "messages" in sims[0])
    )


def _is_tau1(obj: dict[str, Any]) -> bool:
    return isinstance(obj.get("traj"), list) and "task_id" in obj


def sniff(head: list[Record]) -> bool:
    return bool(head) and (_is_tau2(head[0].obj) or _is_tau1(head[0].obj))


def session_name(task_id: Any, trial: Any, fallback: str) -> str:
    """``<task>/trial-<n>``: task ids repeat across trials, so the trial is part of the name."""
    if task_id is None or task_id == "":
        name = fallback
    elif isinstance(task_id, int) and not isinstance(task_id, bool):
        name = f"task-{task_id}"  # tau-bench numbers its tasks
    else:
        name = str(task_id)
    return (
        f"{name}/trial-{trial}" if isinstance(trial, int) and not isinstance(trial, bool) else name
    )


def _where(source: Source, record: Record, path: str) -> str:
    """``file[3]: traj[5]`` / ``file: simulations[0]``: a part of a record, located."""
    return record.error(source.display, path).location_text()


# ---- tau2-bench -----------------------------------------------------------------------------


def _tau2_message(msg: dict[str, Any], model: str | None) -> Message:
    role = msg.get("role")
    text = str_or_empty(msg.get("content"))
    if role == "assistant":
        blocks: list[Block] = [TextBlock(text)] if text else []
        for call in msg.get("tool_calls") or ():
            if not isinstance(call, dict):
                raise BadMessage("a tool call must be an object")
            # tau2 stores arguments as an object, not a JSON string
            blocks.append(
                ToolUseBlock(
                    str(call.get("id", "")),
                    str(call.get("name") or "unknown"),
                    call.get("arguments"),
                )
            )
        usage = usage_from_openai(msg.get("usage"))
        if usage is None and _no_call(msg):
            usage = NO_CALL
        return AssistantMessage(tuple(blocks), usage, model)
    if role == "user":
        return UserMessage((TextBlock(text),) if text else ())
    if role == "tool":
        return ToolResultMessage(str(msg.get("id", "")), text, msg.get("error") is True)
    raise BadMessage(f"unknown role {role!r} (expected assistant, user or tool)")


def _readable_usage(usage: Any) -> bool:
    if usage is None:
        return True
    return isinstance(usage, dict) and all(
        type(usage.get(k)) is int for k in ("prompt_tokens", "completion_tokens")
    )


def _no_call(msg: dict[str, Any]) -> bool:
    """The orchestrator's fixed greeting: no usage, no raw response, a recorded cost of 0."""
    return msg.get("usage") is None and msg.get("raw_data") is None and msg.get("cost") == 0


def _simulator_only(msg: dict[str, Any]) -> bool:
    """A message the agent never saw: the user simulator's tool calls and their results."""
    if msg.get("role") == "user":
        return bool(msg.get("tool_calls"))
    parts = msg.get("tool_messages")
    if msg.get("role") == "tool" and isinstance(parts, list) and parts:
        return all(isinstance(p, dict) and p.get("requestor") == "user" for p in parts)
    return msg.get("role") == "tool" and msg.get("requestor") == "user"


def reward_outcome(reward: Any) -> dict[str, Any] | None:
    """The task's reward as the benchmark scored it (1.0: the task was solved)."""
    if isinstance(reward, bool) or not isinstance(reward, (int, float)):
        return None
    return {"reward": float(reward)}


def _tau2(obj: dict[str, Any], record: Record, source: Source) -> Iterator[Conversation]:
    model = str_or_none(nested(obj, "info", "agent_info", "llm"))
    policy = nested(obj, "info", "environment_info", "policy")
    stem = session_stem(source)
    for i, sim in enumerate(obj["simulations"]):
        where = _where(source, record, f"simulations[{i}]")
        if not isinstance(sim, dict) or not isinstance(sim.get("messages"), list):
            source.bad_record(record, f"simulations[{i}]: not a simulation with messages")
            continue
        conv = Conversation(
            session_name(sim.get("task_id"), sim.get("trial"), f"{stem}#{i + 1}"),
            source.display,
            NAME,
            line=record.line,
        )
        reward_info = sim.get("reward_info")
        if isinstance(reward_info, dict):
            conv.outcome = reward_outcome(reward_info.get("reward"))
        if isinstance(policy, str) and policy:
            conv.messages.append(SystemMessage(policy))
        hidden: list[int] = []
        unreadable: list[int] = []  # agent messages whose usage is not two integers
        for j, msg in enumerate(sim["messages"]):
            try:
                if not isinstance(msg, dict):
                    raise BadMessage("a message must be an object")
                if _simulator_only(msg):
                    hidden.append(j)
                    continue
                if msg.get("role") == "assistant" and not _readable_usage(msg.get("usage")):
                    unreadable.append(j)
                    msg = {**msg, "usage": None, "cost": None}  # estimated, never zeroed
                if msg.get("role") == "tool" and isinstance(msg.get("tool_messages"), list):
                    # a MultiToolMessage: the results of several calls of one message
                    for part in msg["tool_messages"]:
                        if not isinstance(part, dict):
                            raise BadMessage("tool_messages: a tool message must be an object")
                        conv.messages.append(_tau2_message({**part, "role": "tool"}, model))
                    continue
                conv.messages.append(_tau2_message(msg, model))
            except BadMessage as exc:
                source.bad_record(record, f"simulations[{i}].messages[{j}]: {exc}")
        if unreadable:
            source.warn(
                f"warning: {where}: usage of {len(unreadable)} agent message(s) not read (expected"
                f" integer prompt_tokens and completion_tokens; estimated instead; messages"
                f" {shown_places(unreadable, SHOWN_INDICES)})"
            )
        if hidden:
            source.warn(
                f"warning: {where}: {len(hidden)} user-simulator tool call(s) and result(s) left"
                f" out — the agent never saw them (messages {shown_places(hidden, SHOWN_INDICES)})"
            )
        yield conv


# ---- tau-bench --------------------------------------------------------------------------------


def _tau1(obj: dict[str, Any], record: Record, source: Source, index: int) -> Conversation:
    conv = Conversation(
        session_name(obj.get("task_id"), obj.get("trial"), f"{session_stem(source)}#{index}"),
        source.display,
        NAME,
        line=record.line,
    )
    conv.outcome = reward_outcome(obj.get("reward"))
    for j, msg in enumerate(obj["traj"]):
        try:
            if not isinstance(msg, dict):
                raise BadMessage("a message must be an object")
            message = message_from_openai(msg)
        except BadMessage as exc:
            source.bad_record(record, f"traj[{j}]: {exc}")
            continue
        if message is None:
            source.warn(
                f"warning: {_where(source, record, f'traj[{j}]')}: role {msg.get('role')!r} skipped"
            )
            continue
        if isinstance(message, UserMessage) and _is_observation(message):
            message = UserMessage(message.blocks, OBSERVATION)
        conv.messages.append(message)
    return conv


def _is_observation(message: UserMessage) -> bool:
    first = message.blocks[0] if message.blocks else None
    return isinstance(first, TextBlock) and first.text.startswith(OBSERVATION_PREFIX)


def read(records: Iterator[Record], source: Source) -> Iterator[Conversation]:
    index = 0
    for record in records:
        obj = record.obj
        if _is_tau2(obj):
            yield from _tau2(obj, record, source)
        elif _is_tau1(obj):
            index += 1
            yield _tau1(obj, record, source, index)
        else:
            source.bad_record(
                record,
                "neither a tau2-bench results object ({simulations: [...]}) nor a tau-bench"
                " task run ({task_id, traj: [...]})",
            )
