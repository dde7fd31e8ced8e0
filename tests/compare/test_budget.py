"""Recall read off a curve at a matched budget, and the view-recall curves of
``--budget-windows``, computed by hand."""

from __future__ import annotations

import pytest

from transcript_tools.compare.budget import BudgetCurve, matched_budget, recall_at, render_curves
from transcript_tools.compare.collect import ArmRun
from transcript_tools.compare.workflow import budget_curves


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


def _run(
    window: int, retained: float, view: tuple[int, int] | None, recall: tuple[int, int]
) -> ArmRun:
    return ArmRun(
        window=window,
        window_from=None,
        units=10,
        fires=1,
        retained=retained,
        original_retained=40_000.0,
        usd=None,
        original_usd=None,
        recall=recall,
        overflow=False,
        invalid=False,
        view_recall=view,
    )


def test_the_matched_budget_is_read_off_view_recall_curves() -> None:
    # the grid's order (sweep.config.sweep_grid): a@16k, a@32k, b@16k, b@32k
    owners = ["a", "a", "b", "b"]
    one = {
        0: _run(16_000, 10_000, (3, 10), (1, 4)),
        1: _run(32_000, 20_000, (6, 10), (1, 5)),
        2: _run(16_000, 16_000, (4, 10), (1, 4)),
        3: _run(32_000, 26_000, (9, 10), (1, 5)),
    }
    two = {
        0: _run(16_000, 14_000, (5, 10), (2, 4)),
        1: _run(32_000, 24_000, (8, 10), (1, 5)),
        2: _run(16_000, 20_000, (6, 10), (2, 4)),
        3: _run(32_000, 30_000, (9, 10), (1, 5)),
    }
    # b never acted at 16k on the third: it is left out of every point
    three = {**one, 2: _run(16_000, 2_000, None, (0, 0))}
    curves, conversations = budget_curves(["a", "b"], owners, [one, two, three])
    assert conversations == 2
    a, b = curves
    # a: (10k + 14k) / 2 = 12k, (3 + 5) / 20 = 0.4; (20k + 24k) / 2 = 22k, 14 / 20 = 0.7
    # (its summary recall would fall, 3/8 then 2/10: what the summaries carry)
    assert a.points == [(12_000, 0.4), (22_000, 0.7)]
    # b: 18k, 10 / 20 = 0.5; 28k, 18 / 20 = 0.9
    assert b.points == [(18_000, 0.5), (28_000, 0.9)]
    tokens = matched_budget([c.points for c in curves])
    assert tokens == 18_000  # the larger of the smallest retained figures
    # a at 18k: 0.4 + (0.7 - 0.4) × (18k - 12k) / (22k - 12k) = 0.58; b: its own point
    assert a.at(tokens) == pytest.approx(0.58) and b.at(tokens) == 0.5
    text = render_curves(curves, [16_000, 32_000], tokens, conversations)
    assert "view recall @ 18.0k" in text.splitlines()[2]
    assert [line.split()[-1] for line in text.splitlines()[3:5]] == ["58%", "50%"]
    assert "over the 2 conversation(s) where every policy acted at every window" in text


def test_the_budget_most_curves_reach_is_read_and_the_others_named() -> None:
    a = [(10_000.0, 0.4), (30_000.0, 0.8)]
    b = [(20_000.0, 0.5), (40_000.0, 0.9)]
    same = [(60_000.0, 0.7), (60_000.0, 0.7)]  # keeps 60k whatever the window
    low = [(5_000.0, 0.3), (8_000.0, 0.35)]
    # the smallest figures 10k, 20k, 60k, 5k are reached by 1, 2 (a, b), 1, 1 curves
    assert matched_budget([a, b, same, low]) == 20_000
    # ties: the larger (10k and 30k are each reached by two)
    assert matched_budget([[(10.0, 0.1), (20.0, 0.2)]] * 2 + [[(30.0, 0.3), (40.0, 0.4)]] * 2) == 30
    assert matched_budget([same, low]) is None  # no two curves meet
    assert matched_budget([low]) == 5_000 and matched_budget([]) is None
    names = ["a", "b", "same", "low"]
    curves = [BudgetCurve(n, list(c)) for n, c in zip(names, [a, b, same, low], strict=True)]
    lines = render_curves(curves, [16_000, 64_000], 20_000, 3).splitlines()
    assert [line.split()[-1] for line in lines[3:7]] == ["60%", "50%", "-", "-"]
    assert lines[7] == "  (2 of 4 curves reach 20.0k; not: same 60.0k, low 5.0k-8.0k)"
