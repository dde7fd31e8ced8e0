"""What replay and inspect say of a conversation with no message (``Conversation.empty_warning``),
pinned against one-point edits (a single-point mutation run, docs/testing.md, found it
unpinned): the reader's reason where it gave one, else the hint about ``--format``.
"""

from __future__ import annotations

from transcript_tools.engine.messages import Conversation, UserMessage


def test_an_empty_conversation_says_the_readers_reason_else_the_format_hint() -> None:
    skipped = Conversation("s", "s.jsonl", "claude-code", skipped="a summary-only file")
    assert skipped.empty_warning() == "nothing to replay: a summary-only file; skipped"
    unread = Conversation("s", "s.jsonl", "claude-code")
    assert unread.empty_warning() == (
        "no messages read as claude-code (is the file in that format? see --format)"
    )
    read = Conversation("s", "s.jsonl", "claude-code", [UserMessage.text("hi")], skipped="x")
    assert read.empty_warning() is None
