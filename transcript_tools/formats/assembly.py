"""An assistant message assembled from several records (Claude Code, Codex).

Both formats log one model response over several lines: the reader keeps a
``PendingAssistant`` in its output list, adds blocks and usage as lines arrive,
and freezes the list into messages at the end.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..engine.messages import AssistantMessage, Block, Message, Usage


@dataclass(slots=True)
class PendingAssistant:
    """An assistant response being assembled from its lines."""

    blocks: list[Block] = field(default_factory=list)
    usage: Usage | None = None
    model: str | None = None
    message_id: str | None = None  # the API response id, where the format logs one

    def freeze(self) -> AssistantMessage:
        return AssistantMessage(tuple(self.blocks), self.usage, self.model)


def freeze_all(out: list[Message | PendingAssistant]) -> list[Message]:
    return [m.freeze() if isinstance(m, PendingAssistant) else m for m in out]
