"""A file whose records change format part way (a Codex rollout appended to a Claude Code
session, say).

The file's format is detected from its first records and read as that format throughout:
a record the reader does not know is skipped, as always. When such a record is one that
another reader would take, the file changes format there: one warning says so, naming the
first such line and how many records of that format were skipped, instead of one warning
per record type. The records of the first format go on being read, wherever they are.
Any other record of a type the reader does not know (a newer release's) is skipped with
one warning per type, at its first record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .source import Record, Source


@dataclass(slots=True)
class FormatSwitch:
    """The records of one file its reader does not know: where they switch to another
    format, and the types it skips."""

    reader: str
    units: tuple[str, str]  # what the file's records are called: ("line", "lines")
    started: bool = False  # a record of the reader's own format was read (set by the reader)
    first: Record | None = None
    other: str | None = None
    count: int = 0
    unknown: dict[str, tuple[int, Record]] = field(default_factory=dict)  # type -> (count, first)

    def skip(self, kind: Any, record: Record, source: Source) -> None:
        """A record whose type (``kind``) the reader does not know."""
        unit = self.units[0]
        if not isinstance(kind, str):  # a broken record: say which
            source.dropped(record, f"{unit} 'type' is {kind!r}, not a string ({unit} skipped)")
            return
        if self.claims(record, source):
            return  # another format's record: the file changes format (one warning)
        count, first = self.unknown.get(kind, (0, record))
        self.unknown[kind] = (count + 1, first)

    def claims(self, record: Record, source: Source) -> bool:
        """A record the reader does not know: is it one of the other format's (counted)?
        Only after the reader's own records: a file forced into the wrong format from its
        first line does not change format."""
        if not self.started or source.other_format is None:
            return False
        fmt = source.other_format(record)
        if fmt is None or (self.other is not None and fmt != self.other):
            return False
        if self.first is None:
            self.first, self.other = record, fmt
        self.count += 1
        return True

    def report(self, source: Source) -> None:
        if self.first is not None:
            noun = "record" if self.count == 1 else "records"
            source.dropped(
                self.first,
                f"the file changes format here, from {self.reader} to {self.other}: read as"
                f" {self.reader}, so its {self.count} {self.other} {noun} are skipped",
            )
        for kind, (count, first) in self.unknown.items():
            noun = self.units[0] if count == 1 else self.units[1]
            source.dropped(first, f"{count} {noun} of unknown type {kind!r} skipped")
