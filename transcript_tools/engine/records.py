"""The records a run writes, typed once: ``decisions.jsonl``, ``summaries.jsonl`` and
``slots.jsonl`` (docs/replay.md lists their fields). The engine builds them, and every
reader — the text report, the sweep, eval, diff, check, the cost gate — reads them
through these types, so mypy checks each key a reader names against the one list here
instead of string literals agreeing by luck. A summary's ``status`` is asked through
:func:`summary_ok` / :func:`summary_failed`, never by comparing literals of its own.

Every key is optional at type level (``total=False``): a record is built step by step,
and which keys it has depends on the run (``call`` only with ``--checkpoint call``,
``policy`` only under ``--policy``). The JSON on disk is these dicts as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Literal, TypedDict

from .config import Checkpoint


class SummaryStatus(StrEnum):
    """A summary record's ``status`` (a ``StrEnum``: the JSON is the plain string)."""

    OK = "ok"
    FAILED = "failed"  # N3: the call failed or came back empty; nothing changed


UnitKey = Literal["turn", "call"]


def unit_key(checkpoint: Checkpoint) -> UnitKey:
    """The field that numbers a run's checkpoints: ``call`` with ``--checkpoint call``."""
    return "call" if checkpoint is Checkpoint.CALL else "turn"


def record_unit(record: UnitFields) -> UnitKey:
    """The same, read off a record (a record with a ``call`` was written per call)."""
    return "call" if "call" in record else "turn"


class UnitFields(TypedDict, total=False):
    """Where a record sits: every record has these."""

    session: str
    turn: int  # with --checkpoint call: the person turn the call belongs to
    call: int  # --checkpoint call only: the unit the checkpoint counted


class WindowFields(TypedDict, total=False):
    """``--max-context-tokens auto``: the window a session ran with, and where from."""

    max_context_tokens: int
    # "log" (the log records one), "model" (its model's documented window), "policy"
    # (the policy's trigger.window) or "default" (engine/windows.py)
    max_context_tokens_from: str


class PolicyFields(TypedDict, total=False):
    """``--policy``: every record of a run under a policy names it."""

    policy: str


class DecisionRecord(UnitFields, WindowFields, PolicyFields, total=False):
    """One line of ``decisions.jsonl``: the checkpoint at one unit (a turn or a call)."""

    messages: int  # the unit's messages
    turn_tokens: int
    input_tokens: int
    output_tokens: int
    cost_so_far: int
    watermark: int  # the measure the trigger compared
    threshold: float | None  # None: no checkpoint (N2)
    turns_since_last_summary: int
    calls_since_last_summary: int  # --checkpoint call
    decision: str  # a rules.Decision
    tokens: str  # where the unit's tokens came from: recorded, estimated, mixed, none
    error: str  # the failed summary's error (decision "failed")
    recorded_compaction: list[dict[str, Any]]  # the compactions the log records in the unit
    summary_tokens_assumed: int  # a dry run's --measure current estimate
    watermark_without_summaries: int
    cleared: dict[str, Any]  # what the policy's pre-pass cleared in this unit
    overflow: int  # --policy: tokens the view left over the window (engine/overflow.py)


class SummaryRecord(UnitFields, PolicyFields, total=False):
    """One line of ``summaries.jsonl``: one summary call and what came of it."""

    status: str  # a SummaryStatus
    text: str | None  # None when the call failed
    error: str | None
    prompt_sha256: str
    prompt_chars: int
    template: str
    template_sha256: str
    provider: str  # the provider that ran the request (a driver may fall back to another)
    model: str | None
    usage: dict[str, int] | None  # input_tokens, output_tokens of the summary call
    # --policy only: the rules the view broke anew, and what the summary replaced
    violations: dict[str, list[str]]
    messages_summarized: int
    messages_dropped: int
    dropped: list[list[int]]  # [start, end) ranges of history indices
    messages_kept: int
    view_tokens_before: int
    view_tokens_after: int


class SnapshotRecord(UnitFields, total=False):
    """One line of ``slots.jsonl``: the context slot after a successful summary."""

    slot: dict[str, Any]  # slot_id, mode, keep_recent_turns, summary_override, marker
    history_messages: int
    view_messages: int
    view_tokens_estimated: int
    slot_saves: int


def summary_ok(record: Mapping[str, Any]) -> bool:
    """Did the summary call of ``record`` (a summaries.jsonl record) succeed?"""
    return record.get("status") == SummaryStatus.OK


def summary_failed(record: Mapping[str, Any]) -> bool:
    """Did it fail (N3)? A record without a status is neither."""
    return record.get("status") == SummaryStatus.FAILED
