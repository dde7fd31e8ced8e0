"""Where turns and call units start (``engine/rules.py``), pinned against one-point edits
(a single-point mutation run, docs/testing.md, found these unpinned): the first message
always opens turn 0 and the first call unit, even alone or when it is itself a call.
"""

from __future__ import annotations

from transcript_tools.engine.config import Checkpoint
from transcript_tools.engine.messages import AssistantMessage, UserMessage
from transcript_tools.engine.rules import turn_starts, unit_starts


def test_a_one_message_history_is_one_turn_starting_at_0() -> None:
    """Fails when turn 0 is opened at index 1 instead (a single message: no turn)."""
    assert turn_starts([UserMessage.text("hi")]) == [0]
    assert turn_starts([]) == []


def test_a_log_opening_with_two_calls_has_two_call_units() -> None:
    """Call mode: each call is a unit, the first from index 0 (fails when the first unit
    is opened at index 1: the two calls would share one unit, [0])."""
    calls = [AssistantMessage.text("a"), AssistantMessage.text("b")]
    assert unit_starts(calls, Checkpoint.CALL) == [0, 1]
