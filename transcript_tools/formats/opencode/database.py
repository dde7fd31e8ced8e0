"""OpenCode's SQLite databases: the Go version's ``.opencode/opencode.db`` and the
TypeScript version's ``opencode.db`` (``~/.local/share/opencode/``).

Opened read-only, never written (``sqlite_file``). Which one it is comes from its tables.

**Go** (opencode-ai/opencode, internal/db/migrations): ``sessions`` (``id``,
``parent_session_id``, ``title``, ``message_count``, ``prompt_tokens``,
``completion_tokens``, ``cost``, ``summary_message_id``) and ``messages`` (``id``,
``session_id``, ``role`` user / assistant / tool / system, ``parts`` JSON, ``model``,
``created_at`` in seconds). ``parts`` is a list of ``{"type", "data"}``: ``text``,
``reasoning`` (``thinking``), ``image_url``, ``binary`` (``mime_type``), ``tool_call``
(``id``, ``name``, ``input`` a JSON string), ``tool_result`` (``tool_call_id``,
``content``, ``is_error``) and ``finish`` (``reason``; not content).

- One conversation per session, in creation order; a sub-agent's session
  (``parent_session_id``; its id is the tool call's) is named ``parent/child``.
  Sessions without messages (the title generator's ``title-<id>``) are left out, counted
  in one warning.
- Messages in ``created_at`` order (ties: insertion order). user → the person's
  prompt; assistant → one model call; tool → its tool results; system → system message.
- The message ``summary_message_id`` names is OpenCode's compaction summary (an
  assistant message written by its summarizer, sent back as a user message from then
  on: agent.go): an ``INJECTED`` user message and a recorded Compaction.
- Usage: none per message. The session row's ``prompt_tokens`` / ``completion_tokens``
  are the *last* call's (agent.go ``TrackUsage`` assigns them; only ``cost`` adds up),
  so they are no total to check against: every call is estimated. The cross-check is
  ``message_count`` (kept by a trigger) against the rows read — a warning where they
  differ (a write-ahead log left out would show here).

**TypeScript**: ``session`` (``id``, ``parent_id``), ``message`` and ``part`` (``id``,
``message_id``, ``session_id``, ``data`` JSON): the same objects as ``opencode export``,
mapped by ``session.py``.

A database with neither schema is an error naming its tables.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any

import orjson

from ...engine.messages import (
    INJECTED,
    AssistantMessage,
    Block,
    Compaction,
    Conversation,
    Message,
    OtherBlock,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    UserMessage,
)
from ...errors import InputError
from ...present.numbers import shown_places
from ..anthropic_api import user_message
from ..binary import BinaryFileError
from ..content_parts import json_or_text, text_of
from ..source import Source
from ..sqlite_file import database_error, open_database, table_columns
from .session import StoredMessage, build_conversation, session_name

NAME = "opencode-db"
DESCRIPTION = (
    "OpenCode SQLite databases (.opencode/opencode.db, ~/.local/share/opencode/opencode.db)"
)

GO_TABLES = {
    "sessions": {"id", "parent_session_id"},
    "messages": {"id", "session_id", "role", "parts"},
}
TS_TABLES = {
    "session": {"id"},
    "message": {"id", "session_id", "data"},
    "part": {"id", "message_id", "data"},
}
COMPACTION_SOURCE = "opencode:summary_message_id"


def _has(tables: dict[str, set[str]], wanted: dict[str, set[str]]) -> bool:
    return all(name in tables and cols <= tables[name] for name, cols in wanted.items())


def sniff_go_tables(tables: dict[str, set[str]]) -> bool:
    return _has(tables, GO_TABLES)


def sniff_tables(tables: dict[str, set[str]]) -> bool:
    """Either OpenCode schema (the last database reader: it names any other database)."""
    return _has(tables, GO_TABLES) or _has(tables, TS_TABLES)


def read_database(source: Source, data: bytes) -> Iterator[Conversation]:
    """Every session of an OpenCode database (read whole, then the file is closed)."""
    yield from _read(source, data, NAME, COMPACTION_SOURCE)


def read_go_database(
    source: Source, data: bytes, fmt: str, compaction_source: str
) -> Iterator[Conversation]:
    """The Go schema read as ``fmt`` (Crush keeps it: ``crush.py``)."""
    yield from _read(source, data, fmt, compaction_source)


def _read(source: Source, data: bytes, fmt: str, compaction_source: str) -> Iterator[Conversation]:
    try:
        with open_database(source, data) as db:
            db.row_factory = sqlite3.Row
            tables = table_columns(db)
            if _has(tables, GO_TABLES):
                convs = _go_sessions(db, source, tables, fmt, compaction_source)
            elif _has(tables, TS_TABLES) and fmt == NAME:
                convs = _ts_sessions(db, source, tables)
            else:
                names = ", ".join(sorted(tables)) or "none"
                raise BinaryFileError(
                    source.display,
                    None,
                    f"a SQLite database, but not OpenCode's (its tables: {names})",
                )
    except sqlite3.Error as exc:
        raise database_error(source, exc) from None
    yield from convs


# ---- Go --------------------------------------------------------------------------------


def _json_parts(raw: Any, where: str, notes: list[str]) -> list[dict[str, Any]] | None:
    try:
        parts = orjson.loads(raw) if isinstance(raw, (str, bytes)) else raw
    except orjson.JSONDecodeError:
        notes.append(f"{where}: parts are not JSON; message left out")
        return None
    if not isinstance(parts, list):
        notes.append(f"{where}: parts are not a list; message left out")
        return None
    return [p for p in parts if isinstance(p, dict)]


def _go_message(row: sqlite3.Row, parts: list[dict[str, Any]], notes: list[str]) -> list[Message]:
    where = f"messages id={row['id']}"
    role = row["role"]
    blocks: list[Block] = []
    results: list[Message] = []
    finish: dict[str, Any] = {}
    for i, part in enumerate(parts):
        kind, data = part.get("type"), part.get("data")
        data = data if isinstance(data, dict) else {}
        if kind == "text":
            if isinstance(data.get("text"), str) and data["text"]:
                blocks.append(TextBlock(data["text"]))
        elif kind == "reasoning":
            if data.get("thinking"):
                blocks.append(OtherBlock("thinking", data["thinking"]))
        elif kind in ("image_url", "binary"):
            mime = str(data.get("mime_type") or "image/")
            blocks.append(OtherBlock("image" if mime.startswith("image/") else "file", data))
        elif kind == "tool_call":
            name = str(data.get("name") or "unknown")
            blocks.append(
                ToolUseBlock(str(data.get("id") or ""), name, json_or_text(data.get("input")))
            )
        elif kind == "tool_result":
            results.append(
                ToolResultMessage(
                    str(data.get("tool_call_id") or ""),
                    str(data.get("content") or ""),
                    data.get("is_error") is True,
                )
            )
        elif kind == "shell_command" and role == "user":
            blocks.append(TextBlock(_shell_text(data)))
        elif kind == "finish":
            finish = data
        else:
            notes.append(f"{where}: part {i} of type {kind!r} left out")
    if role == "assistant" and not blocks and finish.get("reason") == "error":
        notes.append(
            f"{where}: an API error ({str(finish.get('message'))[:60]!r}), not a reply; left out"
        )
        return []
    if role == "user":
        if not blocks:
            notes.append(f"{where}: user message with no content left out")
            return []
        return [user_message(blocks)]
    if role == "assistant":
        model = row["model"] if isinstance(row["model"], str) and row["model"] else None
        return [AssistantMessage(tuple(blocks), None, model)]
    if role == "tool":
        return results
    if role == "system":
        return [SystemMessage(text_of(blocks, " "))]
    notes.append(f"{where}: message of role {role!r} left out")
    return []


def _shell_text(data: dict[str, Any]) -> str:
    """A ``!`` command the person ran, as Crush sends it with the prompt
    (charmbracelet/crush internal/message/content.go ``ToAIMessage``)."""
    return (
        f"$ {data.get('command')}\n{data.get('output') or ''}\n(exit code {data.get('exit_code')})"
    )


def _summary(row: sqlite3.Row, parts: list[dict[str, Any]]) -> Message:
    texts = [
        str(p["data"]["text"])
        for p in parts
        if p.get("type") == "text" and isinstance(p.get("data"), dict) and p["data"].get("text")
    ]
    return UserMessage((TextBlock("\n".join(texts)),), INJECTED)


def _is_summary(row: sqlite3.Row) -> bool:
    """Crush marks every summary it wrote (``is_summary_message``); the session row names
    only the last one."""
    return "is_summary_message" in row.keys() and row["is_summary_message"] == 1


def _go_sessions(
    db: sqlite3.Connection,
    source: Source,
    tables: dict[str, set[str]],
    fmt: str,
    compaction_source: str,
) -> list[Conversation]:
    cols = tables["sessions"]
    order = "created_at, rowid" if "created_at" in cols else "rowid"
    sessions = db.execute(f"SELECT * FROM sessions ORDER BY {order}").fetchall()
    morder = "created_at, rowid" if "created_at" in tables["messages"] else "rowid"
    by_session: dict[str, list[sqlite3.Row]] = {}
    for row in db.execute(f"SELECT * FROM messages ORDER BY {morder}"):
        by_session.setdefault(str(row["session_id"]), []).append(row)
    ids = {str(s["id"]) for s in sessions}
    out: list[Conversation] = []
    empty: list[str] = []
    for session in sessions:
        sid = str(session["id"])
        rows = by_session.pop(sid, [])
        if not rows:
            empty.append(sid)
            continue
        summary_id = session["summary_message_id"] if "summary_message_id" in cols else None
        conv = Conversation(session_name(sid, session["parent_session_id"]), source.display, fmt)
        notes: list[str] = []
        for row in rows:
            parts = _json_parts(row["parts"], f"messages id={row['id']}", notes)
            if parts is None:
                continue
            if (summary_id and row["id"] == summary_id) or _is_summary(row):
                conv.compactions.append(Compaction(len(conv.messages), compaction_source))
                conv.messages.append(_summary(row, parts))
                continue
            conv.messages.extend(_go_message(row, parts, notes))
        recorded = session["message_count"] if "message_count" in cols else None
        if isinstance(recorded, int) and recorded != len(rows):
            notes.append(
                f"the session row counts {recorded} messages, {len(rows)} were read"
                " (is a -wal file missing beside the database?)"
            )
        conv.warnings.extend(notes)
        out.append(conv)
    if empty:
        source.noted(
            f"{len(empty)} session(s) without messages left out ({shown_places(empty, 4, ', …')})"
        )
    for sid, rows in by_session.items():
        where = "" if sid in ids else " of no session row"
        source.noted(f"{len(rows)} message(s) of session {sid}{where} left out")
    return out


# ---- TypeScript ------------------------------------------------------------------------


def _data(row: sqlite3.Row, table: str, notes: list[str]) -> dict[str, Any] | None:
    try:
        value = orjson.loads(row["data"])
    except (orjson.JSONDecodeError, TypeError):
        notes.append(f"{table} id={row['id']}: data is not JSON; left out")
        return None
    if not isinstance(value, dict):
        notes.append(f"{table} id={row['id']}: data is not an object; left out")
        return None
    return value


def _ts_sessions(
    db: sqlite3.Connection, source: Source, tables: dict[str, set[str]]
) -> list[Conversation]:
    parent_col = "parent_id" if "parent_id" in tables["session"] else None
    order = "time_created, id" if "time_created" in tables["session"] else "id"
    sessions = db.execute(f"SELECT * FROM session ORDER BY {order}").fetchall()
    notes: list[str] = []
    parts: dict[str, list[Any]] = {}
    for row in db.execute("SELECT * FROM part ORDER BY message_id, id"):
        value = _data(row, "part", notes)
        if value is not None:
            parts.setdefault(str(row["message_id"]), []).append(value)
    messages: dict[str, list[StoredMessage]] = {}
    for row in db.execute("SELECT * FROM message ORDER BY session_id, id"):
        info = _data(row, "message", notes)
        if info is not None:
            info.setdefault("id", row["id"])
            where = f"message id={row['id']}"
            stored = StoredMessage(info, parts.get(str(row["id"]), []), where)
            messages.setdefault(str(row["session_id"]), []).append(stored)
    out: list[Conversation] = []
    for session in sessions:
        sid = str(session["id"])
        stored_messages = messages.pop(sid, [])
        if not stored_messages:
            continue
        parent = session[parent_col] if parent_col else None
        out.append(
            build_conversation(session_name(sid, parent), source.display, NAME, stored_messages)
        )
    if out:
        out[0].warnings[:0] = notes
    elif notes:
        raise InputError(source.display, None, notes[0])
    for sid, left in messages.items():
        source.noted(f"{len(left)} message(s) of session {sid} of no session row left out")
    return out
