"""How two sides of a diff line up: the firings of two schedules (paired as "moved"
between the same two common firings, else added or removed), and two texts as a unified
diff (``difflib``). Pure functions; ``compare`` calls them per session."""

from __future__ import annotations

import difflib

from ..engine.config import DEFAULT_DIFF_CONTEXT
from .changes import ScheduleChange


def match_schedule(old: list[int], new: list[int]) -> list[ScheduleChange]:
    """Firings only on one side: a removed and an added firing between the same two
    common firings pair up, in order, as "moved"; the rest are added / removed."""
    common = sorted(set(old) & set(new))
    only_old = sorted(set(old) - set(new))
    only_new = sorted(set(new) - set(old))
    bounds = [-1, *common, float("inf")]
    changes: list[ScheduleChange] = []
    for low, high in zip(bounds, bounds[1:], strict=False):
        gap_old = [t for t in only_old if low < t < high]
        gap_new = [t for t in only_new if low < t < high]
        for o, n in zip(gap_old, gap_new, strict=False):
            changes.append(ScheduleChange("moved", o, n))
        changes.extend(ScheduleChange("removed", o, None) for o in gap_old[len(gap_new) :])
        changes.extend(ScheduleChange("added", None, n) for n in gap_new[len(gap_old) :])
    return sorted(changes, key=lambda c: min(t for t in (c.old_turn, c.new_turn) if t is not None))


def unified_diff(
    old: str, new: str, old_name: str, new_name: str, context: int = DEFAULT_DIFF_CONTEXT
) -> str:
    """A unified diff (difflib) of two texts, one string, no trailing newline."""
    lines = difflib.unified_diff(
        old.splitlines(),
        new.splitlines(),
        fromfile=old_name,
        tofile=new_name,
        n=context,
        lineterm="",
    )
    text = "\n".join(lines)
    if not text and old != new:  # only line endings or a final newline differ
        text = (
            f"--- {old_name}\n+++ {new_name}\n(differs only in line endings or the final newline)"
        )
    return text
