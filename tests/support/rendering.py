"""Test-only compositions of library pieces: the seed's summary prompt in one call, and
native JSONL as bytes (the library streams both; tests compare whole values)."""

from __future__ import annotations

from collections.abc import Iterable

from transcript_tools.engine.config import SummaryConfig
from transcript_tools.engine.formatting import format_messages_as_text
from transcript_tools.engine.messages import Message
from transcript_tools.engine.prompt import PromptTemplate
from transcript_tools.formats.native import iter_message_lines


def render_summary_prompt(
    messages: list[Message],
    template: PromptTemplate,
    cfg: SummaryConfig,
    session_id: str = "",
    turn: int = 0,
    previous_summary: str = "",
) -> str | None:
    """The prompt of the seed's ``generate_summary``; None for an empty history (no call)."""
    if not messages:
        return None
    text = format_messages_as_text(messages, cfg.max_tool_result_chars, cfg.max_transcript_chars)
    return template.render(
        text, session_id=session_id, turn=turn, previous_summary=previous_summary
    )


def dumps_messages(messages: Iterable[Message], session_id: str | None = None) -> bytes:
    """Native JSONL bytes for ``messages`` (with a session header when an id is given)."""
    return b"".join(iter_message_lines(messages, session_id))
