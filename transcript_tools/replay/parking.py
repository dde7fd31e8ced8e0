"""Parking: how a finished session waits in the reorder buffer without its objects.

A session that ends before an earlier one has been written must wait (outputs are in
input order). Kept as objects — its conversation, engine, snapshots — a long session
at the head makes every session finished behind it cost memory, so the buffer must be
small, and then reading stops and slots go idle (measured: on a corpus of short and
long sessions at ``-j 8``, the last long conversation could not even be read until
the head was written). A sink that can render a session (``Renderer``: the ``--out``
directory, the text report) turns it into its output bytes as soon as it ends; the
bytes go to one temporary file of the run (``ParkFile``), and only a small ``Parked``
record (counts, warnings, where the bytes are) stays in memory until its turn.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

Span = tuple[str, int, int]  # (output name, offset in the park file, length)


@dataclass(slots=True)
class Rendered:
    """A session's output: bytes per output stream, and a file already written aside
    (``compressed/``) that only needs its final name."""

    records: dict[str, bytes]
    aside: Path | None = None


@dataclass(slots=True)
class SessionCounts:
    """What the run's statistics and messages need of a session, whatever its form."""

    session_id: str
    path: str
    turns: int
    calls: int  # checkpoint units with --checkpoint call (0 otherwise)
    summaries_ok: int
    summaries_failed: int
    would_summarize: int
    warnings: list[str]
    estimated: int = 0  # decisions whose watermark is estimated (dry run, --measure current)
    stream_units: int = 0  # units that went through the stream path
    model_room: int = 0  # engine.drive.model_room of the conversation (the window tip)


@dataclass(slots=True)
class Parked:
    counts: SessionCounts
    spans: list[Span] = field(default_factory=list)
    aside: Path | None = None


class ParkFile:
    """One anonymous temporary file for every parked session's bytes; emptied each
    time nothing is parked any more, so it holds at most the parked sessions' output."""

    def __init__(self) -> None:
        self._file: IO[bytes] | None = None
        self._end = 0
        self._parked = 0

    def park(self, counts: SessionCounts, rendered: Rendered) -> Parked:
        if self._file is None:
            self._file = tempfile.TemporaryFile()  # unlinked at once: nothing left behind
        parked = Parked(counts, aside=rendered.aside)
        self._file.seek(self._end)
        for name, data in rendered.records.items():
            self._file.write(data)
            parked.spans.append((name, self._end, len(data)))
            self._end += len(data)
        self._parked += 1
        return parked

    def unpark(self, parked: Parked) -> Rendered:
        assert self._file is not None
        records = {}
        for name, offset, length in parked.spans:
            self._file.seek(offset)
            records[name] = self._file.read(length)
        self._parked -= 1
        if not self._parked:  # nothing waits: start again from the beginning
            self._file.seek(0)
            self._file.truncate()
            self._end = 0
        return Rendered(records, parked.aside)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def discard_parked(parked: Parked) -> None:
    """An aborted run: the parked session's side file goes (its bytes go with the file)."""
    if parked.aside is not None:
        parked.aside.unlink(missing_ok=True)
