"""The engine's turn accounting (step 5: what each turn's calls cost, and how many were
recorded or estimated), pinned against one-point edits (a single-point mutation run,
docs/testing.md, found these unpinned). Expected values are sums done by hand.
"""

from __future__ import annotations

import pytest

from transcript_tools.engine.messages import AssistantMessage, TextBlock, Usage, UserMessage
from transcript_tools.engine.session import SessionEngine
from transcript_tools.engine.tokens import estimate_message_tokens


def _call(usage: Usage | None) -> AssistantMessage:
    return AssistantMessage((TextBlock("ok"),), usage=usage, model="claude-sonnet-4-5")


def test_recorded_calls_count_one_per_call_with_usage_and_cache_fields_add_up() -> None:
    """Two turns, three calls with recorded usage: recorded_calls = 3; the running cost
    adds each field: input 100+200+300, output 10+20+30, cache read 40+50+60, cache
    write 7+8+9 (fails when a call counts 2 or -1, or a cache field is subtracted)."""
    engine = SessionEngine("s")
    engine.submit_turn(
        [UserMessage.text("u1"), _call(Usage(100, 10, 40, 7)), _call(Usage(200, 20, 50, 8))]
    )
    engine.submit_turn([UserMessage.text("u2"), _call(Usage(300, 30, 60, 9))])
    assert engine.accounting.recorded_calls == 3
    assert engine.accounting.estimated_calls == 0
    assert engine.accounting.cost_so_far == Usage(600, 60, 150, 24)
    assert [d["cost_so_far"] for d in engine.decisions] == [330, 660]
    assert [d["tokens"] for d in engine.decisions] == ["recorded", "recorded"]


def test_the_session_engine_and_its_accounting_keep_every_field_in_slots() -> None:
    """An engine and its accounting (one each per session, millions of attribute reads)
    have no instance dict (fails when either class is declared without ``slots``)."""
    engine = SessionEngine("s")
    for part in (engine, engine.accounting):
        assert not hasattr(part, "__dict__")
        with pytest.raises(AttributeError):
            part.not_a_field = 1  # type: ignore[union-attr]


def test_with_no_recorded_call_the_seeds_current_context_is_the_view_alone() -> None:
    """No usage recorded: the view's estimate, with no hidden prefix on the seed's path
    (fails when the seed's slot adds a token)."""
    engine = SessionEngine("s")
    turn = [UserMessage.text("u1"), _call(None)]
    engine.submit_turn(turn)
    view = sum(estimate_message_tokens(m) for m in turn)
    assert engine.accounting.current_context_tokens() == view
