"""Readers: one module per on-disk format, each turning records into Conversations.

A reader module defines ``NAME`` (str), ``DESCRIPTION`` (str),
``sniff(head: list[Record]) -> bool`` (does the start of a file look like this
format?) and ``read(records: Iterator[Record], source: Source) ->
Iterator[Conversation]``. ``READERS`` lists them in detection order: the most
specific formats first.

Plain-text formats (Aider's logs) are in ``TEXT_READERS`` instead: ``sniff_text(head:
bytes) -> bool`` on the file's first bytes and ``read_text(text: str, source: Source) ->
Iterator[Conversation]``. They are tried before JSON parsing, which would fail on them.

Binary files are told apart first (``binary.kind``): a SQLite database goes to
``DATABASE_READERS`` (``read_database(source, data)``), any other binary is an error
naming what it is.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
from collections.abc import Iterator
from types import ModuleType

from ..engine.messages import Conversation
from ..errors import InputError, UnknownFormatError
from . import (
    aider_history,
    aider_llm,
    anthropic,
    binary,
    claude_code,
    cline,
    codex,
    continue_sessions,
    gemini,
    gemini_stream,
    managed_agents,
    native,
    openai_chat,
    opencode,
    opencode_db,
    sharegpt,
    tau_bench,
    trajectories,
)
from .bounds import MAX_NESTING_DEPTH, check_nesting
from .source import PREFETCHED_BYTES, Record, Source, decode_text, iter_records, read_bytes

READERS: list[ModuleType] = [
    native,
    cline,  # before anthropic, which could take its API history
    managed_agents,
    claude_code,
    codex,
    gemini,
    # OpenCode exports/storage, Continue sessions
    opencode,
    continue_sessions,
    gemini_stream,  # before openai, which must never take it (docs/formats.md)
    anthropic,
    trajectories,
    tau_bench,
    sharegpt,
    openai_chat,
]
TEXT_READERS: list[ModuleType] = [aider_llm, aider_history]
DATABASE_READERS: list[ModuleType] = [opencode_db]

SNIFF_RECORDS = 8
SNIFF_TEXT_BYTES = 4096


def reader_names() -> list[str]:
    return [r.NAME for r in (*READERS, *TEXT_READERS, *DATABASE_READERS)]


def get_reader(name: str) -> ModuleType:
    for reader in (*READERS, *TEXT_READERS, *DATABASE_READERS):
        if reader.NAME == name:
            return reader
    raise InputError(
        "--format", None, f"unknown format {name!r} (known: {', '.join(reader_names())})"
    )


def detect(head: list[Record]) -> ModuleType | None:
    for reader in READERS:
        try:
            if reader.sniff(head):
                return reader
        except (TypeError, KeyError, AttributeError, ValueError, IndexError):
            continue  # a field of an unexpected type: not this format
    return None


def detect_text(data: bytes) -> ModuleType | None:
    head = data[:SNIFF_TEXT_BYTES]
    return next((r for r in TEXT_READERS if r.sniff_text(head)), None)


def read_conversations(source: Source, fmt: str | None = None) -> Iterator[Conversation]:
    """Read one file (or ``-``) into conversations, detecting its format unless ``fmt`` is
    given. A value nested too deep is an error for this file (formats/bounds.py)."""
    try:
        for conv in _read_conversations(source, fmt):
            check_nesting(conv, source.display)
            yield conv
    except RecursionError:  # a reader walking a value nested deeper than Python recurses
        raise InputError(
            source.display, None, f"a JSON value nested too deep to read (over {MAX_NESTING_DEPTH})"
        ) from None


def _read_conversations(source: Source, fmt: str | None) -> Iterator[Conversation]:
    forced = get_reader(fmt) if fmt else None
    data = _sqlite_header(source)
    if data is None:
        data = read_bytes(source.path)
    database = _binary_reader(source, data, forced)
    if database is not None:
        yield from database.read_database(source, data)
        return
    text_reader = detect_text(data) if forced is None else forced
    if text_reader in TEXT_READERS:
        assert text_reader is not None
        yield from text_reader.read_text(decode_text(source, data), source)
        return
    records = iter_records(source, data)
    head = list(itertools.islice(records, SNIFF_RECORDS))
    reader = forced or detect(head)
    if reader is None:
        raise UnknownFormatError(
            source.display,
            None,
            "cannot tell the format (tried: "
            + ", ".join(reader_names())
            + "); use --format to force one",
        )
    last: list[Record] = []

    def tracked() -> Iterator[Record]:
        for record in itertools.chain(head, records):
            last[:] = [record]
            yield record

    name = reader.NAME
    source = dataclasses.replace(source, other_format=lambda r: _other_format(r, name))
    try:
        yield from reader.read(tracked(), source)
    except (TypeError, KeyError, AttributeError, ValueError, IndexError) as exc:
        # A field of an unexpected type deep in a record (a role that is a list, a
        # payload that is a string...): name the record, never a traceback.
        if isinstance(exc, InputError):
            raise
        where = last[0] if last else Record({})
        raise where.error(
            source.display,
            f"unexpected JSON structure for {reader.NAME} ({type(exc).__name__}: {exc})",
        ) from None


def _sqlite_header(source: Source) -> bytes | None:
    """The first bytes of a local SQLite file, or None for anything else: a database is
    told by its header and its tables (SQLite reads the pages it needs), never read whole
    (a 500 MB database of another program was, only to be refused)."""
    path = source.path
    if path == "-" or path in PREFETCHED_BYTES or not os.path.isfile(path):
        return None
    with open(path, "rb") as handle:
        head = handle.read(binary.SNIFF_BYTES)
    found = binary.kind(head)
    return head if found is not None and found[0] == binary.SQLITE else None


def _binary_reader(source: Source, data: bytes, forced: ModuleType | None) -> ModuleType | None:
    """The database reader for a SQLite file; an error for any other binary file; None
    for text (a binary file is named as what it is, never "invalid UTF-8")."""
    found = binary.kind(data)
    if found is None:
        if forced in DATABASE_READERS:
            raise InputError(source.display, None, "not a SQLite database")
        return None
    what, hint = found
    if what == binary.SQLITE and forced in (None, *DATABASE_READERS):
        return forced or DATABASE_READERS[0]
    if what == binary.SQLITE:
        assert forced is not None
        hint = f"--format {forced.NAME} reads text; leave --format out or use opencode-db"
    raise binary.BinaryFileError(source.display, None, binary.describe(what, hint))


def _other_format(record: Record, reader: str) -> str | None:
    """The name of another format that would take this record (formats/switch.py)."""
    found = detect([record])
    return found.NAME if found is not None and found.NAME != reader else None


def read_input(
    source: Source, fmt: str | None = None, *, from_directory: bool = False
) -> Iterator[Conversation]:
    """``read_conversations``, except that a file found by walking a directory whose
    format cannot be told is skipped with a warning (directories hold other files too)."""
    try:
        yield from read_conversations(source, fmt)
    except UnknownFormatError as exc:
        if not from_directory:
            raise
        if isinstance(exc, opencode.StoragePieceError) and exc.covered:
            return  # a piece of an OpenCode session, read through its session file
        if type(exc) is not UnknownFormatError:  # a binary file, a storage piece: say what
            source.warn(f"warning: {exc.location_text()} (skipped)")
            return
        source.warn(f"warning: {source.display}: not a transcript tsum can read (skipped)")


def detect_format(source: Source) -> str | None:
    """The name of the detected format of a file, or None."""
    data = _sqlite_header(source)
    if data is not None:
        return str(opencode_db.NAME) if opencode_db.is_opencode_database(source, data) else None
    data = read_bytes(source.path)
    found = binary.kind(data)
    if found is not None:
        if found[0] != binary.SQLITE:
            return None
        return str(opencode_db.NAME) if opencode_db.is_opencode_database(source, data) else None
    text_reader = detect_text(data)
    if text_reader is not None:
        return str(text_reader.NAME)
    head = list(itertools.islice(iter_records(source, data), SNIFF_RECORDS))
    reader = detect(head)
    return reader.NAME if reader else None
