"""What one input may take: a record's size and a value's nesting, bounded.

A hostile or broken log must cost its own file, never the run: a JSON line nested a
thousand levels parses (orjson reads up to 1,024) but breaks every later step that
walks it (``repr`` recursion, and orjson writes at most 255 levels: orjson's README,
"Serialize", ``JSONEncodeError``), and a line of a gigabyte takes several gigabytes to
parse. Both are bad input: one error naming the file and where, the rest of the corpus
goes on.
"""

from __future__ import annotations

import os
import stat
import sys
from typing import Any, BinaryIO

from ..engine.messages import (
    AssistantMessage,
    Conversation,
    OtherBlock,
    ToolUseBlock,
    UserImageMessage,
    UserMessage,
)
from ..errors import ConfigError, InputError
from .inputs import own_output

# A record's values nest at most this deep: room under orjson's 255 for the levels the
# output files wrap around a value (a compressed transcript's message and block).
MAX_NESTING_DEPTH = 200

# One record (a JSONL line, a whole-file JSON document, a SQLite file) is at most this
# many bytes unless TSUM_MAX_RECORD_BYTES says otherwise: parsing takes about 4x its size
# in memory.
MAX_RECORD_BYTES_ENV = "TSUM_MAX_RECORD_BYTES"
DEFAULT_MAX_RECORD_BYTES = 256 * 1024 * 1024


def max_record_bytes() -> int:
    """The bound of one record: ``TSUM_MAX_RECORD_BYTES`` (a positive integer), else 256 MiB."""
    raw = os.environ.get(MAX_RECORD_BYTES_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_RECORD_BYTES
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if not 0 < value < 2**63:
        raise ConfigError(f"{MAX_RECORD_BYTES_ENV}: must be a positive integer, got {raw[:40]!r}")
    return value


def record_too_large(path: str, line: int | None, limit: int) -> InputError:
    """The error for a record over ``limit`` bytes: names the limit and how to raise it."""
    return InputError(
        path,
        line,
        f"a record of more than {limit:,} bytes (the limit per record; "
        f"{MAX_RECORD_BYTES_ENV}=<bytes> raises it)",
    )


# How long a FIFO named on the command line may stay without a writer: a process
# substitution (<(cmd)) connects at once; a FIFO nobody writes to would block forever.
FIFO_WAIT_SECONDS = 10.0
_CHUNK = 1 << 20


def read_stream(handle: BinaryIO, display: str, limit: int) -> bytes:
    """All of ``handle`` (stdin, a FIFO, a device, a file larger than ``limit``), refusing
    to read past ``limit`` bytes without a newline: ``/dev/zero`` or endless newline-less
    input ends in this error, not in MemoryError."""
    chunks: list[bytes] = []
    run = 0  # bytes since the last newline
    while chunk := handle.read(_CHUNK):
        newline = chunk.rfind(b"\n")
        run = len(chunk) - newline - 1 if newline >= 0 else run + len(chunk)
        if run > limit:
            raise record_too_large(display, None, limit)
        chunks.append(chunk)
    return b"".join(chunks)


EMPTY_PATH = "an empty path, not a file or directory (an unset variable?)"


def read_local(path: str) -> bytes:
    """A local file's bytes (``-``: stdin). What may never end (stdin, a FIFO, a device)
    or is larger than one record may be is read by ``read_stream``, with its bound."""
    if not path:  # "" (an unset variable): never the current folder
        raise InputError('""', None, EMPTY_PATH)
    limit = max_record_bytes()
    if path == "-":
        return read_stream(sys.stdin.buffer, "-", limit)
    info = os.stat(path)
    output = own_output(path) if stat.S_ISDIR(info.st_mode) else None
    if output is not None:
        raise InputError(path, None, output)
    if stat.S_ISFIFO(info.st_mode):
        with open_fifo(path) as fifo:
            return read_stream(fifo, path, limit)
    if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
        with open(path, "rb") as handle:
            return read_stream(handle, path, limit)
    with open(path, "rb") as handle:
        return handle.read()


def open_fifo(path: str, wait: float | None = None) -> BinaryIO:
    """A FIFO opened for reading once a writer is there; an error after ``wait`` seconds
    (default ``FIFO_WAIT_SECONDS``) without one (a blocking open would wait forever)."""
    import fcntl
    import select

    wait = FIFO_WAIT_SECONDS if wait is None else wait

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    readable, _, _ = select.select([fd], [], [], wait)
    if not readable:
        os.close(fd)
        raise InputError(
            path, None, f"a FIFO nobody wrote to in {wait:g} s (start its writer first)"
        )
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    return os.fdopen(fd, "rb")


def too_deep(value: Any, limit: int = MAX_NESTING_DEPTH) -> bool:
    """Whether ``value`` (parsed JSON) nests arrays and objects more than ``limit`` deep.
    Iterative: a walk that recursed would fail on the very values it looks for."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if type(item) is dict else item
        for child in children:
            if type(child) in (dict, list, tuple):
                if depth >= limit:
                    return True
                stack.append((child, depth + 1))
    return False


def _structured(conv: Conversation) -> list[tuple[int, Any]]:
    """Every JSON value a conversation keeps as data (tool arguments, payloads), by message."""
    found: list[tuple[int, Any]] = []
    for index, message in enumerate(conv.messages):
        kind = type(message)
        if kind is AssistantMessage or kind is UserMessage:
            for block in message.blocks:  # type: ignore[union-attr]
                if type(block) is ToolUseBlock and type(block.input) in (dict, list):
                    found.append((index, block.input))
                elif type(block) is OtherBlock and type(block.data) in (dict, list):
                    found.append((index, block.data))
        elif kind is UserImageMessage and type(message.data) in (dict, list):  # type: ignore[union-attr]
            found.append((index, message.data))  # type: ignore[union-attr]
    if type(conv.outcome) is dict:
        found.append((-1, conv.outcome))
    return found


def check_nesting(conv: Conversation, display: str) -> None:
    """Raise an ``InputError`` for a conversation holding a value nested too deep."""
    for index, value in _structured(conv):
        if too_deep(value):
            where = "its outcome" if index < 0 else f"message {index + 1}"
            raise InputError(
                display,
                conv.line,
                f"session {conv.session_id}: {where} holds a JSON value nested more than "
                f"{MAX_NESTING_DEPTH} levels deep (tsum's limit: its outputs could not hold it)",
            )
