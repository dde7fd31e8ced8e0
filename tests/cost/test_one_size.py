"""One size per text: what the replay writes (a summary, a placeholder) is sized by its
plain estimate in the view and as the summarizer's output alike, never by the log's own
ratio of recorded to estimated tokens (cost/sizes.py; engine/sizes.py sizes it so too)."""

from __future__ import annotations

import pytest

from transcript_tools.cost.sizes import calibrate
from transcript_tools.engine.messages import (
    AssistantMessage,
    Conversation,
    Message,
    SystemMessage,
    TextBlock,
    Usage,
    UserMessage,
)
from transcript_tools.engine.tokens import estimate_message_tokens, estimate_text_tokens


def _digits(n: int, usage: int | None = None) -> Message:
    """``n`` estimated tokens (8 for the message, 1 per digit); with ``usage`` a recorded
    call whose prompt was that many tokens."""
    if usage is None:
        return UserMessage.text("1" * (n - 8))
    return AssistantMessage((TextBlock("2" * (n - 8)),), Usage(usage, 5), "claude-sonnet-4-5")


def test_text_the_replay_wrote_is_its_estimate_whatever_the_logs_ratio() -> None:
    """A sanitized-like log: 250 estimated tokens grew the prompt by 1,750 (ratio 7). The
    log's own messages are sized 7x; a summary the replay wrote, 12 digits, is 20 tokens
    (8 + 12) as a message and 12 as text — not 140 and 84."""
    messages = [_digits(100), _digits(50, 1_100), _digits(200), _digits(50, 2_850)]
    sizes = calibrate(Conversation("c", "c.jsonl", "test", messages))
    assert sizes.ratio == 7.0
    assert sizes.of(messages[2]) == pytest.approx(1_400)  # 7 x 200: the log's own text
    summary = SystemMessage("[summary] " + "1" * 12)
    assert sizes.of(summary) == estimate_message_tokens(summary)
    assert sizes.of_text("1" * 12) == estimate_text_tokens("1" * 12) == 12
