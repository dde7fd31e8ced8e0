"""``ConversationSeries.focused_sizes``: the focused view's size and peak after a turn,
remembered per (turn, covered turn) for a grid's configurations, never a different answer."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.sweep_specs import build, conversation_spec
from transcript_tools.sweep import simulate
from transcript_tools.sweep.simulate import profile_conversation


@settings(max_examples=40, deadline=None)
@given(conversation_spec, st.integers(1, 4))
def test_remembered_sizes_are_the_ones_found_afresh(spec: tuple, keep: int) -> None:
    profile = profile_conversation(build(spec), keep_recent_turns=keep)
    pairs = [(t, c) for t in range(profile.turns) for c in range(t + 1)]
    for _ in range(2):  # the second pass reads them back
        for turn, covered in pairs:
            assert profile.focused_sizes(turn, covered) == (
                profile.focused_size(turn, covered),
                profile.focused_peak_size(turn, covered),
            )
    assert len(profile._focused) == len(pairs)


def test_it_keeps_at_most_focused_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(simulate, "FOCUSED_PAIRS", 2)
    four_turns = (True, [[((1000 * t, 100), True, 50)] for t in range(1, 5)])
    profile = profile_conversation(build(four_turns), keep_recent_turns=1)
    assert profile.turns == 4
    found = [profile.focused_sizes(turn, 0) for turn in range(profile.turns)]
    assert len(profile._focused) == 2  # the first two pairs; the rest found afresh
    assert found == [
        (profile.focused_size(t, 0), profile.focused_peak_size(t, 0)) for t in range(profile.turns)
    ]
