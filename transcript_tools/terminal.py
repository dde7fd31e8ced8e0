"""Terminal safety: transcript text never reaches a terminal as a control sequence.

Transcripts are untrusted data. A message holding ``ESC]0;TITLE BEL`` (set the
window title) or ``ESC[2J`` (clear the screen) must show up as text, not act.
Every human-readable output (the replay report, ``inspect``, ``diff``, ``check``,
``sweep`` tables, warnings and errors) goes through ``escape_controls``;
``format`` and ``prompt`` print exact text to a pipe or a file (the text is their
product) and escaped text to a terminal (``for_stream``). JSON and JSONL outputs
keep the exact text: JSON escapes controls itself.
"""

from __future__ import annotations

import re
from typing import IO

# C0 controls except tab (0x09) and newline (0x0a), DEL, and the C1 controls
# (0x80-0x9f: 0x9b is a one-byte CSI, 0x9d a one-byte OSC on terminals that honour them).
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _visible(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def escape_controls(text: str) -> str:
    """``text`` with every C0/C1 control but newline and tab shown as ``\\xNN``."""
    # Fast path: most text holds no control at all.
    if _CONTROLS.search(text) is None:
        return text
    return _CONTROLS.sub(_visible, text)


def is_terminal(stream: IO[str]) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (ValueError, OSError):  # a closed or detached stream
        return False


def for_stream(text: str, stream: IO[str]) -> str:
    """Exact text for a pipe or a file; escaped text for a terminal (``format``, ``prompt``)."""
    return escape_controls(text) if is_terminal(stream) else text


def echo(message: str, *, err: bool = False, nl: bool = True) -> None:
    """``click.echo`` of a human-readable message, controls escaped."""
    import click  # the library side of this module stays free of click

    click.echo(escape_controls(message), err=err, nl=nl)


class EscapingWriter:
    """A text stream wrapper whose ``write`` escapes controls (the replay report's stdout)."""

    __slots__ = ("stream",)

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(escape_controls(text))

    def flush(self) -> None:
        self.stream.flush()
