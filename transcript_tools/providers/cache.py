"""Response cache: SQLite (stdlib), keyed by everything that determines a response.

Key = sha256 of the canonical JSON of the provider's identity (provider, API,
base URL, model, temperature, ...), ``max_tokens`` and the exact rendered
prompt. Only successful responses are stored: errors are never cached, so a
rerun retries them. Each ``put`` is one autocommitted statement in WAL mode, so
several processes can share the file and a killed run leaves a valid database
holding every response it had already paid for.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import orjson

from ..engine.messages import Usage
from ..engine.requests import SummaryResponse
from ..errors import ProviderConfigError

SCHEMA_VERSION = 1
CACHE_FILE_NAME = "cache.sqlite3"
BUSY_TIMEOUT_S = 30.0  # how long a writer waits for another process's write lock

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,            -- the model asked for (part of the key)
    response_model TEXT NOT NULL,   -- the model id the API answered with
    identity TEXT NOT NULL,         -- canonical JSON of provider.identity(): no secrets
    text TEXT NOT NULL,
    input_tokens INTEGER,           -- NULL when the API reported no usage
    output_tokens INTEGER,
    cache_read_tokens INTEGER,
    cache_creation_tokens INTEGER,
    created REAL NOT NULL           -- unix time; informational, never in diffable outputs
) WITHOUT ROWID
"""


class CacheMode(StrEnum):
    READ_WRITE = "read_write"  # default: read; on a miss call and store
    CACHE_ONLY = "cache_only"  # never call; a miss is a failure (CI reproducibility)
    REFRESH = "refresh"  # always call and overwrite
    OFF = "off"  # --no-cache


def default_cache_path() -> Path:
    """``$TSUM_CACHE``, else ``$TSUM_HOME/cache.sqlite3``, else ``~/.tsum/cache.sqlite3``."""
    explicit = os.environ.get("TSUM_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    home = os.environ.get("TSUM_HOME")
    base = Path(home).expanduser() if home else Path.home() / ".tsum"
    return base / CACHE_FILE_NAME


def cache_key(identity: Mapping[str, Any], prompt: str, max_tokens: int) -> str:
    """sha256 hex of the canonical JSON of what determines the response."""
    payload = {
        "v": SCHEMA_VERSION,
        "identity": dict(identity),
        "max_tokens": max_tokens,
        "prompt": prompt,
    }
    return hashlib.sha256(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)).hexdigest()


@dataclass(frozen=True, slots=True)
class ModelCount:
    provider: str
    model: str
    entries: int


@dataclass(frozen=True, slots=True)
class CacheStats:
    path: str
    entries: int
    size_bytes: int  # database + write-ahead log on disk
    by_model: tuple[ModelCount, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "entries": self.entries,
            "size_bytes": self.size_bytes,
            "by_model": [asdict(m) for m in self.by_model],
        }


class ResponseCache:
    """One cache file. Safe to share between threads, tasks and processes.

    Reads and writes use separate connections: in WAL mode a read never waits
    for a writer, so ``get`` can run on the event loop thread while ``put`` (which
    may wait for another process's write lock) runs in a worker thread.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout: float = BUSY_TIMEOUT_S,
        remedy: str = "pass another --cache PATH, or --no-cache",
    ) -> None:
        """``remedy`` ends the error where the file cannot be opened: what the caller's
        command offers (``tsum cache`` has no --no-cache)."""
        self._path = Path(path).expanduser()
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            if not self._path.exists():
                # Prompts are conversation data: owner-only. SQLite gives the
                # -wal and -shm files the same permissions.
                os.close(os.open(self._path, os.O_CREAT | os.O_WRONLY, 0o600))
            self._write = self._connect(busy_timeout)
            self._init_schema()
            self._read = self._connect(busy_timeout)
        except (OSError, sqlite3.Error) as exc:
            raise ProviderConfigError(
                f"{self._path}: cannot open the response cache ({exc}); {remedy}"
            ) from None
        self._write_lock = threading.Lock()
        self._read_lock = threading.Lock()

    def _connect(self, busy_timeout: float) -> sqlite3.Connection:
        # isolation_level=None: autocommit, so every put is its own transaction;
        # timeout= is SQLite's busy timeout (wait for another writer, then fail).
        return sqlite3.connect(
            self._path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
        )

    def _init_schema(self) -> None:
        conn = self._write
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise sqlite3.DatabaseError(f"written by a newer tsum (schema {version})")
        # WAL: readers and one writer at a time across processes; NORMAL sync is
        # durable against a killed process (only a power cut can lose the last puts).
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        if version < SCHEMA_VERSION:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute(_SCHEMA)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    @property
    def path(self) -> Path:
        return self._path

    def get(self, key: str) -> SummaryResponse | None:
        with self._read_lock:
            row = self._read.execute(
                "SELECT text, response_model, input_tokens, output_tokens, cache_read_tokens, "
                "cache_creation_tokens FROM responses WHERE key = ?",
                (key,),
            ).fetchone()
        if row is None:
            return None
        text, model, inp, out, read, created = row
        usage = None if inp is None else Usage(inp, out or 0, read or 0, created or 0)
        return SummaryResponse(text=text, model=model, usage=usage)

    def put(self, key: str, identity: Mapping[str, Any], response: SummaryResponse) -> None:
        """Store (or overwrite) one successful response, committed before returning."""
        usage = response.usage
        row = (
            key,
            str(identity.get("provider", "")),
            str(identity.get("model", "")),
            response.model,
            orjson.dumps(dict(identity), option=orjson.OPT_SORT_KEYS).decode(),
            response.text,
            None if usage is None else usage.input_tokens,
            None if usage is None else usage.output_tokens,
            None if usage is None else usage.cache_read_tokens,
            None if usage is None else usage.cache_creation_tokens,
            time.time(),
        )
        with self._write_lock:
            self._write.execute(
                "INSERT OR REPLACE INTO responses (key, provider, model, response_model, identity, "
                "text, input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens, "
                "created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                row,
            )

    def __len__(self) -> int:
        with self._read_lock:
            return int(self._read.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def stats(self) -> CacheStats:
        with self._read_lock:
            rows = self._read.execute(
                "SELECT provider, model, COUNT(*) FROM responses "
                "GROUP BY provider, model ORDER BY provider, model"
            ).fetchall()
        by_model = tuple(ModelCount(p, m, n) for p, m, n in rows)
        size = 0
        for suffix in ("", "-wal"):
            try:
                size += os.path.getsize(f"{self._path}{suffix}")
            except OSError:
                pass
        return CacheStats(str(self._path), sum(m.entries for m in by_model), size, by_model)

    def clear(self) -> int:
        """Delete every entry; returns how many there were."""
        with self._write_lock:
            removed = self._write.execute("DELETE FROM responses").rowcount
            try:
                # Give the space back; skipped while another process is reading.
                self._write.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                self._write.execute("VACUUM")
            except sqlite3.OperationalError:
                pass
        return max(removed, 0)

    def close(self) -> None:
        for conn in (getattr(self, "_read", None), getattr(self, "_write", None)):
            if conn is not None:
                conn.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ResponseCache({str(self._path)!r})"
