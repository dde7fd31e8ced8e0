"""The fixed-cadence test of a run's schedule (engine/rules.py ``fixed_cadence``), pinned
against one-point edits found by a mutation run (docs/testing.md): a debounce of 0 or 1
means one unit between two summaries.
"""

from __future__ import annotations

import pytest

from transcript_tools.engine.rules import fixed_cadence


@pytest.mark.parametrize("debounce", [0, 1])
def test_summaries_at_every_turn_are_a_fixed_cadence_under_a_debounce_of_0_or_1(
    debounce: int,
) -> None:
    """Fired at turns 0, 1 and 2: a step of max(debounce, 1) = 1 each time (fails on a
    floor of 2: the step would be 2, and 1 - 0 is not 2)."""
    assert fixed_cadence(["summarized", "summarized", "summarized"], debounce) is True
    assert fixed_cadence(["summarized", "debounced", "summarized"], debounce) is False
