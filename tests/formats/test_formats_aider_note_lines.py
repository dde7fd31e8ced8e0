"""Aider chat history: a note of several lines has ``>`` on its first line only; its other
lines are not a reply. Calls are one per ``> Tokens:`` note."""

from __future__ import annotations

import re

from tests.support.corpus import FIXTURES, read
from transcript_tools.engine.messages import AssistantMessage, TextBlock

PATH = FIXTURES / "edge_cases_aider_chat_note_continuation.aider.chat.history.md"


def test_a_note_continuation_line_is_not_a_call() -> None:
    text = PATH.read_text()
    tokens = re.findall(r"^> Tokens: ([\d.]+)k sent, (\d+) received", text, re.M)
    assert len(tokens) == 2
    warnings: list[str] = []
    (conv,) = read(PATH, warn=warnings.append)
    calls = [m for m in conv.messages if isinstance(m, AssistantMessage)]
    assert len(calls) == len(tokens)
    assert [(c.usage.input_tokens, c.usage.output_tokens) for c in calls if c.usage] == [
        (round(float(sent) * 1000), int(received)) for sent, received in tokens
    ]
    replies = " ".join(b.text for c in calls for b in c.blocks if isinstance(b, TextBlock))
    # the commit message is in the reply's own code block once, never as a reply of its own
    assert replies.count("Prints the package version and exits.") == 1
    assert warnings == []
