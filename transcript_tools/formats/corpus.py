"""Reading a corpus: every input's conversations, in input order, ids unique corpus-wide.

The one reading loop of replay, sweep, eval, the ``--batch`` planner and the parallel
jobs. A file that cannot be read is an error (counted, reported through the run's
``reporter.error``) and the rest of the corpus goes on; warnings (skipped lines, a
truncated last line) go to ``reporter.warn`` and are counted, and so do, with
``own_warnings``, each conversation's own (what its reader dropped: a rewound branch...)
as it is read: sweep, compare and eval say them there, replay after its run.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Protocol

from ..engine.messages import Conversation
from ..errors import InputError, error_line
from ..reporter import QUIET, Reporter, session_warning
from . import read_input
from .inputs import InputFile, NameSet, expand_inputs, unique_name
from .source import Source


class ReadCounts(Protocol):
    """Where a reader counts (``replay.ReplayStats`` is one)."""

    files: int
    failed_files: int
    warnings: int
    errors: list[str]


@dataclass
class CorpusCounts:
    files: int = 0
    failed_files: int = 0
    warnings: int = 0
    errors: list[str] = field(default_factory=list)


@dataclass
class CorpusReader:
    """``conversations(paths)``: the conversations of every input, in order."""

    fmt: str | None = None
    skip_bad_lines: bool = False
    reporter: Reporter = QUIET
    seen_ids: set[str] = field(default_factory=NameSet)  # ids taken so far: later ones get #2…
    stats: ReadCounts = field(default_factory=CorpusCounts)
    # each conversation's own warnings too, as it is read (replay's come with its result;
    # a second pass over files a first one reported leaves them out)
    own_warnings: bool = False

    def conversations(
        self, paths: list[str] | list[InputFile]
    ) -> Generator[Conversation, None, None]:
        """The conversations of every input, in order. (The garbage collector's state is
        the host's business: library code never changes it.)"""
        for item in expand_inputs(paths, self._warn):
            self.stats.files += 1
            source = Source(item.path, skip_bad_lines=self.skip_bad_lines, warn=self._warn)
            try:
                for conv in read_input(source, self.fmt, from_directory=item.from_directory):
                    conv.session_id = unique_name(conv.session_id, self.seen_ids, "#")
                    if self.own_warnings:
                        for warning in conv.own_warnings():
                            self._warn(session_warning(conv.path, conv.session_id, warning))
                    yield conv
            except InputError as exc:
                self.stats.failed_files += 1
                self.stats.errors.append(exc.location_text())
                self.reporter.error(error_line(exc.location_text()))

    def _warn(self, message: str) -> None:
        self.stats.warnings += 1
        self.reporter.warn(message)
