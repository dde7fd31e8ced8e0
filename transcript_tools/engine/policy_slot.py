"""The context slot of a compaction policy other than the seed's: what the model sees
after each pre-pass and summary the policy made (docs/policies.md, "the view").

The view is, in order: the head (the history's system messages; the task too with
``keep.first_user``), the summary where ``placement.position`` is ``front``, the messages a
compaction kept verbatim, the summary where it is ``end``, every message appended since
the latest compaction, and the summary where it is ``tail`` (the seed's own place: the
very end of every view). A message the pre-pass cleared is shown as its placeholder copy.

The session engine runs it through the ``slot.Slot`` protocol, as it runs the seed's
``ContextSlot`` (the one the engine builds for the seed's own policy).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from heapq import merge
from itertools import accumulate
from typing import Any

from .compaction import (
    CompactionPlan,
    Entry,
    cleared,
    is_tool_output,
    keep_plan,
    oldest_clearable,
    placed_summary,
    placeholder_tokens,
    prepass_selection,
    prepass_should_run,
    shown_entries,
    summarizer_messages,
    tool_names,
    without_inputs,
)
from .messages import (
    PERSON,
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResultMessage,
    UserMessage,
    is_turn_start,
)
from .overflow import mark_overflow
from .policy import Policy
from .policy_engine import policy_fields, policy_snapshot, summary_fields
from .records import DecisionRecord, PolicyFields, SummaryRecord
from .rules import UnitCounter
from .seed_defaults import SUMMARY_MAX_TOKENS
from .sizes import ESTIMATES, SizeModel
from .slot import PromptTokens, SummaryInput, ViewEntry
from .tokens import assumed_summary_tokens, conversation_tokens, estimate_message_tokens


@dataclass(slots=True)
class PolicySlot:
    """The slot under a non-seed policy (see the module docstring)."""

    policy: Policy
    window: int
    # tokens as billed where the log recorded them (engine/sizes.py); every size, the
    # budgets and thresholds it is compared with, reads it
    sizes: SizeModel = ESTIMATES
    slot_id: str = "main"
    messages: list[Message] = field(default_factory=list)
    units: UnitCounter = field(default_factory=UnitCounter)
    saves: int = 0
    head: list[int] = field(default_factory=list)  # history indices shown first
    kept: list[int] = field(default_factory=list)  # history indices kept verbatim
    base: int = 0  # from here on every history message is shown
    summary: tuple[Message, ...] = ()
    summary_text: str | None = None
    # history index -> (message as shown, history length when it was replaced, its tokens)
    replaced: dict[int, tuple[Message, int, int]] = field(default_factory=dict)
    _summary_tokens: tuple[int, ...] = ()
    _tokens_prefix: list[int] = field(default_factory=lambda: [0])
    _names: dict[str, str] = field(default_factory=dict)
    # Running figures, so a unit costs what it appends, not the history's length: tokens
    # the replacements at or after ``base`` saved, and those replacements in the order made
    # ((made at, index, saved)); under a pre-pass the tool outputs, turn starts and the task;
    # the index below which every tool output is settled (cleared, or never clearable).
    _saved: int = 0
    _made: list[tuple[int, int, int]] = field(default_factory=list)
    _outputs: list[int] = field(default_factory=list)
    _turns: list[int] = field(default_factory=list)
    _first_person: int | None = None
    _settled: int = 0
    # Below here (from ``base``, or ``_settled`` where further) no tool output is left
    # that the pre-pass may clear, now or later (compaction.oldest_clearable), unless a
    # tool call is renamed (then 0 again): the pre-pass walks from the furthest of the three
    _passed: int = 0
    _output_tokens: list[int] = field(default_factory=lambda: [0])  # of _outputs[:k], billed
    # The head and kept messages' tokens as shown now, and the latest history length at
    # which one of them was replaced (a view over fewer messages shows its original):
    # None until asked after the head, the kept messages or a replacement changed
    _fixed: tuple[int, int] | None = None
    restarted: bool = False  # a message the size model marks as a restart was appended
    changes: int = 0  # appends, replacements and summaries made (``Slot.changes``)
    _placeholder: int | None = None  # compaction.placeholder_tokens, once asked
    _conversation: tuple[int, int] | None = None  # (changes, conversation_size then)

    # ---- the view ---------------------------------------------------------------------

    @property
    def marker(self) -> str:
        return self.policy.placement.marker

    def append_messages(self, messages: list[Message]) -> None:
        start = len(self.messages)
        held = self._conversation
        if held is not None and held[0] == self.changes:  # the appended are shown as they are
            self._conversation = held[0] + 1, held[1] + conversation_tokens(messages)
        self.changes += 1  # every other measure kept is stale
        self.units.extend(messages)
        self.messages.extend(messages)
        restarts = self.sizes.restarts
        if restarts and not self.restarted:
            self.restarted = any(id(m) in restarts for m in messages)
        prefix = self._tokens_prefix  # each message sized once, here: the sums run on
        prefix += accumulate(map(self.sizes.of, messages), initial=prefix.pop())
        if self.policy.prepass.kind != "none":  # the rest only the pre-pass reads
            self._note_outputs(messages, start)

    def _note_outputs(self, messages: list[Message], start: int) -> None:
        """The appended messages' tool names, tool outputs (and their tokens), turn starts."""
        names = tool_names(messages)
        known = self._names
        if any(known.get(call_id, name) != name for call_id, name in names.items()):
            self._passed = 0  # an output passed over may be of a tool it may clear now
        known.update(names)
        prefix, tokens = self._tokens_prefix, self._output_tokens
        for index, message in enumerate(messages, start):
            if is_tool_output(message):
                self._outputs.append(index)
                tokens.append(tokens[-1] + prefix[index + 1] - prefix[index])
            elif is_turn_start(message):
                self._turns.append(index)
                if self._first_person is None and type(message) is UserMessage:
                    self._first_person = index  # the task, as _new_head finds it

    def token_prefix(self, upto: int) -> list[int]:
        return self._tokens_prefix  # over the whole history (append_messages extends it)

    def tokens_between(self, start: int, end: int) -> int:
        prefix = self._tokens_prefix
        return prefix[end] - prefix[start]

    def view_entries(self, upto: int | None = None) -> list[ViewEntry]:
        """The view as (history index or None for a summary message, message)."""
        end = len(self.messages) if upto is None else upto
        position = self.policy.placement.position
        summary: list[ViewEntry] = [(None, m) for m in self.summary]
        shown = self.messages, self.replaced
        view: list[ViewEntry] = [*shown_entries(*shown, self.head, end)]
        if position == "front":
            view += summary
        view += shown_entries(*shown, self.kept, end)
        if position == "end":
            view += summary
        view += shown_entries(*shown, range(min(self.base, end), end), end)
        if position == "tail":
            view += summary
        return view

    def load_messages(self, upto: int | None = None) -> list[Message]:
        return [m for _, m in self.view_entries(upto)]

    def conversation_size(self) -> int:
        """``tokens.conversation_tokens`` of the view, summed whole only when a summary or
        replacement changed it (an append adds its own: ``append_messages``)."""
        held = self._conversation
        if held is None or held[0] != self.changes:
            held = self._conversation = self.changes, conversation_tokens(self.load_messages())
        return held[1]

    def view_size(self, upto: int | None = None) -> tuple[int, int]:
        """(messages, estimated tokens) of the view over messages[:upto]: the appended
        part from the prefix sums less what the pre-pass saved in it (the running total,
        less the replacements made after ``upto``), the head and kept messages summed."""
        end = len(self.messages) if upto is None else upto
        start = min(self.base, end)
        tokens = self.tokens_between(start, end) + sum(self._summary_tokens) - self._saved
        for made_at, _index, saved in reversed(self._made):
            if made_at <= end:
                break
            tokens += saved  # not yet made in the view over messages[:upto]
        fixed = self._fixed
        if fixed is None:
            fixed = self._fixed = self._fixed_tokens(len(self.messages))
        tokens += fixed[1] if end >= fixed[0] else self._fixed_tokens(end)[1]
        return len(self.head) + len(self.kept) + len(self.summary) + end - start, tokens

    def _fixed_tokens(self, end: int) -> tuple[int, int]:
        """(the latest history length at which a head or kept message was replaced, at
        most ``end``; the head and kept messages' tokens in the view over messages[:end])."""
        latest = tokens = 0
        for index in (*self.head, *self.kept):
            entry = self.replaced.get(index)
            if entry is not None and entry[1] <= end:
                latest = max(latest, entry[1])
                tokens += entry[2]
            else:
                tokens += self.tokens_between(index, index + 1)
        return latest, tokens

    def snapshot(self) -> dict[str, Any]:
        return policy_snapshot(self)

    # ---- the pre-pass ----------------------------------------------------------------

    def region(self) -> list[Entry]:
        """The visible history messages a compaction may drop (module docstring of
        ``compaction.py``), as the model sees them now."""
        end = len(self.messages)
        head = set(self.head) | set(self._new_head())
        indices = [i for i in self.kept if i not in head]
        indices += [i for i in range(self.base, end) if i not in head]
        return shown_entries(self.messages, self.replaced, indices, end)

    def _new_head(self) -> list[int]:
        keep = self.policy.keep
        found: list[int] = []
        first_user = keep.first_user and not any(
            type(self.messages[i]) is UserMessage for i in self.head
        )
        for index in range(self.base, len(self.messages)):
            message = self.messages[index]
            if keep.system and type(message) is SystemMessage:
                found.append(index)
            elif first_user and type(message) is UserMessage and message.origin == PERSON:
                found.append(index)
                first_user = False
        return found

    def prepass(self, view_tokens: int) -> dict[str, Any] | None:
        """Run the pre-pass on the view; what it cleared, or None when it did nothing."""
        prepass = self.policy.prepass
        kept_outputs = [i for i in self.kept if is_tool_output(self.messages[i])]
        outputs = len(self._outputs) - bisect.bisect_left(self._outputs, self.base)
        if not prepass_should_run(prepass, view_tokens, self.window, outputs + len(kept_outputs)):
            return None
        # The walk clears an output only past the newest protect_tokens of output: none
        # where all the outputs it walks come to less (cleared ones counted whole)
        counted = self._output_tokens
        walked = counted[-1] - counted[bisect.bisect_left(self._outputs, self._walk_start())]
        walked += sum(self.sizes.of(self.messages[i]) for i in kept_outputs)
        if walked < prepass.protect_tokens:
            return None
        region = self._unsettled_region()
        if self._placeholder is None:  # every cleared output's size; the slot's for good
            self._placeholder = placeholder_tokens(prepass, self.sizes.of)
        placeholder = self._placeholder
        walk = (region, prepass, self._names, self.sizes.of, self.replaced, placeholder)
        chosen, freed = prepass_selection(*walk)
        end = len(self.messages)
        call_ids: set[str] = set()
        for index in chosen:
            message = self.messages[index]
            self._replace(index, cleared(message, prepass.placeholder), end, placeholder)
            if type(message) is ToolResultMessage:
                call_ids.add(message.tool_call_id)
        clearable = oldest_clearable(*walk)
        self._passed = max(self._passed, end if clearable is None else clearable)
        if not chosen:
            return None
        # Every output older than the newest one cleared was cleared now or before, or
        # can never be (the walk passed it after every protection was used up).
        self._settled = chosen[-1] + 1
        if prepass.clear_inputs and call_ids:
            freed += self._clear_inputs(call_ids, end)
        return {
            "messages_cleared": len(chosen),
            "cleared": chosen,
            "view_tokens_before": view_tokens,
            "view_tokens_after": view_tokens - freed,
            "freed_tokens": freed,
        }

    def _unsettled_region(self) -> list[Entry]:
        """The part of the region the pre-pass still has to walk: from the oldest output not
        settled on (the whole region while a compaction keeps messages from before ``base``),
        its tool outputs and turn starts, all the walk reads (``compaction.prepass_selection``,
        ``oldest_clearable``; a copy shown for one is of its kind)."""
        if self.kept:
            return self.region()
        start, outputs, turns = self._walk_start(), self._outputs, self._turns
        first = self._first_person if self.policy.keep.first_user else None
        read = merge(
            outputs[bisect.bisect_left(outputs, start) :], turns[bisect.bisect_left(turns, start) :]
        )
        indices = [i for i in read if i != first]
        return shown_entries(self.messages, self.replaced, indices, len(self.messages))

    def _walk_start(self) -> int:
        """The history index the pre-pass walks from while no message before ``base`` is
        kept (the whole region otherwise)."""
        return self.base if self.kept else max(self._settled, self._passed, self.base)

    @property
    def hidden_tokens(self) -> int:
        """What every prompt carries besides the messages (the size model's; 0 without)."""
        return self.sizes.hidden

    def _replace(self, index: int, message: Message, made_at: int, size: int | None = None) -> None:
        size = self.sizes.of(message) if size is None else size  # a cut copy's: copy_of
        self._fixed = None  # a head or kept message may be shown otherwise now
        self.changes += 1
        if index in self.replaced:  # replaced again: its earlier saving no longer holds
            self._made = [m for m in self._made if m[1] != index]
            self._saved = sum(m[2] for m in self._made)
        self.replaced[index] = (message, made_at, size)
        if index >= self.base:
            saved = self.tokens_between(index, index + 1) - size
            self._made.append((made_at, index, saved))
            self._saved += saved

    def _clear_inputs(self, call_ids: set[str], end: int) -> int:
        freed = 0
        for index, message in shown_entries(self.messages, self.replaced, range(end), end):
            if type(message) is AssistantMessage and any(
                getattr(b, "id", None) in call_ids for b in message.blocks
            ):
                lighter = without_inputs(message, call_ids)
                original = self.messages[index]
                before = self.sizes.copy_of(original, message)
                size = self.sizes.copy_of(original, lighter)
                freed += before - size
                self._replace(index, lighter, end, size)
        return freed

    # ---- the summary -----------------------------------------------------------------

    def plan(self) -> CompactionPlan:
        """What a summary made now keeps, drops and is given (decided at the request)."""
        region = self.region()
        # Codex budgets the person's messages by their text (approx_token_count, bytes / 4:
        # openai/codex codex-rs/core/src/truncate.rs), not by what they were billed
        text = self.policy.keep.kind == "user-messages"
        sized = estimate_message_tokens if text else self.sizes.of
        plan = keep_plan(region, self.policy.keep, self.window, sized)
        dropped = tuple(region[p] for p in plan.dropped)
        summary = [*self.summary, *(m for _, m in dropped)]  # what the new view drops
        given = summarizer_messages(
            self.policy.summarizer_input, self.messages, self.load_messages, summary, self.sizes.of
        )
        return CompactionPlan(
            plan.kept, dropped, tuple(given), len(self.messages), self.view_size()[1]
        )

    def set_summary(
        self, text: str, plan: CompactionPlan | None = None, assumed_tokens: int | None = None
    ) -> None:
        """Apply a summary: the new view is the head, the summary as placed, what the
        plan kept, and whatever comes next. ``assumed_tokens``: a dry run's summary
        whose text is not known, counted as that many tokens."""
        plan = plan if plan is not None else self.plan()
        end = len(self.messages)
        self.head = sorted(set(self.head) | set(self._new_head()))
        self.kept = []
        shown = shown_entries(self.messages, self.replaced, [index for index, _ in plan.kept], end)
        for (index, message), (_, before) in zip(plan.kept, shown, strict=True):
            if message is not before:  # a cut copy (keep.kind user-messages)
                size = self.sizes.copy_of(self.messages[index], message)
                self._replace(index, message, end, size)
            self.kept.append(index)
        self.base = plan.history_end
        self._fixed = None  # new head and kept messages
        self.changes += 1
        self._made = [m for m in self._made if m[1] >= self.base]  # the rest is not appended
        self._saved = sum(m[2] for m in self._made)
        self.summary_text = text
        self.summary = placed_summary(self.policy.placement, text)
        sizes = [self.sizes.of(m) for m in self.summary]  # new text: its estimate
        if assumed_tokens is not None:
            body = 1 if self.policy.placement.lead_in else 0
            sizes[body] = assumed_tokens
        self._summary_tokens = tuple(sizes)
        self.saves += 1

    # ---- the engine's Slot protocol (engine/slot.py) ---------------------------------

    def record_fields(self) -> PolicyFields:
        return policy_fields(self.policy)

    def summary_input(self) -> SummaryInput | None:
        plan = self.plan()
        if not plan.summarizer_input or not (plan.dropped or self.summary):
            return None  # nothing to summarize, or a summary would replace nothing
        return plan.summarizer_input, plan

    def apply_summary(self, text: str, plan: CompactionPlan | None) -> SummaryRecord:
        assert plan is not None  # summary_input gave one
        self.set_summary(text, plan)
        return summary_fields(self, self.policy, plan)

    def assume_summary(self) -> None:
        """A dry run: the plan applied with a summary SUMMARY_MAX_TOKENS long."""
        self.set_summary("", assumed_tokens=assumed_summary_tokens(self.marker, SUMMARY_MAX_TOKENS))

    def estimated_view(self, view: int) -> None:
        """The assumed summary is in the view itself: nothing to estimate on top."""

    def mark(self, record: DecisionRecord, prompt: PromptTokens) -> None:
        mark_overflow(record, prompt(), self.window)
