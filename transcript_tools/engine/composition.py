"""What fills a conversation's context: its estimated tokens by kind of content.

``tsum inspect`` reports it (docs/formats.md says which reader makes which message): a
coding agent's context is mostly tool output, a chat's mostly the person's and the
model's text, and a compaction policy should know which before it chooses what to drop.
Every block is estimated as the rest of tsum estimates it (``engine/tokens.py``); the
per-message overhead is left out, so the kinds add up to the content alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .messages import (
    INJECTED,
    OBSERVATION,
    SYNTHETIC_MODEL,
    AssistantMessage,
    Message,
    OtherBlock,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    UserImageMessage,
    UserMessage,
)
from .tokens import estimate_block_tokens, estimate_text_tokens

# The kinds, in the order reports list them.
TOOL_RESULTS = "tool results"  # tool messages, and text-protocol agents' observations
TOOL_CALLS = "tool calls"
ASSISTANT_TEXT = "assistant text"
THINKING = "thinking"
PERSON_TEXT = "person text"
ATTACHMENTS = "attachments"  # images, files and other non-text blocks
RUNTIME = "runtime injections"  # what the agent's runtime adds: reminders, file contents, maps
SYSTEM = "system prompt"
KINDS = (
    TOOL_RESULTS,
    TOOL_CALLS,
    ASSISTANT_TEXT,
    THINKING,
    PERSON_TEXT,
    ATTACHMENTS,
    RUNTIME,
    SYSTEM,
)

THINKING_BLOCKS = frozenset({"thinking", "redacted_thinking", "reasoning"})

# A failed call because the prompt did not fit, as the runtime logs it in place of a
# reply: Claude Code's synthetic "Prompt is too long" message; OpenAI-style and local
# servers' words for the same error (providers/retry.py reads them in API errors).
CONTEXT_OVERFLOW = re.compile(
    r"prompt is too long|context_length_exceeded|maximum context length|exceeds the context window",
    re.IGNORECASE,
)


def context_by_kind(messages: Iterable[Message]) -> dict[str, int]:
    """Estimated tokens of ``messages`` per kind (every kind present, 0 where none)."""
    tokens = dict.fromkeys(KINDS, 0)
    for message in messages:
        if isinstance(message, ToolResultMessage):
            tokens[TOOL_RESULTS] += estimate_text_tokens(message.content)
        elif isinstance(message, SystemMessage):
            tokens[SYSTEM] += estimate_text_tokens(message.text)
        elif isinstance(message, UserImageMessage):
            tokens[ATTACHMENTS] += estimate_block_tokens(OtherBlock("image"))
        elif isinstance(message, AssistantMessage):
            for block in message.blocks:
                tokens[_assistant_kind(block)] += estimate_block_tokens(block)
        elif isinstance(message, UserMessage):
            text_kind = {OBSERVATION: TOOL_RESULTS, INJECTED: RUNTIME}.get(
                message.origin, PERSON_TEXT
            )
            for block in message.blocks:
                kind = text_kind if isinstance(block, TextBlock) else ATTACHMENTS
                tokens[kind] += estimate_block_tokens(block)
    return tokens


def _assistant_kind(block: object) -> str:
    if isinstance(block, ToolUseBlock):
        return TOOL_CALLS
    if isinstance(block, OtherBlock):
        return THINKING if block.kind in THINKING_BLOCKS else ATTACHMENTS
    return ASSISTANT_TEXT


def context_overflows(messages: Iterable[Message]) -> int:
    """Calls the log records as failed because the prompt was too long: messages the
    runtime wrote in place of a reply (``SYNTHETIC_MODEL``) that say so."""
    return sum(
        1
        for message in messages
        if isinstance(message, AssistantMessage)
        and message.model == SYNTHETIC_MODEL
        and any(
            isinstance(b, TextBlock) and CONTEXT_OVERFLOW.search(b.text) for b in message.blocks
        )
    )


def shares(tokens: dict[str, int]) -> dict[str, float]:
    """Each kind's share of the total (0 everywhere for an empty conversation)."""
    total = sum(tokens.values())
    return {kind: (count / total if total else 0.0) for kind, count in tokens.items()}
