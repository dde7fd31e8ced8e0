"""What a workflow tells its caller while it runs: one object, handed down every layer.

Replay, sweep, compare, eval, check and fidelity report warnings (data dropped or ignored,
with file:line), errors (an input that could not be read; the run goes on), notes (``say``:
batch rounds), progress (a session or conversation done) and the end of the run.
``cli.progress.RunStderr`` prints them; ``Callbacks`` hands them to plain functions (the
front door's ``warn``); ``Recorder`` keeps a parallel part's for its driver to report in
input order. The outcome's exit code has its own owner (``cli.outcome.finish``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

_log = logging.getLogger("transcript_tools")

# The kinds of event a ``Recorder`` keeps, in order.
WARN, ERROR = "warn", "error"


class Reporter:
    """A run's course as it goes; override what you show (every method may be a no-op)."""

    def warn(self, message: str) -> None:
        _log.warning(message)

    def error(self, message: str) -> None:
        """An input that could not be read (the run goes on without it)."""
        _log.error(message)

    def say(self, message: str, important: bool = False) -> None:
        """A note for whoever runs it (``important``: shown even when asked for silence)."""

    def session(self, path: str | None, result: Any = None) -> None:
        """A session or conversation done: its file (None: done in a parallel part) and,
        in a replay run here, its ``SessionResult``."""

    def files_done(self, count: int) -> None:
        """Files a parallel part finished reading."""

    def end(self, result: Any, state: str) -> None:
        """The run is over (``state``: complete, interrupted or failed), before an
        exception propagates."""


class Callbacks(Reporter):
    """Functions as a reporter (the front door's ``warn`` / ``error`` / ``on_session``):
    errors go to ``warn`` unless ``error`` is given, notes to ``warn`` unless ``say`` is."""

    def __init__(
        self,
        warn: Callable[[str], None],
        error: Callable[[str], None] | None = None,
        on_session: Callable[[Any], None] | None = None,
        say: Callable[[str, bool], None] | None = None,
    ) -> None:
        self._warn, self._error, self.on_session = warn, error or warn, on_session
        self._say = say

    def warn(self, message: str) -> None:
        self._warn(message)

    def error(self, message: str) -> None:
        self._error(message)

    def say(self, message: str, important: bool = False) -> None:
        if self._say is not None:
            self._say(message, important)
        else:
            self._warn(message)

    def session(self, path: str | None, result: Any = None) -> None:
        if self.on_session is not None and result is not None:
            self.on_session(result)


def session_warning(where: str, session_id: str, warning: str) -> str:
    """A session's own warning (its reader's: data dropped or ignored; the replay's) as
    every command prints it: ``where`` is its file, or ``file:line``."""
    return f"warning: {where}: session {session_id}: {warning}"


def ignore(_message: str) -> None:
    """The warn / error function that drops the message (the front door's default)."""


LOGGED = Reporter()  # a driver's default: warnings and errors to logging, nothing else
QUIET = Callbacks(ignore)  # a workflow's default: nothing at all


def notes_only(reporter: Reporter) -> Reporter:
    """``reporter``'s notes (``say``) alone: a pass whose input another pass reports."""
    return Callbacks(ignore, say=reporter.say)


class Recorder(Reporter):
    """Warnings and errors kept in order (a parallel part's), for ``replay_to``."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def warn(self, message: str) -> None:
        self.events.append((WARN, message))

    def error(self, message: str) -> None:
        self.events.append((ERROR, message))


def replay_to(reporter: Reporter, events: list[tuple[str, Any]]) -> None:
    """A part's warnings and errors reported as they happened there."""
    for kind, message in events:
        (reporter.warn if kind == WARN else reporter.error)(message)
