"""A ratio trigger with a reserve fires at the earlier of its ratio line and the reserve
line, but only while the reserve line is above 0 (engine/policy_lines.py
``threshold_tokens``): a window the reserve eats whole keeps the ratio line. Pinned at
the boundary (a mutation run, docs/testing.md: ``reserved > 0`` -> ``>= 0`` and ``> 1``)."""

from __future__ import annotations

from transcript_tools.engine.policy import Trigger
from transcript_tools.engine.policy_lines import threshold_tokens


def test_a_reserve_of_the_whole_window_leaves_the_ratio_line() -> None:
    trigger = Trigger(ratio=0.5, reserve_tokens=10_000)
    assert threshold_tokens(trigger, 10_000) == 5_000.0  # reserve line 0: not a line


def test_a_reserve_line_of_one_token_is_the_line() -> None:
    trigger = Trigger(ratio=0.5, reserve_tokens=9_999)
    assert threshold_tokens(trigger, 10_000) == 1.0  # min(5,000, 10,000 - 9,999)
