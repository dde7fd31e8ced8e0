"""What a failing cost gate names (cost/gate.py ``compare_costs``), pinned against
one-point edits found by a mutation run (docs/testing.md): at most three of the sessions
that overflow only in the new run.
"""

from __future__ import annotations

from transcript_tools.cost.gate import compare_costs
from transcript_tools.cost.records import CostRecord


def _records(**usd: tuple[float | None, bool]) -> dict[str, CostRecord]:
    return {
        name: {"session": name, "policy": {"usd": value, "priced_by": []}, "overflow": over}  # type: ignore[misc]
        for name, (value, over) in usd.items()
    }


def test_a_gate_failing_on_new_overflows_names_the_first_three() -> None:
    """Four sessions (b, c, d, e) overflow only in the new run: the gate fails naming b, c
    and d (fails on four names); a, priced on both sides at $1, is the comparison."""
    sessions = "abcde"
    old = _records(**{s: (1.0, False) for s in sessions})
    new = _records(a=(1.0, False), **{s: (None, True) for s in sessions[1:]})
    gate = compare_costs(old, new, 0.1)
    assert gate.failed is True
    assert gate.lines == [
        "cost: $1.0000 -> $1.0000 over 1 session(s) (+0.0%; limit +10.0%), the agent's calls and the summary calls [no price]"
        "; 4 session(s) overflowed, not priced; FAILED, overflows the baseline did not: b, c, d"
    ]
