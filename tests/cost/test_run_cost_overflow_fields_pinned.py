"""A run's overflow fields in its cost record (cost/model.py ``RunCost.to_json``), pinned
against one-point edits (docs/testing.md): a run with no call over the window reports
no overflowed call and a largest overflowed prompt of 0. Prices: ``Pricer.from_options("1")``.
"""

from __future__ import annotations

from transcript_tools.cost.model import RunCost
from transcript_tools.cost.prices import Pricer
from transcript_tools.cost.tokens import CallTokens

PRICER = Pricer.from_options("1")


def test_a_run_with_no_call_over_the_window_reports_a_largest_overflowed_prompt_of_0() -> None:
    """``max(..., default=0)`` -> ``default=1`` (cost/model.py): one call of 1,000 tokens
    within the window, none over it: 0 overflowed calls, their largest prompt 0."""
    run = RunCost()
    run.add(PRICER, "gpt-4o", CallTokens(1_000, 0, 0, 0))
    fields = run.to_json()
    assert fields["overflow_calls"] == 0
    assert fields["overflow_max_prompt"] == 0


def test_the_largest_overflowed_prompt_is_the_largest_prompt_of_a_call_over_the_window() -> None:
    """Three modeled calls of 900, 1,500 and 1,200 tokens, the last two over the window:
    2 overflowed calls, the largest of their prompts 1,500 (the 900 within it is not one)."""
    run = RunCost()
    run.add(PRICER, "gpt-4o", CallTokens(900, 0, 0, 0), modeled=True)
    run.add(PRICER, "gpt-4o", CallTokens(1_500, 0, 0, 0), modeled=True, over_window=True)
    run.add(PRICER, "gpt-4o", CallTokens(1_200, 0, 0, 0), modeled=True, over_window=True)
    fields = run.to_json()
    assert fields["overflow_calls"] == 2
    assert fields["overflow_max_prompt"] == 1_500
