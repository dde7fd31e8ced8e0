"""Where the tests find their data: hand-written fixtures, and the real corpus beside the repo."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from transcript_tools.engine.messages import Conversation
from transcript_tools.formats import read_conversations
from transcript_tools.formats.source import Source

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "formats"
# CI clones the repository into a fresh folder with a copy of shared/ beside it.
CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "real"
needs_corpus = pytest.mark.skipif(
    not CORPUS.is_dir(),
    reason=f"real corpus not found at {CORPUS} (shared/ must sit beside the repository)",
)


def read(path: Path, **kw: object) -> list[Conversation]:
    return list(read_conversations(Source(str(path), **kw)))  # type: ignore[arg-type]


def build_database(script: Path, target: Path) -> Path:
    """A SQLite database made from a ``.sql`` fixture (OpenCode's databases)."""
    connection = sqlite3.connect(target)
    try:
        connection.executescript(script.read_text(encoding="utf-8"))
        connection.commit()
    finally:
        connection.close()
    return target
