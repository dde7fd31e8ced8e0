"""The ``Slot`` protocol the session engine runs every policy through, the seed's
``ContextSlot`` (Full / Focused modes, ``load_messages``), and SessionMemory.

The engine builds one slot per session (``session.new_slot``: this one for the seed,
``policy_slot.PolicySlot`` for any other policy) and from then on only calls the
protocol: what the summary is given, how it is applied, a dry run's assumed summary,
and the record fields a run under ``--policy`` adds.

The consumer side of the seed (Phase 10's ``filter_focused``): in Focused mode
with a ``summary_override`` the model's next view is the focused messages
followed by ONE system message ``[上下文摘要] {summary}`` at the END.

Our FocusedConfig (the seed leaves it to Phase 10): the system messages plus
the last ``keep_recent_turns`` whole turns AND every turn after the one the latest
summary covered, whichever starts earlier (``rules.focused_window_start``) — whole
turns never split a tool call from its result — then the summary. Before any summary
the view is the whole history.

Token sizes of views are kept as running prefix sums, extended lazily, so asking
for the size of the view costs O(1) amortized instead of O(history).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from .config import SlotMode
from .messages import Message, SystemMessage
from .records import DecisionRecord, PolicyFields, SummaryRecord
from .rules import UnitCounter, estimated_summary_view, focused_window_start
from .seed_defaults import DEFAULT_KEEP_RECENT_TURNS, DEFAULT_SUMMARY_MARKER, SUMMARY_MAX_TOKENS
from .sizes import ESTIMATES, SizeModel
from .tokens import (
    MESSAGE_OVERHEAD_TOKENS,
    assumed_summary_tokens,
    conversation_tokens,
    estimate_message_tokens,
    estimate_text_tokens,
)

if TYPE_CHECKING:
    from .compaction import CompactionPlan

# What a summary is given: the messages formatted into its prompt, and what it replaces
# (None: the seed's, which replaces nothing, F4)
SummaryInput = tuple[Sequence[Message], "CompactionPlan | None"]
# A message of a view: its history index (None: a summary message), the message as shown
ViewEntry = tuple[int | None, Message]


class Slot(Protocol):
    """What the session engine asks of a context slot (``ContextSlot``, ``PolicySlot``)."""

    messages: list[Message]  # the whole history
    units: UnitCounter
    saves: int
    changes: int  # counts every change of the history or the view (what a measure reads)

    @property
    def sizes(self) -> SizeModel: ...  # what the slot sizes messages with

    @property
    def restarted(self) -> bool: ...  # the size model saw a recorded compaction

    def append_messages(self, messages: list[Message]) -> None: ...
    def load_messages(self, upto: int | None = None) -> list[Message]: ...
    def view_entries(self, upto: int | None = None) -> list[ViewEntry]: ...
    @property
    def base(self) -> int: ...  # from here on every history message is shown
    @property
    def replaced(self) -> Mapping[int, tuple[Message, int, int]]: ...  # shown as a copy
    def view_size(self, upto: int | None = None) -> tuple[int, int]: ...
    def conversation_size(self) -> int: ...  # the view's, as tokens.conversation_tokens
    def token_prefix(self, upto: int) -> list[int]: ...
    def tokens_between(self, start: int, end: int) -> int: ...
    def snapshot(self) -> dict[str, Any]: ...
    def prepass(self, view_tokens: int) -> dict[str, Any] | None: ...
    def record_fields(self) -> PolicyFields: ...  # every record of the run carries them
    def summary_input(self) -> SummaryInput | None: ...  # None: nothing to summarize
    def apply_summary(self, text: str, plan: CompactionPlan | None) -> SummaryRecord: ...
    def assume_summary(self) -> None: ...  # a dry run's summary, its text not known
    def estimated_view(self, view: int) -> int | None: ...  # the view after it, estimated
    # what a checkpoint left; ``prompt``: the tokens of its view, as the trigger measures
    def mark(self, record: DecisionRecord, prompt: PromptTokens) -> None: ...


# The tokens of the prompt a view makes, measured when asked (TurnAccounting's measure).
PromptTokens = Callable[[], int]

_NONE_REPLACED: Mapping[int, tuple[Message, int, int]] = {}


@dataclass(slots=True)
class FocusedConfig:
    keep_recent_turns: int = DEFAULT_KEEP_RECENT_TURNS
    summary_override: str | None = None


@dataclass(slots=True)
class ContextSlot:
    """One context slot: the full message history and how the model views it."""

    slot_id: str = "main"
    mode: SlotMode = SlotMode.FOCUSED
    focused: FocusedConfig = field(default_factory=FocusedConfig)
    marker: str = DEFAULT_SUMMARY_MARKER
    messages: list[Message] = field(default_factory=list)
    # where the checkpoint's units start: turns, or model calls (--checkpoint call)
    units: UnitCounter = field(default_factory=UnitCounter)
    _covered_end: int | None = None  # history length the latest summary was made from
    saves: int = 0  # times the slot config was persisted (seed: slot.save())
    # lazily-extended prefix sums of estimated tokens: all messages / system messages only
    _tokens_prefix: list[int] = field(default_factory=lambda: [0])
    _system_prefix: list[int] = field(default_factory=lambda: [0])
    _system_count: list[int] = field(default_factory=lambda: [0])
    # The summary message (summary_message) and the text and marker it was made of: the
    # view asks for it every unit, a new one is made only when a summary is
    _summary_made: tuple[str, str, SystemMessage] | None = field(
        default=None, compare=False, repr=False
    )
    # (summary message, its estimated tokens with the message overhead)
    _summary_cache: tuple[SystemMessage | None, int] = field(
        default=(None, 0), compare=False, repr=False
    )
    # A dry run in Focused mode: the history length the latest would-be summary covered
    _assumed_end: int | None = None
    changes: int = 0  # appends and summaries made (``Slot.changes``)
    sizes: ClassVar[SizeModel] = ESTIMATES  # the seed's measure: every size estimated
    restarted: ClassVar[bool] = False

    @property
    def summary_override(self) -> str | None:
        return self.focused.summary_override if self.mode is SlotMode.FOCUSED else None

    @property
    def unit_starts(self) -> list[int]:
        """The index of each unit's first message: the turns (or the calls with
        ``--checkpoint call``: keep_recent_turns then counts calls)."""
        return self.units.starts

    def append_messages(self, messages: list[Message]) -> None:
        self.units.extend(messages)
        self.messages.extend(messages)
        self.changes += 1

    def set_summary(self, text: str, covered_end: int | None = None) -> None:
        """F4: write the summary into the Focused config, and persist the slot in every
        mode: the seed's ``slot.save()`` sits outside its Focused-only block, so a Full-mode
        slot is saved too, its config unchanged (``summary_override`` stays None).

        ``covered_end``: how many messages of the history the summary was made from
        (default: all of them, as at the checkpoint)."""
        if self.mode is SlotMode.FOCUSED:
            self.focused.summary_override = text
            self._covered_end = len(self.messages) if covered_end is None else covered_end
        self.changes += 1
        self.save()

    def save(self) -> None:
        self.saves += 1

    def kept_start(self) -> int:
        """The first message of the focused view's kept turns (``rules.focused_window_start``)."""
        starts = self.unit_starts
        return focused_window_start(
            starts, len(starts), self.focused.keep_recent_turns, self._covered_end
        )

    def summary_message(self) -> SystemMessage | None:
        """The summary as the view shows it; the same message while the summary and marker
        are (by identity: a new summary is a new string), so its readers compare it so."""
        override = self.summary_override
        if override is None:
            return None
        made = self._summary_made
        if made is None or made[0] is not override or made[1] is not self.marker:
            made = self._summary_made = (
                override,
                self.marker,
                SystemMessage(f"{self.marker} {override}"),
            )
        return made[2]

    def view_window(self, upto: int | None) -> tuple[int, int, SystemMessage | None]:
        """(end, start, summary) of the view over messages[:upto]: the system messages
        before ``start``, messages[start:end], then the summary; no summary (Full mode, or
        Focused before any): the whole of messages[:end]. The one home of the view's shape."""
        end = len(self.messages) if upto is None else upto
        summary = self.summary_message()
        if summary is None:
            return end, 0, None
        return end, min(self.kept_start(), end), summary

    def load_messages(self, upto: int | None = None) -> list[Message]:
        """The view the model gets next turn (seed: ``slot.load_messages()``).

        ``upto``: the view over messages[:upto] only — the prompt of a model call made
        before the rest of its unit was appended (the cost model prices each call)."""
        end, start, summary = self.view_window(upto)
        if summary is None:
            return self.messages[:end]
        head = [m for m in self.messages[:start] if isinstance(m, SystemMessage)]
        return head + self.messages[start:end] + [summary]

    def view_entries(self, upto: int | None = None) -> list[ViewEntry]:
        """``load_messages(upto)``, each message with its history index (None: the summary)."""
        end, start, summary = self.view_window(upto)
        messages = self.messages
        if summary is None:
            return list(enumerate(messages[:end]))
        head = [(i, m) for i, m in enumerate(messages[:start]) if isinstance(m, SystemMessage)]
        return [*head, *enumerate(messages[start:end], start), (None, summary)]

    @property
    def replaced(self) -> Mapping[int, tuple[Message, int, int]]:
        """The seed shows every message it shows as it is: none replaced."""
        return _NONE_REPLACED

    @property
    def base(self) -> int:
        """The focused window's start (``kept_start``): once a summary is shown (Focused
        mode) the view shows every history message from here on, before it the system
        messages only."""
        return self.kept_start()

    # ---- estimated sizes (running sums; no re-count of the history) ------------

    def _extend_prefix(self, upto: int) -> None:
        tokens, system, count = self._tokens_prefix, self._system_prefix, self._system_count
        total, system_total, system_n = tokens[-1], system[-1], count[-1]
        estimate = estimate_message_tokens
        for message in self.messages[len(tokens) - 1 : upto]:
            n = estimate(message)
            total += n
            tokens.append(total)
            if isinstance(message, SystemMessage):
                system_total += n
                system_n += 1
            system.append(system_total)
            count.append(system_n)

    def token_prefix(self, upto: int) -> list[int]:
        """The running sums of estimated tokens, valid at least up to index ``upto``:
        ``prefix[j] - prefix[i]`` is the estimate of messages[i:j]. Do not modify it."""
        if len(self._tokens_prefix) <= upto:
            self._extend_prefix(upto)
        return self._tokens_prefix

    def tokens_between(self, start: int, end: int) -> int:
        """Estimated tokens of messages[start:end]."""
        if len(self._tokens_prefix) <= end:
            self._extend_prefix(end)
        return self._tokens_prefix[end] - self._tokens_prefix[start]

    def dropped_tokens(self, start: int) -> int:
        """Estimated tokens a focused view whose window starts at ``start`` leaves out:
        the messages before it, less the system messages (the view keeps those)."""
        if len(self._tokens_prefix) <= start:
            self._extend_prefix(start)
        return self._tokens_prefix[start] - self._system_prefix[start]

    def _summary_tokens(self, summary: SystemMessage) -> int:
        # The view's size is asked for every turn; the summary changes only when one is made
        # (a new message then: summary_message).
        if summary is not self._summary_cache[0]:
            self._summary_cache = (
                summary,
                MESSAGE_OVERHEAD_TOKENS + estimate_text_tokens(summary.text),
            )
        return self._summary_cache[1]

    def view_size(self, upto: int | None = None) -> tuple[int, int]:
        """(messages, estimated tokens) of ``load_messages()`` over messages[:upto]."""
        end, start, summary = self.view_window(upto)
        if len(self._tokens_prefix) <= end:
            self._extend_prefix(end)
        if summary is None:
            return end, self._tokens_prefix[end]
        n_system = self._system_count[start]
        tokens = (
            self._system_prefix[start]
            + self._tokens_prefix[end]
            - self._tokens_prefix[start]
            + self._summary_tokens(summary)
        )
        return n_system + (end - start) + 1, tokens

    def conversation_size(self) -> int:
        """``tokens.conversation_tokens`` of the view (no seed run measures it per unit)."""
        return conversation_tokens(self.load_messages())

    # ---- the engine's Slot protocol --------------------------------------------------

    def prepass(self, view_tokens: int) -> None:
        """The seed clears nothing before its checkpoint."""

    def record_fields(self) -> PolicyFields:
        """The seed's records name no policy (outputs without ``--policy`` unchanged)."""
        return {}

    def summary_input(self) -> SummaryInput:
        """F3: the FULL history (not the focused view); the summary replaces nothing."""
        return self.messages, None

    def apply_summary(self, text: str, plan: CompactionPlan | None) -> SummaryRecord:
        self.set_summary(text)  # F4 (Focused only) + slot.save() (every mode)
        return {}

    def assume_summary(self) -> None:
        """A dry run: remember the history the would-be summary covered (Focused only;
        ``estimated_view`` applies its effect to the view the current measure reads)."""
        if self.mode is SlotMode.FOCUSED:
            self._assumed_end = len(self.messages)

    def estimated_view(self, view: int) -> int | None:
        """A dry run's view after a would-be summary: ``view`` (the view without
        summaries) less what the focused window leaves out, plus a summary of
        SUMMARY_MAX_TOKENS (the sweep's estimate, ``--summary-tokens`` at its default);
        None before any (or in Full mode)."""
        if self._assumed_end is None:
            return None
        starts = self.unit_starts
        start = focused_window_start(
            starts, len(starts), self.focused.keep_recent_turns, self._assumed_end
        )
        summary = assumed_summary_tokens(self.marker, SUMMARY_MAX_TOKENS)
        return estimated_summary_view(view, self.dropped_tokens(start), summary)

    def mark(self, record: DecisionRecord, prompt: PromptTokens) -> None:
        """The seed's path has no window of its own to fail (engine/overflow.py)."""

    def snapshot(self) -> dict[str, Any]:
        """The slot config as persisted (for the slot snapshot output)."""
        return {
            "slot_id": self.slot_id,
            "mode": self.mode.value,
            "keep_recent_turns": self.focused.keep_recent_turns
            if self.mode is SlotMode.FOCUSED
            else None,
            "summary_override": self.summary_override,
            "marker": self.marker,
        }


@dataclass(slots=True)
class SessionMemory:
    """F5: the session's key-value memory; the summary lives under ``conversation_summary``."""

    data: dict[str, str] = field(default_factory=dict)

    def set(self, key: str, value: str) -> None:
        self.data[key] = value

    def get(self, key: str) -> str | None:
        return self.data.get(key)
