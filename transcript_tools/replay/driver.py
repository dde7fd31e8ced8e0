"""Replaying a corpus: inputs → conversations → sessions → records, in input order.

Sessions run concurrently (each has at most one summary request in flight; the
executor caps the calls at ``concurrency``); a session starts whenever any running
one ends, and finished sessions wait, within bounds (``window_bounds``), until every
earlier one is written: results reach the sink strictly in input order, so outputs are
byte-identical whatever the concurrency. One session's run is :mod:`.conversation`'s.
"""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import Coroutine, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..cost.prices import Pricer
from ..engine.config import DEFAULT_PROVIDER, ReplaySettings
from ..engine.messages import Conversation
from ..formats.corpus import CorpusReader
from ..formats.inputs import InputFile, NameSet
from ..providers.executor import SummaryExecutor
from ..reporter import LOGGED, Reporter, session_warning
from .conversation import SessionResult, replay_conversation, session_counts
from .parking import Parked, ParkFile, Rendered, SessionCounts, discard_parked

# Sessions in flight: many per call slot. A session has at most one call in flight
# and replays turns (CPU only) between two calls, and sessions are indivisible chains:
# a long conversation must start early, or the run lasts its start plus its chain with
# most slots idle. So every session read is started at once (up to this many), and
# the executor gives a free call slot to the session with the most turns left: the
# longest chains never queue behind short ones, and the short ones fill the other slots.
SESSIONS_PER_SLOT = 16
# Sessions between reading and writing beyond the running ones: while a long session at
# the head runs its chain of summaries, the other slots finish sessions that all wait for
# it. REORDER_PER_SLOT x concurrency kept as objects cover a head several times longer
# than the average session. With a sink that renders (``Renderer``: --out, the text
# report) a finished session waits as bytes in a temporary file and a small record in
# memory (``Parked``), so PARKED_PER_SLOT x concurrency more may wait: a head as long as
# half the run (a 150-turn conversation among 5-turn ones at -j 8) no longer stops
# reading. Still a bound: a head that never ends must not spool the whole corpus.
REORDER_PER_SLOT = 8
PARKED_PER_SLOT = 64
# Not a bound, a pace: conversations read per pass of the scheduler, so the first calls
# go out before the whole read-ahead has been parsed, and each pass still has a few
# conversations to pick the longest from.
READ_AHEAD_STEP = 8
# Messages of the conversations in memory (read ahead, running, finished and not
# parked): reading pauses at this many, however many sessions that is (the count above
# cannot stand for it: a conversation has 3 messages or 30,000). About 4 KiB each in
# memory (benchmarks/PROFILE.md): some 130 MiB at most.
HELD_MESSAGES = 32_768


def window_bounds(
    concurrency: int, sessions: int | None = None, reorder: int | None = None, parks: bool = False
) -> tuple[int, int]:
    """(sessions running at most, sessions held between reading and writing at most).

    ``held`` counts the sessions read ahead, running, and finished but not yet written
    (as objects, or parked as bytes when ``parks``). Defaults for ``-j J``: ``running =
    16 J``, ``held = running + 8 J = 24 J`` (J=8: 128 and 192; J=32: 512 and 768), plus
    ``64 J`` parked when ``parks``; and never more than ``HELD_MESSAGES`` messages in the
    conversations kept in memory.
    """
    calls = max(1, concurrency)
    running = max(1, sessions if sessions is not None else SESSIONS_PER_SLOT * calls)
    if reorder is None:
        reorder = (REORDER_PER_SLOT + (PARKED_PER_SLOT if parks else 0)) * calls
    return running, running + max(0, reorder)


def window_open(sessions: int, messages: int, limit: int) -> bool:
    """May a dry run's window (``ReplayDriver._run_windows``) take one more conversation:
    it holds fewer than ``limit`` sessions and fewer than ``HELD_MESSAGES`` messages. The
    window orders stderr, so a pool's run (``parallel.parallel_replay``) closes its own by
    this rule too."""
    return sessions < limit and messages < HELD_MESSAGES


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

        With summary calls, sessions run concurrently and end in any order (``_Schedule``);
        without them (a dry run) nothing waits, and they run in windows (``_run_windows``).
        """
        reader = self.conversations(paths)
        try:
            if self.executor is None:
                await self._run_windows(reader)
            else:
                await _Schedule(self, reader).run()
        finally:
            reader.close()  # closes the input file now, not when the generator is collected
        return self.stats

    async def _run_windows(self, reader: Iterator[Conversation]) -> None:
        """Read as many conversations as sessions may run (fewer at ``HELD_MESSAGES``),
        replay them, write them, and again. The window is what orders stderr: reader
        warnings come as files are read, session warnings as sessions are written
        (``parallel.parallel_replay`` runs the same window over its parts)."""
        limit = window_bounds(self.concurrency, self.sessions, self.reorder)[0]
        while True:
            window: list[Conversation] = []
            messages = 0
            while window_open(len(window), messages, limit):
                conv = next(reader, None)
                if conv is None:
                    break
                window.append(conv)
                messages += len(conv.messages)
            if not window:
                return
            results = [await self._replay(conv) for conv in window]
            for result in results:
                self._deliver(result)

    def _replay(self, conv: Conversation) -> Coroutine[Any, Any, SessionResult]:
        return replay_conversation(
            conv,
            self.settings,
            self.executor,
            self.provider_name,
            self.template,
            spool_prompts=self.sink.spool_prompts,
            pricer=self.pricer,
        )

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
            self._warn(session_warning(counts.path, counts.session_id, warning))


class _Schedule:
    """A run with summary calls: sessions wait for their calls, so many run at once.

    A session starts as soon as any running one ends (one long session must not hold the
    other slots idle): the oldest unwritten one if it has not started, else the longest
    read ahead (a long session's summaries are a chain: started late, the run lasts its
    start plus its chain). Finished sessions wait until every earlier one is written; with
    a ``Renderer`` sink one that ends out of order waits rendered, in the park file.
    Reading pauses at a bound (``window_bounds``, ``HELD_MESSAGES``) until a session is
    written or parked.
    """

    def __init__(self, driver: ReplayDriver, reader: Iterator[Conversation]) -> None:
        self.driver, self.reader = driver, reader
        sink = driver.sink
        self.parking = (ParkFile(), sink) if isinstance(sink, Renderer) else None
        self.running_limit, self.held_limit = window_bounds(
            driver.concurrency, driver.sessions, driver.reorder, parks=self.parking is not None
        )
        self.read = self.written = 0  # input positions: next to read, next to write
        self.exhausted = False
        self.ready: dict[int, Conversation] = {}  # read, not started, by input position
        self.longest: list[tuple[int, int]] = []  # heap of (-messages, position), some stale
        self.running: dict[asyncio.Task[SessionResult], int] = {}  # task -> its input position
        self.finished: dict[int, SessionResult | Parked] = {}  # waiting to be written
        self.sizes: dict[int, int] = {}  # messages of each conversation in memory, by position
        self.messages = 0  # their sum
        self.ended: list[asyncio.Task[SessionResult]] = []  # filled by done callbacks
        self.wake = asyncio.Event()

    async def run(self) -> None:
        try:
            while True:
                self._read_ahead()
                self._start()
                if not self.running:
                    return
                if self._can_read():
                    await asyncio.sleep(0)  # let the started sessions run to their first call
                else:
                    await self.wake.wait()
                    self.wake.clear()
                self._collect()
                self._write()
        finally:
            self._drop()

    def _can_read(self) -> bool:
        # (a conversation over HELD_MESSAGES alone is read: the sum is 0 before it)
        held = self.read - self.written
        return not self.exhausted and held < self.held_limit and self.messages < HELD_MESSAGES

    def _read_ahead(self) -> None:
        for _ in range(READ_AHEAD_STEP):
            if not self._can_read():
                return
            conv = next(self.reader, None)
            if conv is None:
                self.exhausted = True
                return
            self.ready[self.read] = conv
            heapq.heappush(self.longest, (-len(conv.messages), self.read))
            self.sizes[self.read] = len(conv.messages)
            self.messages += len(conv.messages)
            self.read += 1

    def _start(self) -> None:
        while self.ready and len(self.running) < self.running_limit:
            position, conv = self._next_to_start()
            task = asyncio.ensure_future(self.driver._replay(conv))
            task.add_done_callback(self._on_done)
            self.running[task] = position

    def _next_to_start(self) -> tuple[int, Conversation]:
        ready, longest = self.ready, self.longest
        if self.written in ready:  # the head first: everything after it waits for it
            if len(longest) > 2 * len(ready) + 16:  # drop stale entries: memory stays bounded
                longest[:] = sorted((-len(c.messages), i) for i, c in ready.items())  # a heap
            return self.written, ready.pop(self.written)
        while True:
            position = heapq.heappop(longest)[1]
            if position in ready:
                return position, ready.pop(position)

    def _on_done(self, task: asyncio.Task[SessionResult]) -> None:
        self.ended.append(task)
        self.wake.set()

    def _collect(self) -> None:
        """The sessions that ended: the head kept for writing, any other parked."""
        while self.ended:
            task = self.ended.pop()
            position = self.running.pop(task)
            result = task.result()  # an exception propagates
            if self.parking is None or position == self.written:
                self.finished[position] = result
                continue
            park, renderer = self.parking
            self.driver._progress(result)  # as it ends
            self.finished[position] = park.park(session_counts(result), renderer.render(result))
            self.messages -= self.sizes.pop(position)

    def _write(self) -> None:
        """Every session whose turn has come, in input order."""
        while self.written in self.finished:
            item = self.finished.pop(self.written)
            if isinstance(item, Parked):
                assert self.parking is not None
                park, renderer = self.parking
                self.driver._count(item.counts)
                renderer.write_rendered(item.counts.session_id, park.unpark(item))
            else:
                self.driver._deliver(item)
                self.messages -= self.sizes.pop(self.written)
            self.written += 1

    def _drop(self) -> None:
        """At the end, or an aborted run: the sessions not written are dropped."""
        for task in self.running:
            task.cancel()
        for item in self.finished.values():
            if isinstance(item, Parked):
                discard_parked(item)
            elif item.prompt_spool is not None:
                item.prompt_spool.close()
        if self.parking is not None:
            self.parking[0].close()
