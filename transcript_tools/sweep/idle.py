"""The original run as a policy row measures it (``original_figures``), a policy row that
never acts on a conversation, measured from it without driving its engine, and the
profile such rows read (``unit_profile``: no seed's series where no row reads them).

Most presets of a grid never act on most logs: their trigger line and pre-pass trigger sit
above every view the log ever had. Such a run's views are the original run's, unit for
unit, as the policy measures its own view (``SharedWork.original_views``: the policy's
slot with nothing acting, in the same size model), and every figure of its outcome follows
from them. Where those views show the run never acts, the engine run is skipped; the
outcome is the one the engine would have produced (tests/test_sweep_idle.py compares the
two, field by field, for every preset on the samples, the real corpus and a synthetic one).

The proof rests on monotonicity: the trigger compares the view with a fixed line
(``rules.over_threshold``) and the pre-pass looks only at views over its own trigger
(``compaction.prepass_should_run``), so a peak below both means no unit acts; and the
pre-pass clears nothing while the tool output it walks comes to less than its
``protect_tokens`` (``PolicySlot.prepass``), never more than the conversation's whole.
A trigger of another form (every N units, N messages, the conversation measure, the
cumulative one) is not proved idle here and runs the engine.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Protocol

from ..engine.compaction import is_tool_output, prepass_should_run
from ..engine.config import Measure
from ..engine.kinds import Threshold, TriggerMeasure
from ..engine.overflow import tokens_over
from ..engine.policy_engine import policy_threshold
from ..engine.rules import last_call_end, over_threshold
from ..engine.session import slot_window
from ..engine.sizes import ESTIMATES
from ..replay.sizes import policy_sizes
from .config import ConfigOutcome, SweepConfig
from .simulate import ConversationSeries, compaction_turns, per_turn, unit_spans

if TYPE_CHECKING:
    from ..engine.config import ReplaySettings
    from ..engine.messages import Conversation, Message
    from ..engine.sizes import SizeModel


class Original(Protocol):
    """What the grid knows of one conversation's original run (``engine_path.SharedWork``)."""

    def log_sizes(self, conv: Conversation) -> SizeModel | None: ...
    def original_views(
        self, settings: ReplaySettings, units: list[tuple[int, int]]
    ) -> tuple[list[int], int]: ...


def never_acts(settings: ReplaySettings, views: list[int], output_tokens: int) -> bool:
    """Does a run under ``settings`` (a policy slot's) leave every one of ``views`` (the
    original run's, as it measures them) as it is: its trigger never fires, its pre-pass
    never clears (it never looks, or the conversation's tool outputs, ``output_tokens`` in
    the slot's size model, are within its protection)? False where not proved (module
    docstring)."""
    policy = settings.policy
    if policy is None or settings.measure is not Measure.CURRENT or not views:
        return False
    trigger = policy.trigger
    if trigger.measure is TriggerMeasure.CONVERSATION:
        return False
    peak = max(views)
    window = slot_window(settings)
    prepass = policy.prepass
    looks = prepass_should_run(prepass, peak, window, sys.maxsize)
    if looks and output_tokens >= prepass.protect_tokens:
        return False
    if trigger.threshold is Threshold.NEVER:
        return True
    line = policy_threshold(policy, window)
    return line is not None and not over_threshold(peak, line)


def idle_outcome(
    profile: ConversationSeries,
    cfg: SweepConfig,
    settings: ReplaySettings,
    views: list[int],
    peak: int,
) -> ConfigOutcome:
    """The outcome of ``cfg`` (its engine's ``settings``) where its run ``never_acts``: no
    summary, no clearing, no action scored; the original ``views`` per unit with their
    ``peak``, counted over ``cfg``'s window as ``engine_path._run_figures`` counts them, and
    each compared with the slot's as its checkpoints are (``overflow.mark_overflow``)."""
    window = slot_window(settings)
    return ConfigOutcome(
        turns=profile.turns,
        fires=[],
        curve=list(views),
        watermark=list(views),
        peak_with=peak,
        sum_with=sum(views),
        overflow=sum(1 for v in views if v > cfg.max_context_tokens),
        views_over=sum(1 for v in views if tokens_over(v, window)),
        recall=(0, 0),
    )


def idle_run(
    conv: Conversation,
    turns: list[tuple[int, list[Message]]],
    profile: ConversationSeries,
    cfg: SweepConfig,
    settings: ReplaySettings,
    shared: Original,
) -> ConfigOutcome | None:
    """``cfg``'s outcome on ``conv`` (of ``shared``) where its run under ``settings`` is
    proved never to act, else None: the engine must run it."""
    if settings.policy is None or settings.measure is not Measure.CURRENT:
        return None  # the seed's slot, or a trigger on the cumulative measure
    units = unit_spans(turns)
    views, peak = shared.original_views(settings, units)
    outputs = 0  # the tool outputs' tokens, read only by a pre-pass
    if settings.policy.prepass.kind != "none":
        sizes = policy_sizes(conv, settings, shared.log_sizes) or ESTIMATES
        outputs = sum(sizes.of(m) for m in conv.messages if is_tool_output(m))
    if not never_acts(settings, views, outputs):
        return None
    idle = idle_outcome(profile, cfg, settings, views, peak)
    original_figures(idle, conv, turns, cfg, settings, shared)
    return idle


def original_figures(
    result: ConfigOutcome,
    conv: Conversation,
    turns: list[tuple[int, list[Message]]],
    cfg: SweepConfig,
    settings: ReplaySettings,
    shared: Original,
) -> None:
    """A policy's run (``cfg.policy``, the seed's too; else nothing): the original run as
    the policy measures its own view (``SharedWork.original_views``), per unit; and
    the mean view per turn with its actions (``result.curve``, per unit) and without them,
    each the view after the turn's last unit (``per_turn``): one unit for every policy,
    whether it checks after each turn or each call."""
    if cfg.policy is None:
        return
    units = unit_spans(turns)
    original, peak = shared.original_views(settings, units)
    result.original = (original, peak)
    with_actions = per_turn(conv, turns, result.curve or [], cfg.checkpoint)
    without = per_turn(conv, turns, original, cfg.checkpoint)
    n = max(len(without), 1)
    result.turn_means = sum(with_actions) / n, sum(without) / n


def unit_profile(
    conv: Conversation,
    turns: list[tuple[int, list[Message]]],
    *,
    index: int = 0,
    keep_recent_turns: int = 3,
) -> ConversationSeries:
    """``conv``'s profile over its units ``turns`` without the seed's series (no engine
    run): what a policy row reads of it, where every row of a grid has a policy and no
    conversation is charted. Each such row measures its own original run
    (``SharedWork.original_views``) and reads here only the units, the recorded
    compactions and ``measured_end``; ``cost``, ``view`` and the peaks are left empty and
    ``all_recorded`` unset (False), for nothing reads them."""
    starts = [start for start, _ in turns]
    held = sum(len(messages) for _, messages in turns)  # what drive_conversation appends
    return ConversationSeries(
        index=index,
        session_id=conv.session_id,
        path=conv.path,
        turns=len(turns),
        cost=[],
        view=[],
        history_end=[start + len(messages) for start, messages in turns],
        all_recorded=False,
        compaction_turns=compaction_turns(conv, starts),
        keep_recent_turns=keep_recent_turns,
        starts=starts,
        measured_end=min(last_call_end(conv.messages), held),
    )
