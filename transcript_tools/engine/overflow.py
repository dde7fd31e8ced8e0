"""A view still over the window after the policy acted: an overflow.

The agent whose prompt exceeds its model's window fails (the provider refuses the call);
a replay that carries on prices a run no agent could have made. At every checkpoint of a
run under a policy the view it leaves — the hidden prefix the size model reads from the
log (engine/sizes.py) plus the view — is compared with the window; a checkpoint that
leaves it over is marked ``overflow`` in its decision record with the tokens over, and
the replay counts them and warns once per session (replay/degenerate.py; docs/replay.md),
and no cost total prices such a run (cost/overflow.py).
The seed's path has no window of its own to fail and is not marked.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from .records import DecisionRecord


class _Windowed(Protocol):  # a policy's slot (engine/policy_slot.py)
    window: int

    @property
    def hidden_tokens(self) -> int: ...

    def view_size(self, upto: int | None = None) -> tuple[int, int]: ...


def tokens_over(slot: _Windowed) -> int:
    """How far the prompt the slot's view makes runs over its window (0: it fits)."""
    return max(0, slot.hidden_tokens + slot.view_size()[1] - slot.window)


def mark_overflow(record: DecisionRecord, slot: _Windowed) -> None:
    """Mark ``record`` when the view the checkpoint leaves is over the window."""
    over = tokens_over(slot)
    if over:
        record["overflow"] = over


def checkpoints_over(decisions: Sequence[DecisionRecord]) -> int:
    """The checkpoints of a run marked ``overflow`` (none under the seed)."""
    return sum(1 for d in decisions if d.get("overflow"))
