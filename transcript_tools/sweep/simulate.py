"""The sweep's simulation: one configuration on one conversation, no I/O.

Per conversation a :class:`ConversationSeries` is computed ONCE, by the session engine itself
with no checkpoint (N2): the per-turn ``cost_so_far`` series (the seed's cumulative
watermark), the per-turn size of the view without summaries (``--measure current``),
prefix sums of the formatted history (summary prompt sizes) and of the estimated
tokens a focused view drops. Then each configuration costs O(turns):

* fast path -- the figures cannot depend on summary text
  (``rules.depends_on_summary_text``): the cumulative measure (usage recorded or
  estimated: an estimate never sees tsum's view), or Full mode (summaries never change
  the view), and a template that does not show the previous summary. The checkpoint
  (``rules.skip_reason``) is run over plain integers; it agrees exactly with
  :class:`SessionEngine` (a hypothesis test proves it). No provider is called.
* engine path -- otherwise: the real engine runs with an executor (the offline
  provider, or cached responses).

Every rule comes from :mod:`.rules`; this module only feeds it precomputed series.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from ..engine.config import (
    Checkpoint,
    Measure,
    ReplaySettings,
    SlotMode,
    SummaryConfig,
)
from ..engine.drive import drive_without_summaries
from ..engine.formatting import MESSAGE_SEPARATOR, format_message
from ..engine.messages import Conversation, Message
from ..engine.prompt import PromptTemplate
from ..engine.rules import (
    FIRED,
    Decision,
    compaction_turn,
    estimated_summary_view,
    fixed_cadence,
    focused_window_start,
    last_call_end,
    skip_reason,
    split_units,
    suffix_cut,
    unit_turns,
)
from ..engine.seed_defaults import SUMMARY_MAX_TOKENS
from ..engine.session import SessionEngine
from ..engine.slot import ContextSlot
from ..engine.tokens import assumed_summary_tokens, estimate_text_tokens
from .config import ConfigOutcome, SweepConfig

# ---- one conversation, computed once ------------------------------------------------------

FOCUSED_PAIRS = 1 << 16  # focused sizes a conversation keeps for the grid (a few MB at most)


@dataclass(slots=True)
class ConversationSeries:
    """The config-independent series of one conversation (all lists indexed by turn)."""

    index: int
    session_id: str
    path: str
    turns: int
    cost: list[int]  # cost_so_far after each turn (the cumulative watermark)
    view: list[int]  # size of the view without summaries (the current watermark)
    history_end: list[int]  # messages in the history after each turn
    all_recorded: bool  # every call's usage recorded (no estimate anywhere)
    compaction_turns: list[int]  # turns after which the original agent compacted
    keep_recent_turns: int = 3
    starts: list[int] = field(default_factory=list)  # first message of each turn
    # tokens a focused view starting at turn k's first message leaves out (non-system)
    dropped: list[int] = field(default_factory=list)
    summary_cost: int = 0  # the summary message, assumed summary_tokens long
    # prefix sums over messages of the formatted history: code points + separators, tokens
    _chars: list[int] = field(default_factory=list)
    _tokens: list[int] = field(default_factory=list)
    _max_chars: int = 0
    _template: PromptTemplate | None = None
    _shells: dict[int, tuple[int, int]] = field(default_factory=dict)
    _prompts: dict[int, tuple[int, int]] = field(default_factory=dict)
    _view_prefix: list[int] = field(default_factory=list)  # sum of view[:t]
    _view_max: list[int] = field(default_factory=list)  # max of peak_view[:t]
    # Peaks: a view is measured when a model is called with it (rules.last_call_end):
    # after a unit that ends past the last call, the view up to that call instead.
    measured_end: int = 0  # messages up to and including the last model call
    peak_view: list[int] = field(default_factory=list)  # view, clipped at measured_end
    dropped_end: int = 0  # non-system tokens before measured_end
    # (turn, covered turn) -> focused_sizes: a grid's configurations reach the same pairs
    _focused: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)

    @property
    def formatted(self) -> tuple[list[int], list[int]]:
        """``formatted_prefix`` of the conversation (the same in every unit)."""
        return self._chars, self._tokens

    @property
    def view_peak(self) -> int:
        """The largest view without summaries a model is called with."""
        return self._view_max[-1]

    def focused_sizes(self, turn: int, covered_turn: int) -> tuple[int, int]:
        """(``focused_size``, ``focused_peak_size``) of ``turn`` with the latest summary
        made at ``covered_turn``: each pair found once for every configuration of a grid
        (up to ``FOCUSED_PAIRS`` pairs kept per conversation; past that, found afresh)."""
        key = (turn, covered_turn)
        sizes = self._focused.get(key)
        if sizes is None:
            sizes = (
                self.focused_size(turn, covered_turn),
                self.focused_peak_size(turn, covered_turn),
            )
            if len(self._focused) < FOCUSED_PAIRS:
                self._focused[key] = sizes
        return sizes

    def focused_peak_size(self, turn: int, covered_turn: int) -> int:
        """``focused_size`` as it counts toward a peak: measured at ``measured_end`` when
        the unit ends past the last model call."""
        if self.history_end[turn] <= self.measured_end:
            return self.focused_size(turn, covered_turn)
        starts = self.starts
        start = focused_window_start(
            starts, turn + 1, self.keep_recent_turns, self.history_end[covered_turn]
        )
        if start >= self.measured_end:
            dropped = self.dropped_end
        else:
            dropped = self.dropped[bisect.bisect_right(starts, start, 0, turn + 1) - 1]
        return estimated_summary_view(self.peak_view[turn], dropped, self.summary_cost)

    @property
    def view_sum(self) -> int:
        """The sum over turns of the view without summaries."""
        return self._view_prefix[-1]

    def _shell(self, turn: int) -> tuple[int, int]:
        """(code points, tokens) of the template around the messages, at ``turn``."""
        template = self._template
        uses_turn = template is not None and "turn" in template.variables
        key = turn if uses_turn else -1
        hit = self._shells.get(key)
        if hit is None:
            if template is None:
                shell = ""
            else:
                shell = template.render("", session_id=self.session_id, turn=turn)
            hit = self._shells[key] = (len(shell), estimate_text_tokens(shell))
        return hit

    def prompt_size(self, turn: int) -> tuple[int, int]:
        """(code points, estimated tokens) of the summary prompt at ``turn``'s checkpoint,
        with no previous summary shown.

        The formatted history is cut by ``rules.suffix_cut`` (the 30K rule), fed from
        the prefix sums; plus the template around it."""
        hit = self._prompts.get(turn)
        if hit is not None:
            return hit
        end = self.history_end[turn]
        chars, tokens = self._chars, self._tokens
        sep = len(MESSAGE_SEPARATOR)
        lengths = (chars[i + 1] - chars[i] - sep for i in range(end - 1, -1, -1))
        kept, text_chars = suffix_cut(lengths, self._max_chars, sep)
        newest = chars[end] - chars[end - 1] - sep
        if kept == 1 and newest > self._max_chars:  # the newest message's tail
            text_tokens = (tokens[end] - tokens[end - 1]) * text_chars // max(newest, 1)
        else:
            text_tokens = tokens[end] - tokens[end - kept]
        shell_chars, shell_tokens = self._shell(turn)
        size = (shell_chars + text_chars, shell_tokens + text_tokens)
        self._prompts[turn] = size
        return size

    def focused_size(self, turn: int, covered_turn: int) -> int:
        """Size of the focused view after ``turn``, the latest summary made at ``covered_turn``
        (as ``TurnAccounting.current_context_tokens`` measures it)."""
        starts = self.starts
        start = focused_window_start(
            starts, turn + 1, self.keep_recent_turns, self.history_end[covered_turn]
        )
        k = bisect.bisect_right(starts, start, 0, turn + 1) - 1  # the turn starting there
        return estimated_summary_view(self.view[turn], self.dropped[k], self.summary_cost)


def profile_conversation(
    conv: Conversation,
    *,
    index: int = 0,
    base: SummaryConfig | None = None,
    template: PromptTemplate | None = None,
    keep_recent_turns: int = 3,
    summary_tokens: int = SUMMARY_MAX_TOKENS,
    turns: list[tuple[int, list[Message]]] | None = None,
    checkpoint: Checkpoint = Checkpoint.TURN,
    formatted: tuple[list[int], list[int]] | None = None,
) -> ConversationSeries:
    """Run the engine once with no checkpoint and keep what every configuration needs.

    The series are per checkpoint unit: turns, or calls with ``checkpoint`` call.
    ``formatted``: the conversation's ``formatted_prefix`` with the same ``base``, from
    its profile in another unit (the same per message, whatever the unit)."""
    base = base or SummaryConfig()
    turns = split_units(conv.messages, checkpoint) if turns is None else turns
    settings = ReplaySettings(
        summary=None,
        mode=SlotMode.FULL,
        measure=Measure.CURRENT,
        keep_recent_turns=keep_recent_turns,
        checkpoint=checkpoint,
    )
    engine = SessionEngine(conv.session_id, settings)
    # the one loop (engine/drive.py); with no SummaryConfig it never awaits
    units = unit_spans(turns)
    drive_without_summaries(conv, engine, units=units)
    slot = engine.slot
    assert isinstance(slot, ContextSlot)  # the profile runs no policy (settings above)
    cost = [d["cost_so_far"] for d in engine.decisions]
    # the current measure; never below the estimated view (TurnAccounting.current_context_tokens)
    view = [d["watermark"] for d in engine.decisions]
    history_end = [start + len(messages) for start, messages in turns]
    starts = [start for start, _ in turns]

    # A focused view keeps the system messages before its window: what it drops when the
    # window starts at turn k is the non-system tokens before starts[k].
    dropped = [slot.dropped_tokens(start) for start in starts]
    measured_end, peak_view = peak_views(conv, engine, view, history_end)
    dropped_end = slot.dropped_tokens(measured_end)
    # the summary message (assumed summary_tokens long: the call's max_tokens bound)
    summary_cost = assumed_summary_tokens(base.summary_marker, summary_tokens)

    chars, tokens = formatted_prefix(conv, base) if formatted is None else formatted
    view_prefix, view_max = [0], [0]
    for size, peak in zip(view, peak_view, strict=True):
        view_prefix.append(view_prefix[-1] + size)
        view_max.append(max(view_max[-1], peak))
    return ConversationSeries(
        index=index,
        session_id=conv.session_id,
        path=conv.path,
        turns=len(turns),
        cost=cost,
        view=view,
        history_end=history_end,
        all_recorded=engine.accounting.estimated_calls == 0,
        compaction_turns=compaction_turns(conv, starts),
        keep_recent_turns=keep_recent_turns,
        starts=starts,
        dropped=dropped,
        summary_cost=summary_cost,
        _chars=chars,
        _tokens=tokens,
        _max_chars=base.max_transcript_chars,
        _template=template,
        _view_prefix=view_prefix,
        _view_max=view_max,
        measured_end=measured_end,
        peak_view=peak_view,
        dropped_end=dropped_end,
    )


def unit_spans(turns: list[tuple[int, list[Message]]]) -> list[tuple[int, int]]:
    """(start, end) of each unit of ``turns`` in the conversation's messages."""
    return [(start, start + len(messages)) for start, messages in turns]


def compaction_turns(conv: Conversation, starts: list[int]) -> list[int]:
    """The units (first messages ``starts``) after which the original agent compacted."""
    return sorted({compaction_turn(starts, c.message_index) for c in conv.compactions})


def peak_views(
    conv: Conversation, engine: SessionEngine, view: list[int], history_end: list[int]
) -> tuple[int, list[int]]:
    """``measured_end`` (the messages up to and including the last model call) and each
    unit's ``view`` as it counts toward a peak: the view a model is called with, never
    past the last call, of ``engine`` driven over ``conv``'s units ending at
    ``history_end``."""
    # (a conversation without a model call has no unit with --checkpoint call: the
    # engine's slot then holds none of its messages)
    measured_end = min(last_call_end(conv.messages), len(engine.slot.messages))
    if measured_end >= len(conv.messages) or not view:
        return measured_end, view
    clipped = engine.accounting.current_context_tokens(measured_end)
    return measured_end, [
        v if end <= measured_end else clipped for v, end in zip(view, history_end, strict=True)
    ]


def per_turn(
    conv: Conversation,
    units: list[tuple[int, list[Message]]],
    series: list[int],
    checkpoint: Checkpoint,
) -> list[int]:
    """A per-unit series per turn: with ``--checkpoint call`` the value after each turn's
    last call."""
    if checkpoint is Checkpoint.TURN:
        return series
    out: dict[int, int] = {}
    for turn, value in zip(unit_turns(conv.messages, [s for s, _ in units]), series, strict=False):
        out[turn] = value
    return [out[t] for t in sorted(out)]


def formatted_prefix(conv: Conversation, base: SummaryConfig) -> tuple[list[int], list[int]]:
    """The formatted history, once: prefix sums over ``conv``'s messages of their block
    lengths (+ separator) and tokens, tool results cut at ``base``'s cap."""
    chars = [0]
    tokens = [0]
    sep = len(MESSAGE_SEPARATOR)
    for message in conv.messages:
        block = format_message(message, base.max_tool_result_chars)
        chars.append(chars[-1] + len(block) + sep)
        tokens.append(tokens[-1] + estimate_text_tokens(block))
    return chars, tokens


# ---- one configuration on one conversation ------------------------------------------------


def decisions(profile: ConversationSeries, cfg: SweepConfig) -> list[Decision]:
    """The checkpoint's decision at every turn, every call succeeding (``rules.skip_reason``)."""
    series = profile.cost if cfg.measure is Measure.CUMULATIVE else profile.view
    threshold = cfg.threshold
    debounce = cfg.debounce_turns
    ends = profile.history_end
    last = 0  # the seed: last_summary_turn starts at 0
    out: list[Decision] = []
    for turn, watermark in enumerate(series):
        skip = skip_reason(turn, last, watermark, threshold, debounce, ends[turn] == 0)
        if skip is None:
            last = turn
            out.append(Decision.SUMMARIZED)
        else:
            out.append(skip)
    return out


def simulate(profile: ConversationSeries, cfg: SweepConfig) -> list[int]:
    """The turns at which the checkpoint fires."""
    return [turn for turn, d in enumerate(decisions(profile, cfg)) if d in FIRED]


def evaluate_fast(
    profile: ConversationSeries, cfg: SweepConfig, *, keep_curve: bool = False
) -> ConfigOutcome:
    schedule = decisions(profile, cfg)
    fires = [turn for turn, d in enumerate(schedule) if d in FIRED]
    result = ConfigOutcome(turns=profile.turns, fires=fires)
    for turn in fires:
        chars, tokens = profile.prompt_size(turn)
        result.prompt_chars += chars
        result.prompt_tokens += tokens
    result.fixed_cadence = fixed_cadence(schedule, cfg.debounce_turns)
    limit = cfg.max_context_tokens
    if fires and cfg.mode is SlotMode.FOCUSED:
        t1 = fires[0]
        curve = profile.view[:t1]
        peak = max(profile.peak_view[:t1], default=0)
        covered = t1
        for turn in range(t1, profile.turns):
            if schedule[turn] in FIRED:
                covered = turn
            size, peak_size = profile.focused_sizes(turn, covered)
            curve.append(size)
            peak = max(peak, peak_size)
        result.peak_with = peak
        result.sum_with = sum(curve)
        result.overflow = sum(1 for v in curve if v > limit)
        if keep_curve:
            result.curve = curve
    else:
        result.peak_with = profile.view_peak
        result.sum_with = profile.view_sum
        result.overflow = sum(1 for v in profile.view if v > limit)
        if keep_curve:
            result.curve = list(profile.view)
    return result
