"""A binary file is named as what it is, never "invalid UTF-8 on this line"."""

from __future__ import annotations

import gzip
import sqlite3
import zlib
from pathlib import Path

import pytest

from tests.support.detection import detect_format
from transcript_tools.errors import InputError
from transcript_tools.formats import read_conversations, read_input
from transcript_tools.formats.binary import kind
from transcript_tools.formats.source import Source


def png() -> bytes:
    def chunk(tag: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(tag + body).to_bytes(4, "big")
        return len(body).to_bytes(4, "big") + tag + body + crc

    header = (1).to_bytes(4, "big") * 2 + bytes([8, 0, 0, 0, 0])
    pixel = zlib.compress(b"\x00\x00")
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixel) + chunk(b"IEND", b"")
    )


def sqlite_bytes(tmp_path: Path) -> bytes:
    path = tmp_path / "other.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE notes (body TEXT)")
    con.close()
    return path.read_bytes()


@pytest.mark.parametrize(
    "name,make,message",
    [
        (
            "log.jsonl.gz",
            lambda _: gzip.compress(b'{"role": "user"}\n'),
            "a gzip archive, not a transcript; decompress it first (gunzip)",
        ),
        ("shot.json", lambda _: png(), "a PNG image, not a transcript"),
        (
            "photo.jsonl",
            lambda _: b"\xff\xd8\xff\xe0" + b"\x00" * 64,
            "a JPEG image, not a transcript",
        ),
        ("opencode.db", sqlite_bytes, "a SQLite database, but not OpenCode's (its tables: notes)"),
        ("blob.jsonl", lambda _: b"\x00\x01\x02\xfe\xff" * 20, "binary data, not a transcript"),
    ],
)
def test_binary_files_are_named(tmp_path: Path, name: str, make: object, message: str) -> None:
    path = tmp_path / name
    path.write_bytes(make(tmp_path))  # type: ignore[operator]
    with pytest.raises(InputError) as info:
        list(read_conversations(Source(str(path))))
    assert str(info.value) == f"{path}: {message}"
    assert "UTF-8" not in str(info.value)
    assert detect_format(Source(str(path))) is None
    warnings: list[str] = []
    assert not list(read_input(Source(str(path), warn=warnings.append), from_directory=True))
    assert warnings == [f"warning: {path}: {message} (skipped)"]


def test_text_is_not_binary() -> None:
    assert kind(b'{"role": "user", "content": "h\xc3\xa9"}\n') is None
    assert kind("日本語のテキスト".encode()) is None


def test_forcing_a_json_reader_on_a_database_still_names_it(tmp_path: Path) -> None:
    path = tmp_path / "x.db"
    path.write_bytes(sqlite_bytes(tmp_path))
    with pytest.raises(
        InputError, match="a SQLite database, not a transcript; --format openai reads text"
    ):
        list(read_conversations(Source(str(path)), "openai"))
    with pytest.raises(InputError, match="not a SQLite database"):
        list(read_conversations(Source(str(Path(__file__))), "opencode-db"))
