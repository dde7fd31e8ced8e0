"""A run's stderr: a progress bar on a terminal, and its warnings grouped at the end.

The bar (tqdm, a terminal only) counts input files against their total, with the
sessions and warnings so far and an estimate of the time left; lines printed during
the run (bad input, batch rounds) go above it through ``tqdm.write``, so the bar is never
overwritten. Warnings are counted by kind and printed once, at the end, the first of
each kind with its count (as pytest's "warnings summary" does,
https://docs.pytest.org/en/stable/how-to/capture-warnings.html): a corpus of real logs
gives a hundred warnings of a dozen kinds. ``--warnings all`` prints every one as it
comes, as before.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Callable, Iterable
from typing import IO, Any, TypeVar

import click
from click.core import ParameterSource

from ..reporter import Reporter
from ..terminal import echo, escape_controls, is_terminal

SUMMARY, ALL = "summary", "all"
COMMANDLINE = ParameterSource.COMMANDLINE
F = TypeVar("F", bound=Callable[..., Any])

_warnings_flag = click.option(
    "--warnings",
    "warnings_mode",
    type=click.Choice([SUMMARY, ALL]),
    default=SUMMARY,
    show_default=True,
    help="summary: each kind of warning once at the end, with its count and first "
    "occurrence; all: every warning as it comes.",
)


def warnings_option(command: F) -> F:
    """--warnings; given with --silent (which prints no warning) it is a usage error naming
    both, never one of the two dropped."""

    @functools.wraps(command)
    def checked(*args: Any, **kwargs: Any) -> Any:
        ctx = click.get_current_context()
        if kwargs.get("silent") and ctx.get_parameter_source("warnings_mode") is COMMANDLINE:
            raise click.UsageError(
                "--silent prints no warnings and --warnings chooses how to print them: "
                "drop one of the two"
            )
        return command(*args, **kwargs)

    return _warnings_flag(checked)  # type: ignore[return-value]


# A warning's location: "warning: PATH[:LINE]: " then "session ID: " or "simulations[3]: "
_PATH = re.compile(r"^(?:warning: )?\S.*?(?::\d+)?: ")
_PART = re.compile(r"^(?:session \S+|[\w.]+\[\d+\]|line \d+): ")
_QUOTED = re.compile(r"'[^']*'|`[^`]*`|\"[^\"]*\"")
_FIRST = re.compile(r"\(first: [^)]*\)")
_NUMBERS = re.compile(r"\d+")
_RUNS = re.compile(r"N(?:, N)+")
_PLURAL_Y = re.compile(r"\b(\w+)ies\b")  # "1 canned reply", "2 canned replies": one kind
_MORE = re.compile(r", … \(N more\)")  # a list cut short: "13, 14, … (8 more)"


def warning_kind(message: str) -> str:
    """What a warning says without where or how many: its file, line, session, quoted
    text and numbers left out (two warnings of one kind differ only in those)."""
    text = _PATH.sub("", message, count=1)
    while (part := _PART.match(text)) is not None:
        text = text[part.end() :]
    text = _FIRST.sub("(first: …)", _QUOTED.sub("…", text))
    text = _MORE.sub("", _RUNS.sub("N, …", _NUMBERS.sub("N", text)))
    return _PLURAL_Y.sub(r"\1y", text)


def warnings_summary(messages: Iterable[str]) -> list[str]:
    """The end-of-run lines: each kind once, most frequent first, its first occurrence."""
    kinds: dict[str, list[Any]] = {}  # kind -> [count, first message]
    for message in messages:
        entry = kinds.setdefault(warning_kind(message), [0, message])
        entry[0] += 1
    if not kinds:
        return []
    total = sum(count for count, _ in kinds.values())
    lines = [
        f"tsum: {total} warning(s) of {len(kinds)} kind(s), the first of each "
        "(--warnings all prints every one):"
    ]
    ranked = sorted(kinds.values(), key=lambda entry: -entry[0])  # stable: first seen first
    lines.extend(f"  {count:>4}x {first}" for count, first in ranked)
    return lines


def count_inputs(paths: list[str]) -> int:
    """How many files ``paths`` name (directories walked, globs expanded): the bar's total."""
    from ..formats.inputs import expand_inputs

    return sum(1 for _ in expand_inputs(paths))


class RunStderr(Reporter):
    """The stderr of one run of replay, sweep, compare, eval or inspect (its reporter)."""

    def __init__(
        self,
        paths: list[str],
        *,
        desc: str,
        silent: bool,
        warnings_mode: str = SUMMARY,
        stream: IO[str] | None = None,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.silent = silent
        self.every = warnings_mode == ALL
        self.warnings: list[str] = []
        self.sessions = 0
        self._path: str | None = None
        self.bar: Any = None
        if not silent and is_terminal(self.stream):
            from tqdm import tqdm

            # no monitor thread: it outlives the bar by up to 10 s, and a live thread
            # makes cli.main.exit_now take the interpreter's slow exit
            tqdm.monitor_interval = 0
            self.bar = tqdm(
                total=count_inputs(paths),
                desc=desc,
                file=self.stream,
                leave=False,
                dynamic_ncols=True,
                bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} files"
                "{postfix} [{elapsed}<{remaining}]",
            )
            self._postfix()

    def write(self, message: str) -> None:
        """A line for stderr now: above the bar when there is one."""
        if self.bar is not None:
            self.bar.write(escape_controls(message), file=self.stream)
        elif self.stream is sys.stderr:
            echo(message, err=True)
        else:
            self.stream.write(escape_controls(message) + "\n")

    def warn(self, message: str) -> None:
        if self.silent:
            return
        if self.every:
            self.write(message)
        else:
            self.warnings.append(message)
            self._postfix()

    def error(self, message: str) -> None:
        """Bad input: always printed, at once (a file that could not be read is done)."""
        self.write(message)
        self.files_done(1)

    def say(self, message: str, important: bool = False) -> None:
        if important or not self.silent:
            self.write(message)

    def session(self, path: str | None, result: Any = None) -> None:
        """A session done; a new ``path`` means the file before it is done."""
        self.sessions += 1
        if path is not None and path != self._path:
            if self._path is not None:
                self.files_done(1)
            self._path = path
        self._postfix()

    def files_done(self, count: int) -> None:
        if self.bar is not None and count:
            self.bar.update(count)

    def close(self) -> None:
        """The bar gone, then the warnings summary (once; a later call prints nothing)."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None
        for line in warnings_summary(self.warnings):
            self.write(line)
        self.warnings = []

    def __enter__(self) -> RunStderr:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _postfix(self) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(
                f"{self.sessions} session(s), {len(self.warnings)} warning(s)", refresh=False
            )
            self.bar.update(0)  # drawn at most every mininterval (0.1 s), as update(n) is
