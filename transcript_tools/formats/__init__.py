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

Readers from installed plug-ins (entry point group ``tsum.formats``, ``plugin_readers``)
come after the built-in ones: a record reader (``sniff``/``read``) when no built-in
reader tells a file, a text reader (``sniff_text``/``read_text``) when a text file is not
JSON records; ``--format NAME`` forces one. A built-in format never reads differently
because a plug-in is installed.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
from collections.abc import Iterator
from types import ModuleType
from typing import Any

from ..engine.messages import Conversation
from ..errors import ConfigError, InputError, UnknownFormatError
from ..plugins import FORMATS_GROUP, load_entry_points
from . import (
    anthropic,
    atif,
    binary,
    claude_code,
    cline,
    codex,
    continue_sessions,
    gemini,
    gemini_stream,
    inspect_ai_log,
    managed_agents,
    native,
    openai_chat,
    otel,
    pi,
    sharegpt,
    specstory,
    tau_bench,
    trajectories,
)
from .aider import history as aider_history
from .aider import llm as aider_llm
from .bounds import MAX_NESTING_DEPTH, check_nesting
from .opencode import crush as crush_db
from .opencode import database as opencode_db
from .opencode import storage as opencode
from .prose import is_text_not_json
from .source import PREFETCHED_BYTES, Record, Source, decode_text, iter_records, read_bytes
from .sqlite_file import read_tables

READERS: list[ModuleType] = [
    native,
    cline,  # before anthropic, which could take its API history
    managed_agents,
    pi,  # its session header and entry types are its own
    atif,
    otel,
    inspect_ai_log,
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
TEXT_READERS: list[ModuleType] = [aider_llm, aider_history, specstory]
DATABASE_READERS: list[ModuleType] = [crush_db, opencode_db]  # opencode_db names any other
ARCHIVE_READERS: list[ModuleType] = [inspect_ai_log]  # ZIP archives: sniff_archive(data)

SNIFF_RECORDS = 8  # the first look; more when none of them tells (detect_head)
SNIFF_TEXT_BYTES = 4096
NOT_A_TRANSCRIPT = "not a transcript tsum can read"
TEXT_NOT_JSON = (
    ": a text file, not JSON records, and no reader of text logs takes it; use --format"
    " to force one"
)


_plugins: dict[str, Any] | None = None  # name → reader, read once per process


def builtin_reader_names() -> list[str]:
    return [r.NAME for r in (*READERS, *TEXT_READERS, *DATABASE_READERS)]


def plugin_readers() -> dict[str, Any]:
    """The readers of installed ``tsum.formats`` plug-ins by name, each checked to have a
    reader's attributes (loaded on first use, then kept)."""
    global _plugins
    if _plugins is None:
        found = load_entry_points(FORMATS_GROUP, "format plug-in", builtin_reader_names())
        for name, reader in found.items():
            _check_plugin_reader(name, reader)
        _plugins = found
    return _plugins


def _check_plugin_reader(name: str, reader: Any) -> None:
    where = f"format plug-in {name!r} ({FORMATS_GROUP})"
    if getattr(reader, "NAME", None) != name:
        raise ConfigError(f"{where}: its reader is named {getattr(reader, 'NAME', None)!r}")
    if not (
        _is_text_reader(reader)
        or (callable(getattr(reader, "sniff", None)) and callable(getattr(reader, "read", None)))
    ):
        raise ConfigError(f"{where}: needs sniff and read, or sniff_text and read_text")


def _is_text_reader(reader: Any) -> bool:
    return callable(getattr(reader, "sniff_text", None)) and callable(
        getattr(reader, "read_text", None)
    )


def reader_names() -> list[str]:
    """Every format: the built-in ones, then the installed plug-ins'."""
    return [*builtin_reader_names(), *plugin_readers()]


def get_reader(name: str) -> Any:
    for reader in (*READERS, *TEXT_READERS, *DATABASE_READERS):
        if reader.NAME == name:
            return reader
    plugin = plugin_readers().get(name)
    if plugin is not None:
        return plugin
    raise InputError(
        "--format", None, f"unknown format {name!r} (known: {', '.join(reader_names())})"
    )


def detect(head: list[Record]) -> Any:
    found = _sniffed(READERS, head)
    if found is None:
        plugins = [r for r in plugin_readers().values() if not _is_text_reader(r)]
        found = _sniffed(plugins, head)
    return found


def _sniffed(readers: list[Any], head: list[Record]) -> Any:
    for reader in readers:
        try:
            if reader.sniff(head):
                return reader
        except (TypeError, KeyError, AttributeError, ValueError, IndexError):
            continue  # a field of an unexpected type: not this format
    return None


def detect_head(records: Iterator[Record]) -> tuple[ModuleType | None, list[Record]]:
    """The reader of a file and the records read to tell it. Where the first
    ``SNIFF_RECORDS`` tell nothing, twice as many are read, and so on to the end of the
    file: a log may open with more records of bookkeeping than the first look holds
    (Claude Code 2.1 writes titles, modes and hook results before the first prompt).
    A bad record met while looking further ends the look: the file is not one tsum can
    tell."""
    head = list(itertools.islice(records, SNIFF_RECORDS))
    while True:
        reader = detect(head)
        if reader is not None:
            return reader, head
        try:
            more = list(itertools.islice(records, len(head)))
        except InputError:
            return None, head
        if not more:
            return None, head
        head.extend(more)


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
    if forced is None and text_reader is None and is_text_not_json(data):
        start = data[:SNIFF_TEXT_BYTES]
        plugins = [r for r in plugin_readers().values() if _is_text_reader(r)]
        text_reader = next((r for r in plugins if r.sniff_text(start)), None)
        if text_reader is None:
            raise UnknownFormatError(source.display, None, NOT_A_TRANSCRIPT + TEXT_NOT_JSON)
    if text_reader in TEXT_READERS or (text_reader is not None and _is_text_reader(text_reader)):
        yield from text_reader.read_text(decode_text(source, data), source)
        return
    records = iter_records(source, data)
    if forced is not None:
        reader: ModuleType | None = forced
        head = list(itertools.islice(records, SNIFF_RECORDS))
    else:
        reader, head = detect_head(records)
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
    try:
        with open(path, "rb") as handle:
            head = handle.read(binary.SNIFF_BYTES)
    except OSError:  # unreadable (no permission...): read_bytes names it, for this file only
        return None
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
    archive = _archive_reader(what, data, forced)
    if archive is not None:
        return archive
    if what == binary.SQLITE and forced in (None, *DATABASE_READERS):
        return forced or database_reader(source, data)
    if what == binary.SQLITE:
        assert forced is not None
        hint = f"--format {forced.NAME} reads text; leave --format out or use opencode-db"
    raise binary.BinaryFileError(source.display, None, binary.describe(what, hint))


def _archive_reader(what: str, data: bytes, forced: ModuleType | None) -> ModuleType | None:
    """The reader of a ZIP archive that is a log (an inspect_ai ``.eval``), or None."""
    if what != binary.ZIP:
        return None
    if forced is not None:
        return forced if forced in ARCHIVE_READERS else None
    return next((r for r in ARCHIVE_READERS if r.sniff_archive(data)), None)


def database_reader(source: Source, data: bytes) -> ModuleType:
    """The reader of a SQLite database, from its tables (the last one names any other)."""
    tables = read_tables(source, data)
    return next((r for r in DATABASE_READERS if r.sniff_tables(tables)), DATABASE_READERS[-1])


def _other_format(record: Record, reader: str) -> str | None:
    """The name of another built-in format that would take this record (formats/switch.py;
    asked per unknown record, so the plug-ins, read on first use, are not asked)."""
    found = _sniffed(READERS, [record])
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
        source.noted(f"{NOT_A_TRANSCRIPT} (skipped)")
