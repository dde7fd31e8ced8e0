"""Per conversation and policy, the figures a comparison pairs (``Sweep.on_outcome``).

A sweep keeps aggregates only; a paired comparison needs each conversation's figure under
every arm, so this collects one small record per (conversation, policy): a few numbers,
never the views.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..cost.overflow import run_price
from ..sweep.config import ConfigOutcome, SweepConfig
from ..sweep.simulate import ConversationSeries

# A run is degenerate where its policy fires at half its units or more (and at least
# three times: two firings in four turns are a short log, not a cadence). The seed's
# cumulative measure does exactly this once over the line (docs/sweep.md, "The two
# watermarks"); a policy that does it re-summarizes nearly every turn.
DEGENERATE_SHARE = 0.5
DEGENERATE_MIN_FIRES = 3


def is_degenerate(fires: int, units: int) -> bool:
    """A policy firing at almost every unit of a conversation."""
    return fires >= DEGENERATE_MIN_FIRES and fires >= DEGENERATE_SHARE * units


@dataclass(frozen=True, slots=True)
class ArmRun:
    """One conversation under one policy, and the original run beside it."""

    window: int
    window_from: str | None
    units: int
    fires: int
    retained: float  # mean view the model is sent per turn, with the policy's actions
    original_retained: float  # the same without them
    usd: float | None  # the whole bill as the policy makes it (None: unpriced, overflow)
    original_usd: float | None  # the original run as the model prices it, whole bill
    recall: tuple[int, int] | None  # artifact probes carried / probes (None: not measured)
    overflow: bool  # some unit's view over the window
    invalid: bool  # some view breaks a target API's rules (engine/validity)
    # per summary, in order: artifact probes kept, probed; view tokens freed, kept
    by_summary: tuple[tuple[int, int, int, int], ...] = ()
    # every action's artifact probes of the history the whole next view carries / probed,
    # pooled (eval/view_recall.py; None: not asked for, or nothing probed)
    view_recall: tuple[int, int] | None = None

    @property
    def degenerate(self) -> bool:
        return is_degenerate(self.fires, self.units)


def arm_run(cfg: SweepConfig, outcome: ConfigOutcome, profile: ConversationSeries) -> ArmRun:
    """The record of one outcome (``cfg`` as resolved for its conversation)."""
    units = max(profile.turns, 1)
    off_chain = 0.0
    if outcome.off_chain_cost is not None:
        off_chain = outcome.off_chain_cost.usd or 0.0
    # a run that overflowed is counted, never priced (cost/overflow.py)
    price = run_price(outcome.cost, outcome.views_over)
    usd = _same_model_usd(price.usd, outcome)
    rebuilt = None if outcome.rebuilt_cost is None else outcome.rebuilt_cost.usd
    # per turn, whatever unit a policy checks in (engine_path.turn_means); the seed checks
    # after each turn, its original the profile's
    retained, original = outcome.turn_means or (
        outcome.sum_with / units,
        profile.view_sum / units,
    )
    return ArmRun(
        window=cfg.max_context_tokens,
        window_from=cfg.window_from,
        units=profile.turns,
        fires=len(outcome.fires),
        retained=retained,
        original_retained=original,
        usd=None if usd is None else usd + off_chain,
        original_usd=None if rebuilt is None else rebuilt + off_chain,
        recall=outcome.recall if outcome.recall and outcome.recall[1] else None,
        overflow=outcome.overflow > 0 or price.overflow,
        invalid=any(outcome.violations.values()),
        by_summary=tuple(outcome.by_summary),
        view_recall=outcome.view_recall,
    )


def _same_model_usd(usd: float | None, outcome: ConfigOutcome) -> float | None:
    """The run's bill priced as its baseline, the original run, is priced: the model's
    price of the original plus the run's change against it (``RunCost.same_model_delta``:
    each call the run changed against the model's own price of it, plus the summarizer).
    The meter prices a call the run left as recorded from its recorded usage, the
    baseline by the model: summed whole, a policy that never acts would differ from the
    original by the model's error. ``usd``: the run's own price (None: overflow); kept
    where no baseline is priced."""
    rebuilt = outcome.rebuilt_cost
    if usd is None or outcome.cost is None or rebuilt is None or rebuilt.usd is None:
        return usd
    delta = outcome.cost.same_model_delta(rebuilt)
    return None if delta is None else rebuilt.usd + delta


@dataclass(slots=True)
class Collected:
    """Every conversation's runs, by conversation index then policy index."""

    arms: int
    runs: dict[int, dict[int, ArmRun]] = field(default_factory=dict)

    def add(
        self, arm: int, cfg: SweepConfig, outcome: ConfigOutcome, profile: ConversationSeries
    ) -> None:
        self.runs.setdefault(profile.index, {})[arm] = arm_run(cfg, outcome, profile)

    def complete(self) -> list[dict[int, ArmRun]]:
        """Conversations every policy ran, in corpus order."""
        return [self.runs[i] for i in sorted(self.runs) if len(self.runs[i]) == self.arms]
