"""The paired bootstrap and the verdict words, on cases computed by hand."""

from __future__ import annotations

import pytest

from transcript_tools.compare.bootstrap import (
    Interval,
    mean_difference,
    paired_bootstrap,
    percentile,
    relative_change,
)
from transcript_tools.compare.table import cost_verdict


def test_equal_differences_give_a_zero_width_interval() -> None:
    # every paired difference is +0.5: every resample's mean is +0.5
    got = paired_bootstrap([1.0, 2.0, 3.0], [1.5, 2.5, 3.5])
    assert got == Interval(0.5, 0.5, 0.5, 3)
    assert not got.spans_zero


def test_two_pairs_enumerated() -> None:
    # differences 0 and 1: a resample of two is (0,0) p=1/4, mixed p=1/2, (1,1) p=1/4,
    # so its mean is 0, 0.5 or 1; about 500 of 2,000 resamples are 0 and about 500 are 1,
    # far more than the 50 that the 2.5% and 97.5% ranks reach into either tail
    got = paired_bootstrap([0.0, 0.0], [0.0, 1.0])
    assert got is not None
    assert (got.estimate, got.low, got.high) == (0.5, 0.0, 1.0)
    assert got.spans_zero


def test_relative_change_is_a_ratio_of_sums() -> None:
    # Σ baseline 20, Σ candidate 16: -20% on the sample and on every resample
    assert relative_change([10.0, 10.0], [8.0, 8.0]) == pytest.approx(-0.2)
    got = paired_bootstrap([10.0, 10.0], [8.0, 8.0], relative_change)
    assert got is not None
    assert (got.low, got.high) == pytest.approx((-0.2, -0.2))
    # ratio of sums, not mean of ratios: (1 + 30) / (2 + 10) - 1 = 31/12 - 1
    assert relative_change([2.0, 10.0], [1.0, 30.0]) == pytest.approx(31 / 12 - 1)


def test_same_seed_same_interval_and_undefined_cases() -> None:
    base, cand = [1.0, 4.0, 2.0, 8.0, 5.0], [0.5, 4.5, 1.0, 6.0, 5.5]
    assert paired_bootstrap(base, cand) == paired_bootstrap(base, cand)
    assert paired_bootstrap([], []) is None
    assert paired_bootstrap([0.0], [1.0], relative_change) is None  # Σ baseline 0
    with pytest.raises(ValueError):
        paired_bootstrap([1.0], [1.0, 2.0])
    assert mean_difference([1.0, 3.0], [2.0, 5.0]) == 1.5


def test_percentile_nearest_rank() -> None:
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.0) == 1.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 1.0) == 4.0


def test_verdicts_are_worded_from_the_interval() -> None:
    assert cost_verdict(Interval(-0.12, -0.15, -0.08, 9)) == "cheaper by 12.0% [8.0%, 15.0%]"
    assert cost_verdict(Interval(0.05, 0.02, 0.09, 9)) == "costlier by 5.0% [2.0%, 9.0%]"
    assert cost_verdict(Interval(0.01, -0.02, 0.04, 9)) == "no difference (+1.0% [-2.0%, 4.0%])"
    assert cost_verdict(None) == "unpriced"
    # one conversation: every resample is that pair, a zero-wide interval that says nothing
    assert cost_verdict(Interval(-0.051, -0.051, -0.051, 1)) == (
        "one conversation (-5.1%, no interval)"
    )
