"""The paired bootstrap: a confidence interval for a change measured on the same
conversations under two arms.

Each resample draws conversations with replacement and keeps each conversation's pair
together (baseline, candidate), so the spread between conversations that both arms
share cancels; the interval is the percentile interval of the resampled statistic
(Efron & Tibshirani, *An Introduction to the Bootstrap*, 1993, ch. 13). A fixed seed
makes every run print the same interval.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

RESAMPLES = 2000
SEED = 20260
LEVEL = 0.95

Statistic = Callable[[Sequence[float], Sequence[float]], float | None]


@dataclass(frozen=True, slots=True)
class Interval:
    """A statistic on the whole sample and its percentile interval."""

    estimate: float
    low: float
    high: float
    pairs: int

    @property
    def spans_zero(self) -> bool:
        return self.low <= 0.0 <= self.high


def mean_difference(baseline: Sequence[float], candidate: Sequence[float]) -> float | None:
    """The mean of the paired differences (candidate - baseline)."""
    if not baseline:
        return None
    return sum(c - b for b, c in zip(baseline, candidate, strict=True)) / len(baseline)


def relative_change(baseline: Sequence[float], candidate: Sequence[float]) -> float | None:
    """(Σ candidate - Σ baseline) / Σ baseline: the change as a share of the baseline's total
    (a ratio of sums, so large conversations weigh as much as they cost)."""
    total = sum(baseline)
    if total == 0:
        return None
    return (sum(candidate) - total) / total


def percentile(ordered: Sequence[float], q: float) -> float:
    """Nearest-rank percentile of a sorted sequence (q in [0, 1])."""
    rank = min(max(math.ceil(q * len(ordered)), 1), len(ordered))
    return ordered[rank - 1]


def paired_bootstrap(
    baseline: Sequence[float],
    candidate: Sequence[float],
    statistic: Statistic = mean_difference,
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> Interval | None:
    """``statistic`` on the pairs and its ``level`` percentile interval over ``resamples``
    paired resamples; None with no pairs or where the statistic is undefined."""
    if len(baseline) != len(candidate):
        raise ValueError("paired samples must have the same length")
    estimate = statistic(baseline, candidate)
    if estimate is None:
        return None
    n = len(baseline)
    rng = random.Random(seed)
    values: list[float] = []
    for _ in range(resamples):
        picks = [rng.randrange(n) for _ in range(n)]
        value = statistic([baseline[i] for i in picks], [candidate[i] for i in picks])
        if value is not None:
            values.append(value)
    if not values:
        return Interval(estimate, estimate, estimate, n)
    values.sort()
    tail = (1.0 - level) / 2
    return Interval(estimate, percentile(values, tail), percentile(values, 1.0 - tail), n)
