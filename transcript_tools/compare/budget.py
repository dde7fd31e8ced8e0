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
    """The budget the most curves reach: of the curves' smallest retained tokens, the one
    within the most curves' ranges (ties: the largest), so that where every range
    overlaps it is the largest of the smallest figures; None where no two curves reach
    one budget (one curve alone: its smallest figure). A curve whose points all sit at
    one figure (a policy that keeps the same whatever the window) reaches only that."""
    shown = [c for c in curves if c]
    if not shown:
        return None

    def reach(tokens: float) -> int:
        return sum(min(x for x, _ in c) <= tokens <= max(x for x, _ in c) for c in shown)

    budget = max((min(x for x, _ in c) for c in shown), key=lambda t: (reach(t), t))
    return budget if reach(budget) >= min(2, len(shown)) else None


@dataclass(slots=True)
class BudgetCurve:
    name: str
    points: list[Point]  # one per window where the policy summarized

    def at(self, tokens: float | None) -> float | None:
        return None if tokens is None else recall_at(self.points, tokens)


def render_curves(
    curves: Sequence[BudgetCurve], windows: Sequence[int], tokens: float | None, conversations: int
) -> str:
    """The matched-budget table: each curve's points and the view recall read at ``tokens``."""
    at = "-" if tokens is None else f"{tokens / 1000:.1f}k"
    lines = [
        "recall at a matched budget: every policy also run at windows "
        + ", ".join(f"{w // 1000}k" for w in windows)
        + "; view recall (artifact probes of the history up to each action that the whole next"
        " view carries: summary and messages kept verbatim) against mean retained tokens,",
        f"linear between points, no extrapolation; over the {conversations} conversation(s)"
        " where every policy acted at every window",
    ]
    rows = [("policy", "curve (retained tokens: view recall)", f"view recall @ {at}")]
    for curve in curves:
        points = ", ".join(f"{x / 1000:.1f}k: {y * 100:.0f}%" for x, y in sorted(curve.points))
        read = curve.at(tokens)
        rows.append((curve.name, points or "-", "-" if read is None else f"{read * 100:.0f}%"))
    lines += text_table(rows, (0, 1))
    if not conversations:
        lines.append(
            "  (no conversation where every policy acted at every window: smaller windows)"
        )
    elif tokens is None:
        lines.append("  (no budget two curves reach: the curves' ranges do not overlap)")
    else:
        outside = [c for c in curves if c.at(tokens) is None]
        if outside:
            lines.append(
                f"  ({len(curves) - len(outside)} of {len(curves)} curves reach {at}; not: "
                + ", ".join(f"{c.name} {_span(c.points)}" for c in outside)
                + ")"
            )
    return "\n".join(lines) + "\n"


def _span(points: Sequence[Point]) -> str:
    """A curve's range of retained tokens: "22.7k-24.2k", or "66.2k" at one figure."""
    ends = [f"{x / 1000:.1f}k" for x in (min(p[0] for p in points), max(p[0] for p in points))]
    return ends[0] if ends[0] == ends[1] else "-".join(ends)
