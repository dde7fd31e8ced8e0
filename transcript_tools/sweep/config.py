"""One point of the sweep's grid (``SweepConfig``) and what it gives on one conversation
(``ConfigOutcome``): the values the fast path (``simulate.py``) and the engine path
(``engine_path.py``) both produce and ``stats.py`` folds in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..engine.config import AUTO, Checkpoint, Measure, SlotMode, SummaryConfig
from ..engine.drive import recorded_window
from ..engine.kinds import Threshold, TriggerMeasure
from ..engine.messages import Conversation
from ..engine.policy import Policy
from ..engine.policy_engine import policy_threshold
from ..engine.policy_toml import preset
from ..engine.runtime_policy import follow_runtime
from ..engine.windows import POLICY, conversation_model
from ..errors import ConfigError
from ..present.numbers import compact

if TYPE_CHECKING:
    from ..cost.model import RunCost

# ---- the grid -----------------------------------------------------------------------------


def _one_policy_per_name(policies: Sequence[Policy]) -> None:
    """Every row names its policy: two different policies of one name (a file named after
    the preset it changes) would make two rows no output tells apart."""
    seen: dict[str, Policy] = {}
    for policy in policies:
        if seen.setdefault(policy.name, policy) != policy:
            raise ConfigError(
                f"--policy: two different policies are named {policy.name!r}; "
                "give one of them another name (name = ... in its file)"
            )


def sweep_grid(
    policies: Sequence[Policy] = (),
    windows: Sequence[int | str] = (),
    *,
    ratios: Sequence[float] = (),
    debounces: Sequence[int] = (),
    modes: Sequence[SlotMode] = (),
    measures: Sequence[Measure] = (),
    checkpoints: Sequence[Checkpoint] = (),
    base: SummaryConfig | None = None,
    fallback_window: int = 0,
) -> list[SweepConfig]:
    """Every policy at every window, ratio (where its threshold is a ratio) and debounce,
    in that order, duplicates dropped; an empty axis is the policy's own (its window:
    ``trigger.window``, else the base's; AUTO's fallback alike). No ``policies``: the
    seed's configurations, the seed's policy at the base's ratio and debounce in every
    checkpoint unit, measure and mode (``seed_variants``), with no policy in any output."""
    base = base or SummaryConfig()
    if policies and (modes or measures or checkpoints):
        raise ConfigError(
            "--mode, --measure and --checkpoint are a policy's own with --policy: "
            "set trigger.measure / trigger.unit in a policy file instead"
        )
    _one_policy_per_name(policies)
    variants = list(policies) or seed_variants(base, measures, checkpoints)
    out: dict[SweepConfig, None] = {}
    for policy in variants:
        own = policy.trigger.window or base.max_context_tokens  # no window given; auto's fallback
        varies = ratios if ratios and policy.trigger.threshold is Threshold.RATIO else ()
        for mode in modes or [SlotMode.FOCUSED]:
            for window in list(windows) or [own]:
                auto = window == AUTO
                for ratio in varies or [policy.trigger.ratio]:
                    for debounce in debounces or [policy.trigger.debounce]:
                        trigger = policy.trigger
                        if policies:  # a bad --ratio in the policy's words (trigger.ratio: ...)
                            trigger = replace(trigger, ratio=ratio, debounce=debounce)
                        cfg = SweepConfig(
                            ratio,
                            own if auto else int(window),
                            debounce,
                            mode,
                            trigger.measure.engine,
                            trigger.unit,
                            auto_window=auto,
                            policy=replace(policy, trigger=trigger) if policies else None,
                            fallback_window=fallback_window if auto else 0,
                        )
                        cfg.summary_config(base)  # raises ConfigError for a bad value
                        out[cfg] = None
    return list(out)


def seed_variants(
    base: SummaryConfig, measures: Sequence[Measure] = (), checkpoints: Sequence[Checkpoint] = ()
) -> list[Policy]:
    """The seed's policy at ``base``'s ratio and debounce, in each checkpoint unit and
    measure (in that order; none given: the seed's own)."""
    seed = preset("seed")
    trigger = replace(seed.trigger, ratio=base.trigger_token_ratio, debounce=base.debounce_turns)
    return [
        replace(seed, trigger=replace(trigger, measure=TriggerMeasure(measure), unit=unit))
        for unit in checkpoints or [Checkpoint.TURN]
        for measure in measures or [Measure.CUMULATIVE]
    ]


def auto_window_cell(row: dict[str, Any]) -> str:
    """The table's ``max_ctx`` cell: the window, or on an auto row the one window it found
    (``auto=258k (log)``), or ``auto (mixed)`` (``max_context_tokens_used``)."""
    used = row.get("max_context_tokens_used")
    if not used:
        return compact(row["max_context_tokens"])
    if len(used) > 1:
        return "auto (mixed)"
    window, source = next(iter(used)).split(" ", 1)
    return f"auto={compact(int(window))} {source}"


# where auto found a window, beside engine/windows.py's sources: --fallback-window's, for a
# log naming none
FALLBACK = "fallback"


@dataclass(frozen=True, slots=True)
class SweepConfig:
    """One point of the grid: the trigger settings a sweep varies."""

    trigger_token_ratio: float
    max_context_tokens: int
    debounce_turns: int
    mode: SlotMode = SlotMode.FOCUSED
    measure: Measure = Measure.CUMULATIVE
    checkpoint: Checkpoint = Checkpoint.TURN  # --checkpoint call: debounce counts calls
    # --max-context-tokens auto: per conversation the window its log records, else
    # max_context_tokens (engine.drive.recorded_window, as replay and eval apply it)
    auto_window: bool = False
    # --policy: the compaction policy this point runs (its trigger values are the fields
    # above); None: the seed's checkpoint, and no policy fields in any output
    policy: Policy | None = None
    # auto, once resolved for one conversation: where its window came from
    # (engine/windows.py: log, model, policy, default)
    window_from: str | None = None
    # auto, for a log naming no window (no record, no known model): this window for every
    # configuration instead of each policy's own (tsum compare --fallback-window); 0: none
    fallback_window: int = 0

    @property
    def threshold(self) -> float:
        return self.max_context_tokens * self.trigger_token_ratio  # exactly SummaryConfig.threshold

    @property
    def label(self) -> str:
        window = AUTO if self.auto_window else self.max_context_tokens
        if self.policy is not None:
            ratio = self.policy.trigger.threshold is Threshold.RATIO
            return f"{self.policy.name} max={window}" + (
                f" ratio={self.trigger_token_ratio:g}" if ratio else ""
            )
        return (
            f"ratio={self.trigger_token_ratio:g} max={window} "
            f"debounce={self.debounce_turns} {self.mode.value} {self.measure.value}"
        ) + (" call" if self.checkpoint is Checkpoint.CALL else "")

    def for_conversation(self, conv: Conversation) -> SweepConfig:
        """The configuration one conversation runs: with auto, its own window."""
        if not self.auto_window:
            return self
        policy = self.policy
        if policy is not None:  # the preset of the log's runtime release (as replay)
            model = conversation_model(conv)
            policy = follow_runtime(policy, conv.runtime_version, model, log_format=conv.format)
        policy_window = policy.trigger.window if policy is not None else 0
        window, source = recorded_window(
            conv, self.max_context_tokens, self.fallback_window or policy_window
        )
        if self.fallback_window and source == POLICY:
            source = FALLBACK
        return replace(
            self, max_context_tokens=window, auto_window=False, policy=policy, window_from=source
        )

    def summary_config(self, base: SummaryConfig) -> SummaryConfig:
        return replace(
            base,
            trigger_token_ratio=self.trigger_token_ratio,
            max_context_tokens=self.max_context_tokens,
            debounce_turns=self.debounce_turns,
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "trigger_token_ratio": self.trigger_token_ratio,
            "max_context_tokens": self.max_context_tokens,
            "debounce_turns": self.debounce_turns,
            "mode": self.mode.value,
            "measure": self.measure.value,
            "threshold": self.threshold,
        }
        if self.checkpoint is Checkpoint.CALL:  # only then: default outputs unchanged
            out["checkpoint"] = self.checkpoint.value
        if self.auto_window:  # per conversation: no one window or threshold
            out.update(max_context_tokens=AUTO, threshold=None)
            out["max_context_tokens_default"] = self.max_context_tokens
        if self.policy is not None:
            out["policy"] = self.policy.name
            trigger = self.policy.trigger
            clamped = trigger.floor_tokens or trigger.ceiling_tokens
            out["trigger"] = (
                "ratio-clamped"
                if trigger.threshold is Threshold.RATIO and clamped
                else trigger.threshold
            )
            if self.policy.name != "seed":  # its own line (policy_engine.policy_threshold)
                out["threshold"] = (
                    None
                    if self.auto_window
                    else policy_threshold(self.policy, self.max_context_tokens)
                )
        return out


@dataclass(slots=True)
class ConfigOutcome:
    """One configuration on one conversation (transient: folded into ConfigStats)."""

    turns: int
    fires: list[int]  # turns at which a summary call was made
    prompt_chars: int = 0
    prompt_tokens: int = 0
    failed: int = 0
    peak_with: int = 0  # view the model is sent, with this configuration's summaries
    sum_with: int = 0
    # --policy: the mean view per turn with its actions and in the original run, measured
    # as the policy measures its own (engine_path.py ``turn_means``); None: the profile's
    turn_means: tuple[float, float] | None = None
    # --policy in its own slot: the original run per unit and its peak, measured so; None:
    # the profile's (the seed's slot, in estimates)
    original: tuple[list[int], int] | None = None
    overflow: int = 0  # turns whose view (with summaries) exceeds max_context_tokens
    views_over: int = 0  # --policy: checkpoints it left over the window (engine/overflow.py)
    fixed_cadence: bool = False
    curve: list[int] | None = None  # per-turn view with summaries
    watermark: list[int] | None = None  # per-turn watermark (engine path, current measure)
    recall: tuple[int, int] | None = (
        None  # artifact probes (recalled, total): tsum eval, engine path
    )
    # --policy: views checked after each action, those breaking each API, results cleared
    views_checked: int = 0
    violations: dict[str, int] = field(default_factory=dict)
    cleared: int = 0
    cost: RunCost | None = None  # --cost: the run as this configuration makes it
    original_cost: RunCost | None = None  # --cost: the original run, as recorded
    rebuilt_cost: RunCost | None = None  # --cost: the original run, as the model prices it
    off_chain_cost: RunCost | None = None  # --cost: billed calls the replay does not read
    task_outcome: dict[str, Any] | None = None  # --cost: the log's task result (tau-bench)
    # --policy: per summary, in order, (artifact probes kept, probed, tokens freed, kept)
    by_summary: list[tuple[int, int, int, int]] = field(default_factory=list)
    # --policy with Sweep.whole_view: every action's (kept, probed) over the whole view
    # pooled (eval/view_recall.py); None when not asked for or nothing was probed
    view_recall: tuple[int, int] | None = None
