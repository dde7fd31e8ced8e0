"""What ``sweep``, ``replay --dry-run`` and ``inspect`` run per file, and how parts merge.

Each job runs the library's own single-process code on its share of the files (``Sweep``,
``ReplayRun.conversations`` + ``replay_conversation``, ``InspectRun``), with warnings and
errors captured as *events* in the order they happened. The driver replays the events
through the same callbacks and counters, in input order, so stderr reads exactly as in a
single process; stdout and output files get the records the worker rendered with the
same writers (``TextReport``, ``OutputDirectory.write_session``).
"""

from __future__ import annotations

import asyncio
import heapq
import io
import time
import zlib
from collections import Counter, deque
from collections.abc import Iterator
from dataclasses import dataclass, field, fields, replace
from typing import Any

from .engine.config import ReplaySettings
from .errors import InputError
from .formats.inputs import InputFile
from .inspection import InspectRun, SessionInfo
from .parallel.pool import Backend, ordered_parts, plan
from .replay.driver import (
    ReplayRun,
    RunStats,
    replay_conversation,
    session_counts,
    window_bounds,
)
from .replay.output_dir import OutputDirectory, TextReport, render_records
from .replay.parking import Rendered, SessionCounts
from .sweep.driver import Sample, Sweep, SweepResult
from .sweep.stats import ConfigStats

WARN, ERROR, SESSION = "warn", "error", "session"


# ---- sweep -----------------------------------------------------------------------------


@dataclass(slots=True)
class SweepPart:
    result: SweepResult
    events: list[tuple[str, str]]
    names: set[str]


@dataclass(slots=True)
class SweepJob:
    sweep: Sweep  # without callables or executor: the offline summarizer is built per worker
    names_sessions: bool = True

    def run(self, items: list[InputFile], taken: set[str]) -> SweepPart:
        events: list[tuple[str, str]] = []
        ids = set(taken)
        sweep = replace(
            self.sweep,
            warn=lambda m: events.append((WARN, m)),
            error=lambda m: events.append((ERROR, m)),
            taken_ids=ids,
        )
        result = sweep.run(items)  # type: ignore[arg-type]  # InputFiles pass through
        return SweepPart(result, events, ids - taken)


def run_sweep(sweep: Sweep, paths: list[str], backend: Backend) -> SweepResult:
    """``sweep.run(paths)``, spread over ``backend`` when that pays (same result)."""
    items = plan(paths, backend) if sweep.executor is None else None
    if items is None:  # one worker / one file / cached provider responses: as always
        return sweep.run(paths)
    started = time.perf_counter()
    if sweep.template is None:
        from .engine.prompt import template_from_config

        sweep.template = template_from_config(sweep.base.summary_prompt)
    job = SweepJob(
        replace(sweep, warn=print, error=print, on_conversation=None, describe_executor=None)
    )
    total = SweepResult(
        sweep.configs, [ConfigStats(c, sweep.price_per_mtok) for c in sweep.configs]
    )
    heap: list[tuple[tuple[bool, bool, int, int], int, Sample]] = []
    for part in ordered_parts(job, items, backend):
        for kind, message in part.events:
            (sweep.warn if kind == WARN else sweep.error)(message)
        _merge_sweep(total, part.result, heap, sweep.sample_size)
        if sweep.on_conversation is not None:
            for _ in range(part.result.conversations):
                sweep.on_conversation()
    total.samples = [s for _, _, s in sorted(heap, key=lambda item: item[2].profile.index)]
    total.summary_source = sweep._source(total)
    total.elapsed = time.perf_counter() - started
    return total


# ConfigStats fields that are maxima; every other int is a sum, every Counter a histogram.
_MAXIMA = {"peak_without", "peak_with"}
_FIXED = {"config", "price_per_mtok"}


def merge_config_stats(into: ConfigStats, part: ConfigStats) -> None:
    """Fold one part's aggregates into ``into``: equal to having added its conversations."""
    for f in fields(ConfigStats):
        name = f.name
        if name in _FIXED:
            continue
        mine, theirs = getattr(into, name), getattr(part, name)
        if isinstance(mine, Counter):
            mine.update(theirs)
        elif name in _MAXIMA:
            setattr(into, name, max(mine, theirs))
        elif isinstance(mine, int):
            setattr(into, name, mine + theirs)
        else:  # a new kind of aggregate: say how it merges here
            raise TypeError(f"ConfigStats.{name}: no merge rule")


def _merge_sweep(total: SweepResult, part: SweepResult, heap: list[Any], size: int) -> None:
    for mine, theirs in zip(total.stats, part.stats, strict=True):
        merge_config_stats(mine, theirs)
    offset = total.conversations  # the part's conversation indices start at 0
    total.files += part.files
    total.conversations += part.conversations
    total.turns += part.turns
    total.fast_runs += part.fast_runs
    total.engine_runs += part.engine_runs
    total.warnings += part.warnings
    total.errors.extend(part.errors)
    for sample in part.samples:  # the part's best; the corpus's best are among them
        profile = sample.profile
        profile.index += offset
        # The key of Sweep._one: recorded compactions first, then summarizing ones, then
        # a hash of the session; the index breaks ties.
        digest = zlib.crc32(f"{profile.path}\0{profile.session_id}".encode())
        ever = any(sample.fires)
        key = (bool(profile.compaction_turns), ever, digest, -profile.index)
        item = (key, profile.index, sample)
        if len(heap) < size:
            heapq.heappush(heap, item)
        elif key > heap[0][0]:
            heapq.heapreplace(heap, item)


# ---- replay --dry-run ------------------------------------------------------------------


@dataclass(slots=True)
class SessionDigest:
    """What the driver needs of one session replayed in a worker: its counts and warnings,
    and its output already rendered (--out records, or the report's text)."""

    counts: SessionCounts
    rendered: Rendered


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
        events: list[tuple[str, Any]] = []
        reader = ReplayRun(
            self.settings,
            None,
            None,  # type: ignore[arg-type]  # only its reader is used
            fmt=self.fmt,
            skip_bad_lines=self.skip_bad_lines,
            warn=lambda m: events.append((WARN, m)),
            error=lambda m: events.append((ERROR, m)),
            _seen_ids=set(taken),
        )
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
                events.append((SESSION, SessionDigest(session_counts(result), rendered)))
        finally:
            loop.close()
        stats = reader.stats
        return ReplayPart(events, names, stats.files, stats.failed_files, stats.errors)


def parallel_replay(run: ReplayRun, paths: list[str], backend: Backend) -> RunStats | None:
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
    # The same window as ReplayRun.run in a dry run (nothing waits, so no read-ahead):
    # it reads as many conversations as sessions may run, replays them all, writes them
    # all, then reads the next ones; reader warnings interleave with session warnings
    # exactly as there.
    window: deque[SessionDigest] = deque()
    limit = window_bounds(run.concurrency, run.sessions, run.reorder)[0]
    for part in ordered_parts(job, items, backend):
        for kind, value in part.events:
            if kind == WARN:
                stats.warnings += 1
                run.warn(value)
            elif kind == ERROR:
                run.error(value)
            else:
                window.append(value)
                if len(window) >= limit:
                    while window:
                        _deliver(run, window.popleft())
        stats.files += part.files
        stats.failed_files += part.failed_files
        stats.errors.extend(part.errors)
    while window:
        _deliver(run, window.popleft())
    return stats


def _deliver(run: ReplayRun, digest: SessionDigest) -> None:
    """``ReplayRun._deliver`` for a session replayed elsewhere."""
    run._count(digest.counts)
    sink = run.sink
    assert isinstance(sink, (OutputDirectory, TextReport))
    sink.write_rendered(digest.counts.session_id, digest.rendered)
    if run.on_session is not None:
        run.on_session(digest)  # type: ignore[arg-type]  # progress only counts


# ---- inspect ---------------------------------------------------------------------------


@dataclass(slots=True)
class InspectPart:
    events: list[tuple[str, Any]]
    files: int
    names: set[str] = field(default_factory=set)


@dataclass(slots=True)
class InspectJob:
    fmt: str | None
    skip_bad_lines: bool
    names_sessions: bool = False  # inspect shows ids as the files have them

    def run(self, items: list[InputFile], taken: set[str]) -> InspectPart:
        events: list[tuple[str, Any]] = []

        def error(exc: InputError) -> None:
            # rebuilt in the driver: an InputError does not survive pickling as itself
            events.append((ERROR, (type(exc), exc.path, exc.line, exc.message, exc.item)))

        run = InspectRun(
            items,  # type: ignore[arg-type]  # InputFiles pass through
            fmt=self.fmt,
            skip_bad_lines=self.skip_bad_lines,
            warn=lambda m: events.append((WARN, m)),
            error=error,
        )
        for info in run:
            events.append((SESSION, info))
        return InspectPart(events, run.files)


def iter_inspect(run: InspectRun, backend: Backend) -> Iterator[SessionInfo]:
    """Iterating ``run``, spread over ``backend`` when that pays (same infos, same order)."""
    items = plan(run.paths, backend)
    if items is None:
        yield from run
        return
    job = InspectJob(run.fmt, run.skip_bad_lines)
    for part in ordered_parts(job, items, backend):
        for kind, value in part.events:
            if kind == WARN:
                run.warn(value)
            elif kind == ERROR:
                cls, path, line, message, item = value
                run.failed += 1
                run.error(cls(path, line, message, item=item))
            else:
                run.sessions += 1
                yield value
        run.files += part.files
