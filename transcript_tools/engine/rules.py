"""The spec's rules as pure functions, one home each (docs/spec.md, "One home per rule").

The session engine, the sweep's fast path, ``inspect`` and ``diff`` all call these;
none of them re-derives a rule. No I/O, no state: plain values in, plain values out.

- :class:`Decision` -- what the checkpoint decided at a turn (the ``decision`` field
  of the records; a ``StrEnum``, so JSON output is the plain string);
- :func:`should_summarize` / :func:`skip_reason` -- the checkpoint (F2 + F6);
- :func:`turn_starts` / :func:`extend_turn_starts` / :func:`split_turns` -- where
  turns start (docs/spec.md, "Turns");
- :func:`is_model_call` / :func:`unit_starts` / :func:`split_units` /
  :class:`UnitCounter` -- where the checkpoint's units start: turns, or model calls
  with ``--checkpoint call`` (docs/spec.md, "Checkpoint units");
- :func:`focused_window_start` -- the first message of the focused view (docs/spec.md,
  "The focused view");
- :func:`estimated_summary_view` -- that view's size after a summary not written (the
  sweep's fast path, a dry run under ``--measure current``);
- :func:`suffix_cut` -- the 30K cut of the formatted conversation (seed "消息格式化");
- :func:`compaction_turn` -- the turn a recorded compaction is reported at;
- :func:`fixed_cadence` -- whether a schedule degenerated into one summary every
  ``debounce_turns`` turns.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, TypeGuard

from .config import Checkpoint, Measure, SlotMode
from .messages import SYNTHETIC_MODEL, AssistantMessage, Message, is_turn_start

if TYPE_CHECKING:
    from .prompt import PromptTemplate


class Decision(StrEnum):
    """What the checkpoint decided at one turn."""

    BELOW_THRESHOLD = "below_threshold"
    DEBOUNCED = "debounced"
    SUMMARIZED = "summarized"
    FAILED = "failed"  # N3: the call failed; nothing changed
    SKIPPED_EMPTY = "skipped_empty"  # generate_summary's guard: empty history, no call
    WOULD_SUMMARIZE = "would_summarize"  # --dry-run: fired, no call made
    DISABLED = "disabled"  # no SummaryConfig (N2)


# The checkpoint fired: a summary call was made (or would have been, --dry-run).
FIRED = frozenset({Decision.SUMMARIZED, Decision.FAILED, Decision.WOULD_SUMMARIZE})
# The checkpoint fired and ``last_summary_turn`` moved (a failure leaves it, N3).
FIRED_OK = frozenset({Decision.SUMMARIZED, Decision.WOULD_SUMMARIZE})


# ---- the checkpoint (seed step 8.5) ---------------------------------------------------


def over_threshold(watermark: float, threshold: float) -> bool:
    """F2: ``tokens >= max_context_tokens * trigger_token_ratio``."""
    return watermark >= threshold


def debounce_passed(turn: int, last_summary_turn: int, debounce_turns: int) -> bool:
    """F6: ``turn - last_summary_turn >= debounce_turns`` (``last_summary_turn`` starts at 0)."""
    return turn - last_summary_turn >= debounce_turns


def should_summarize(
    turn: int, last_summary_turn: int, watermark: float, threshold: float, debounce_turns: int
) -> bool:
    """The seed's formula (F2 + F6)."""
    return debounce_passed(turn, last_summary_turn, debounce_turns) and over_threshold(
        watermark, threshold
    )


def skip_reason(
    turn: int,
    last_summary_turn: int,
    watermark: float,
    threshold: float,
    debounce_turns: int,
    history_empty: bool,
) -> Decision | None:
    """Why the checkpoint does not fire at ``turn``, or None when it fires
    (``should_summarize`` and a non-empty history).

    Checked in this order, which the records show: the threshold (F2), the debounce
    (F6), then ``generate_summary``'s guard (empty history: no call)."""
    if not over_threshold(watermark, threshold):
        return Decision.BELOW_THRESHOLD
    if not debounce_passed(turn, last_summary_turn, debounce_turns):
        return Decision.DEBOUNCED
    if history_empty:
        return Decision.SKIPPED_EMPTY
    return None


# ---- turns (docs/spec.md, "Turns") ---------------------------------------------------


def extend_turn_starts(
    starts: list[int], messages: Iterable[Message], offset: int, seen_person: bool
) -> bool:
    """Append to ``starts`` the turn starts among ``messages`` (appended to a history of
    ``offset`` messages); return whether a turn-starting message has been seen.

    A turn starts at a message a person wrote (``messages.is_turn_start``); messages
    before the first one belong to turn 0."""
    index = offset
    for message in messages:
        if index == 0:
            starts.append(0)
        if is_turn_start(message):
            if seen_person:
                starts.append(index)
            seen_person = True
        index += 1
    return seen_person


def turn_starts(messages: Sequence[Message]) -> list[int]:
    """The index of each turn's first message (``[]`` for no messages)."""
    starts: list[int] = []
    extend_turn_starts(starts, messages, 0, False)
    return starts


def split_turns(messages: list[Message]) -> list[tuple[int, list[Message]]]:
    """(start index, messages) per turn."""
    starts = turn_starts(messages)
    ends = [*starts[1:], len(messages)]
    return [(start, messages[start:end]) for start, end in zip(starts, ends, strict=False)]


# ---- checkpoint units, --checkpoint turn|call (docs/spec.md, "Checkpoint units") ------


def is_model_call(message: Message) -> TypeGuard[AssistantMessage]:
    """An assistant message a model produced (the runtime's synthetic ones are not calls).
    The one definition of a call: ``inspect`` counts these, ``--checkpoint call`` makes a
    unit of each, the cost meter prices them."""
    return type(message) is AssistantMessage and message.model != SYNTHETIC_MODEL


@dataclass(slots=True)
class UnitCounter:
    """Incremental unit starts (the focused view's slot extends them as turns arrive).

    Turn mode: the turn starts. Call mode: one unit per model call — the call, the tool
    results / observations / injections answering it, and what led to it (the person's
    prompt that starts a turn opens the unit of the call answering it). A unit never
    splits a call from its results, and every unit holds exactly one call: messages no call
    answers (a turn without a call, the prompts before the first call) join the next
    call's unit, or the last unit when no call follows; a conversation without a call has
    no unit. So every rule that counts turns counts calls, and a run writes one decision
    per call ``inspect`` counts."""

    checkpoint: Checkpoint = Checkpoint.TURN
    starts: list[int] = field(default_factory=list)
    turn_starts: list[int] = field(default_factory=list)  # person turns, in both modes
    seen_person: bool = False
    call_open: bool = False  # the current unit already holds a model call
    pending: int | None = None  # call mode: where the next unit starts once its call comes
    length: int = 0

    def extend(self, messages: Iterable[Message]) -> None:
        if self.checkpoint is Checkpoint.TURN:
            offset = self.length
            items = messages if isinstance(messages, list) else list(messages)
            self.seen_person = extend_turn_starts(self.turn_starts, items, offset, self.seen_person)
            self.starts = self.turn_starts
            self.length = offset + len(items)
            return
        # once per unit of every configuration: the state in locals, stored back once
        starts, turns = self.starts, self.turn_starts
        seen_person, call_open, pending = self.seen_person, self.call_open, self.pending
        index = self.length
        for message in messages:
            if index == 0:
                turns.append(0)
                pending = 0
            if is_turn_start(message):
                if seen_person:
                    turns.append(index)
                    if call_open and pending is None:
                        pending = index  # a new turn: the next call's unit starts here
                seen_person = True
            if is_model_call(message):
                if pending is not None:
                    starts.append(pending)
                    pending = None
                elif call_open:
                    starts.append(index)
                call_open = True
            index += 1
        self.seen_person, self.call_open, self.pending = seen_person, call_open, pending
        self.length = index


def unit_starts(messages: Sequence[Message], checkpoint: Checkpoint = Checkpoint.TURN) -> list[int]:
    """The index of each checkpoint unit's first message: turns, or calls (``[]`` for none)."""
    counter = UnitCounter(checkpoint)
    counter.extend(messages)
    return counter.starts


def split_units(
    messages: list[Message], checkpoint: Checkpoint = Checkpoint.TURN
) -> list[tuple[int, list[Message]]]:
    """(start index, messages) per checkpoint unit."""
    if checkpoint is Checkpoint.TURN:
        return split_turns(messages)
    starts = unit_starts(messages, checkpoint)
    ends = [*starts[1:], len(messages)]
    return [(start, messages[start:end]) for start, end in zip(starts, ends, strict=False)]


def unit_turns(messages: Sequence[Message], starts: Sequence[int]) -> list[int]:
    """The person-turn index of each unit (``starts``: unit starts of ``messages``)."""
    turns = turn_starts(messages)
    return [max(bisect.bisect_right(turns, start) - 1, 0) for start in starts]


def last_call_end(messages: Sequence[Message]) -> int:
    """How much of ``messages`` counts toward a peak of the view: up to and including the
    last model call. A view is measured when a model is called with it, so a message after
    the last call (a final observation after the agent submitted) never counts. A log with
    no model call at all is measured whole."""
    for index in range(len(messages) - 1, -1, -1):
        if is_model_call(messages[index]):
            return index + 1
    return len(messages)


def compaction_turn(starts: Sequence[int], message_index: int) -> int:
    """The turn a recorded compaction is reported at: the last turn that started before
    it (the agent compacted after that turn). ``message_index`` is the first message
    after the compaction."""
    return max(bisect.bisect_right(starts, max(message_index - 1, 0)) - 1, 0)


# ---- the focused view, our FocusedConfig (docs/spec.md, "The focused view") ----------


def focused_window_start(
    starts: Sequence[int], turns: int, keep_recent_turns: int, covered_end: int | None
) -> int:
    """The first message of the focused view's kept turns (system messages before it
    are kept too).

    ``starts[:turns]`` are the history's turn starts; ``covered_end`` is the length of
    the history the latest summary was made from (None: no summary). The view keeps the
    last ``keep_recent_turns`` turns AND every turn after the one the summary covered,
    whichever starts earlier, so no turn falls between the summary and the window."""
    if turns <= keep_recent_turns or keep_recent_turns < 1:  # (the config requires >= 1)
        plain = 0
    else:
        plain = starts[turns - keep_recent_turns]
    if covered_end is None or turns == 0:
        return plain
    # the turn holding the first message the summary did not see (whole turns only)
    after = starts[max(bisect.bisect_right(starts, covered_end, 0, turns) - 1, 0)]
    return min(plain, after)


def estimated_summary_view(view_tokens: int, dropped_tokens: int, summary_tokens: int) -> int:
    """The size of the focused view after a summary whose text is not known (the sweep's
    fast path; a dry run under ``--measure current``): the view without summaries, less
    the ``dropped_tokens`` before the focused window (system messages stay), plus the
    summary message (``tokens.assumed_summary_tokens``)."""
    return view_tokens - dropped_tokens + summary_tokens


# ---- the formatted conversation (seed "消息格式化": 30K from the front) --------------


def suffix_cut(
    lengths_newest_first: Iterable[int], max_chars: int, separator: int
) -> tuple[int, int]:
    """How much of a formatted conversation is kept: ``(blocks, characters)``.

    ``lengths_newest_first`` are the formatted blocks' lengths, newest first; blocks are
    joined by ``separator`` characters. Whole blocks are dropped from the front (the
    oldest) until the text fits ``max_chars``; if the newest alone is longer, it is kept
    cut to its last ``max_chars`` characters: ``(1, max_chars)``. The iteration stops at
    the first block that no longer fits."""
    kept = total = 0
    if max_chars <= 0:
        return 0, 0
    for length in lengths_newest_first:
        if kept == 0:
            if length > max_chars:
                return 1, max_chars
            kept, total = 1, length
            continue
        if total + separator + length > max_chars:
            break
        kept += 1
        total += separator + length
    return kept, total


# ---- the schedule ---------------------------------------------------------------------


def fixed_cadence(decisions: Iterable[str], debounce_turns: int) -> bool:
    """Did the run degenerate into a fixed cadence: one summary every ``debounce`` turns?

    ``decisions``: the decision of every turn, in order. True when the checkpoint fired
    at least twice and the watermark never fell back below the threshold after the first
    fire -- from then on only the debounce decides, which is what the cumulative
    ``cost_so_far`` (it never goes down) does once crossed. Failed calls (N3: retried at
    the next eligible turn) may shift the cadence; any other gap than
    ``max(debounce, 1)`` without a failure means the schedule still depends on the
    conversation."""
    fires: list[int] = []
    failed = False
    for index, decision in enumerate(decisions):
        if decision in FIRED_OK:
            fires.append(index)
        elif decision == Decision.FAILED:
            failed = True
        elif decision == Decision.BELOW_THRESHOLD and fires:
            return False
    if len(fires) < 2:
        return False
    step = max(debounce_turns, 1)
    return failed or all(b - a == step for a, b in zip(fires, fires[1:], strict=False))


__all__ = [
    "FIRED",
    "FIRED_OK",
    "Checkpoint",
    "Decision",
    "UnitCounter",
    "compaction_turn",
    "debounce_passed",
    "estimated_summary_view",
    "extend_turn_starts",
    "fixed_cadence",
    "focused_window_start",
    "is_model_call",
    "last_call_end",
    "over_threshold",
    "should_summarize",
    "skip_reason",
    "split_turns",
    "suffix_cut",
    "split_units",
    "turn_starts",
    "unit_starts",
    "unit_turns",
]


def depends_on_summary_text(
    mode: SlotMode, measure: Measure, template: PromptTemplate | None
) -> bool:
    """Does what the checkpoint does next depend on what an earlier summary says?

    The one answer for the sweep (fast path or engine) and for ``--batch`` (plan every
    request ahead, or round by round). True when the next prompt shows the previous
    summary (``{{ previous_summary }}``, or a template not known yet), or when the trigger
    measures the view the model is sent (``--measure current``) in Focused mode, where the
    summary is part of that view. Under the cumulative measure the schedule never does:
    ``cost_so_far`` sums the calls' usage, recorded or estimated, and an estimated call is
    counted on the whole history before it, never on tsum's view (``SessionEngine``'s
    turn accounting). In Full mode summaries never change the view.

    Two settings never make it True: the turn path (``--path stream`` gives the sync
    path's schedule: ``session.py``'s ``finalize_turn`` corrects the index for the check
    and the assignment) and ``--max-context-tokens auto`` (one integer per conversation,
    ``drive.recorded_window``, known before its first turn).
    """
    if template is None or "previous_summary" in template.variables:
        return True
    return mode is SlotMode.FOCUSED and measure is Measure.CURRENT
