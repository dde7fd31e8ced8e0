"""A policy's slot (engine/policy_slot.py), pinned against one-point edits found by a
mutation run (docs/testing.md). Sizes are the estimator's (engine/tokens.py) unless a
size model records them; expected values are worked out by hand in each test.
"""

from __future__ import annotations

from transcript_tools.engine.config import Checkpoint
from transcript_tools.engine.messages import AssistantMessage, UserMessage
from transcript_tools.engine.policy_slot import PolicySlot
from transcript_tools.engine.policy_toml import preset
from transcript_tools.engine.rules import UnitCounter
from transcript_tools.engine.sizes import SizeModel


def test_a_slot_is_restarted_only_once_a_message_marked_as_a_restart_is_appended() -> None:
    """``any(id(m) in restarts ...)``: the log's compaction restarts its prompts at
    ``after``; messages before it leave the slot unrestarted (fails on ``not in``: any
    other message would mark it)."""
    before = [UserMessage.text("fix it"), AssistantMessage.text("on it")]
    after = UserMessage.text("This session is being continued from a previous one.")
    sizes = SizeModel({id(m): 10.0 for m in [*before, after]}, 0, frozenset({id(after)}))
    slot = PolicySlot(preset("claude-code"), 200_000, sizes, units=UnitCounter(Checkpoint.CALL))
    slot.append_messages(before)
    assert slot.restarted is False
    slot.append_messages([after])
    assert slot.restarted is True
    slot.append_messages([AssistantMessage.text("done")])
    assert slot.restarted is True  # once restarted, it stays so
