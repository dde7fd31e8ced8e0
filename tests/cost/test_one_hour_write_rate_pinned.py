"""The 1-hour cache-write rate when a price gives none (``Rates.one_hour_write``), pinned
against one-point edits (a single-point mutation run, docs/testing.md, found it
unpinned). Anthropic's pricing page: 1-hour writes cost 2x the base input price.
"""

from __future__ import annotations

from transcript_tools.cost.prices import Rates


def test_a_one_hour_write_costs_twice_the_input_where_cache_rates_are_given() -> None:
    """$3/Mtok input: a 1-hour write $6 (fails on ``2.0 / input``: $0.67, or
    ``input / 2.0``: $1.5)."""
    assert Rates(3.0, 15.0, 0.3, 3.75).one_hour_write() == 6.0
    assert Rates(3.0, 15.0).one_hour_write() == 3.0  # no cache rates: every token as input
