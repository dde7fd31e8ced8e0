"""Crush's SQLite database (``.crush/crush.db``; charmbracelet/crush, the successor of the
Go OpenCode).

Crush keeps the Go OpenCode schema (``database.py``: ``sessions`` and ``messages`` with
``parts`` as ``{"type", "data"}`` JSON) and adds to it (charmbracelet/crush
``internal/db/migrations`` at 37f36e93): ``messages.provider`` (2025-06-27: which provider
answered), ``messages.is_summary_message`` (2025-08-10: every summary Crush wrote, not only
the last one ``sessions.summary_message_id`` names) and a ``shell_command`` part (a ``!``
command the person ran, sent with the prompt as ``$ cmd`` / output / ``(exit code n)``:
``internal/message/content.go``). It is read by the same code as the Go OpenCode
(``opencode_db.read_go_database``), with these additions, as format ``crush``.

Detected by the ``provider`` column; a ``crush.db`` older than that migration has exactly
the Go OpenCode schema and is read as ``opencode-db`` (the same reading).

No usage per message: ``sessions.prompt_tokens`` / ``completion_tokens`` hold the last
call's counts (``internal/agent/agent.go`` ``updateSessionTokenCounters``), so every call is
estimated, as in the Go OpenCode.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...engine.messages import Conversation
from ..source import Source
from . import database as opencode_db

NAME = "crush"
DESCRIPTION = (
    "Crush's SQLite database (.crush/crush.db: the Go OpenCode schema plus a provider column)"
)
COMPACTION_SOURCE = "crush:summary_message"


def sniff_tables(tables: dict[str, set[str]]) -> bool:
    return opencode_db.sniff_go_tables(tables) and "provider" in tables["messages"]


def read_database(source: Source, data: bytes) -> Iterator[Conversation]:
    yield from opencode_db.read_go_database(source, data, NAME, COMPACTION_SOURCE)
