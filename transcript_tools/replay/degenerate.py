"""Replays that degenerated under a policy, said once per session (docs/replay.md).

Two runs a table would otherwise price as if an agent had made them: a view the policy
left over its window (the agent's call would have failed; engine/overflow.py marks each
such checkpoint), and a policy that fires at almost every unit once it first fires (its
line sits under the view it leaves: every unit pays a summary call — the policy's form
of the seed's fixed-cadence warning, replay/conversation.py).
"""

from __future__ import annotations

from ..engine.records import unit_key
from ..engine.rules import FIRED
from ..engine.session import SessionEngine, slot_window

# "Almost every unit": at least this share of the units from the first firing on, and
# at least MIN_FIRES firings (two in a row can be a long conversation's honest schedule).
ALMOST_EVERY = 0.8
MIN_FIRES = 3


def overflow_warning(engine: SessionEngine) -> str | None:
    """How many checkpoints left the view over the window, or None."""
    over = [d for d in engine.decisions if d.get("overflow")]  # the seed's are never
    if not over:
        return None
    unit, window = unit_key(engine.settings.checkpoint), slot_window(engine.settings)
    first = over[0]
    return (
        f"{len(over)} {unit}(s) left the view over the {window:,}-token window after the "
        f"policy acted (first at {unit} {first.get(unit)}, {first['overflow']:,} over): the "
        "agent would have failed there (decisions.jsonl 'overflow')"
    )


def fires_almost_always(decisions: list[str]) -> tuple[int, int] | None:
    """(firings, units) from the first firing on when the checkpoint fired at almost
    every one of them, else None."""
    first = next((i for i, d in enumerate(decisions) if d in FIRED), None)
    if first is None:
        return None
    after = decisions[first:]
    fired = sum(1 for d in after if d in FIRED)
    if fired < MIN_FIRES or fired < ALMOST_EVERY * len(after):
        return None
    return fired, len(after)


def every_unit_warning(engine: SessionEngine) -> str | None:
    """Say so when a policy fired at almost every unit once it first fired."""
    if engine.settings.policy is None:
        return None
    found = fires_almost_always([d["decision"] for d in engine.decisions])
    if found is None:
        return None
    fired, units = found
    unit = unit_key(engine.settings.checkpoint)
    first = next(d.get(unit) for d in engine.decisions if d["decision"] in FIRED)
    return (
        f"the policy fired at {fired} of the {units} {unit}(s) from {unit} {first} on: the view "
        "it leaves stays over its line, so almost every unit pays a summary call"
    )
