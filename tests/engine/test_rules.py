"""rules: each spec rule, directly (the engine, the sweep, inspect and diff call these)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from transcript_tools.engine.messages import (
    INJECTED,
    OBSERVATION,
    AssistantMessage,
    Message,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    UserImageMessage,
    UserMessage,
)
from transcript_tools.engine.rules import (
    FIRED,
    Decision,
    compaction_turn,
    extend_turn_starts,
    fixed_cadence,
    focused_window_start,
    should_summarize,
    skip_reason,
    split_turns,
    suffix_cut,
    turn_starts,
)


def test_decisions_serialize_as_their_plain_strings() -> None:
    record = {"decision": Decision.SUMMARIZED}
    assert json.dumps(record) == '{"decision": "summarized"}'
    assert Decision.FAILED == "failed" and "would_summarize" in FIRED
    assert Decision.BELOW_THRESHOLD not in FIRED


@pytest.mark.parametrize(
    ("turn", "last", "watermark", "debounce", "empty", "expected"),
    [
        (3, 0, 23999, 3, False, Decision.BELOW_THRESHOLD),
        (2, 0, 24000, 3, False, Decision.DEBOUNCED),  # the seed: the first at turn 3
        (3, 0, 24000, 3, False, None),
        (3, 0, 24000, 3, True, Decision.SKIPPED_EMPTY),
        (5, 3, 10**9, 3, False, Decision.DEBOUNCED),
        (6, 3, 10**9, 3, False, None),
        (0, 0, 24000, 0, False, None),
    ],
)
def test_the_checkpoint(
    turn: int, last: int, watermark: int, debounce: int, empty: bool, expected: Decision | None
) -> None:
    assert skip_reason(turn, last, watermark, 24000.0, debounce, empty) == expected
    assert should_summarize(turn, last, watermark, 24000.0, debounce) == (
        expected in (None, Decision.SKIPPED_EMPTY)
    )


def test_turns_start_at_a_person_message() -> None:
    messages: list[Message] = [
        SystemMessage("s"),
        UserMessage.text("task"),
        AssistantMessage.text("a"),
        ToolResultMessage("c", "r"),
        UserMessage((TextBlock("observation"),), origin=OBSERVATION),
        UserMessage((TextBlock("<reminder>"),), origin=INJECTED),
        UserImageMessage(),
        AssistantMessage.text("b"),
        UserMessage.text("next"),
    ]
    assert turn_starts(messages) == [0, 6, 8]
    assert [start for start, _ in split_turns(messages)] == [0, 6, 8]
    assert turn_starts([]) == [] and split_turns([]) == []


@given(st.lists(st.sampled_from(["person", "obs", "assistant"]), max_size=20), st.integers(0, 20))
def test_turn_starts_can_be_extended_piece_by_piece(kinds: list[str], cut: int) -> None:
    make = {
        "person": lambda: UserMessage.text("p"),
        "obs": lambda: UserMessage((TextBlock("o"),), origin=OBSERVATION),
        "assistant": lambda: AssistantMessage.text("a"),
    }
    messages = [make[k]() for k in kinds]
    starts: list[int] = []
    seen = extend_turn_starts(starts, messages[:cut], 0, False)
    extend_turn_starts(starts, messages[cut:], len(messages[:cut]), seen)
    assert starts == turn_starts(messages)


def test_compaction_turn_is_the_last_turn_before_it() -> None:
    starts = [0, 4, 9]
    assert compaction_turn(starts, 0) == 0
    assert compaction_turn(starts, 5) == 1  # first message after it: 5 -> after turn 1
    assert compaction_turn(starts, 9) == 1
    assert compaction_turn(starts, 10) == 2


def test_focused_window_start() -> None:
    starts = [0, 3, 6, 9, 12]
    assert focused_window_start(starts, 5, 2, None) == 9  # the last two turns
    assert focused_window_start(starts, 2, 3, None) == 0  # fewer turns than kept: all
    # the summary covered the history up to message 6 (turns 0-1): turns 2-4 stay
    assert focused_window_start(starts, 5, 2, 6) == 6
    # a summary covering more than the window changes nothing
    assert focused_window_start(starts, 5, 2, 15) == 9
    # only the first `turns` starts count
    assert focused_window_start(starts, 3, 1, None) == 6


@given(st.lists(st.integers(0, 50), max_size=30), st.integers(0, 200))
def test_suffix_cut_keeps_the_longest_suffix_that_fits(lengths: list[int], limit: int) -> None:
    kept, chars = suffix_cut(iter(reversed(lengths)), limit, 2)
    if not lengths or limit == 0:
        assert (kept, chars) == (0, 0)
        return
    if lengths[-1] > limit:
        assert (kept, chars) == (1, limit)
        return
    suffix = lengths[len(lengths) - kept :]
    assert chars == sum(suffix) + 2 * (kept - 1) <= limit
    if kept < len(lengths):
        assert chars + 2 + lengths[-kept - 1] > limit


@pytest.mark.parametrize(
    ("decisions", "debounce", "expected"),
    [
        (["below_threshold", "summarized", "debounced", "summarized"], 2, True),
        (["summarized", "debounced", "below_threshold", "summarized"], 3, False),
        (["summarized", "failed", "summarized"], 3, True),  # N3: a failure shifts it
        (["summarized", "debounced", "debounced", "summarized"], 2, False),
        (["summarized"], 1, False),
    ],
)
def test_fixed_cadence(decisions: list[str], debounce: int, expected: bool) -> None:
    assert fixed_cadence(decisions, debounce) is expected
