"""Replaying a corpus: inputs → conversations → sessions → records, in input order.

Sessions run concurrently (each has at most one summary request in flight; the
executor caps the calls at ``concurrency``); a session starts whenever any running
one ends, and finished sessions wait in a bounded reorder buffer (``window_bounds``)
so that results reach the sink strictly in input order: outputs are byte-identical
whatever the concurrency.
"""

from __future__ import annotations

import asyncio
import glob
import heapq
import os
import tempfile
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any, Protocol

import orjson

from .config import Checkpoint, Measure, ReplaySettings, TurnPath
from .errors import InputError
from .formats import read_input
from .formats.source import Source
from .messages import (
    AssistantMessage,
    Conversation,
    Message,
    ToolResultMessage,
    ToolUseBlock,
)
from .providers.executor import SummaryExecutor
from .rules import FIRED, Decision, compaction_turn, fixed_cadence, unit_starts
from .rules import split_turns as split_turns  # re-exported: callers import it from here
from .rules import turn_starts as turn_starts  # re-exported: callers import it from here
from .session import SessionEngine

OUTPUT_MARKER = ".tsum-output"  # written by outputs.OutputDirectory
# Aider's logs are plain text under fixed names (``.aider.chat.history.md``, and
# ``.aider.llm.history`` or ``<name>.aider.llm.history`` when renamed).
TRANSCRIPT_SUFFIXES = (".jsonl", ".json", ".traj", ".aider.chat.history.md", ".aider.llm.history")
SKIPPED_SUFFIXES = (".meta.json",)


@dataclass(slots=True)
class InputFile:
    path: str
    from_directory: bool = False  # found by walking a directory: undetectable files are warnings


def expand_inputs(paths: list[str] | list[InputFile]) -> Iterator[InputFile]:
    """Files, directories (recursing into transcript files, sorted), globs, and ``-``."""
    for spec in paths:
        if isinstance(
            spec, InputFile
        ):  # already expanded: one file of a parallel run (parallel.py)
            yield spec
            continue
        if spec == "-":
            yield InputFile("-")
            continue
        path = Path(spec)
        if path.is_dir():
            # tsum's own output folders (marked by OutputDirectory) are not inputs
            outputs = {marker.parent for marker in path.rglob(OUTPUT_MARKER)}
            found = sorted(
                str(p)
                for p in path.rglob("*")
                if p.is_file()
                and p.name.endswith(TRANSCRIPT_SUFFIXES)
                and not p.name.endswith(SKIPPED_SUFFIXES)
                and not (outputs and any(parent in outputs for parent in p.parents))
            )
            for name in found:
                yield InputFile(name, from_directory=True)
            continue
        if not path.exists() and any(ch in spec for ch in "*?["):
            matches = sorted(glob.glob(spec, recursive=True))
            if matches:
                for name in matches:
                    if os.path.isfile(name):
                        yield InputFile(name)
                continue
        yield InputFile(spec)  # a missing path fails when read, with its name


def unique_name(name: str, taken: set[str], sep: str) -> str:
    """``name``, or ``name{sep}2``, ``name{sep}3``… whichever is not taken yet (then taken)."""
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        candidate = f"{name}{sep}{n}"
    taken.add(candidate)
    return candidate


def tool_oddities(messages: list[Message]) -> list[str]:
    """Warnings for tool results with no matching call and calls never answered."""
    calls: dict[str, int] = {}
    orphans: list[str] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            for block in message.blocks:
                if isinstance(block, ToolUseBlock) and block.id:
                    calls[block.id] = 0
        elif isinstance(message, ToolResultMessage):
            call_id = message.tool_call_id
            if call_id in calls:
                calls[call_id] += 1
            elif call_id:
                orphans.append(call_id)
    unanswered = [cid for cid, n in calls.items() if n == 0]
    out = []
    if orphans:
        out.append(f"{len(orphans)} tool result(s) with no matching call (first: {orphans[0]})")
    if unanswered:
        out.append(f"{len(unanswered)} tool call(s) never answered (first: {unanswered[0]})")
    return out


def compaction_by_turn(
    conv: Conversation, turns: list[tuple[int, list[Message]]]
) -> dict[int, list[dict[str, Any]]]:
    """Recorded compactions, reported at the last turn before them (the agent compacted after it)."""
    return _compactions_at(conv, [start for start, _ in turns])


def _compactions_at(conv: Conversation, starts: list[int]) -> dict[int, list[dict[str, Any]]]:
    """``compaction_by_turn`` from the turns' start indices."""
    out: dict[int, list[dict[str, Any]]] = {}
    for comp in conv.compactions:
        entry: dict[str, Any] = {"source": comp.source}
        if comp.pre_tokens is not None:
            entry["pre_tokens"] = comp.pre_tokens
        out.setdefault(compaction_turn(starts, comp.message_index), []).append(entry)
    return out


@dataclass(slots=True)
class SessionResult:
    conversation: Conversation
    engine: SessionEngine
    turns: int
    warnings: list[str] = field(default_factory=list)
    prompt_spool: IO[bytes] | None = None  # prompts.jsonl lines of this session, when spooled


PROMPT_SPOOL_MEMORY = 4 << 20  # bytes of prompts kept in memory before spilling to a temp file


def _prompt_line(sha: str, text: str) -> bytes:
    return orjson.dumps({"sha256": sha, "text": text}, option=orjson.OPT_SORT_KEYS) + b"\n"


async def replay_conversation(
    conv: Conversation,
    settings: ReplaySettings,
    executor: SummaryExecutor | None,
    provider_name: str,
    template: Any,
    *,
    spool_prompts: bool = False,
) -> SessionResult:
    """Run one conversation through the checkpoint, turn by turn.

    With ``spool_prompts`` the rendered prompts go to a temporary file as they are
    made (``SessionResult.prompt_spool``) instead of staying in memory.
    """
    settings, window = session_window(conv, settings)
    engine = SessionEngine(
        conv.session_id, settings, provider_name=provider_name, template=template
    )
    spool: IO[bytes] | None = None
    if spool_prompts:
        spool = tempfile.SpooledTemporaryFile(max_size=PROMPT_SPOOL_MEMORY)
        write = spool.write

        def sink(sha: str, text: str) -> None:
            write(_prompt_line(sha, text))

        engine.prompt_sink = sink
    # Each turn's messages are sliced when it is replayed, not all up front: fewer
    # objects alive at once (the cyclic GC walks every live container).
    history = conv.messages
    starts = unit_starts(history, settings.checkpoint)  # turns, or calls (--checkpoint call)
    ends = [*starts[1:], len(history)] if starts else []
    compactions = _compactions_at(conv, starts)  # in the configuration's unit
    stream = settings.path is TurnPath.STREAM
    for turn_number, (start, end) in enumerate(zip(starts, ends, strict=True)):
        messages = history[start:end]
        annotations = (
            {"recorded_compaction": compactions[turn_number]}
            if turn_number in compactions
            else None
        )
        if window is not None:
            annotations = {**(annotations or {}), **window}
        if stream:
            engine.submit_turn_stream(messages, annotations=annotations)
            request = engine.finalize_turn()
        else:
            request = engine.submit_turn(messages, annotations=annotations)
        if request is not None:
            assert executor is not None, "a summary request needs an executor (or dry_run)"
            # the session with the most turns left goes first when every slot is busy:
            # its chain of summaries is what the run waits for at the end
            left = len(starts) - turn_number
            engine.complete_summary(await executor.execute(request, priority=-left))
    warnings = list(conv.warnings) + tool_oddities(conv.messages)
    if not conv.messages:
        warnings.append(
            f"no messages read as {conv.format} (is the file in that format? see --format)"
        )
    cadence = fixed_cadence_warning(engine)
    if cadence:
        warnings.append(cadence)
    # person turns in both modes (with --checkpoint call, ``starts`` are the calls)
    return SessionResult(conv, engine, len(engine.slot.units.turn_starts), warnings, spool)


def session_window(
    conv: Conversation, settings: ReplaySettings
) -> tuple[ReplaySettings, dict[str, Any] | None]:
    """``--max-context-tokens auto``: the window the log records (from ``"log"``), else
    the configured one (``"default"``), and the record fields that say which; ``None``
    without auto (default records unchanged)."""
    cfg = settings.summary
    if not settings.auto_window or cfg is None:
        return settings, None
    source = "default"
    if conv.context_window:
        cfg = replace(cfg, max_context_tokens=conv.context_window)
        settings, source = replace(settings, summary=cfg), "log"
    return settings, {
        "max_context_tokens": cfg.max_context_tokens,
        "max_context_tokens_from": source,
    }


def fixed_cadence_warning(engine: SessionEngine) -> str | None:
    """Say so when the run degenerated into one summary every ``debounce_turns`` turns."""
    cfg = engine.settings.summary
    decisions = [d["decision"] for d in engine.decisions]
    if cfg is None or not fixed_cadence(decisions, cfg.debounce_turns):
        return None
    unit = "call" if engine.settings.checkpoint is Checkpoint.CALL else "turn"
    first = next(d[unit] for d in engine.decisions if d["decision"] in FIRED)
    hint = (
        " (the cumulative cost_so_far never goes down; --measure current follows the context size)"
    )
    return (
        f"the watermark stayed over the line after {unit} {first}: the checkpoint fired every "
        f"{max(cfg.debounce_turns, 1)} {unit}(s) from then on, whatever the conversation did"
        + (hint if engine.settings.measure is Measure.CUMULATIVE else "")
    )


# Sessions in flight: twice the call slots. A session has at most one call in flight
# and replays turns (CPU only) between two calls, and sessions are indivisible chains:
# with only as many sessions as slots, the last sessions of a corpus start late and
# run their whole chain with most slots idle. With twice as many, the surplus waits
# for a slot (the executor caps calls at ``concurrency`` and gives a free slot to the
# session with the most turns left, so the longest chain never queues behind short ones).
SESSIONS_PER_SLOT = 4
# The reorder buffer: while a long session at the head runs its chain of N summaries,
# every other slot finishes sessions of a few summaries each, and all of them wait for
# the head: REORDER_PER_SLOT x concurrency finished sessions cover a head several times
# longer (in summaries) than the average session before reading has to pause.
REORDER_PER_SLOT = 16
READ_AHEAD_STEP = 32  # conversations read ahead per session end, beyond the free slots


def window_bounds(
    concurrency: int, sessions: int | None = None, reorder: int | None = None
) -> tuple[int, int]:
    """(sessions running at most, sessions held between reading and writing at most).

    Memory bound: at most ``held`` conversations (with their records) are alive at
    once, whatever the sessions' lengths: the ``running`` ones, those read ahead, and
    the finished ones waiting in the reorder buffer for an earlier one to be written.
    Defaults for ``-j J``: ``running = 2 J``, ``held = running + 8 J = 10 J`` (J=8: 16
    and 80; J=32: 64 and 320; J=128: 256 and 1,280).
    """
    calls = max(1, concurrency)
    running = max(1, sessions if sessions is not None else SESSIONS_PER_SLOT * calls)
    buffered = reorder if reorder is not None else REORDER_PER_SLOT * calls
    return running, running + max(0, buffered)


class Sink(Protocol):
    spool_prompts: bool  # True: the sink writes prompts, so sessions spool them to temp files

    def write_session(self, result: SessionResult) -> None: ...


@dataclass(slots=True)
class RunStats:
    files: int = 0
    failed_files: int = 0
    sessions: int = 0
    turns: int = 0
    calls: int = 0  # checkpoint units with --checkpoint call (0 otherwise)
    summaries_ok: int = 0
    summaries_failed: int = 0
    would_summarize: int = 0
    warnings: int = 0
    errors: list[str] = field(default_factory=list)
    interrupted: bool = False


@dataclass
class ReplayRun:
    """Drives a whole corpus through ``replay_conversation`` into a sink."""

    settings: ReplaySettings
    executor: SummaryExecutor | None
    sink: Sink
    provider_name: str = "offline"
    template: Any = None
    fmt: str | None = None
    skip_bad_lines: bool = False
    concurrency: int = 1
    # None: derived from ``concurrency`` (``window_bounds``)
    sessions: int | None = None
    reorder: int | None = None
    warn: Callable[[str], None] = print
    error: Callable[[str], None] = print
    on_session: Callable[[SessionResult], None] | None = None
    stats: RunStats = field(default_factory=RunStats)
    _seen_ids: set[str] = field(default_factory=set)

    def conversations(
        self, paths: list[str] | list[InputFile]
    ) -> Generator[Conversation, None, None]:
        """The conversations of every input, in order. (The garbage collector's state is
        the host's business: library code never changes it.)"""
        for item in expand_inputs(paths):
            self.stats.files += 1
            source = Source(item.path, skip_bad_lines=self.skip_bad_lines, warn=self._warn)
            try:
                for conv in read_input(source, self.fmt, from_directory=item.from_directory):
                    conv.session_id = unique_name(conv.session_id, self._seen_ids, "#")
                    yield conv
            except InputError as exc:
                self.stats.failed_files += 1
                self.stats.errors.append(exc.location_text())
                self.error(f"error: {exc.location_text()}")

    def _warn(self, message: str) -> None:
        self.stats.warnings += 1
        self.warn(message)

    async def run(self, paths: list[str]) -> RunStats:
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
        finished: dict[int, SessionResult] = {}  # the reorder buffer, by input position
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
        try:
            while True:
                # Read what the free slots need plus a few more each time a session ends,
                # so the first calls go out before the whole lookahead has been parsed.
                until = read + running_limit - len(running) + READ_AHEAD_STEP
                while (
                    not exhausted
                    and read < until
                    and read - written < held_limit
                    and len(ready) < lookahead
                ):
                    conv = next(reader, None)
                    if conv is None:
                        exhausted = True
                        break
                    ready[read] = conv
                    heapq.heappush(longest, (-len(conv.messages), read))
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
                        )
                    )
                    task.add_done_callback(on_done)
                    running[task] = position
                if not running:
                    break
                await wake.wait()
                wake.clear()
                while ended:
                    task = ended.pop()
                    finished[running.pop(task)] = task.result()  # an exception propagates
                while written in finished:
                    self._deliver(finished.pop(written))
                    written += 1
        finally:
            reader.close()  # closes the input file now, not when the generator is collected
            for task in running:
                task.cancel()
            for result in finished.values():  # aborted: buffered sessions are dropped
                if result.prompt_spool is not None:
                    result.prompt_spool.close()
        return self.stats

    def _deliver(self, result: SessionResult) -> None:
        stats = self.stats
        stats.sessions += 1
        stats.turns += result.turns
        if result.engine.settings.checkpoint is Checkpoint.CALL:
            stats.calls += len(result.engine.slot.turn_starts)
        for summary in result.engine.summaries:
            if summary["status"] == "ok":
                stats.summaries_ok += 1
            else:
                stats.summaries_failed += 1
        stats.would_summarize += sum(
            1 for d in result.engine.decisions if d["decision"] == Decision.WOULD_SUMMARIZE
        )
        for warning in result.warnings:
            self._warn(
                f"warning: {result.conversation.path}: session {result.conversation.session_id}: {warning}"
            )
        self.sink.write_session(result)
        if self.on_session is not None:
            self.on_session(result)
