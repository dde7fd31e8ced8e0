"""The 30K cut of the formatted conversation (engine/rules.py ``suffix_cut``, the seed's
"消息格式化"), pinned at its boundaries against one-point edits found by a mutation run
(docs/testing.md). Each expected value is a sum of the lengths given.
"""

from __future__ import annotations

from transcript_tools.engine.rules import suffix_cut


def test_a_cap_of_zero_keeps_no_block() -> None:
    """``max_chars <= 0``: a cap of 0 keeps nothing, not the newest block cut to 0
    characters (fails on ``< 0``: (1, 0))."""
    assert suffix_cut([5, 3], 0, 2) == (0, 0)
    assert suffix_cut([5, 3], 1, 2) == (1, 1)  # a cap of 1: the newest block's last character


def test_a_newest_block_of_exactly_the_cap_is_kept_whole_and_the_walk_goes_on() -> None:
    """Only a newest block *longer* than the cap is cut (``length > max_chars``): one of
    exactly 4 characters under a cap of 4 is kept whole, and an older empty block joined
    with no separator still fits (4 + 0 + 0 = 4): two blocks (fails on ``>=``: the walk
    stops at the first, (1, 4))."""
    assert suffix_cut([4, 0], 4, 0) == (2, 4)
    assert suffix_cut([5, 0], 4, 0) == (1, 4)  # longer: its last 4 characters alone
