"""A view still over the window after the policy acted: an overflow.

The agent whose prompt exceeds its model's window fails (the provider refuses the call);
a replay that carries on prices a run no agent could have made. At every checkpoint of a
run under a policy the view it leaves — measured as the trigger measures it: the latest
recorded prompt plus what changed since, else the hidden prefix the size model reads from
the log (engine/sizes.py) plus the view — is compared with the window; a checkpoint that
leaves it over is marked ``overflow`` in its decision record with the tokens over, and
the replay counts them and warns once per session (replay/degenerate.py; docs/replay.md),
and no cost total prices such a run (cost/overflow.py).
The seed's path has no window of its own to fail and is not marked.
"""

from __future__ import annotations

from collections.abc import Sequence

from .records import DecisionRecord


def tokens_over(prompt: int, window: int) -> int:
    """How far ``prompt`` (the tokens the view the checkpoint leaves makes) runs over
    ``window`` (0: it fits)."""
    return max(0, prompt - window)


def mark_overflow(record: DecisionRecord, prompt: int, window: int) -> None:
    """Mark ``record`` when the view the checkpoint leaves is over the window: ``prompt``
    measured as the trigger measures the view (``TurnAccounting.current_context_tokens``:
    the latest recorded prompt and what changed since, else the hidden prefix plus the
    view), so a view the policy left as the log's own is over only where the log's was."""
    over = tokens_over(prompt, window)
    if over:
        record["overflow"] = over


def checkpoints_over(decisions: Sequence[DecisionRecord]) -> int:
    """The checkpoints of a run marked ``overflow`` (none under the seed)."""
    return sum(1 for d in decisions if d.get("overflow"))
