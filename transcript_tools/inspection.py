"""What is in transcript files: per session, format, turns, messages, tools, tokens, compactions.

Recorded tokens are the sum of the usage the log recorded on assistant messages (one
entry per LLM call); estimated tokens are tsum's character-class estimate of every
message. Where usage is recorded, each call's prompt is also estimated the way a replay
without usage would (all messages before the call, restarting at a recorded compaction)
and compared with the recorded ``input_tokens``: the relative error's median and p90 say
how far estimates can be trusted for that kind of log (system prompts and tool schemas
the log does not contain make estimates low).
"""

from __future__ import annotations

import math
import statistics
import sys
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from .engine.composition import context_by_kind, context_overflows
from .engine.messages import AssistantMessage, Conversation, SystemMessage, ToolUseBlock
from .engine.rules import compaction_turn, is_model_call, last_call_end, split_turns
from .engine.tokens import estimate_message_tokens
from .errors import InputError
from .formats import read_input
from .formats.inputs import InputFile, expand_inputs
from .formats.source import Source
from .parallel.job import SESSION
from .parallel.pool import Backend, ordered_parts, plan
from .reporter import ERROR, WARN, session_warning

ROLES = ("system", "user", "user_image", "assistant", "tool")


@dataclass(frozen=True, slots=True)
class EstimateError:
    """How far per-call prompt estimates are from the recorded input tokens."""

    calls: int
    median: float  # median of |estimate - recorded| / recorded
    p90: float  # 90th percentile (nearest rank) of the same
    bias: float  # median of (estimate - recorded) / recorded: negative = estimates too low


@dataclass(frozen=True, slots=True)
class CompactionInfo:
    turn: int  # the last turn before the compaction (as replay reports it)
    message_index: int
    source: str
    pre_tokens: int | None


@dataclass(frozen=True, slots=True)
class SessionInfo:
    path: str
    session_id: str
    format: str
    line: int | None
    turns: int
    model_calls: int  # assistant messages a model wrote: the units of --checkpoint call
    messages: dict[str, int]
    tool_calls: int
    calls_with_usage: int
    recorded_tokens: int | None  # None: the log records no usage
    estimated_tokens: int
    estimate_error: EstimateError | None
    largest_context: int
    largest_context_kind: str  # "recorded" (max input_tokens of a call) or "estimated"
    context_window: int | None
    compactions: tuple[CompactionInfo, ...]
    warnings: tuple[str, ...]
    context_by_kind: dict[str, int]  # estimated tokens per kind (engine/composition.py)
    commands: dict[str, int]  # slash commands the log records: /clear, /compact, ...
    context_overflows: int  # calls that failed with "prompt is too long"
    # What reading its file printed (``file:line: …``) while this session was read, or
    # after the file's last session: on stderr as it came; in --json with the session's own.
    file_warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        err = self.estimate_error
        return {
            "path": self.path,
            "session_id": self.session_id,
            "format": self.format,
            "line": self.line,
            "turns": self.turns,
            "calls": self.model_calls,
            "messages": {**self.messages, "total": sum(self.messages.values())},
            "tool_calls": self.tool_calls,
            "calls_with_usage": self.calls_with_usage,
            "recorded_tokens": self.recorded_tokens,
            "estimated_tokens": self.estimated_tokens,
            "estimate_error": None
            if err is None
            else {
                "calls": err.calls,
                "median": round(err.median, 4),
                "p90": round(err.p90, 4),
                "bias": round(err.bias, 4),
            },
            "largest_context": {"tokens": self.largest_context, "kind": self.largest_context_kind},
            "context_window": self.context_window,
            "compactions": [asdict(c) for c in self.compactions],
            "warnings": [*self.file_warnings, *self.warnings],
            "context_by_kind": self.context_by_kind,
            "commands": self.commands,
            "context_overflows": self.context_overflows,
        }


def _p90(sorted_values: list[float]) -> float:
    return sorted_values[max(math.ceil(0.9 * len(sorted_values)) - 1, 0)]


def inspect_conversation(conv: Conversation) -> SessionInfo:
    """Statistics of one conversation; O(messages)."""
    messages = conv.messages
    roles = dict.fromkeys(ROLES, 0)
    tool_calls = 0
    recorded = 0
    calls = 0
    max_input = 0
    errors: list[float] = []
    estimated = 0
    system_tokens = 0
    view = 0  # estimated size of what the model saw so far
    max_view = 0
    resets = {c.message_index for c in conv.compactions}
    measured_end = last_call_end(messages)  # a view counts when a model is called with it
    for index, message in enumerate(messages):
        roles[message.role] = roles.get(message.role, 0) + 1
        if index in resets:
            view = system_tokens  # the agent compacted: only the system prompt carries over
        if isinstance(message, AssistantMessage):
            tool_calls += sum(isinstance(b, ToolUseBlock) for b in message.blocks)
            usage = message.usage
            if usage is not None:
                calls += 1
                recorded += usage.total_tokens
                max_input = max(max_input, usage.input_tokens)
                if usage.input_tokens > 0:
                    errors.append((view - usage.input_tokens) / usage.input_tokens)
        tokens = estimate_message_tokens(message)
        estimated += tokens
        view += tokens
        if index < measured_end:
            max_view = max(max_view, view)
        if isinstance(message, SystemMessage):
            system_tokens += tokens
    error = None
    if errors:
        magnitudes = sorted(abs(e) for e in errors)
        error = EstimateError(
            len(errors), statistics.median(magnitudes), _p90(magnitudes), statistics.median(errors)
        )
    turns = split_turns(messages)
    starts = [start for start, _ in turns]
    compactions = tuple(
        CompactionInfo(
            compaction_turn(starts, c.message_index),
            c.message_index,
            c.source,
            c.pre_tokens,
        )
        for c in conv.compactions
    )
    return SessionInfo(
        path=conv.path,
        session_id=conv.session_id,
        format=conv.format,
        line=conv.line,
        turns=len(turns),
        model_calls=sum(1 for m in messages if is_model_call(m)),
        messages=roles,
        tool_calls=tool_calls,
        calls_with_usage=calls,
        recorded_tokens=recorded if calls else None,
        estimated_tokens=estimated,
        estimate_error=error,
        largest_context=max_input if calls else max_view,
        largest_context_kind="recorded" if calls else "estimated",
        context_window=conv.context_window,
        compactions=compactions,
        warnings=tuple(conv.own_warnings()),
        context_by_kind=context_by_kind(messages),
        commands=dict(conv.commands),
        context_overflows=context_overflows(messages),
    )


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


@dataclass
class InspectRun:
    """Inspect files and directories; iterate it for one SessionInfo per session.

    Bad input (``InputError``) goes to ``error`` and the other files go on; ``failed``
    counts the files that failed, ``errors`` keeps their errors. In a directory, a file
    whose format cannot be told is a warning, not a failure: ``skipped`` keeps each file
    read without a session or an error, with what reading it printed.
    """

    paths: list[str]
    fmt: str | None = None
    skip_bad_lines: bool = False
    warn: Callable[[str], None] = _stderr
    error: Callable[[InputError], None] = field(default=lambda exc: _stderr(exc.location_text()))
    files: int = 0
    failed: int = 0
    sessions: int = 0
    errors: list[InputError] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)

    def fail(self, exc: InputError) -> None:
        """A file that failed: counted, kept, and said (``error``)."""
        self.failed += 1
        self.errors.append(exc)
        self.error(exc)

    def __iter__(self) -> Iterator[SessionInfo]:
        said: list[str] = []  # what reading a file printed since its last session

        def warn(message: str) -> None:
            self.warn(message)
            said.append(message.removeprefix("warning: "))

        for item in expand_inputs(self.paths, self.warn):  # a repeat: said, not read
            said.clear()
            source = Source(item.path, skip_bad_lines=self.skip_bad_lines, warn=warn)
            self.files += 1  # every input file, read or skipped, as CorpusReader counts
            last: SessionInfo | None = None  # the file's latest session: later warnings join it
            failed = False
            try:
                for conv in read_input(source, self.fmt, from_directory=item.from_directory):
                    self.sessions += 1
                    last = inspect_conversation(conv)
                    last.file_warnings.extend(said)
                    said.clear()
                    yield last
            except InputError as exc:
                failed = True
                self.fail(exc)
            if last is not None:
                last.file_warnings.extend(said)
            elif not failed:
                self.skipped.append(SkippedFile(source.display, list(said)))


# ---- on a pool or Ray (inspect --workers / --ray) ---------------------------------------


@dataclass(slots=True)
class InspectPart:
    events: list[tuple[str, Any]]
    files: int
    names: set[str] = field(default_factory=set)
    skipped: list[SkippedFile] = field(default_factory=list)


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
        return InspectPart(events, run.files, skipped=run.skipped)


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
                run.fail(cls(path, line, message, item=item))
            else:
                run.sessions += 1
                yield value
        run.files += part.files
        run.skipped += part.skipped


@dataclass(frozen=True, slots=True)
class SkippedFile:
    """A file read without a session or an error (in a directory: not a transcript, a
    binary file; or a log holding no session), and what reading it printed."""

    path: str
    warnings: list[str]


@dataclass(slots=True)
class InspectResult:
    """Every session's ``SessionInfo``, in input order, and the counts of the run; the
    files that failed (``errors``) and those read without a session (``skipped``)."""

    sessions: list[SessionInfo]
    files: int = 0
    failed: int = 0  # files that could not be read
    errors: list[InputError] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)

    def __repr__(self) -> str:  # counts, not every session's statistics
        return f"<InspectResult {len(self.sessions)} session(s) in {self.files} file(s), {self.failed} failed>"

    @property
    def ok(self) -> bool:
        return not self.failed and bool(self.sessions)

    def to_json(self) -> dict[str, Any]:
        """``tsum inspect --json --with-errors``: the sessions (``--json``'s list, each
        entry as there), the counts, and every file that gave no session or failed, so
        that the document alone says what it leaves out (docs/cli.md, docs/formats.md)."""
        return {
            "sessions": [info.to_json() for info in self.sessions],
            "files": self.files,
            "failed": self.failed,
            "errors": [
                {"path": e.path, "line": e.line, "item": e.item, "error": e.message}
                for e in self.errors
            ],
            "skipped": [{"path": s.path, "warnings": s.warnings} for s in self.skipped],
        }


def inspect_paths(
    paths: list[str],
    *,
    fmt: str | None = None,
    skip_bad_lines: bool = False,
    backend: Backend | None = None,
    warn: Callable[[str], None] = _stderr,
    error: Callable[[InputError], None] | None = None,
    on_session: Callable[[SessionInfo], None] | None = None,
) -> InspectResult:
    """Inspect ``paths`` (spread over ``backend`` when given); a session's own warnings
    go to ``warn`` as they are found, naming its file and id; ``on_session`` gets each
    session's statistics as they come (progress)."""
    run = InspectRun(list(paths), fmt=fmt, skip_bad_lines=skip_bad_lines, warn=warn)
    if error is not None:
        run.error = error
    infos: list[SessionInfo] = []
    for info in iter_inspect(run, backend or Backend()):
        infos.append(info)
        for warning in info.warnings:
            warn(session_warning(info.path, info.session_id, warning))
        if on_session is not None:
            on_session(info)
    return InspectResult(infos, run.files, run.failed, run.errors, run.skipped)
