"""Replaying a corpus: inputs → conversations → sessions → records, in input order.

Sessions run concurrently (each has at most one summary request in flight; the
executor caps the calls at ``concurrency``); a session starts whenever any running
one ends, and finished sessions wait in a bounded reorder buffer (``window_bounds``)
so that results reach the sink strictly in input order: outputs are byte-identical
whatever the concurrency. One session's run is :mod:`.conversation`'s.
"""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..cost.prices import Pricer
from ..engine.config import DEFAULT_PROVIDER, ReplaySettings
from ..engine.messages import Conversation
from ..formats.corpus import CorpusReader
from ..formats.inputs import InputFile, NameSet
from ..providers.executor import SummaryExecutor
from ..reporter import LOGGED, Reporter
from .conversation import SessionResult, replay_conversation, session_counts
from .parking import Parked, ParkFile, Rendered, SessionCounts, discard_parked

# Sessions in flight: many per call slot. A session has at most one call in flight
# and replays turns (CPU only) between two calls, and sessions are indivisible chains:
# a long conversation must start early, or the run lasts its start plus its chain with
# most slots idle. So every session read is started at once (up to this many), and
# the executor gives a free call slot to the session with the most turns left: the
# longest chains never queue behind short ones, and the short ones fill the other slots.
SESSIONS_PER_SLOT = 16
# The reorder buffer: while a long session at the head runs its chain of N summaries,
# every other slot finishes sessions of a few summaries each, and all of them wait for
# the head: REORDER_PER_SLOT x concurrency finished sessions cover a head several times
# longer (in summaries) than the average session before reading has to pause.
REORDER_PER_SLOT = 8
# With a sink that renders (``reorder.Renderer``: --out, the text report) a finished
# session waits as bytes in a temporary file and a small record in memory (``Parked``),
# so many more can wait: a head as long as half the run (a 150-turn conversation among
# 5-turn ones at -j 8) no longer stops reading, and later long ones start in time.
PARKED_PER_SLOT = 64
READ_AHEAD_STEP = 8  # conversations read per pass of the driver: the first calls go out early
# Messages of the conversations alive (read ahead, running, finished and not parked):
# reading pauses at this many, however many sessions that is. About 4 KiB each in
# memory (benchmarks/PROFILE.md): some 130 MiB at most, and a corpus of short
# conversations is seen far enough ahead for its long ones to start in time.
HELD_MESSAGES = 32_768


def window_bounds(
    concurrency: int, sessions: int | None = None, reorder: int | None = None
) -> tuple[int, int]:
    """(sessions running at most, sessions held between reading and writing at most).

    Memory bound: at most ``held`` conversations (with their records) are alive at
    once, whatever the sessions' lengths: the ``running`` ones, those read ahead, and
    the finished ones waiting in the reorder buffer for an earlier one to be written.
    Defaults for ``-j J``: ``running = 16 J``, ``held = running + 8 J = 24 J`` (J=8: 128
    and 192; J=32: 512 and 768; J=128: 2,048 and 3,072), and never more than
    ``HELD_MESSAGES`` messages in those conversations together. With a rendering sink,
    up to ``PARKED_PER_SLOT x J`` finished sessions more wait as bytes on disk
    (``reorder``), each a record of a few hundred bytes in memory.
    """
    calls = max(1, concurrency)
    running = max(1, sessions if sessions is not None else SESSIONS_PER_SLOT * calls)
    buffered = reorder if reorder is not None else REORDER_PER_SLOT * calls
    return running, running + max(0, buffered)


@runtime_checkable
class Renderer(Protocol):
    """A sink that can render a session ahead of its turn (``reorder``)."""

    def render(self, result: SessionResult) -> Rendered: ...

    def write_rendered(self, session_id: str, rendered: Rendered) -> None: ...


class Sink(Protocol):
    spool_prompts: bool  # True: the sink writes prompts, so sessions spool them to temp files

    def write_session(self, result: SessionResult) -> None: ...


@dataclass(slots=True)
class ReplayStats:
    files: int = 0
    failed_files: int = 0
    sessions: int = 0
    turns: int = 0
    calls: int = 0  # checkpoint units with --checkpoint call (0 otherwise)
    summaries_ok: int = 0
    summaries_failed: int = 0
    would_summarize: int = 0
    estimated: int = 0  # decisions whose watermark is estimated (a dry run, --measure current)
    stream_units: int = 0  # units that went through submit_turn_stream + finalize_turn
    warnings: int = 0
    model_room: int = 0  # the largest engine.drive.model_room of a session (the window tip)
    errors: list[str] = field(default_factory=list)


class CollectingSink:
    """A sink that keeps every session's result (library use: the caller reads them)."""

    spool_prompts = False

    def __init__(self) -> None:
        self.results: list[SessionResult] = []

    def write_session(self, result: SessionResult) -> None:
        self.results.append(result)


@dataclass
class ReplayDriver:
    """Drives a whole corpus through ``replay_conversation`` into a sink."""

    settings: ReplaySettings
    executor: SummaryExecutor | None
    sink: Sink
    provider_name: str = DEFAULT_PROVIDER
    template: Any = None
    fmt: str | None = None
    skip_bad_lines: bool = False
    concurrency: int = 1
    # None: derived from ``concurrency`` (``window_bounds``)
    sessions: int | None = None
    reorder: int | None = None
    reporter: Reporter = LOGGED  # warnings, errors, progress: never stdout
    pricer: Pricer | None = None  # --cost: price each session as replayed
    stats: ReplayStats = field(default_factory=ReplayStats)
    _seen_ids: set[str] = field(default_factory=NameSet)

    def conversations(
        self, paths: list[str] | list[InputFile]
    ) -> Generator[Conversation, None, None]:
        """The conversations of every input, in order (``formats.corpus.CorpusReader``,
        counting into this run's stats)."""
        reader = CorpusReader(
            self.fmt, self.skip_bad_lines, self.reporter, self._seen_ids, self.stats
        )
        yield from reader.conversations(paths)

    def _warn(self, message: str) -> None:
        self.stats.warnings += 1
        self.reporter.warn(message)

    async def run(self, paths: list[str]) -> ReplayStats:
        """Replay every conversation of ``paths`` into the sink, in input order.

        A new session starts as soon as any running one ends (never waiting for the
        oldest: one long session must not hold the other slots idle): the oldest unwritten
        one if it has not started, else the longest read ahead. Finished sessions wait in
        a reorder buffer until every earlier one is written. Bounds (``window_bounds``):
        at most ``sessions`` run, and at most ``sessions + reorder`` are held between
        reading and writing (read ahead, running, or finished and waiting), so a finished
        session waits with fewer than ``sessions + reorder`` others. When that many are
        held, nothing more is read until the oldest one (the head) is written.
        """
        running_limit, held_limit = window_bounds(self.concurrency, self.sessions, self.reorder)
        running: dict[asyncio.Task[SessionResult], int] = {}  # task -> its input position
        finished: dict[int, SessionResult | Parked] = {}  # the reorder buffer, by position
        renderer = self.sink if isinstance(self.sink, Renderer) else None
        # Parking pays only when sessions wait for calls (not in a dry run); an explicit
        # ``reorder`` is the whole bound of the waiting ones (tests, the old window).
        parking = None
        if renderer is not None and self.executor is not None and self.reorder is None:
            parking = ParkFile()
        park_limit = PARKED_PER_SLOT * max(1, self.concurrency) if parking is not None else 0
        parked = 0  # how many of ``finished`` are Parked
        ended: list[asyncio.Task[SessionResult]] = []  # filled by done callbacks
        wake = asyncio.Event()
        # Read ahead (within the same bound) and start the longest conversation first:
        # a long session's summaries are a chain, so starting it late makes the run
        # last (its start + its chain) even with every other slot idle. Without an
        # executor (dry run) nothing waits, so there is nothing to gain: no read-ahead.
        ready: dict[int, Conversation] = {}  # read, not started, by input position
        longest: list[tuple[int, int]] = []  # heap of (-messages, position); stale ones skipped
        lookahead = held_limit if self.executor is not None else running_limit

        def on_done(task: asyncio.Task[SessionResult]) -> None:
            ended.append(task)
            wake.set()

        def next_to_start() -> tuple[int, Conversation]:
            if written in ready:  # the head first: everything after it waits for it
                if len(longest) > 2 * len(ready) + 16:  # drop stale entries: memory stays bounded
                    longest[:] = [(-len(c.messages), i) for i, c in ready.items()]
                    heapq.heapify(longest)
                return written, ready.pop(written)
            while True:
                position = heapq.heappop(longest)[1]
                if position in ready:
                    return position, ready.pop(position)

        reader = self.conversations(paths)
        read = written = 0  # input positions: next to read, next to write
        exhausted = False

        sizes: dict[int, int] = {}  # messages of each conversation alive, by position
        held_messages = 0

        def can_read() -> bool:
            return (
                not exhausted
                and read - written - parked < held_limit  # in memory
                and (held_messages < HELD_MESSAGES or not sizes)
                and parked <= park_limit  # at the bound: read no more until one is written
                and len(ready) < lookahead
            )

        try:
            while True:
                # A few at a time, so the first calls go out before the whole lookahead
                # has been parsed; more after the started sessions have sent their calls.
                # (A dry run waits for nothing: it reads what its sessions may run.)
                for _ in range(READ_AHEAD_STEP if self.executor is not None else lookahead):
                    if not can_read():
                        break
                    conv = next(reader, None)
                    if conv is None:
                        exhausted = True
                        break
                    ready[read] = conv
                    heapq.heappush(longest, (-len(conv.messages), read))
                    sizes[read] = len(conv.messages)
                    held_messages += sizes[read]
                    read += 1
                while ready and len(running) < running_limit:
                    position, conv = next_to_start()
                    task = asyncio.ensure_future(
                        replay_conversation(
                            conv,
                            self.settings,
                            self.executor,
                            self.provider_name,
                            self.template,
                            spool_prompts=self.sink.spool_prompts,
                            pricer=self.pricer,
                        )
                    )
                    task.add_done_callback(on_done)
                    running[task] = position
                if not running:
                    break
                if self.executor is not None and can_read():
                    await asyncio.sleep(0)  # let the started sessions run to their first call
                else:
                    await wake.wait()
                    wake.clear()
                while ended:
                    task = ended.pop()
                    position = running.pop(task)
                    result = task.result()  # an exception propagates
                    if position != written and parking is not None and renderer is not None:
                        self._progress(result)  # as it ends
                        counts = session_counts(result)
                        finished[position] = parking.park(counts, renderer.render(result))
                        parked += 1
                        held_messages -= sizes.pop(position)
                    else:
                        finished[position] = result
                while written in finished:
                    item = finished.pop(written)
                    if isinstance(item, Parked):
                        assert parking is not None and renderer is not None
                        parked -= 1
                        self._count(item.counts)
                        renderer.write_rendered(item.counts.session_id, parking.unpark(item))
                    else:
                        self._deliver(item)
                        held_messages -= sizes.pop(written)
                    written += 1
        finally:
            reader.close()  # closes the input file now, not when the generator is collected
            for task in running:
                task.cancel()
            for item in finished.values():  # aborted: buffered sessions are dropped
                if isinstance(item, Parked):
                    discard_parked(item)
                elif item.prompt_spool is not None:
                    item.prompt_spool.close()
            if parking is not None:
                parking.close()
        return self.stats

    def _deliver(self, result: SessionResult) -> None:
        self._count(session_counts(result))
        self.sink.write_session(result)
        self._progress(result)

    def _progress(self, result: SessionResult) -> None:
        self.reporter.session(str(result.conversation.path), result)

    def _count(self, counts: SessionCounts) -> None:
        stats = self.stats
        stats.sessions += 1
        stats.turns += counts.turns
        stats.calls += counts.calls
        stats.summaries_ok += counts.summaries_ok
        stats.summaries_failed += counts.summaries_failed
        stats.would_summarize += counts.would_summarize
        stats.estimated += counts.estimated
        stats.stream_units += counts.stream_units
        stats.model_room = max(stats.model_room, counts.model_room)
        for warning in counts.warnings:
            self._warn(f"warning: {counts.path}: session {counts.session_id}: {warning}")
