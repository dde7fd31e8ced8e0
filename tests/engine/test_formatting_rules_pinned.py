"""How a message is formatted for the summarizer (``engine/formatting.py``), pinned against
one-point edits (a single-point mutation run, docs/testing.md, found these unpinned):
a tool-result cap of 0 is valid and cuts every result to nothing. Expected strings are
written out by hand.
"""

from __future__ import annotations

import pytest

from transcript_tools.engine.formatting import (
    FormattedHistory,
    format_message,
    format_messages_as_text,
    format_transcript,
)
from transcript_tools.engine.messages import (
    AssistantMessage,
    ToolResultMessage,
    ToolUseBlock,
    UserMessage,
)

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


def test_a_one_character_transcript_cap_keeps_the_newest_character() -> None:
    """``max_chars`` 1 is a cap like any other (fails when it is taken for 0: "")."""
    assert format_transcript([UserMessage.text("hello")], 500, 1) == ("o", 1)
    assert format_transcript([UserMessage.text("hello")], 500, 0) == ("", 0)
    # the blocks themselves: the tail, marked cut; at 0 no block, and nothing cut
    assert FormattedHistory(500, 1).formatted_blocks([UserMessage.text("hello")]) == (["o"], True)
    assert FormattedHistory(500, 0).formatted_blocks([UserMessage.text("hello")]) == ([], False)
    # a newest message exactly the cap long ("User: a", 7 characters) fits: not cut
    assert FormattedHistory(500, 7).formatted_blocks([UserMessage.text("a")]) == (
        ["User: a"],
        False,
    )


def test_a_formatted_history_given_another_history_formats_it_afresh() -> None:
    """The remembered blocks serve only a history that grew from the remembered one: a
    shorter one, or one whose last message changed, is formatted afresh (fails on
    ``_end > end and ...``: an IndexError, or stale blocks), and an empty history gives
    no blocks (fails on ``_end or ...``)."""
    a, b, c, d = (UserMessage.text(t) for t in ("a", "b", "c", "d"))
    history = FormattedHistory(500, 1000)
    assert history.formatted_blocks([]) == ([], False)
    assert history.formatted_blocks([a, b, c]) == (["User: a", "User: b", "User: c"], False)
    assert history.formatted_blocks([a, b]) == (["User: a", "User: b"], False)
    assert history.formatted_blocks([a, d]) == (["User: a", "User: d"], False)
    assert history.formatted_blocks([a, d, c]) == (["User: a", "User: d", "User: c"], False)
