"""The name of a file's detected format: what the reader tests assert, told the way
``transcript_tools.formats`` tells it before reading (no conversation is read)."""

from __future__ import annotations

from transcript_tools.errors import InputError
from transcript_tools.formats import (
    DATABASE_READERS,
    _archive_reader,
    _sqlite_header,
    binary,
    detect_head,
    detect_text,
)
from transcript_tools.formats.prose import is_text_not_json
from transcript_tools.formats.source import Source, iter_records, read_bytes
from transcript_tools.formats.sqlite_file import read_tables


def detect_format(source: Source) -> str | None:
    """The name of the detected format of a file, or None."""
    data = _sqlite_header(source)
    if data is not None:
        return _database_name(source, data)
    data = read_bytes(source.path)
    found = binary.kind(data)
    if found is not None:
        archive = _archive_reader(found[0], data, None)
        if archive is not None:
            return str(archive.NAME)
        if found[0] != binary.SQLITE:
            return None
        return _database_name(source, data)
    text_reader = detect_text(data)
    if text_reader is not None:
        return str(text_reader.NAME)
    if is_text_not_json(data):
        return None
    reader, _ = detect_head(iter_records(source, data))
    return reader.NAME if reader else None


def _database_name(source: Source, data: bytes) -> str | None:
    """Crush or OpenCode, told by the database's tables and columns (no row is read)."""
    try:
        tables = read_tables(source, data)
    except InputError:
        return None
    found = next((r for r in DATABASE_READERS if r.sniff_tables(tables)), None)
    return None if found is None else str(found.NAME)
