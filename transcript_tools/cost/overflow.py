"""A run that overflowed is counted, never priced (docs/cost.md, "Overflow").

An agent whose prompt is over its model's window fails: the provider refuses the call.
A replay that carries on past that point describes a run no agent could have made, so
its price is no figure of what the policy would cost. A run overflowed when the policy
left its view over the window at some checkpoint (engine/overflow.py marks each one), or
when a modeled call's prompt is over the model's window (cost/meter.py flags each one).
Every workflow that totals costs — the replay's ``costs.jsonl`` and report line, check's
cost gate, the sweep's ``$`` columns, compare's paired costs — asks this one rule, leaves
such a run out of its total and says how many it left out.
"""

from __future__ import annotations

from dataclasses import dataclass

from .model import RunCost


@dataclass(frozen=True, slots=True)
class RunPrice:
    """What a run may be priced at: ``usd`` None when it overflowed or some call has no
    price (``overflow`` tells the two apart)."""

    usd: float | None
    overflow: bool


def run_price(run: RunCost | None, views_over: int = 0) -> RunPrice:
    """The price of ``run``; ``views_over``: the checkpoints at which the policy left its
    view over the window (engine/overflow.py ``checkpoints_over``)."""
    overflow = views_over > 0 or (run is not None and bool(run.overflow))
    if overflow or run is None:
        return RunPrice(None, overflow)
    return RunPrice(run.usd, False)
