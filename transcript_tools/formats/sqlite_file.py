"""Opening a SQLite database for reading without ever writing next to it.

SQLite's ``mode=ro`` alone is not enough: opening a WAL-mode database read-only still
creates its ``-shm`` and ``-wal`` files in the database's folder (verified with SQLite
3.40 on OpenCode's ``opencode.db``, which is in WAL mode). So:

- no write-ahead log beside the file: ``file:…?mode=ro&immutable=1`` — no lock, no
  journal, no ``-shm``; the file is read as it is.
- a non-empty ``<db>-wal`` beside it (committed ones exist, and a live database has
  one): the transactions in it are part of the database, so the file and its log are
  copied into a private temporary folder and opened there (``mode=ro``); the original
  folder is never written.
- bytes without a file of their own (stdin, bytes a distributed reader fetched): written
  to a private temporary folder and opened there.

Any SQLite error (locked, corrupt, not a database) is one ``InputError`` line.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from ..errors import InputError
from .source import PREFETCHED_BYTES, Source


def _uri(path: Path, immutable: bool) -> str:
    return f"file:{quote(str(path.resolve()))}?mode=ro" + ("&immutable=1" if immutable else "")


@contextmanager
def open_database(source: Source, data: bytes) -> Iterator[sqlite3.Connection]:
    """A read-only connection to the database ``source`` names (its bytes are ``data``)."""
    path = Path(source.path)
    own_file = source.path != "-" and source.path not in PREFETCHED_BYTES and path.is_file()
    wal = Path(source.path + "-wal")
    with tempfile.TemporaryDirectory(prefix="tsum-sqlite-") as tmp:
        if own_file and not (wal.is_file() and wal.stat().st_size > 0):
            uri = _uri(path, immutable=True)
        else:
            copy = Path(tmp) / "db.sqlite"
            if own_file:
                shutil.copyfile(path, copy)
                shutil.copyfile(wal, Path(tmp) / "db.sqlite-wal")
            else:
                copy.write_bytes(data)
            uri = _uri(copy, immutable=not own_file)
        try:
            connection = sqlite3.connect(uri, uri=True)
        except sqlite3.Error as exc:
            raise database_error(source, exc) from None
        try:
            yield connection
        finally:
            connection.close()


def database_error(source: Source, exc: sqlite3.Error) -> InputError:
    text = str(exc)
    if "locked" in text or "busy" in text:
        why = f"the SQLite database is locked ({text}); retry when the program using it stops"
    elif "not a database" in text or "malformed" in text or "corrupt" in text:
        why = f"the SQLite database is corrupt ({text})"
    else:
        why = f"cannot read the SQLite database ({text})"
    return InputError(source.display, None, why)


def table_columns(connection: sqlite3.Connection) -> dict[str, set[str]]:
    """Every table of the database and its columns."""
    tables = [
        str(row[0])
        for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    ]
    return {
        name: {str(col[1]) for col in connection.execute(f"PRAGMA table_info({_quoted(name)})")}
        for name in tables
    }


def read_tables(source: Source, data: bytes) -> dict[str, set[str]]:
    """The tables of the database ``source`` names, and their columns (one ``InputError``
    line when it cannot be read)."""
    try:
        with open_database(source, data) as db:
            return table_columns(db)
    except sqlite3.Error as exc:
        raise database_error(source, exc) from None


def _quoted(name: str) -> str:
    """An SQL identifier, its quotes doubled (https://sqlite.org/lang_keywords.html): a
    table named ``x")`` is a name, never SQL."""
    return '"' + name.replace('"', '""') + '"'
