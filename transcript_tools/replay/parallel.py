"""What ``replay --dry-run`` runs per file on a pool or Ray, and how the driver delivers it.

Each job runs the library's own single-process code on its share of the files, with
warnings and errors captured as *events* in the order they happened. The driver replays the
events through the same reporter and counters, in input order, so stderr reads exactly as
in a single process; stdout and output files get the records the worker rendered with the
same writers (``TextReport``, ``OutputDirectory.write_session``).
"""

from __future__ import annotations

import asyncio
import io
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from ..engine.config import ReplaySettings
from ..formats.corpus import CorpusReader
from ..formats.inputs import InputFile, NameSet
from ..parallel.job import SESSION
from ..parallel.pool import Backend, ordered_parts, plan
from ..reporter import ERROR, WARN, Recorder
from .conversation import replay_conversation, session_counts
from .driver import ReplayDriver, ReplayStats, window_bounds, window_open
from .output_dir import OutputDirectory, render_records
from .parking import Rendered, SessionCounts
from .text_report import TextReport


@dataclass(slots=True)
class SessionDigest:
    """What the driver needs of one session replayed in a worker: its counts and warnings,
    and its output already rendered (--out records, or the report's text)."""

    counts: SessionCounts
    rendered: Rendered
    messages: int  # the conversation's, which the window's HELD_MESSAGES bound sums


@dataclass(slots=True)
class ReplayPart:
    events: list[tuple[str, Any]]
    names: set[str]
    files: int = 0
    failed_files: int = 0
    errors: list[str] = field(default_factory=list)


@dataclass(slots=True)
class ReplayJob:
    settings: ReplaySettings
    template: Any
    fmt: str | None
    skip_bad_lines: bool
    text_report: bool  # stdout report (TextReport) rather than --out records
    show_summaries: bool = True
    names_sessions: bool = True

    def run(self, items: list[InputFile], taken: set[str]) -> ReplayPart:
        recorder = Recorder()
        events = recorder.events
        reader = CorpusReader(self.fmt, self.skip_bad_lines, recorder, NameSet(taken))
        report = TextReport(io.StringIO(), show_summaries=self.show_summaries)
        names: set[str] = set()
        loop = asyncio.new_event_loop()
        try:
            for conv in reader.conversations(items):
                result = loop.run_until_complete(
                    replay_conversation(conv, self.settings, None, "none", self.template)
                )
                names.add(conv.session_id)
                # a dry run compresses nothing: the records alone are --out's output
                rendered = (
                    report.render(result) if self.text_report else Rendered(render_records(result))
                )
                digest = SessionDigest(session_counts(result), rendered, len(conv.messages))
                events.append((SESSION, digest))
        finally:
            loop.close()
        stats = reader.stats
        return ReplayPart(events, names, stats.files, stats.failed_files, stats.errors)


def parallel_replay(run: ReplayDriver, paths: list[str], backend: Backend) -> ReplayStats | None:
    """``run.run(paths)`` of a dry run, spread over ``backend``; None: not spread (run it)."""
    sink = run.sink
    if not run.settings.dry_run or run.executor is not None:
        return None  # summary calls: I/O-bound, --concurrency's job
    if not isinstance(sink, (OutputDirectory, TextReport)):
        return None
    items = plan(paths, backend)
    if items is None:
        return None
    text = isinstance(sink, TextReport)
    job = ReplayJob(
        run.settings,
        run.template,
        run.fmt,
        run.skip_bad_lines,
        text_report=text,
        show_summaries=sink.show_summaries if isinstance(sink, TextReport) else True,
    )
    stats = run.stats
    # The window of ReplayDriver._run_windows (nothing waits, so no read-ahead):
    # it reads conversations while ``window_open`` (as many as sessions may run, fewer at
    # HELD_MESSAGES), replays them all, writes them all, then reads the next ones; reader
    # warnings interleave with session warnings exactly as there.
    window: deque[SessionDigest] = deque()
    limit = window_bounds(run.concurrency, run.sessions, run.reorder)[0]
    messages = 0
    for part in ordered_parts(job, items, backend):
        for kind, value in part.events:
            if kind == WARN:
                stats.warnings += 1
                run.reporter.warn(value)
            elif kind == ERROR:
                run.reporter.error(value)
            else:
                window.append(value)
                messages += value.messages
                if not window_open(len(window), messages, limit):
                    messages = 0
                    while window:
                        _deliver(run, window.popleft())
        stats.files += part.files
        stats.failed_files += part.failed_files
        stats.errors.extend(part.errors)
    while window:
        _deliver(run, window.popleft())
    return stats


def _deliver(run: ReplayDriver, digest: SessionDigest) -> None:
    """``ReplayDriver._deliver`` for a session replayed elsewhere."""
    run._count(digest.counts)
    sink = run.sink
    assert isinstance(sink, (OutputDirectory, TextReport))
    sink.write_rendered(digest.counts.session_id, digest.rendered)
    run.reporter.session(digest.counts.path)
