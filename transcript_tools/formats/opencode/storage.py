"""TypeScript OpenCode sessions as JSON: ``opencode export`` files and the storage folder.

- ``opencode export <session id>`` prints one object: ``info`` (the session: ``id``,
  ``parentID`` for a sub-agent's session, ``title``…) and ``messages``, a list of
  ``{"info": message, "parts": [part…]}``.
- The storage folder (``~/.local/share/opencode/storage/``) keeps the same objects one
  per file: ``session/<project>/<session id>.json``, ``message/<session id>/<message
  id>.json``, ``part/<message id>/<part id>.json`` (ids sort in creation order). A session
  file is read with its messages and parts from beside it; a message or part file is a
  piece of its session: in a directory walk that also holds the session file it is
  skipped silently (read through its session), otherwise it is an error naming the
  session file to read. The files beside the session file are read with
  ``source.read_sibling`` / ``list_siblings``, so a storage folder behind a URL (``--ray``
  over ``s3://…``) reads as a local one.

One session per file, named after its parent when it has one (``parent/child``). The
mapping of messages and parts is ``session.py``'s.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from ...engine.messages import Conversation
from ...errors import UnknownFormatError
from ..source import Record, Source, list_siblings, read_sibling
from .session import StoredMessage, build_conversation, session_name

NAME = "opencode"
DESCRIPTION = "OpenCode (TypeScript) sessions: `opencode export` JSON and storage/session/*/*.json"


class StoragePieceError(UnknownFormatError):
    """A message or part file of OpenCode's storage: read through its session file.

    ``covered``: its session file is there, so a directory walk skips it silently."""

    def __init__(self, path: str, message: str, covered: bool) -> None:
        super().__init__(path, None, message)
        self.covered = covered


def _is_export(obj: dict[str, Any]) -> bool:
    info, messages = obj.get("info"), obj.get("messages")
    return (
        isinstance(info, dict)
        and isinstance(info.get("id"), str)
        and isinstance(messages, list)
        and all(isinstance(m, dict) and "info" in m and "parts" in m for m in messages[:8])
    )


def _is_session_file(obj: dict[str, Any]) -> bool:
    ident = obj.get("id")
    return (
        isinstance(ident, str)
        and ident.startswith("ses")
        and isinstance(obj.get("time"), dict)
        and ("projectID" in obj or "directory" in obj)
        and "role" not in obj
    )


def _piece(obj: dict[str, Any]) -> str | None:
    ident = obj.get("id")
    if not isinstance(ident, str) or not isinstance(obj.get("sessionID"), str):
        return None
    if ident.startswith("msg") and obj.get("role") in ("user", "assistant"):
        return "message"
    if ident.startswith("prt") and isinstance(obj.get("messageID"), str) and "type" in obj:
        return "part"
    return None


def sniff(head: list[Record]) -> bool:
    if len(head) != 1:
        return False
    obj = head[0].obj
    return _is_export(obj) or _is_session_file(obj) or _piece(obj) is not None


def _storage_root(path: str) -> str:
    """``storage/`` of a session, message or part file (three folders up). A local path is
    resolved first (a relative one has no parents to climb); a URL (``--ray``) by its path."""
    if "://" in path:
        return path.rsplit("/", 3)[0]
    return str(Path(path).resolve().parents[2])


def _join(folder: str, *names: str) -> str:
    return "/".join((folder, *names)) if "://" in folder else str(Path(folder, *names))


def _load(path: str, warned: list[str]) -> dict[str, Any] | None:
    # read_sibling, not open(): under --ray the storage folder may be a URL (s3://…)
    try:
        data = read_sibling(path)
        if data is None:
            warned.append(f"{path}: not read (not a file); left out")
            return None
        value = orjson.loads(data)
    except (OSError, orjson.JSONDecodeError) as exc:
        warned.append(f"{path}: not read ({type(exc).__name__}); left out")
        return None
    if not isinstance(value, dict):
        warned.append(f"{path}: not a JSON object; left out")
        return None
    return value


def _json_files(folder: str) -> list[str]:
    return [name for name in list_siblings(folder) if name.endswith(".json")]


def _stored_messages(root: str, session_id: str) -> tuple[list[StoredMessage], list[str]]:
    warned: list[str] = []
    out: list[StoredMessage] = []
    messages = _join(root, "message", session_id)
    for name in _json_files(messages):
        info = _load(_join(messages, name), warned)
        if info is None:
            continue
        ident = str(info.get("id") or name[: -len(".json")])
        parts: list[Any] = []
        part_folder = _join(root, "part", ident)
        for part_name in _json_files(part_folder):
            part = _load(_join(part_folder, part_name), warned)
            if part is not None:
                parts.append(part)
        out.append(StoredMessage(info, parts, f"message/{session_id}/{name}"))
    return out, warned


def _from_export(obj: dict[str, Any], source: Source) -> Conversation:
    info = obj["info"]
    stored = []
    for i, item in enumerate(obj["messages"]):
        if not isinstance(item, dict) or not isinstance(item.get("info"), dict):
            source.bad(Record(obj).error(source.display, f"messages[{i}] has no info object"))
            continue
        raw = item.get("parts")
        parts: list[Any] = raw if isinstance(raw, list) else []
        stored.append(StoredMessage(item["info"], parts, f"messages[{i}]"))
    name = session_name(str(info["id"]), info.get("parentID"))
    return build_conversation(name, source.display, NAME, stored)


def _from_session_file(obj: dict[str, Any], source: Source) -> Conversation:
    if source.path == "-":
        raise UnknownFormatError(
            source.display,
            None,
            "an OpenCode storage session file read from stdin: its messages are files"
            " beside it (storage/message/<session id>/); give its path instead",
        )
    root = _storage_root(source.path)  # storage/session/<project>/<id>.json
    stored, warned = _stored_messages(root, str(obj["id"]))
    conv = build_conversation(
        session_name(str(obj["id"]), obj.get("parentID")), source.display, NAME, stored
    )
    conv.warnings[:0] = warned
    if not stored:
        conv.warnings.append(f"no message files under {_join(root, 'message', str(obj['id']))}")
    return conv


def _refuse_piece(obj: dict[str, Any], kind: str, source: Source) -> None:
    session_id = str(obj["sessionID"])
    sessions: list[str] = []
    if source.path != "-":
        # storage/message/<session>/<id>.json and storage/part/<message>/<id>.json
        root = _storage_root(source.path)
        for project in list_siblings(_join(root, "session")):
            session_file = _join(root, "session", project, f"{session_id}.json")
            if read_sibling(session_file) is not None:
                sessions.append(session_file)
    where = sessions[0] if sessions else f"storage/session/<project>/{session_id}.json"
    raise StoragePieceError(
        source.display,
        f"an OpenCode storage {kind} file, one piece of session {session_id}: read its"
        f" session file ({where}) or the storage folder",
        covered=bool(sessions),
    )


def read(records: Iterator[Record], source: Source) -> Iterator[Conversation]:
    for record in records:
        obj = record.obj
        if _is_export(obj):
            yield _from_export(obj, source)
        elif _is_session_file(obj):
            yield _from_session_file(obj, source)
        elif (kind := _piece(obj)) is not None:
            _refuse_piece(obj, kind, source)
        else:
            source.bad_record(record, "not an OpenCode export or storage file")
