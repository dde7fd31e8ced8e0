"""Error types. No click here: the CLI maps these to one-line messages and exit codes."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """One table of exit codes, shared by every command (docs/cli.md, --help: EXIT_CODE_MEANINGS)."""

    OK = 0  # success / no differences
    DIFFERENCES = 1  # differences found (diff, check)
    USAGE = 2  # bad command line or configuration
    FAILED = 3  # could not run: bad input, auth, cache miss in cache-only mode, zero sessions
    INTERNAL = 4  # an unexpected exception: a bug in tsum, never read as "differences found"
    INTERRUPTED = 130  # Ctrl-C
    BROKEN_PIPE = 141  # 128 + SIGPIPE, as a shell reports a pipeline cut short
    TERMINATED = 143  # 128 + SIGTERM: timeout(1), systemd, a container stop, a CI cancel


# What each code means, in the words `tsum --help` and docs/cli.md's table show (`code`
# spans: Markdown in docs/cli.md, never broken over two lines in --help).
EXIT_CODE_MEANINGS: dict[ExitCode, str] = {
    ExitCode.OK: "success; no differences (`diff`, `check`)",
    ExitCode.DIFFERENCES: (
        "differences found (`diff`, `check`); agreement under `--min-agreement` (`fidelity`)"
    ),
    ExitCode.USAGE: (
        "usage error: bad option, configuration or template, unknown provider, missing key or "
        "model, an output refused before the run (no such folder, read-only)"
    ),
    ExitCode.FAILED: (
        "could not run: bad input, cache miss with `--cache-only`, zero sessions processed, "
        "every summary call of the run failed or its provider failed 5 in a row, an output that fails while written "
        "(a full or read-only disk), a missing, corrupt, incomplete or incompatible "
        "output directory or baseline (`diff`, `check`)"
    ),
    ExitCode.INTERNAL: "internal error: a bug in tsum (`tsum --debug ...` shows the traceback)",
    ExitCode.INTERRUPTED: "interrupted (Ctrl-C); everything already written is kept",
    ExitCode.BROKEN_PIPE: "stdout was closed by its reader (`tsum ... | head`)",
    ExitCode.TERMINATED: (
        "terminated (SIGTERM: `timeout`, a CI cancel); stopped as on Ctrl-C, workers ended"
    ),
}


def error_line(message: str) -> str:
    """The one form of an error on stderr, whoever prints it: ``tsum: error: MESSAGE``
    (an expected error ending the command, or an input that could not be read)."""
    return f"tsum: error: {message}"


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the run is (``cli.main`` installs the handler): a
    ``KeyboardInterrupt``, so every path that stops cleanly on Ctrl-C (the pool's workers
    ended, the manifest marked interrupted) does the same here."""


class TsumError(Exception):
    """Base of every expected error: shown as one line, never as a traceback."""

    exit_code: ExitCode = ExitCode.FAILED


class ConfigError(TsumError):
    """Invalid configuration or command line."""

    exit_code = ExitCode.USAGE


class InputError(TsumError):
    """Bad input at a known place: rendered as ``path:line: message``."""

    def __init__(
        self, path: str, line: int | None, message: str, *, item: int | None = None
    ) -> None:
        self.path = path
        self.line = line
        self.item = item  # 0-based element of a whole-file JSON array, when that is the unit
        self.message = message
        super().__init__(self.location_text())

    def location_text(self) -> str:
        if self.line:
            where = f"{self.path}:{self.line}"
        elif self.item is not None:
            where = f"{self.path}[{self.item}]"
        else:
            where = self.path
        return f"{where}: {self.message}"


class UnknownFormatError(InputError):
    """No reader recognises the file."""


class TemplateError(ConfigError):
    """A prompt template that cannot be loaded or rendered. A ``ConfigError`` (a setting
    that cannot work, as the README says): ``except ConfigError`` catches a bad prompt too."""

    exit_code = ExitCode.USAGE


class ProviderError(TsumError):
    """A summary call that failed (network, HTTP status, refusal, empty answer)."""

    def __init__(self, message: str, *, retryable: bool = False, status: int | None = None) -> None:
        self.retryable = retryable
        self.status = status
        super().__init__(message)


class ProviderConfigError(ConfigError):
    """A provider that cannot start (unknown name, missing key or model): fails before any
    work. A ``ConfigError``: ``except ConfigError`` catches a missing API key too."""

    exit_code = ExitCode.USAGE
