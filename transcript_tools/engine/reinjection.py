"""What a runtime writes into its prompt after compacting besides its summary: the files
it re-reads from disk (Claude Code: the most recently read files, at most 5 of at most
5,000 tokens each). No log holds them; the reads the log records before the compaction
say which files they were, and their results how large (docs/fidelity.md, "Sizes").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .messages import AssistantMessage, Message, ToolResultMessage, ToolUseBlock
from .sizes import SizeModel


@dataclass(frozen=True, slots=True)
class Reinjection:
    """Up to ``files`` of the most recently read distinct files, each counted up to
    ``file_tokens``; a read is a call of ``tool`` whose input names the file at ``path``."""

    files: int
    file_tokens: int
    tool: str
    path: str


def reinjected_tokens(messages: Sequence[Message], sizes: SizeModel, rule: Reinjection) -> int:
    """The tokens ``rule`` re-injects after a compaction that follows ``messages``: each
    of the most recent distinct files read there, sized by its latest read's result."""
    reads: dict[str, str] = {}  # call id -> file
    latest: dict[str, int] = {}  # file -> size of its latest read, in reading order
    for message in messages:
        if type(message) is AssistantMessage:
            for block in message.blocks:
                if type(block) is ToolUseBlock and block.name == rule.tool:
                    path = block.input.get(rule.path) if isinstance(block.input, dict) else None
                    if isinstance(path, str):
                        reads[block.id] = path
        elif type(message) is ToolResultMessage and message.tool_call_id in reads:
            path = reads[message.tool_call_id]
            latest.pop(path, None)  # moves to the end: read most recently
            latest[path] = sizes.of(message)
    recent = list(latest.values())[-rule.files :] if rule.files else []
    return sum(min(size, rule.file_tokens) for size in recent)
