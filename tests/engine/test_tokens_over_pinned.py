"""How far a policy's view runs over its window (engine/overflow.py ``tokens_over``),
pinned against one-point edits found by a mutation run (docs/testing.md): the prompt the
view makes, less the window, and 0 when it fits; a slot marks its record with it. Sizes:
one 100-character message of 8 + 100 = 108 tokens (engine/tokens.py; digits are a token
each), under a hidden prefix of 30: the prompt of a log without recorded usage.
"""

from __future__ import annotations

from typing import cast

from transcript_tools.engine.messages import UserMessage
from transcript_tools.engine.overflow import tokens_over
from transcript_tools.engine.policy import Policy
from transcript_tools.engine.policy_slot import PolicySlot
from transcript_tools.engine.records import DecisionRecord
from transcript_tools.engine.sizes import SizeModel
from transcript_tools.engine.tokens import estimate_message_tokens


def _slot(window: int) -> PolicySlot:
    message = UserMessage.text("1" * 100)
    assert estimate_message_tokens(message) == 108
    slot = PolicySlot(Policy(name="p"), window, SizeModel({}, hidden=30))
    slot.append_messages([message])
    return slot


def _prompt(slot: PolicySlot) -> int:
    return slot.hidden_tokens + slot.view_size()[1]


def test_a_view_over_the_window_is_over_by_the_prompt_less_the_window() -> None:
    """30 hidden + 108 in view = 138 against a window of 131: 7 over (fails on either
    sign flipped: 138 + 131, or 131 - 138)."""
    slot = _slot(131)
    assert tokens_over(_prompt(slot), slot.window) == 7
    record = cast(DecisionRecord, {})
    slot.mark(record, lambda: _prompt(slot))
    assert record == {"overflow": 7}


def test_a_view_of_exactly_the_window_is_not_over_it() -> None:
    """138 against a window of 138: 0 over (fails on a floor of 1), and below it 0 too;
    an unmarked record has no overflow key."""
    assert tokens_over(138, 138) == 0
    assert tokens_over(138, 1_000) == 0
    slot = _slot(138)
    record = cast(DecisionRecord, {})
    slot.mark(record, lambda: _prompt(slot))
    assert record == {}
