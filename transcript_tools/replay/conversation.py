"""Replaying one conversation: its engine run, its warnings, and what it counts.

:func:`replay_conversation` runs one conversation through the one engine loop
(``engine.drive.drive_conversation``, priced by ``cost.meter.drive_priced`` with
--cost) with every setting honoured (the window of
``--max-context-tokens auto``, the turn path, the unit); :mod:`.driver` schedules many
of them over a corpus and delivers their results in input order.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from typing import IO, Any

import orjson

from ..cost.meter import drive_priced
from ..cost.prices import Pricer
from ..cost.records import CostRecord
from ..engine.config import Checkpoint, Measure, ReplaySettings
from ..engine.drive import model_room, session_window, unit_bounds
from ..engine.messages import (
    AssistantMessage,
    Conversation,
    Message,
    ToolResultMessage,
    ToolUseBlock,
)
from ..engine.overflow import checkpoints_over
from ..engine.records import DecisionRecord, summary_ok, unit_key
from ..engine.requests import SummaryOutcome, SummaryRequest
from ..engine.rules import FIRED, Decision, compaction_turn, fixed_cadence
from ..engine.seed_defaults import SUMMARY_MAX_TOKENS
from ..engine.session import ESTIMATED, SessionEngine
from ..providers.executor import SummaryExecutor
from .degenerate import every_unit_warning, overflow_warning
from .parking import SessionCounts
from .sizes import policy_sizes
from .tips import fallback_window_warning


def tool_oddities(messages: list[Message]) -> list[str]:
    """Warnings for tool results with no matching call and calls never answered."""
    calls: dict[str, int] = {}
    orphans: list[str] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            for block in message.blocks:
                if isinstance(block, ToolUseBlock) and block.id:
                    calls[block.id] = 0
        elif isinstance(message, ToolResultMessage):
            call_id = message.tool_call_id
            if call_id in calls:
                calls[call_id] += 1
            elif call_id:
                orphans.append(call_id)
    unanswered = [cid for cid, n in calls.items() if n == 0]
    out = []
    if orphans:
        out.append(f"{len(orphans)} tool result(s) with no matching call (first: {orphans[0]})")
    if unanswered:
        out.append(f"{len(unanswered)} tool call(s) never answered (first: {unanswered[0]})")
    return out


def _compactions_at(conv: Conversation, starts: list[int]) -> dict[int, list[dict[str, Any]]]:
    """Recorded compactions by the turns' start indices, each reported at the last turn before
    it (the agent compacted after it)."""
    out: dict[int, list[dict[str, Any]]] = {}
    for comp in conv.compactions:
        entry: dict[str, Any] = {"source": comp.source}
        if comp.pre_tokens is not None:
            entry["pre_tokens"] = comp.pre_tokens
        out.setdefault(compaction_turn(starts, comp.message_index), []).append(entry)
    return out


@dataclass(slots=True)
class SessionResult:
    conversation: Conversation
    engine: SessionEngine
    turns: int
    warnings: list[str] = field(default_factory=list)
    prompt_spool: IO[bytes] | None = None  # prompts.jsonl lines of this session, when spooled
    cost: CostRecord | None = None  # --cost: the session's costs.jsonl record

    def __repr__(self) -> str:  # the counts, not the engine's every record
        conv = self.conversation
        return (
            f"<SessionResult {conv.session_id} ({conv.path}): {self.turns} turn(s), "
            f"{len(conv.messages)} message(s), {len(self.engine.summaries)} summaries, "
            f"{len(self.warnings)} warning(s)>"
        )


PROMPT_SPOOL_MEMORY = 4 << 20  # bytes of prompts kept in memory before spilling to a temp file


def _prompt_line(sha: str, text: str) -> bytes:
    return orjson.dumps({"sha256": sha, "text": text}, option=orjson.OPT_SORT_KEYS) + b"\n"


async def replay_conversation(
    conv: Conversation,
    settings: ReplaySettings,
    executor: SummaryExecutor | None,
    provider_name: str,
    template: Any,
    *,
    spool_prompts: bool = False,
    pricer: Pricer | None = None,
) -> SessionResult:
    """Run one conversation through the checkpoint, turn by turn.

    With ``spool_prompts`` the rendered prompts go to a temporary file as they are
    made (``SessionResult.prompt_spool``) instead of staying in memory. With ``pricer``
    (--cost) the session is priced as replayed (``cost.meter``): ``SessionResult.cost``.
    """
    settings, window = session_window(conv, settings)
    engine = SessionEngine(
        conv.session_id,
        settings,
        provider_name=provider_name,
        template=template,
        sizes=policy_sizes(conv, settings),
    )
    spool = _spool_prompts(engine) if spool_prompts else None
    # Each turn's messages are sliced when it is replayed, not all up front: fewer
    # objects alive at once (the cyclic GC walks every live container).
    units = unit_bounds(conv, settings)  # turns, or calls (--checkpoint call)
    compactions = _compactions_at(conv, [start for start, _ in units])  # in the unit

    def annotate(number: int) -> DecisionRecord | None:
        annotations: DecisionRecord | None = (
            {"recorded_compaction": compactions[number]} if number in compactions else None
        )
        if window is not None:
            annotations = {**(annotations or {}), **window}
        return annotations

    async def execute(request: SummaryRequest, left: int) -> SummaryOutcome:
        assert executor is not None, "a summary request needs an executor (or dry_run)"
        # the session with the most turns left goes first when every slot is busy: its
        # chain of summaries is what the run waits for at the end
        return await executor.execute(request, priority=-left)

    # --cost: priced as it runs (cost/meter.py); the one loop otherwise (engine/drive.py)
    meter = await drive_priced(conv, engine, execute, pricer, units=units, annotate=annotate)
    warnings = _session_warnings(conv, engine)
    # person turns in both modes (with --checkpoint call, ``starts`` are the calls)
    turns = len(engine.slot.units.turn_starts)
    cost: CostRecord | None = (
        None
        if meter is None
        else {"session": conv.session_id, **meter.record(checkpoints_over(engine.decisions))}
    )
    return SessionResult(conv, engine, turns, warnings, spool, cost)


def _spool_prompts(engine: SessionEngine) -> IO[bytes]:
    """The session's rendered prompts, written to a temporary file as they are made."""
    spool: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=PROMPT_SPOOL_MEMORY)
    write = spool.write

    def sink(sha: str, text: str) -> None:
        write(_prompt_line(sha, text))

    engine.prompt_sink = sink
    return spool


def _session_warnings(conv: Conversation, engine: SessionEngine) -> list[str]:
    """The reader's warnings, then what the replay itself found odd, in that order."""
    warnings = conv.own_warnings() + tool_oddities(conv.messages)  # no oddity when empty
    cadence = fixed_cadence_warning(engine) or every_unit_warning(engine)
    found = (fallback_window_warning(conv, engine), cadence, overflow_warning(engine))
    warnings.extend(w for w in found if w)
    return warnings


def fixed_cadence_warning(engine: SessionEngine) -> str | None:
    """Say so when the run degenerated into one summary every ``debounce_turns`` turns."""
    cfg = engine.settings.summary
    decisions = [d["decision"] for d in engine.decisions]
    if cfg is None or not fixed_cadence(decisions, cfg.debounce_turns):
        return None
    unit = unit_key(engine.settings.checkpoint)
    first = next(d[unit] for d in engine.decisions if d["decision"] in FIRED)
    hint = (
        " (the cumulative cost_so_far never goes down; --measure current follows the context size)"
    )
    if any(ESTIMATED in d for d in engine.decisions):  # a dry run's estimated schedule
        hint = f" (estimated: no summary was written; each assumed {SUMMARY_MAX_TOKENS} tokens)"
    elif engine.settings.measure is not Measure.CUMULATIVE:
        hint = ""
    return (
        f"the watermark stayed over the line after {unit} {first}: the checkpoint fired every "
        f"{max(cfg.debounce_turns, 1)} {unit}(s) from then on, whatever the conversation did" + hint
    )


def session_counts(result: SessionResult) -> SessionCounts:
    engine = result.engine
    ok = sum(1 for s in engine.summaries if summary_ok(s))
    calls = engine.settings.checkpoint is Checkpoint.CALL
    return SessionCounts(
        result.conversation.session_id,
        result.conversation.path,
        result.turns,
        len(engine.slot.units.starts) if calls else 0,
        ok,
        len(engine.summaries) - ok,
        sum(1 for d in engine.decisions if d["decision"] == Decision.WOULD_SUMMARIZE),
        result.warnings,
        sum(1 for d in engine.decisions if ESTIMATED in d),
        engine.stream_units,
        model_room(result.conversation),
    )
