"""Claude Code's re-logged copies of a conversation (seen with 2.0.29–2.0.31).

On resume, Claude Code may append the earlier entries to the same file again: the same
``message.id``s and ``timestamp``s, new ``uuid``s, and a new root (``parentUuid: null``).
The model saw that history once; replaying the copy would count its turns, calls and
tokens twice. A copy starts at a root entry that repeats an earlier entry, and goes on
while the entries repeat earlier ones; it is not replayed, and one warning names its lines.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..fields import str_or_empty
from ..source import Record

# Entries that carry a message or a compaction: the ones a copy repeats.
COPIED_TYPES = frozenset({"user", "assistant", "system"})


def _size(value: Any) -> int:
    """A cheap fingerprint of a message's content: its text's length, or its block count."""
    return len(value) if isinstance(value, (str, list)) else -1


def _key(obj: dict[str, Any]) -> tuple[str, str, str, int] | None:
    """What stays the same in a re-logged copy of an entry: type, timestamp (milliseconds),
    response id and the shape of what it says. Cheap on purpose: it is taken for every
    entry, and a copy must also start at a new root and run on while entries repeat."""
    stamp = obj.get("timestamp")
    kind = obj.get("type")
    if not isinstance(stamp, str) or kind not in COPIED_TYPES:
        return None
    msg = obj.get("message")
    if isinstance(msg, dict):
        ident = msg.get("id")
        return (
            kind,
            stamp,
            ident if isinstance(ident, str) else repr(ident),
            _size(msg.get("content")),
        )
    subtype = obj.get("subtype")
    return (kind, stamp, str_or_empty(subtype), _size(obj.get("content")))


@dataclass(slots=True)
class Copies:
    """Finds re-logged copies in one file, entry by entry."""

    seen: dict[tuple[str, str, str, int], str] = field(default_factory=dict)  # key → first uuid
    lines: list[int] = field(default_factory=list)  # lines (or array items) of the copy
    unit: str = "line"
    warnings: list[str] = field(default_factory=list)

    def original(self, obj: dict[str, Any], record: Record) -> str | None:
        """The uuid of the entry this one re-logs, when it is part of a copy; else None
        (and the entry is remembered)."""
        key = _key(obj)
        if key is None:
            return None  # untimestamped bookkeeping: neither starts nor ends a copy
        uuid = obj.get("uuid")
        first = self.seen.get(key)
        repeats = first is not None and first != uuid
        starts = obj.get("parentUuid") is None and key[0] != "system"  # compactions re-root too
        if repeats and (self.lines or starts):
            if record.line is None:
                self.unit = "item"
            self.lines.append(record.line if record.line is not None else record.item or 0)
            return first
        if self.lines:
            self.close()
        if first is None and isinstance(uuid, str):
            self.seen[key] = uuid
        return None

    def close(self) -> None:
        if not self.lines:
            return
        lines, self.lines = self.lines, []
        unit = self.unit if len(lines) == 1 else self.unit + "s"
        span = str(lines[0]) if len(lines) == 1 else f"{lines[0]}-{lines[-1]}"
        self.warnings.append(
            f"{unit} {span}: {len(lines)} entries re-log earlier ones (a new root with the same"
            " message ids and timestamps, as Claude Code writes on resume); not replayed again"
        )
