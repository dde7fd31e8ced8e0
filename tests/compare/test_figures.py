"""Each policy against the baseline: pairing, windows, flags and the Pareto front,
on runs written by hand."""

from __future__ import annotations

from dataclasses import replace

import pytest

from transcript_tools.compare.collect import ArmRun, is_degenerate
from transcript_tools.compare.figures import compare_runs
from transcript_tools.compare.table import render

RUN = ArmRun(
    window=200_000,
    window_from="model",
    units=10,
    fires=1,
    retained=1000.0,
    original_retained=2000.0,
    usd=8.0,
    original_usd=10.0,
    recall=(3, 4),
    overflow=False,
    invalid=False,
)


def test_degenerate_is_half_the_units_and_three_firings() -> None:
    assert is_degenerate(3, 6)
    assert not is_degenerate(3, 7)
    assert not is_degenerate(2, 4)  # a short log, not a cadence


def test_against_the_original_run() -> None:
    cheap = RUN
    dear = replace(RUN, usd=12.0, recall=(4, 4), fires=6, overflow=True)
    conversations = [{0: cheap, 1: dear}, {0: cheap, 1: dear}]
    got = compare_runs(["cheap", "dear"], conversations)
    a, b = got.rows
    assert got.conversations == 2 and got.windows == {"200k (model)": 2}
    # 2 × (8 - 10) = -4 dollars; -20% of 20; both exact on every resample
    assert a.cost_usd == 16.0
    assert a.cost_delta_usd is not None and a.cost_delta_usd.estimate == pytest.approx(-4.0)
    assert a.cost_delta_share is not None
    assert (a.cost_delta_share.low, a.cost_delta_share.high) == pytest.approx((-0.2, -0.2))
    assert a.recall is not None and a.recall.estimate == 0.75  # 6 of 8 probes
    assert a.retained_delta_share is not None and a.retained_delta_share.estimate == -0.5
    # dear: recall 100% but costs more: both are on the front
    assert (a.pareto, b.pareto) == (True, True)
    assert (b.overflow, b.degenerate, b.flags) == (2, 2, "OD")


def test_a_dominated_policy_is_off_the_front_and_a_policy_baseline_pairs_recall() -> None:
    worse = replace(RUN, usd=9.0, recall=(2, 4))
    got = compare_runs(["a", "b"], [{0: RUN, 1: worse}], baseline="a")
    a, b = got.rows
    assert (a.pareto, b.pareto) == (True, False)
    assert b.recall_delta is not None and b.recall_delta.estimate == -0.25  # 2/4 - 3/4
    assert b.cost_delta_usd is not None and b.cost_delta_usd.estimate == pytest.approx(1.0)


def test_mixed_windows_are_left_out_and_counted() -> None:
    other = replace(RUN, window=128_000, window_from="policy")
    got = compare_runs(["a", "b"], [{0: RUN, 1: RUN}, {0: RUN, 1: other}])
    assert got.conversations == 1 and got.mixed == 1
    assert got.mixed_windows == {"200k (model)": 1, "128k (policy)": 1}


def test_the_table_fits_the_width_and_explains_every_column() -> None:
    # two conversations: one would word its verdict "one conversation (..., no interval)"
    got = compare_runs(["a", "b"], [{0: RUN, 1: replace(RUN, usd=9.0)}] * 2)
    text = render(got, ["header"], width=60)
    table = text.split("\n\n")[1].splitlines()
    assert all(len(line) <= 60 for line in table)
    assert "not shown to fit 60 columns" in text
    assert "  Δ cost: " in text and "  recall: " in text  # each shown column has a legend line
    chosen = render(got, [], width=60, columns=["policy", "cost"], sort="cost")
    lines = chosen.splitlines()
    assert lines[1].split() == ["policy", "$", "total"]
    assert [line.split()[0] for line in lines[2:4]] == ["a", "b"]  # $8 before $9
    assert "  $ total: " in chosen and "  recall: " not in chosen


def test_sort_by_recall_puts_the_unmeasured_last() -> None:
    from transcript_tools.compare.table import sort_rows

    low, high, none = (
        replace(RUN, recall=(1, 4)),
        replace(RUN, recall=(4, 4)),
        replace(RUN, recall=None),
    )
    got = compare_runs(["low", "high", "none"], [{0: low, 1: high, 2: none}])
    assert [r.name for r in sort_rows(got.rows, "recall")] == ["high", "low", "none"]


def test_a_row_with_overflowing_runs_is_ranked_by_its_change_not_its_smaller_total() -> None:
    # "over" left its overflowing conversation out of its total (never priced as if it
    # ran): $163 over 47 pairs whose baseline is $161.50, Δ +$1.50; "cheap" is $185 over
    # all 48, baseline $199, Δ -$14. By totals "over" would come first and, recalling
    # less, still sit on the front; by the change "cheap" is cheaper and recalls more.
    from transcript_tools.compare.bootstrap import Interval
    from transcript_tools.compare.figures import PolicyRow, mark_pareto
    from transcript_tools.compare.table import sort_rows

    over = PolicyRow("over", 48, cost_usd=163.0, baseline_usd=161.5, priced=47)
    cheap = PolicyRow("cheap", 48, cost_usd=185.0, baseline_usd=199.0, priced=48)
    over.recall, cheap.recall = Interval(0.26, 0.26, 0.26, 1), Interval(0.49, 0.43, 0.61, 8)
    assert [r.name for r in sort_rows([over, cheap], "cost")] == ["cheap", "over"]
    mark_pareto([over, cheap])
    assert (cheap.pareto, over.pareto) == (True, False)


def test_a_recall_change_names_the_conversations_it_pairs() -> None:
    # the baseline has a recall figure on one conversation of three, the other policy on
    # all three: the change pairs that one, and says so beside the policy's own n=3
    base = [replace(RUN, recall=None), replace(RUN, recall=None), RUN]
    other = replace(RUN, recall=(4, 4))
    got = compare_runs(["base", "other"], [{0: b, 1: other} for b in base], "base")
    text = render(got, [], width=200, columns=["policy", "recall", "drecall"])
    row = next(line for line in text.splitlines() if line.startswith("other"))
    assert "n=3" in row and row.endswith("+25 [+25, +25] n=1")
    assert "where both have a recall figure" in text
