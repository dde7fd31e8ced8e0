"""A file whose records change format part way (a Codex rollout appended to a Claude Code
session, say).

The file's format is detected from its first records and read as that format throughout:
a record the reader does not know is skipped, as always. When such a record is one that
another reader would take, the file changes format there: one warning says so, naming the
first such line and how many records of that format were skipped, instead of one warning
per record type. The records of the first format go on being read, wherever they are.
"""

from __future__ import annotations

from dataclasses import dataclass

from .source import Record, Source


@dataclass(slots=True)
class FormatSwitch:
    """Where the records of one file switch to another format."""

    reader: str
    started: bool = False  # a record of the reader's own format was read (set by the reader)
    first: Record | None = None
    other: str | None = None
    count: int = 0

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
        if self.first is None:
            return
        noun = "record" if self.count == 1 else "records"
        source.dropped(
            self.first,
            f"the file changes format here, from {self.reader} to {self.other}: read as"
            f" {self.reader}, so its {self.count} {self.other} {noun} are skipped",
        )
