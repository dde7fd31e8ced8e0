"""ATIF, the Agent Trajectory Interchange Format (Harbor's ``trajectory.json``; written by
Harbor's agents, Devin CLI, VS Code Copilot Chat's export).

The schema is the ``atif`` package's (PyPI ``atif`` 1.8.0: ``atif/trajectory.py``,
``step.py``, ``metrics.py``, ``observation_result.py``; ``schema_version`` ``ATIF-v1.x``):
one JSON document, ``{"schema_version", "session_id", "trajectory_id", "agent", "steps",
"final_metrics", "continued_trajectory_ref", "subagent_trajectories"}``.

- ``steps`` in order, each with ``source``: ``system`` → system message; ``user`` → the
  person's message (a turn); ``agent`` → one model call: ``reasoning_content`` (thinking),
  ``message`` (text, or ``ContentPart`` text / image / audio), ``tool_calls``
  (``tool_call_id``, ``function_name``, ``arguments``), then its ``observation.results``:
  a result naming ``source_call_id`` answers that call; one without is an environment
  observation.
- Usage per agent step from ``metrics``: ``prompt_tokens`` is the whole prompt (cached
  included), ``cached_tokens`` the part read from the cache, ``completion_tokens`` the
  output. A step with ``llm_call_count: 0`` was a deterministic dispatch, not a model call;
  ``llm_call_count`` above 1 means the step's metrics add up several calls: read as one
  call, with a warning. ``final_metrics.total_prompt_tokens`` is cross-checked.
- Compaction: a trajectory summarized and continued in another file names it in
  ``continued_trajectory_ref`` — a recorded compaction at its end.
- A ``user`` step whose ``extra.origin`` is ``injected`` or ``observation`` (how tsum
  writes them: formats/atif_write.py) is that, not a turn. The continuation's
  steps marked ``is_copied_context`` (and the summary handed over before them) are the
  context carried across: injected messages, not turns or calls (their metrics belong to
  the first file), after a recorded compaction at its start.
- ``subagent_trajectories`` (embedded, v1.7+) are read as their own sessions, named
  ``<session>/<trajectory_id>``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..engine.messages import (
    INJECTED,
    OBSERVATION,
    PERSON,
    SYNTHETIC_MODEL,
    AssistantMessage,
    Block,
    Compaction,
    Conversation,
    OtherBlock,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from .content_parts import parts_to_blocks, text_of
from .fields import counts, nested, str_or_none
from .source import Record, Source, Warn, session_stem

NAME = "atif"
DESCRIPTION = "ATIF trajectories (Harbor's trajectory.json: schema_version ATIF-v1.x, steps)"

CONTINUED = "atif:continued_trajectory_ref"
COPIED = "atif:is_copied_context"


def sniff(head: list[Record]) -> bool:
    if not head:
        return False
    obj = head[0].obj
    version = obj.get("schema_version")
    return isinstance(version, str) and version.startswith("ATIF") and "steps" in obj


def usage_from_metrics(metrics: Any, warn: Warn) -> Usage | None:
    """ATIF ``metrics`` → Usage (``prompt_tokens`` already holds the cached part)."""
    if not isinstance(metrics, dict) or (
        "prompt_tokens" not in metrics and "completion_tokens" not in metrics
    ):
        return None
    keys = ("prompt_tokens", "completion_tokens", "cached_tokens")
    return Usage(*counts(metrics, "metrics.", keys, warn))


def _text(value: Any) -> str:
    return text_of(parts_to_blocks(value))


def read(records: Iterator[Record], source: Source) -> Iterator[Conversation]:
    for record in records:
        if not isinstance(record.obj.get("steps"), list):
            source.bad_record(record, "not an ATIF trajectory (no 'steps' list)")
            continue
        yield from _trajectory(record.obj, record, source, None)


def _trajectory(
    obj: dict[str, Any], record: Record, source: Source, parent: str | None
) -> Iterator[Conversation]:
    steps = [s for s in obj.get("steps") or [] if isinstance(s, dict)]
    copied = any(s.get("is_copied_context") is True for s in steps)
    base = str(obj.get("trajectory_id") or obj.get("session_id") or session_stem(source))
    if parent is not None:
        base = f"{parent}/{base}"
    elif copied:  # a continuation shares its session_id with the file it continues
        base = f"{base}/{session_stem(source)}"
    conv = Conversation(base, source.display, NAME, line=record.line)
    model = str_or_none(nested(obj, "agent", "model_name"))
    carried = copied  # the handed-over summary and copied steps lead a continuation
    if copied:
        conv.compactions.append(Compaction(0, COPIED, None, _handoff(steps)))
    warn = source.warner(record)
    aggregated = 0
    for step in steps:
        if carried and step.get("is_copied_context") is not True and step.get("source") == "agent":
            carried = False
        if carried:
            text = _text(step.get("message"))
            if text:
                conv.messages.append(UserMessage((TextBlock(text),), INJECTED))
            continue
        aggregated += _step(conv, step, model, warn)
    if aggregated:
        conv.warnings.append(
            f"{aggregated} agent step(s) add up several model calls (llm_call_count > 1):"
            " each read as one call"
        )
    _check_totals(conv, obj, steps)
    if isinstance(obj.get("continued_trajectory_ref"), str):
        conv.compactions.append(Compaction(len(conv.messages), CONTINUED))
    yield conv
    for sub in obj.get("subagent_trajectories") or []:
        if isinstance(sub, dict):
            yield from _trajectory(sub, record, source, base)


def _handoff(steps: list[dict[str, Any]]) -> str | None:
    """The summary a continuation starts with: its user steps before the copied context."""
    texts = []
    for step in steps:
        if step.get("is_copied_context") is True or step.get("source") != "user":
            break
        texts.append(_text(step.get("message")))
    return "\n".join(texts) or None


def _step(conv: Conversation, step: dict[str, Any], model: str | None, warn: Warn) -> int:
    """Add one step's messages; 1 when its metrics add up several calls."""
    kind = step.get("source")
    if kind == "system":
        conv.messages.append(SystemMessage(_text(step.get("message"))))
        return 0
    if kind == "user":
        origin = nested(step, "extra", "origin")
        origin = origin if origin in (INJECTED, OBSERVATION) else PERSON
        conv.messages.append(UserMessage(tuple(parts_to_blocks(step.get("message"))), origin))
        return 0
    if kind != "agent":
        warn(f"step {step.get('step_id')}: source {kind!r} left out")
        return 0
    blocks: list[Block] = []
    if isinstance(step.get("reasoning_content"), str) and step["reasoning_content"]:
        blocks.append(OtherBlock("thinking", step["reasoning_content"]))
    blocks.extend(parts_to_blocks(step.get("message")))
    for call in step.get("tool_calls") or []:
        if isinstance(call, dict):
            name = str(call.get("function_name") or "unknown")
            blocks.append(
                ToolUseBlock(str(call.get("tool_call_id") or ""), name, call.get("arguments"))
            )
    calls = step.get("llm_call_count")
    step_model = step.get("model_name") if isinstance(step.get("model_name"), str) else model
    if calls == 0:  # a deterministic dispatch: no model was called
        conv.messages.append(AssistantMessage(tuple(blocks), None, SYNTHETIC_MODEL))
    else:
        usage = usage_from_metrics(step.get("metrics"), warn)
        conv.messages.append(AssistantMessage(tuple(blocks), usage, step_model))
    results = nested(step, "observation", "results")
    for result in results or []:
        if not isinstance(result, dict):
            continue
        text = _text(result.get("content"))
        if isinstance(result.get("source_call_id"), str):
            conv.messages.append(ToolResultMessage(result["source_call_id"], text))
        else:
            conv.messages.append(UserMessage((TextBlock(text),), OBSERVATION))
    return 1 if isinstance(calls, int) and calls > 1 else 0


def _check_totals(conv: Conversation, obj: dict[str, Any], steps: list[dict[str, Any]]) -> None:
    total = nested(obj, "final_metrics", "total_prompt_tokens")
    if not isinstance(total, int):
        return
    summed = sum(
        m.usage.input_tokens for m in conv.messages if isinstance(m, AssistantMessage) and m.usage
    )
    if summed != total:
        conv.warnings.append(
            f"final_metrics.total_prompt_tokens is {total:,}; the steps' prompt_tokens add up"
            f" to {summed:,}"
        )
