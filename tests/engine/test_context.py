"""ContextSlot: turn starts, Full / Focused views, the focused window rule, sizes (docs/spec.md,
"The focused view")."""

from __future__ import annotations

from transcript_tools.engine.config import SlotMode
from transcript_tools.engine.messages import (
    OBSERVATION,
    AssistantMessage,
    Message,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    UserMessage,
)
from transcript_tools.engine.slot import ContextSlot, FocusedConfig, SessionMemory
from transcript_tools.engine.tokens import estimate_message_tokens


def turn(i: int, tool: bool = False) -> list[Message]:
    messages: list[Message] = [UserMessage.text(f"question {i}")]
    if tool:
        messages += [
            AssistantMessage((ToolUseBlock(f"c{i}", "grep"),)),
            ToolResultMessage(f"c{i}", f"result {i}"),
        ]
    messages.append(AssistantMessage.text(f"answer {i}"))
    return messages


def slot_with(turns: int, keep: int = 2, mode: SlotMode = SlotMode.FOCUSED) -> ContextSlot:
    slot = ContextSlot(mode=mode, focused=FocusedConfig(keep_recent_turns=keep))
    slot.append_messages([SystemMessage("be brief")])
    for i in range(turns):
        slot.append_messages(turn(i, tool=i % 2 == 1))
    return slot


def texts(messages: list[Message]) -> list[str]:
    out = []
    for m in messages:
        if isinstance(m, SystemMessage):
            out.append(m.text)
        elif isinstance(m, (UserMessage, AssistantMessage)):
            out.append(" ".join(b.text for b in m.blocks if isinstance(b, TextBlock)))
        else:
            out.append(type(m).__name__)
    return out


def test_turn_starts_follow_person_messages_only() -> None:
    slot = ContextSlot()
    slot.append_messages([SystemMessage("s")])  # before the first person message: turn 0
    slot.append_messages([UserMessage.text("q0"), AssistantMessage.text("a0")])
    slot.append_messages([UserMessage((TextBlock("output"),), origin=OBSERVATION)])
    slot.append_messages([UserMessage.text("q1")])
    assert slot.unit_starts == [0, 4]


def test_before_any_summary_the_view_is_the_whole_history() -> None:
    slot = slot_with(5)
    assert slot.load_messages() == slot.messages
    assert slot.view_size() == (
        len(slot.messages),
        sum(map(estimate_message_tokens, slot.messages)),
    )


def test_focused_view_keeps_system_recent_turns_then_the_summary() -> None:
    slot = slot_with(5, keep=2)
    slot.set_summary("S")
    view = slot.load_messages()
    assert texts(view)[0] == "be brief"
    assert texts(view)[1] == "question 3"  # the last two turns, whole (tool call + result)
    assert texts(view)[-1] == "[上下文摘要] S"
    assert slot.saves == 1
    assert slot.view_size() == (len(view), sum(map(estimate_message_tokens, view)))


def test_no_turn_falls_between_the_summary_and_the_window() -> None:
    """docs/spec.md, "The focused view": every turn after the one the latest summary covered
    stays in view."""
    slot = slot_with(3, keep=1)
    slot.set_summary("S")  # covers turns 0-2
    for i in range(3, 6):
        slot.append_messages(turn(i))
    view = texts(slot.load_messages())
    assert view[:2] == ["be brief", "question 3"]  # not only the last turn
    assert view[-1] == "[上下文摘要] S"
    assert slot.view_size()[0] == len(view)


def test_full_mode_never_shows_a_summary() -> None:
    slot = slot_with(4, mode=SlotMode.FULL)
    slot.set_summary("S")
    assert slot.summary_override is None and slot.load_messages() == slot.messages
    assert slot.snapshot()["keep_recent_turns"] is None


def test_token_prefix_sums_match_a_recount() -> None:
    slot = slot_with(6)
    per_message = [estimate_message_tokens(m) for m in slot.messages]
    assert slot.tokens_between(2, 9) == sum(per_message[2:9])
    assert slot.token_prefix(len(per_message))[-1] == sum(per_message)


def test_session_memory() -> None:
    memory = SessionMemory()
    assert memory.get("conversation_summary") is None
    memory.set("conversation_summary", "x")
    assert memory.get("conversation_summary") == "x"
