"""A policy's slot (engine/policy_slot.py), pinned against one-point edits found by a
mutation run (docs/testing.md). Sizes are the estimator's (engine/tokens.py) unless a
size model records them; expected values are worked out by hand in each test.
"""

from __future__ import annotations

from transcript_tools.engine.config import Checkpoint
from transcript_tools.engine.messages import (
    AssistantMessage,
    Message,
    ToolResultMessage,
    ToolUseBlock,
    UserMessage,
)
from transcript_tools.engine.policy import Policy, PrePass
from transcript_tools.engine.policy_slot import PolicySlot
from transcript_tools.engine.policy_toml import preset
from transcript_tools.engine.rules import UnitCounter
from transcript_tools.engine.sizes import SizeModel
from transcript_tools.engine.tokens import estimate_message_tokens


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


CLEAR = "clear-tool-results"


def _calls_and_sizes() -> tuple[list[Message], AssistantMessage, SizeModel]:
    """A task and one reply making two tool calls, whose billed size the log recorded as
    ten times its estimate (820 tokens); the first call's result. Estimates
    (engine/tokens.py): 8 per message, a digit 1 token, a tool call 32 more, its
    one-letter name 1."""
    task = UserMessage.text("1")  # 8 + 1 = 9
    call = AssistantMessage((ToolUseBlock("c1", "b", "12345"), ToolUseBlock("c2", "b", "678")))
    first = ToolResultMessage("c1", "0" * 100)  # 8 + 100 = 108
    assert [estimate_message_tokens(m) for m in (task, call, first)] == [9, 8 + 38 + 36, 108]
    return [task, call, first], call, SizeModel({id(call): 820.0})


def test_a_cleared_input_frees_the_billed_size_scaled_by_the_estimate_it_loses() -> None:
    """Clearing the first call's input leaves 77 of the reply's 82 estimated tokens: its
    billed 820 scale to round(820 x 77 / 82) = 770, so 50 are freed, plus the result's
    108 less its 9-token placeholder: 149 (fails when the copy is sized by its own
    estimate, 77: then 743 would be freed)."""
    messages, _, sizes = _calls_and_sizes()
    policy = Policy(name="clear", prepass=PrePass(kind=CLEAR, placeholder="0", clear_inputs=True))
    slot = PolicySlot(policy, 100_000, sizes)
    slot.append_messages(messages)
    assert slot.view_size() == (3, 9 + 820 + 108)
    record = slot.prepass(937)
    assert record is not None
    assert record["cleared"] == [2]
    assert record["freed_tokens"] == 50 + 99
    assert slot.view_size() == (3, 937 - 149)


def test_a_second_clearing_of_a_replys_inputs_starts_from_its_cut_copy_billed_size() -> None:
    """Later the second call's result is cleared too, and its input: the reply, already a
    copy of 770 billed tokens (77 estimated), keeps 74 estimated tokens, billed
    round(820 x 74 / 82) = 740: 30 more freed, plus the result's 99 (fails when the
    copy's size before is its own estimate, 77: then 77 - 740 would be "freed")."""
    messages, _, sizes = _calls_and_sizes()
    policy = Policy(name="clear", prepass=PrePass(kind=CLEAR, placeholder="0", clear_inputs=True))
    slot = PolicySlot(policy, 100_000, sizes)
    slot.append_messages(messages)
    assert slot.prepass(937) is not None
    slot.append_messages([ToolResultMessage("c2", "0" * 100)])
    before = 9 + 770 + 9 + 108
    assert slot.view_size() == (4, before)
    record = slot.prepass(before)
    assert record is not None
    assert record["cleared"] == [3]
    assert record["freed_tokens"] == 30 + 99
    assert slot.view_size() == (4, before - 129)
