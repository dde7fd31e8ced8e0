"""How a message is formatted for the summarizer (``engine/formatting.py``), pinned against
one-point edits (a single-point mutation run, docs/testing.md, found these unpinned):
a tool-result cap of 0 is valid and cuts every result to nothing. Expected strings are
written out by hand.
"""

from __future__ import annotations

import pytest

from transcript_tools.engine.formatting import format_message, format_messages_as_text
from transcript_tools.engine.messages import AssistantMessage, ToolResultMessage, ToolUseBlock

CALL = AssistantMessage((ToolUseBlock("c1", "bash", {"cmd": "ls"}),))
RESULT = ToolResultMessage("c1", "a.py b.py")


def test_a_tool_result_cap_of_zero_is_valid_and_cuts_results_to_nothing() -> None:
    """0 is the smallest cap (fails when 0 is refused: ``< 0`` -> ``<= 0`` or ``< 1``)."""
    assert format_message(CALL, 0) == "Assistant: [Tool: bash]"
    assert format_message(RESULT, 0) == "Tool Result [c1]: "
    assert (
        format_messages_as_text([CALL, RESULT], 0)
        == "Assistant: [Tool: bash]\n\nTool Result [c1]: "
    )


def test_a_negative_tool_result_cap_is_refused() -> None:
    with pytest.raises(ValueError, match="max_tool_result_chars must be >= 0, got -1"):
        format_message(CALL, -1)
    with pytest.raises(ValueError, match="max_tool_result_chars must be >= 0, got -1"):
        format_messages_as_text([RESULT], -1)
