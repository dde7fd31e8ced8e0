"""Claude Code can log a ``tool_result`` line before the ``tool_use`` line it answers; its
``parentUuid`` names the call's line. The parent chain is the order: such results are held
until the line they name is read, then placed after it."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...engine.messages import Message
from ..source import Record, Source


@dataclass(slots=True)
class ParentOrder:
    seen: set[str] = field(default_factory=set)  # the uuid of every entry read so far
    early: dict[str, tuple[list[Message], Record]] = field(default_factory=dict)

    def hold(self, parent: object, results: list[Message], record: Record) -> bool:
        """Results whose parent line is not read yet: held (True)."""
        if not isinstance(parent, str) or parent in self.seen:
            return False
        self.early.setdefault(parent, ([], record))[0].extend(results)
        return True

    def read(self, uuid: object) -> list[Message]:
        """An entry was read: the results held for it, to place right after it."""
        if not isinstance(uuid, str):
            return []
        self.seen.add(uuid)
        if not self.early:
            return []
        early = self.early.pop(uuid, None)
        return early[0] if early is not None else []

    def finish(self, source: Source) -> list[Message]:
        """Results whose call never came: read at the end, with a warning each."""
        out: list[Message] = []
        for results, record in self.early.values():
            source.dropped(
                record,
                "a tool result whose call (its parentUuid) is not in the log; read at the end",
            )
            out.extend(results)
        self.early.clear()
        return out
