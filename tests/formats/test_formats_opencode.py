"""OpenCode: the Go version's SQLite database, the TypeScript version's database, its
`opencode export` JSON and its storage folder; `tsum inspect` against independent counts."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys
import types
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from tests.support.corpus import FIXTURES, build_database
from tests.support.detection import detect_format
from transcript_tools.cli.inspect_cmd import inspect_command
from transcript_tools.engine.formatting import format_messages_as_text
from transcript_tools.engine.messages import (
    INJECTED,
    PERSON,
    SYNTHETIC_MODEL,
    AssistantMessage,
    TextBlock,
    ToolResultMessage,
    UserMessage,
    is_turn_start,
)
from transcript_tools.errors import InputError
from transcript_tools.formats import read_conversations, read_input
from transcript_tools.formats.source import PREFETCHED_BYTES, Source


def inspect_json(path: Path) -> list[dict[str, Any]]:
    result = CliRunner().invoke(inspect_command, ["--json", "--workers", "1", str(path)])
    assert result.exit_code == 0, result.output
    return list(json.loads(result.stdout))


def db(tmp_path: Path, name: str) -> Path:
    return build_database(FIXTURES / name, tmp_path / "opencode.db")


# ---- independent counts, from the raw rows / JSON, not through the reader ---------------


def go_counts(path: Path) -> dict[str, tuple[int, int]]:
    """Per session: (prompts, calls), counted from the rows with sqlite3 and json alone."""
    con = sqlite3.connect(path)
    cols = {c[1] for c in con.execute("PRAGMA table_info(sessions)")}
    summary = "summary_message_id" if "summary_message_id" in cols else "NULL"
    sessions = con.execute(f"SELECT id, parent_session_id, {summary} FROM sessions").fetchall()
    out = {}
    for sid, parent, summary_id in sessions:
        prompts = calls = 0
        for mid, role, parts in con.execute(
            "SELECT id, role, parts FROM messages WHERE session_id = ?", (sid,)
        ):
            if mid == summary_id:
                continue
            try:
                decoded = json.loads(parts)
            except ValueError:
                continue
            if role == "assistant":
                calls += 1
            elif role == "user" and any(p["type"] in ("text", "binary") for p in decoded):
                prompts += 1
        if prompts or calls:
            out[f"{parent}/{sid}" if parent else sid] = (prompts, calls)
    con.close()
    return out


def export_counts(path: Path) -> tuple[int, int, int]:
    """(prompts, calls, recorded tokens) of an `opencode export` file."""
    data = json.loads(path.read_text())
    prompts = calls = tokens = 0

    def total(t: dict[str, Any]) -> int:
        return t["input"] + t["output"] + t["reasoning"] + t["cache"]["read"] + t["cache"]["write"]

    for message in data["messages"]:
        info, parts = message["info"], message["parts"]
        if info["role"] == "user":
            typed = [
                p
                for p in parts
                if p["type"] == "text" and not p.get("synthetic") and not p.get("ignored")
            ]
            prompts += bool(typed)
        elif info["role"] == "assistant" and not info.get("summary") and parts:
            steps = [p for p in parts if p["type"] == "step-finish"]
            if not steps and info.get("modelID") == "":
                continue  # OpenCode's shell wrote it (a command the person ran): no call
            calls += max(len(steps), 1)
            tokens += sum(total(p["tokens"]) for p in steps) if steps else total(info["tokens"])
    return prompts, calls, tokens


# ---- the Go database ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["representative_opencode_go.sql", "edge_cases_opencode_go.sql"])
def test_go_inspect_agrees_with_an_independent_count(tmp_path: Path, name: str) -> None:
    path = db(tmp_path, name)
    expected = go_counts(path)
    rows = inspect_json(path)
    assert {r["session_id"]: (r["turns"], r["calls"]) for r in rows} == expected
    assert all(r["recorded_tokens"] is None and r["estimated_tokens"] > 0 for r in rows)


def test_go_sessions_children_and_the_recorded_compaction(tmp_path: Path) -> None:
    warnings: list[str] = []
    path = db(tmp_path, "representative_opencode_go.sql")
    main, child = read_conversations(Source(str(path), warn=warnings.append))
    assert (main.session_id, child.session_id) == ("s-main", "s-main/call_agent1")
    assert warnings == [f"warning: {path}: 1 session(s) without messages left out (title-s-main)"]
    (comp,) = main.compactions
    summary = main.messages[comp.message_index]
    assert isinstance(summary, UserMessage) and summary.origin == INJECTED
    assert "Summary: parse()" in summary.blocks[0].text  # type: ignore[union-attr]
    assert not is_turn_start(summary)
    roles = [m.role for m in main.messages]
    assert roles == ["user", "assistant", "tool", "tool", "assistant", "user", "assistant"] + [
        "tool",
        "user",
        "user",
    ]
    assert main.messages[1].usage is None  # type: ignore[union-attr]  # none per call


def test_go_left_out_records_are_warnings_naming_the_row(tmp_path: Path) -> None:
    warnings: list[str] = []
    path = db(tmp_path, "edge_cases_opencode_go.sql")
    (conv,) = read_conversations(Source(str(path), warn=warnings.append))
    assert conv.warnings == [
        "messages id=e3: part 1 of type 'hologram' left out",
        "messages id=e4: message of role 'critic' left out",
        "messages id=e5: parts are not JSON; message left out",
        "messages id=e6: user message with no content left out",
        "the session row counts 9 messages, 8 were read (is a -wal file missing beside the"
        " database?)",
    ]
    assert warnings == [
        f"warning: {path}: 1 message(s) of session s-gone of no session row left out"
    ]


def listing(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_reading_never_writes_beside_the_database(tmp_path: Path) -> None:
    path = db(tmp_path, "representative_opencode_go.sql")
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode=WAL")  # as OpenCode keeps it
    con.close()
    before = listing(tmp_path)
    list(read_conversations(Source(str(path))))
    detect_format(Source(str(path)))
    assert listing(tmp_path) == before  # no -shm, no -wal, no journal, same bytes


def test_a_write_ahead_log_beside_it_is_read_without_touching_it(tmp_path: Path) -> None:
    path = db(tmp_path, "representative_opencode_go.sql")
    writer = sqlite3.connect(path)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute(
        "INSERT INTO messages VALUES ('m9', 's-main', 'user',"
        ' \'[{"type":"text","data":{"text":"one more"}}]\', \'\', 1700000080, 1700000080, NULL)'
    )
    writer.execute("UPDATE sessions SET message_count = 10 WHERE id = 's-main'")
    writer.commit()
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("opencode.db", "opencode.db-wal"):  # a committed db with its log, no -shm
        shutil.copyfile(tmp_path / name, copy / name)
    writer.close()
    before = listing(copy)
    main = next(iter(read_conversations(Source(str(copy / "opencode.db")))))
    assert main.messages[-1] == UserMessage.text("one more") and not main.warnings
    assert listing(copy) == before


def test_a_corrupt_database_is_one_line(tmp_path: Path) -> None:
    path = db(tmp_path, "representative_opencode_go.sql")
    data = path.read_bytes()
    path.write_bytes(data[:100] + b"\x00garbage" * 200 + data[1700:])
    with pytest.raises(InputError) as info:
        list(read_conversations(Source(str(path))))
    assert str(info.value).startswith(f"{path}: the SQLite database is corrupt (")
    assert "\n" not in str(info.value)


def test_a_sqlite_database_of_another_program_is_named(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE responses (key TEXT, value TEXT)")
    con.close()
    assert detect_format(Source(str(path))) is None
    with pytest.raises(
        InputError, match=r"a SQLite database, but not OpenCode's \(its tables: responses\)"
    ):
        list(read_conversations(Source(str(path))))
    warnings: list[str] = []
    assert not list(read_input(Source(str(path), warn=warnings.append), from_directory=True))
    assert warnings == [
        f"warning: {path}: a SQLite database, but not OpenCode's (its tables: responses) (skipped)"
    ]


def test_a_database_on_stdin_is_read_from_a_private_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = db(tmp_path, "representative_opencode_go.sql").read_bytes()
    monkeypatch.setattr("transcript_tools.formats.read_bytes", lambda path: data)
    convs = list(read_conversations(Source("-", warn=lambda _: None)))
    assert [c.session_id for c in convs] == ["s-main", "s-main/call_agent1"]


# ---- the TypeScript database, export and storage folder ---------------------------------


def test_ts_database_sessions_usage_and_children(tmp_path: Path) -> None:
    rows = inspect_json(db(tmp_path, "representative_opencode_ts.sql"))
    # from the fixture's step-finish tokens: 40 + 30 + 900 + 100; 500 + 20
    assert [(r["session_id"], r["turns"], r["calls"], r["recorded_tokens"]) for r in rows] == [
        ("ses_a1", 1, 1, 1070),
        ("ses_a1/ses_b2", 1, 1, 520),
    ]


@pytest.mark.parametrize(
    "name",
    [
        "representative_opencode_export.json",
        "edge_cases_opencode_export.json",
        "edge_cases_opencode_shell_subtask.json",
    ],
)
def test_export_inspect_agrees_with_an_independent_count(name: str) -> None:
    prompts, calls, tokens = export_counts(FIXTURES / name)
    (row,) = inspect_json(FIXTURES / name)
    assert (row["turns"], row["calls"], row["recorded_tokens"]) == (prompts, calls, tokens)


def test_export_compaction_summary_is_the_runtimes() -> None:
    (conv,) = read_conversations(Source(str(FIXTURES / "representative_opencode_export.json")))
    (comp,) = conv.compactions
    assert (comp.source, comp.pre_tokens) == ("opencode:summary", 2000)
    summary = conv.messages[comp.message_index]
    assert isinstance(summary, UserMessage) and summary.origin == INJECTED
    synthetic = conv.messages[comp.message_index + 1]
    assert isinstance(synthetic, UserMessage) and synthetic.origin == INJECTED  # "Continue…"
    assert [is_turn_start(m) for m in conv.messages].count(True) == 2


def test_export_left_out_parts_are_warnings() -> None:
    (conv,) = read_conversations(Source(str(FIXTURES / "edge_cases_opencode_export.json")))
    assert conv.session_id == "ses_parent/ses_child"
    assert conv.warnings == [
        "messages[1]: part 3 of type 'hologram' left out",
        "messages[1]: message tokens (1000) match neither its steps' sum (132) nor its last"
        " step; the steps' are used",
        "messages[2]: assistant message with error 'ProviderAuthError' and no content left out",
        "messages[3]: user message with no text left out",
        "messages[4]: message of role 'critic' left out",
    ]


def test_shell_subtask_and_interrupted_calls_as_opencode_sends_them() -> None:
    (conv,) = read_conversations(Source(str(FIXTURES / "edge_cases_opencode_shell_subtask.json")))
    results = [m for m in conv.messages if isinstance(m, ToolResultMessage)]
    # a call left pending is answered for the model as an interrupted one (toModelMessages)
    assert [(r.tool_call_id, r.content, r.is_error) for r in results] == [
        ("call_01", "[Tool execution was interrupted]", True),
        ("01JSHELL", "2 failed, 40 passed", False),
        ("call_02", "Both fail on a stale fixture path.", False),
    ]
    replies = [m for m in conv.messages if isinstance(m, AssistantMessage)]
    # the shell's record of `!pytest -q` is no model call: no usage, none estimated
    assert [r.model for r in replies] == [
        "claude-sonnet-4-5",
        SYNTHETIC_MODEL,
        "claude-sonnet-4-5",
        "claude-sonnet-4-5",
    ]
    assert replies[1].usage is None
    users = [m for m in conv.messages if isinstance(m, UserMessage)]
    # the shell's note and the subtask part are OpenCode's words; the @explore message is typed
    assert [(u.origin, u.blocks[0].text[:12]) for u in users] == [  # type: ignore[union-attr]
        (PERSON, "Run the test"),
        (INJECTED, "The followin"),
        (INJECTED, "The followin"),
        (PERSON, "@explore who"),
    ]
    # an attached text file is sent as the synthetic text parts beside it, not as a file
    assert all(isinstance(b, TextBlock) for b in users[3].blocks)
    assert "00001| FIXTURES" in users[3].blocks[-1].text  # type: ignore[union-attr]
    assert conv.warnings == [
        "messages[5]: 1 tool output(s) OpenCode pruned (state.time.compacted; parts 1): read"
        " whole, as first sent"
    ]


def write_storage(root: Path) -> Path:
    """The representative export laid out as OpenCode's storage folder."""
    data = orjson.loads((FIXTURES / "representative_opencode_export.json").read_bytes())
    session = root / "session" / "p1" / f"{data['info']['id']}.json"
    session.parent.mkdir(parents=True)
    session.write_bytes(orjson.dumps(data["info"]))
    for message in data["messages"]:
        info = message["info"]
        (root / "message" / info["sessionID"]).mkdir(parents=True, exist_ok=True)
        (root / "message" / info["sessionID"] / f"{info['id']}.json").write_bytes(
            orjson.dumps(info)
        )
        for part in message["parts"]:
            folder = root / "part" / info["id"]
            folder.mkdir(parents=True, exist_ok=True)
            stamped = {**part, "sessionID": info["sessionID"], "messageID": info["id"]}
            # ids sort in creation order in OpenCode; zero-pad the fixture's to keep that
            name = part["id"].replace("prt_", f"prt_{int(part['id'][4:]):03d}_")
            (folder / f"{name}.json").write_bytes(orjson.dumps(stamped))
    return session


def test_storage_folder_reads_as_the_export_does(tmp_path: Path) -> None:
    session = write_storage(tmp_path / "storage")
    (exported,) = read_conversations(Source(str(FIXTURES / "representative_opencode_export.json")))
    (stored,) = read_conversations(Source(str(session)))
    assert format_messages_as_text(stored.messages, 500) == format_messages_as_text(
        exported.messages, 500
    )
    assert [getattr(m, "usage", None) for m in stored.messages] == [
        getattr(m, "usage", None) for m in exported.messages
    ]
    assert stored.compactions == exported.compactions


def test_storage_pieces_are_skipped_in_a_walk_and_refused_alone(tmp_path: Path) -> None:
    write_storage(tmp_path / "storage")
    message = next((tmp_path / "storage" / "message").rglob("*.json"))
    warnings: list[str] = []
    assert not list(read_input(Source(str(message), warn=warnings.append), from_directory=True))
    assert warnings == []  # read through its session file
    with pytest.raises(InputError, match="an OpenCode storage message file, one piece of session"):
        list(read_conversations(Source(str(message))))
    os.remove(next((tmp_path / "storage" / "session").rglob("*.json")))
    assert not list(read_input(Source(str(message), warn=warnings.append), from_directory=True))
    assert len(warnings) == 1 and "storage/session/<project>/ses_x1.json" in warnings[0]


def fake_pyarrow_fs(root: Path) -> types.ModuleType:
    """Enough of pyarrow.fs for ``mem://<path>`` URLs over a local folder: what a Ray
    worker meets for s3:// (pyarrow is not a test dependency)."""
    fs = types.ModuleType("pyarrow.fs")

    class FileType:
        File, Directory, NotFound = "file", "directory", "not found"

    class FileSelector:
        def __init__(self, base_dir: str, allow_not_found: bool = False) -> None:
            self.base_dir = base_dir

    def info(path: Path) -> types.SimpleNamespace:
        kind = FileType.File if path.is_file() else FileType.Directory
        return types.SimpleNamespace(
            base_name=path.name, type=kind if path.exists() else FileType.NotFound
        )

    class FileSystem:
        @staticmethod
        def from_uri(uri: str) -> tuple[FileSystem, str]:
            assert uri.startswith("mem://"), uri
            return FileSystem(), uri[len("mem://") :]

        def get_file_info(self, what: Any) -> Any:
            if isinstance(what, FileSelector):
                folder = root / what.base_dir
                return [info(p) for p in folder.iterdir()] if folder.is_dir() else []
            return info(root / what)

        def open_input_stream(self, path: str) -> Any:
            return (root / path).open("rb")

    fs.FileType, fs.FileSelector, fs.FileSystem = FileType, FileSelector, FileSystem  # type: ignore[attr-defined]
    return fs


def test_storage_folder_behind_a_url_reads_as_the_local_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # under --ray the session file's bytes come from Ray (PREFETCHED_BYTES) and its messages and parts,
    # files beside it, through source.read_sibling / list_siblings, as Cline's UI log does
    session = write_storage(tmp_path / "storage")
    fs = fake_pyarrow_fs(tmp_path)
    monkeypatch.setitem(sys.modules, "pyarrow", types.SimpleNamespace(fs=fs))
    monkeypatch.setitem(sys.modules, "pyarrow.fs", fs)
    url = "mem://" + session.relative_to(tmp_path).as_posix()
    monkeypatch.setitem(PREFETCHED_BYTES, url, session.read_bytes())
    (local,) = read_conversations(Source(str(session)))
    (remote,) = read_conversations(Source(url))
    assert len(remote.messages) == len(local.messages) > 4
    assert format_messages_as_text(remote.messages, 500) == format_messages_as_text(
        local.messages, 500
    )
    assert remote.warnings == local.warnings
    # a message file behind a URL names its session file's URL
    message = next((tmp_path / "storage" / "message").rglob("*.json"))
    piece = "mem://" + message.relative_to(tmp_path).as_posix()
    monkeypatch.setitem(PREFETCHED_BYTES, piece, message.read_bytes())
    with pytest.raises(InputError, match=f"read its session file \\({url}\\)"):
        list(read_conversations(Source(piece)))


def test_a_locked_database_is_read_as_last_committed_without_waiting(tmp_path: Path) -> None:
    path = db(tmp_path, "representative_opencode_go.sql")
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN EXCLUSIVE")
    writer.execute("DELETE FROM messages")  # not committed: the lock is held
    try:
        convs = list(read_conversations(Source(str(path), warn=lambda _: None)))
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert [len(c.messages) for c in convs] == [10, 2]


def test_a_step_without_tokens_takes_the_messages(tmp_path: Path) -> None:
    data = orjson.loads((FIXTURES / "representative_opencode_export.json").read_bytes())
    six = data["messages"][5]
    six["parts"].append({"id": "prt_99", "type": "step-finish"})  # a step-finish with no tokens
    path = tmp_path / "x.json"
    path.write_bytes(orjson.dumps(data))
    (conv,) = read_conversations(Source(str(path)))
    assert conv.messages[-2].usage is not None  # type: ignore[union-attr]
    assert conv.messages[-2].usage.total_tokens == 340  # type: ignore[union-attr]
