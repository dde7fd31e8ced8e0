"""Recall at matched budgets: each policy run at several windows gives a curve of recall
against the tokens it keeps; recall is read off every curve at one common budget.

A policy that keeps more recalls more; comparing two policies at their own budgets
mixes the two. A public compaction evaluation found its ranking tied once both arms
kept the same budget (NousResearch/hermes-agent@evals/compaction/results/
SCORECARD-2026-09-19-jev.md: 77.8 = 77.8 at 60K).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..present.table import text_table

Point = tuple[float, float]  # (mean retained tokens, recall)


def recall_at(curve: Sequence[Point], tokens: float) -> float | None:
    """Recall at ``tokens`` read off ``curve``: linear between the two nearest points
    (sorted by tokens); None outside the curve's range (no extrapolation)."""
    points = sorted(curve)
    if not points or not points[0][0] <= tokens <= points[-1][0]:
        return None
    for (x0, y0), (x1, y1) in zip(points, points[1:], strict=False):
        if x0 <= tokens <= x1:
            return y0 if x1 == x0 else y0 + (y1 - y0) * (tokens - x0) / (x1 - x0)
    return points[0][1]  # a single point, exactly at tokens


def matched_budget(curves: Sequence[Sequence[Point]]) -> float | None:
    """The budget every curve reaches: the largest of the curves' smallest retained
    tokens, when it is within every curve's range (else None)."""
    if not curves or any(not c for c in curves):
        return None
    budget = max(min(x for x, _ in c) for c in curves)
    if any(budget > max(x for x, _ in c) for c in curves):
        return None
    return budget


@dataclass(slots=True)
class BudgetCurve:
    name: str
    points: list[Point]  # one per window where the policy summarized
    own: Point | None = None  # at the comparison's window

    def at(self, tokens: float | None) -> float | None:
        return None if tokens is None else recall_at(self.points, tokens)


def render_curves(
    curves: Sequence[BudgetCurve], windows: Sequence[int], tokens: float | None, conversations: int
) -> str:
    """The matched-budget table: each curve's points and the recall read at ``tokens``."""
    at = "-" if tokens is None else f"{tokens / 1000:.1f}k"
    lines = [
        "recall at a matched budget: every policy also run at windows "
        + ", ".join(f"{w // 1000}k" for w in windows)
        + "; recall against mean retained tokens, linear between points, no extrapolation;",
        f"over the {conversations} conversation(s) every policy summarized at every window",
    ]
    rows = [("policy", "curve (retained tokens: recall)", f"recall @ {at}")]
    for curve in curves:
        points = ", ".join(f"{x / 1000:.1f}k: {y * 100:.0f}%" for x, y in sorted(curve.points))
        read = curve.at(tokens)
        rows.append((curve.name, points or "-", "-" if read is None else f"{read * 100:.0f}%"))
    lines += text_table(rows, (0, 1))
    if not conversations:
        lines.append("  (no conversation every policy summarized at every window: smaller windows)")
    elif tokens is None:
        lines.append("  (no budget every curve reaches: the curves' ranges do not overlap)")
    return "\n".join(lines) + "\n"
