"""A session's turn accounting: what each turn adds to ``cost_so_far`` (the seed's step 5)
and the measures the checkpoint compares (cumulative, or the current view).

The session engine holds one (``SessionEngine.accounting``) over its slot: each unit
appended through it opens that unit's decision record, which the checkpoint completes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Protocol

from .kinds import TriggerMeasure
from .messages import SYNTHETIC_MODEL, AssistantMessage, Message, Usage
from .policy import Policy
from .records import DecisionRecord
from .seed_defaults import SUMMARY_MAX_TOKENS
from .sizes import SizeModel
from .slot import Slot

# The decision field that marks a watermark estimated: a dry run under --measure current
# wrote no summary, so its effect is assumed (the summary this many tokens long).
ESTIMATED: Final = "summary_tokens_assumed"


@dataclass(slots=True)
class TurnAccounting:
    """Step 5 and the measures of one session's ``slot`` under ``policy``."""

    session_id: str
    slot: Slot
    policy: Policy
    current: bool  # --measure current: the watermark is the view, not cost_so_far
    cost_so_far: Usage = field(default_factory=Usage)
    estimated_calls: int = 0
    recorded_calls: int = 0
    # --measure current: the latest recorded call (prompt + output tokens) and the slot
    # index just after its message; later views are measured from there.
    _anchor_tokens: int | None = None  # ``anchor_tokens`` in the slot's own size model
    _anchor_end: int = 0
    _anchor: tuple[Usage, AssistantMessage] | None = None  # that call: its usage, its message
    # The current measure by view end, while the slot stays as it was (``Slot.changes``) and
    # the anchor too: the trigger, the overflow mark and a sweep's curve each ask it per unit
    _measured: dict[int | None, int] = field(default_factory=dict)
    _measured_at: int = -1

    def append_turn(
        self, messages: list[Message], annotations: DecisionRecord | None
    ) -> DecisionRecord:
        # Hot path (once per turn): plain int sums, no Usage objects per call, and
        # estimated sizes from the slot's running prefix sums (never a re-count),
        # extended once per turn.
        slot = self.slot
        start = len(slot.messages)
        current = self.current
        slot.append_messages(messages)  # step 6: append + save

        input_tokens = output_tokens = cache_read = cache_creation = 0
        recorded = estimated = 0
        anchor_end = -1
        anchor_usage: Usage | None = None
        anchor_message: AssistantMessage | None = None
        prefix: list[int] | None = None
        index = start
        for message in messages:
            index += 1  # the slot index just after this message
            if not isinstance(message, AssistantMessage):
                continue
            usage = message.usage
            if usage is not None:
                recorded += 1
                anchor_usage, anchor_end, anchor_message = usage, index, message
                input_tokens += usage.input_tokens
                output_tokens += usage.output_tokens
                cache_read += usage.cache_read_tokens
                cache_creation += usage.cache_creation_tokens
            elif message.model != SYNTHETIC_MODEL:  # written by the runtime: not a call
                # No usage recorded: the call is estimated as the ORIGINAL run made it, on
                # the whole history before it, never on tsum's own focused view: like a
                # recorded call, an estimated one must not depend on whether tsum's
                # summaries were written (so a dry run and a full replay agree).
                if prefix is None:
                    prefix = slot.token_prefix(start + len(messages))
                before = prefix[index - 1]
                input_tokens += before
                output_tokens += prefix[index] - before
                estimated += 1
        if anchor_usage is not None and anchor_message is not None:
            self._measured_at = -1  # a new anchor: every measure kept is stale
            self._anchor = anchor_usage, anchor_message
            self._anchor_tokens = self.anchor_tokens(slot.sizes)
            self._anchor_end = anchor_end
        cost = self.cost_so_far
        if recorded or estimated:  # step 5; summary calls never enter it
            cost = self.cost_so_far = Usage(
                cost.input_tokens + input_tokens,
                cost.output_tokens + output_tokens,
                cost.cache_read_tokens + cache_read,
                cost.cache_creation_tokens + cache_creation,
            )
            self.recorded_calls += recorded
            self.estimated_calls += estimated
        cleared = None
        if self.policy.prepass.kind != "none":
            cleared = slot.prepass(self.current_context_tokens())  # before the trigger

        cost_total = cost.input_tokens + cost.output_tokens
        watermark = self.view_measure() if current else cost_total
        estimated_from = watermark
        assumed = slot.estimated_view(watermark) if current else None
        if assumed is not None:
            watermark = assumed
        record: DecisionRecord = {
            "session": self.session_id,
            "turn_tokens": input_tokens + output_tokens,
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cost_so_far": cost_total,
            "watermark": watermark,
            "messages": len(messages),
            "tokens": _source(recorded, estimated),
        }
        record.update(slot.record_fields())
        if cleared is not None:
            record["cleared"] = cleared
        if assumed is not None:  # the schedule rests on it
            record["watermark_without_summaries"] = estimated_from
            record[ESTIMATED] = SUMMARY_MAX_TOKENS
        if annotations:
            record.update(annotations)
        return record

    def anchor_tokens(self, sizes: SizeModel) -> int | None:
        """The latest call with recorded usage: its prompt plus its output, the output in
        ``sizes`` (billed where the size model has them: engine/sizes.py); None before it."""
        if self._anchor is None:
            return None
        usage, message = self._anchor
        return usage.input_tokens + sizes.output_of(message, usage.output_tokens)

    def current_context_tokens(
        self, end: int | None = None, through: Measured | None = None
    ) -> int:
        """``--measure current``: the size of the view the model is sent next turn.

        Anchored on the latest call with recorded usage: its prompt plus its output
        (recorded, so system prompts and tool schemas the log omits are counted), plus
        the estimated messages appended since. The recording is of the ORIGINAL run,
        which never had tsum's summaries, so the estimated effect of the summary on the
        view (focused view minus whole history: turns dropped, summary added) is applied
        on top; and never less than the estimated size of ``load_messages()``, which is
        the value when no call is recorded.

        ``end``: the view over the first ``end`` messages only (the latest recorded call
        must lie within them): peaks measure the view up to the last model call
        (``rules.last_call_end``).

        ``through``: the slot's view measured in another size model than the slot's own (a
        seed run's view in the log's billed sizes: engine/sized_view.py); the schedule,
        which read the slot's own, is untouched.
        """
        if through is not None:
            return self._measure(through, end, self.anchor_tokens(through.sizes))
        slot, measured = self.slot, self._measured
        if slot.changes != self._measured_at:
            measured.clear()
            self._measured_at = slot.changes
        known = measured.get(end)
        if known is None:
            known = measured[end] = self._measure(slot, end, self._anchor_tokens)
        return known

    def _measure(self, slot: Measured, end: int | None, anchor: int | None) -> int:
        """``current_context_tokens`` of ``slot``, computed; ``anchor``: the latest recorded
        call's tokens in ``slot``'s size model."""
        view = slot.view_size(end)[1]
        if anchor is None:  # the size model's hidden prefix (engine/sizes.py)
            return view + slot.sizes.hidden
        end = len(slot.messages) if end is None else end
        # the messages since the anchor, less the whole history: less those before it
        anchored = anchor + view - slot.token_prefix(end)[self._anchor_end]
        # Never below the view itself: after the original agent compacted, its recorded
        # prompts no longer hold the history tsum's slot still has. (Its messages only: a
        # log that restarted unmarked, an older Claude Code's continuation, would put the
        # hidden prefix twice into a view the slot still holds whole.) Under a size model
        # only once a recorded compaction is in the slot: before it the recorded prompt is
        # exact, and the billed sizes of what a runtime later dropped from its prompt
        # (Codex's earlier reasoning) would overstate the floor.
        if slot.sizes.by_id and not slot.restarted:
            return anchored
        return max(anchored, view)

    def view_measure(self) -> int:
        """The view measure the trigger compares: the current one, or under a policy that
        measures ``conversation`` (Aider's ``too_big(done_messages)``, Aider-AI/aider
        aider/history.py@5dc9490b) only its conversation messages, estimated as Aider's
        tokenizer counts them: no system message, no hidden prefix, no recorded prompt
        (which holds Aider's system prompt, repo map and files)."""
        if self.policy.trigger.measure is TriggerMeasure.CONVERSATION:
            return self.slot.conversation_size()
        return self.current_context_tokens()


class Measured(Protocol):
    """What the current measure reads of a slot (``TurnAccounting.current_context_tokens``):
    a ``Slot``, or a seed slot's view in another size model (``sized_view.SizedView``)."""

    @property
    def messages(self) -> list[Message]: ...  # the whole history
    @property
    def sizes(self) -> SizeModel: ...
    @property
    def restarted(self) -> bool: ...
    def view_size(self, upto: int | None = None) -> tuple[int, int]: ...
    def token_prefix(self, upto: int) -> list[int]: ...


def _source(recorded: int, estimated: int) -> str:
    if recorded and estimated:
        return "mixed"
    if estimated:
        return "estimated"
    return "recorded" if recorded else "none"
