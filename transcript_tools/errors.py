"""Error types. No click here: the CLI maps these to one-line messages and exit codes."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """One table of exit codes, shared by every command (README, --help)."""

    OK = 0  # success / no differences
    DIFFERENCES = 1  # differences found (diff, check)
    USAGE = 2  # bad command line or configuration
    FAILED = 3  # could not run: bad input, auth, cache miss in cache-only mode, zero sessions
    INTERRUPTED = 130  # Ctrl-C


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


class TemplateError(TsumError):
    """A prompt template that cannot be loaded or rendered."""

    exit_code = ExitCode.USAGE


class ProviderError(TsumError):
    """A summary call that failed (network, HTTP status, refusal, empty answer)."""

    def __init__(self, message: str, *, retryable: bool = False, status: int | None = None) -> None:
        self.retryable = retryable
        self.status = status
        super().__init__(message)


class ProviderConfigError(TsumError):
    """A provider that cannot start (unknown name, missing key or model): fails before any work."""

    exit_code = ExitCode.USAGE


class CacheMissError(ProviderError):
    """--cache-only and the response was never recorded."""
