"""formats.assembly: an assistant response assembled from several log lines."""

from __future__ import annotations

from transcript_tools.engine.messages import (
    AssistantMessage,
    TextBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from transcript_tools.formats.assembly import PendingAssistant, freeze_all


def test_pending_blocks_and_usage_freeze_into_one_message() -> None:
    pending = PendingAssistant(model="m1", message_id="msg_1")
    pending.blocks.append(TextBlock("looking"))
    pending.blocks.append(ToolUseBlock("c1", "grep", {"q": "x"}))
    pending.usage = Usage(10, 2)
    message = pending.freeze()
    assert message == AssistantMessage(
        (TextBlock("looking"), ToolUseBlock("c1", "grep", {"q": "x"})), Usage(10, 2), "m1"
    )


def test_freeze_all_keeps_order_and_finished_messages() -> None:
    user = UserMessage.text("q")
    out = [user, PendingAssistant([TextBlock("a")]), PendingAssistant()]
    frozen = freeze_all(out)
    assert frozen[0] is user
    assert frozen[1] == AssistantMessage((TextBlock("a"),))
    assert frozen[2] == AssistantMessage(())
