"""The engine's count of estimated calls (engine/accounting.py, step 5), pinned against
one-point edits found by a mutation run (docs/testing.md): a model call with no recorded
usage counts one, across turns, and its turn's tokens are the estimate's input plus
output (sums worked out with the estimator, engine/tokens.py).
"""

from __future__ import annotations

from transcript_tools.engine.messages import AssistantMessage, TextBlock, UserMessage
from transcript_tools.engine.session import SessionEngine
from transcript_tools.engine.tokens import estimate_message_tokens


def _call() -> AssistantMessage:
    return AssistantMessage((TextBlock("ok"),), usage=None, model="claude-sonnet-4-5")


def test_each_call_without_recorded_usage_counts_one_estimated_call() -> None:
    """Two turns, three calls with no usage: estimated_calls = 2 + 1 = 3 (fails when a
    call counts 2 or -1, or a turn's count is subtracted), none recorded."""
    engine = SessionEngine("s")
    engine.submit_turn([UserMessage.text("u1"), _call(), _call()])
    engine.submit_turn([UserMessage.text("u2"), _call()])
    assert engine.accounting.estimated_calls == 3
    assert engine.accounting.recorded_calls == 0
    assert [d["tokens"] for d in engine.decisions] == ["estimated", "estimated"]


def test_an_estimated_calls_turn_tokens_are_the_history_before_it_plus_its_reply() -> None:
    """One turn, one call with no usage: its input is the history before it (the user's
    message), its output the reply; the turn's tokens are their sum (fails on
    ``input - output``)."""
    engine = SessionEngine("s")
    user, reply = UserMessage.text("u1"), _call()
    engine.submit_turn([user, reply])
    [decision] = engine.decisions
    assert decision["input_tokens"] == estimate_message_tokens(user)
    assert decision["output_tokens"] == estimate_message_tokens(reply)
    assert decision["turn_tokens"] == estimate_message_tokens(user) + estimate_message_tokens(reply)
