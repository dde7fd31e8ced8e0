"""What one input may take (formats/bounds.py): a record past ``TSUM_MAX_RECORD_BYTES``
is a bad line naming the limit and how to raise it, never parsed; stdin, ``/dev/zero``
and FIFOs are read with that bound (and a FIFO nobody writes to is an error, not a
hang); a SQLite file is told by its header and tables, its body never read whole."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import transcript_tools.formats as formats
from tests.support.detection import detect_format
from transcript_tools.cli.main import cli
from transcript_tools.formats import bounds
from transcript_tools.formats.source import Source

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "long_session.jsonl"
LIMIT = "1000"
HINT = "the limit per record; TSUM_MAX_RECORD_BYTES=<bytes> raises it"


def run(*args: str, env: dict[str, str] | None = None, stdin: bytes | None = None) -> Result:
    return CliRunner().invoke(cli, [*args], env=env, input=stdin, catch_exceptions=False)


def longest_line(path: Path) -> tuple[int, int]:
    """(1-based line number, length in bytes) of the longest line."""
    lengths = [len(line) for line in path.read_bytes().split(b"\n")]
    return lengths.index(max(lengths)) + 1, max(lengths)


def test_a_record_over_the_limit_is_a_bad_line_naming_the_limit() -> None:
    line, length = longest_line(SAMPLE)
    assert length > int(LIMIT)
    result = run("inspect", str(SAMPLE), env={"TSUM_MAX_RECORD_BYTES": LIMIT})
    assert result.exit_code == 3
    first = next(n for n, raw in enumerate(SAMPLE.read_bytes().split(b"\n"), 1) if len(raw) > 1000)
    assert f"error: {SAMPLE}:{first}: a record of more than 1,000 bytes ({HINT})" in result.stderr
    skipped = run("inspect", str(SAMPLE), "--skip-bad-lines", env={"TSUM_MAX_RECORD_BYTES": LIMIT})
    assert skipped.exit_code == 0 and f"{SAMPLE}:{line}: a record of more than" in skipped.stderr
    assert run("inspect", str(SAMPLE), env={"TSUM_MAX_RECORD_BYTES": "0"}).exit_code == 2


def test_dev_zero_and_newline_less_stdin_stop_at_the_bound() -> None:
    env = {"TSUM_MAX_RECORD_BYTES": "1000000"}
    result = run("inspect", "/dev/zero", str(SAMPLE), env=env)
    assert result.exit_code == 3
    assert f"error: /dev/zero: a record of more than 1,000,000 bytes ({HINT})" in result.stderr
    assert "long_session" in result.stdout  # the rest of the corpus goes on
    piped = run("inspect", "-", env=env, stdin=b"x" * 3_000_000)
    assert piped.exit_code == 3
    assert f"error: -: a record of more than 1,000,000 bytes ({HINT})" in piped.stderr


def test_a_fifo_is_read_when_written_and_refused_when_nobody_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bounds, "FIFO_WAIT_SECONDS", 0.3)
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    result = run("inspect", str(fifo), str(SAMPLE))
    assert result.exit_code == 3
    assert f"error: {fifo}: a FIFO nobody wrote to in 0.3 s (start its writer first)" in (
        result.stderr
    )

    def write() -> None:
        with open(fifo, "wb") as handle:
            handle.write(SAMPLE.read_bytes())

    monkeypatch.setattr(bounds, "FIFO_WAIT_SECONDS", 10.0)
    writer = threading.Thread(target=write)
    writer.start()
    result = run("inspect", str(fifo))
    writer.join(timeout=10)
    assert result.exit_code == 0 and "pipe" in result.stdout and "93" in result.stdout


def test_a_sqlite_file_is_told_by_its_header_and_tables_never_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE blobs (id INTEGER, body BLOB)")
        con.executemany(
            "INSERT INTO blobs VALUES (?, ?)", [(i, b"\x01" * 100_000) for i in range(50)]
        )
    assert path.stat().st_size > 5_000_000

    def never(path: str) -> bytes:
        raise AssertionError(f"{path} was read whole")

    monkeypatch.setattr(formats, "read_bytes", never)
    result = run("inspect", str(path))
    assert result.exit_code == 3
    assert f"{path}: a SQLite database, but not OpenCode's (its tables: blobs)" in result.stderr
    assert detect_format(Source(str(path))) is None
