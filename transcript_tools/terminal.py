"""Terminal safety: transcript text never reaches a terminal as a control sequence.

Transcripts are untrusted data. A message holding ``ESC]0;TITLE BEL`` (set the
window title) or ``ESC[2J`` (clear the screen) must show up as text, not act.
Every human-readable output (the replay report, ``inspect``, ``diff``, ``check``,
``sweep`` tables, warnings and errors) goes through ``escape_controls``;
``format`` and ``prompt`` print exact text to a pipe or a file (the text is their
product) and escaped text to a terminal (``for_stream``). On a terminal the bidi
controls and zero-width characters are shown as ``\\uXXXX`` too (``escaper``), so text
cannot reorder or hide itself there. JSON and JSONL outputs keep the exact text: JSON
escapes controls itself.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import IO

# C0 controls except tab (0x09) and newline (0x0a), DEL, and the C1 controls
# (0x80-0x9f: 0x9b is a one-byte CSI, 0x9d a one-byte OSC on terminals that honour them).
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


# Characters a terminal shows as nothing or that reorder what follows: the bidi embeddings,
# overrides and isolates (U+202A-U+202E, U+2066-U+2069; "Trojan Source", CVE-2021-42574,
# https://trojansource.codes), the Arabic letter mark, the zero-width space, joiners and
# marks (U+200B-U+200F), the invisible operators (U+2060-U+2064) and U+FEFF. Shown as
# \uXXXX on a terminal only: a pipe or a file keeps the exact text.
_INVISIBLE = re.compile("[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


def _visible(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def escape_controls(text: str) -> str:
    """``text`` with every C0/C1 control but newline and tab shown as ``\\xNN``."""
    # Fast path: most text holds no control at all.
    if _CONTROLS.search(text) is None:
        return text
    return _CONTROLS.sub(_visible, text)


def escape_invisible(text: str) -> str:
    """``text`` with every bidi control and zero-width character shown as ``\\uXXXX``."""
    if _INVISIBLE.search(text) is None:
        return text
    return _INVISIBLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def escaper(stream: IO[str]) -> Callable[[str], str]:
    """How human-readable text is escaped for ``stream``: controls always; on a terminal,
    the invisible characters too."""
    if is_terminal(stream):
        return lambda text: escape_invisible(escape_controls(text))
    return escape_controls


def is_terminal(stream: IO[str]) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (ValueError, OSError):  # a closed or detached stream
        return False


def for_stream(text: str, stream: IO[str]) -> str:
    """Exact text for a pipe or a file; escaped text for a terminal (``format``, ``prompt``)."""
    return escape_invisible(escape_controls(text)) if is_terminal(stream) else text


def echo(message: str, *, err: bool = False, nl: bool = True) -> None:
    """``click.echo`` of a human-readable message, controls escaped."""
    import click  # the library side of this module stays free of click

    click.echo(escaper(sys.stderr if err else sys.stdout)(message), err=err, nl=nl)
