"""Recall read off a curve at a matched budget, computed by hand."""

from __future__ import annotations

import pytest

from transcript_tools.compare.budget import BudgetCurve, matched_budget, recall_at, render_curves


def test_reading_between_points_is_linear() -> None:
    curve = [(10_000.0, 0.4), (30_000.0, 0.8)]
    # 20k is halfway: 0.4 + (0.8 - 0.4) × 10k / 20k = 0.6
    assert recall_at(curve, 20_000) == pytest.approx(0.6)
    assert recall_at(list(reversed(curve)), 25_000) == pytest.approx(0.7)  # order given
    assert recall_at(curve, 10_000) == 0.4 and recall_at(curve, 30_000) == 0.8
    assert recall_at(curve, 9_999) is None and recall_at(curve, 30_001) is None
    assert recall_at([(5.0, 0.5)], 5.0) == 0.5 and recall_at([], 5.0) is None


def test_the_matched_budget_is_the_one_every_curve_reaches() -> None:
    a = [(10_000.0, 0.4), (30_000.0, 0.8)]
    b = [(20_000.0, 0.5), (40_000.0, 0.9)]
    assert matched_budget([a, b]) == 20_000
    assert matched_budget([a, [(31_000.0, 0.5)]]) is None  # no overlap
    # at 20k: a reads 0.6, b its own first point 0.5; at their own budgets (30k, 40k) b
    # would look better (0.9 > 0.8): matched, a keeps more of what it keeps
    curves = [BudgetCurve("a", a), BudgetCurve("b", b)]
    text = render_curves(curves, [64_000, 128_000], 20_000, 5)
    assert [line.split()[-1] for line in text.splitlines()[3:5]] == ["60%", "50%"]
    assert "windows 64k, 128k" in text
