"""Batches in flight, recorded in the response cache's SQLite file.

A batch id and its ``custom_id``s are committed right after the API accepts the
batch and before any waiting, so a killed run (``kill -9``, Ctrl-C, a closed
laptop) is resumed by the same command: it polls the same batches and never
submits a request that is already in one. Two tables beside ``responses``; the
cache's ``user_version`` is not touched (older tsum versions ignore them).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ...errors import ProviderConfigError
from ..cache import BUSY_TIMEOUT_S

SUBMITTED = "submitted"  # accepted by the API, results not read yet
CANCELLING = "cancelling"  # `tsum batch cancel` asked; still polled for partial results
ENDED = "ended"  # every result read (into the cache, or a failure recorded)
IN_FLIGHT = (SUBMITTED, CANCELLING)

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS batches (
    batch_id TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    base_url TEXT NOT NULL,       -- public URL: no credentials
    state TEXT NOT NULL,          -- submitted | cancelling | ended
    api_status TEXT,              -- the API's last word (in_progress, expired, ...)
    requests INTEGER NOT NULL,
    succeeded INTEGER NOT NULL DEFAULT 0,
    failed INTEGER NOT NULL DEFAULT 0,
    created REAL NOT NULL,
    ended REAL
)""",
    """CREATE TABLE IF NOT EXISTS batch_requests (
    batch_id TEXT NOT NULL,
    custom_id TEXT NOT NULL,      -- the response-cache key
    identity TEXT NOT NULL,       -- canonical JSON of provider.identity(): no secrets
    error TEXT,                   -- set when the request ended without a summary
    PRIMARY KEY (batch_id, custom_id)
) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS batch_requests_custom_id ON batch_requests (custom_id)",
)


@dataclass(frozen=True, slots=True)
class BatchRecord:
    batch_id: str
    provider: str
    base_url: str
    state: str
    api_status: str | None
    requests: int
    succeeded: int
    failed: int
    created: float
    ended: float | None

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


_COLUMNS = (
    "batch_id, provider, base_url, state, api_status, requests, succeeded, failed, created, ended"
)


class BatchStore:
    """The batch tables of one cache file (one autocommitted write per call)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if not self.path.exists():
                os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))
            self._conn = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA synchronous = NORMAL")
            for statement in _SCHEMA:
                self._conn.execute(statement)
        except (OSError, sqlite3.Error) as exc:
            raise ProviderConfigError(
                f"{self.path}: cannot open the batch records ({exc}); pass another --cache PATH"
            ) from None

    def record_batch(
        self,
        batch_id: str,
        provider: str,
        base_url: str,
        requests: Iterable[tuple[str, Mapping[str, Any]]],
    ) -> None:
        """The batch and its custom_ids (with their identities), in one transaction."""
        rows = [
            (batch_id, key, orjson.dumps(dict(identity), option=orjson.OPT_SORT_KEYS).decode())
            for key, identity in requests
        ]
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(
                "INSERT OR REPLACE INTO batches (batch_id, provider, base_url, state, requests, created)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (batch_id, provider, base_url, SUBMITTED, len(rows), time.time()),
            )
            conn.executemany(
                "INSERT OR REPLACE INTO batch_requests (batch_id, custom_id, identity) VALUES (?, ?, ?)",
                rows,
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def in_flight(
        self, provider: str | None = None, base_url: str | None = None
    ) -> list[BatchRecord]:
        return [b for b in self.batches(provider, base_url) if b.state in IN_FLIGHT]

    def batches(
        self, provider: str | None = None, base_url: str | None = None
    ) -> list[BatchRecord]:
        sql = f"SELECT {_COLUMNS} FROM batches"
        where, args = [], []
        if provider is not None:
            where.append("provider = ?")
            args.append(provider)
        if base_url is not None:
            where.append("base_url = ?")
            args.append(base_url)
        if where:
            sql += " WHERE " + " AND ".join(where)
        rows = self._conn.execute(sql + " ORDER BY created, batch_id", args).fetchall()
        return [BatchRecord(*row) for row in rows]

    def get(self, batch_id: str) -> BatchRecord | None:
        row = self._conn.execute(
            f"SELECT {_COLUMNS} FROM batches WHERE batch_id = ?", (batch_id,)
        ).fetchone()
        return None if row is None else BatchRecord(*row)

    def in_flight_keys(self, provider: str, base_url: str) -> set[str]:
        """Every custom_id in a batch whose results are not read yet: never submitted again."""
        rows = self._conn.execute(
            "SELECT r.custom_id FROM batch_requests r JOIN batches b ON b.batch_id = r.batch_id "
            "WHERE b.state IN (?, ?) AND b.provider = ? AND b.base_url = ?",
            (*IN_FLIGHT, provider, base_url),
        )
        return {key for (key,) in rows}

    def custom_ids(self, batch_id: str) -> set[str]:
        rows = self._conn.execute(
            "SELECT custom_id FROM batch_requests WHERE batch_id = ?", (batch_id,)
        )
        return {key for (key,) in rows}

    def identity(self, batch_id: str, custom_id: str) -> dict[str, Any] | None:
        row = self._conn.execute(
            "SELECT identity FROM batch_requests WHERE batch_id = ? AND custom_id = ?",
            (batch_id, custom_id),
        ).fetchone()
        return None if row is None else orjson.loads(row[0])

    def set_status(self, batch_id: str, api_status: str, state: str | None = None) -> None:
        if state is None:
            self._conn.execute(
                "UPDATE batches SET api_status = ? WHERE batch_id = ?", (api_status, batch_id)
            )
        else:
            self._conn.execute(
                "UPDATE batches SET api_status = ?, state = ? WHERE batch_id = ?",
                (api_status, state, batch_id),
            )

    def finish(self, batch_id: str, succeeded: int, errors: Mapping[str, str]) -> None:
        """Every result of the batch is read: record the failures and end it."""
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany(
                "UPDATE batch_requests SET error = ? WHERE batch_id = ? AND custom_id = ?",
                [(error, batch_id, key) for key, error in errors.items()],
            )
            conn.execute(
                "UPDATE batches SET state = ?, succeeded = ?, failed = ?, ended = ? WHERE batch_id = ?",
                (ENDED, succeeded, len(errors), time.time(), batch_id),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> BatchStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
