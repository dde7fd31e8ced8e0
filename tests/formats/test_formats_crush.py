"""Crush (`.crush/crush.db`): its own format, not `opencode-db` by accident; counts from
the raw rows and by hand, against `tsum inspect --json`."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from tests.support.corpus import FIXTURES, build_database, read
from tests.support.detection import detect_format
from transcript_tools.cli.inspect_cmd import inspect_command
from transcript_tools.engine.messages import INJECTED, TextBlock, UserMessage
from transcript_tools.formats.source import Source


def crush_db(tmp_path: Path) -> Path:
    (tmp_path / ".crush").mkdir()
    return build_database(FIXTURES / "representative_crush.sql", tmp_path / ".crush" / "crush.db")


def inspect_json(path: Path, *extra: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(inspect_command, ["--json", "--workers", "1", *extra, str(path)])
    assert result.exit_code == 0, result.output
    return list(json.loads(result.stdout))


def raw_counts(path: Path) -> dict[str, tuple[int, int, int]]:
    """Per session, from the rows with sqlite3 and json alone: (prompts, calls, summaries).
    A call is an assistant row with content other than `finish`, or one that did not end
    in an API error; a summary is an assistant row Crush marked `is_summary_message`."""
    con = sqlite3.connect(path)
    out = {}
    for sid, parent in con.execute("SELECT id, parent_session_id FROM sessions"):
        prompts = calls = summaries = 0
        for role, parts, summary in con.execute(
            "SELECT role, parts, is_summary_message FROM messages WHERE session_id = ?", (sid,)
        ):
            decoded = json.loads(parts)
            kinds = {p["type"] for p in decoded}
            error = any(p["type"] == "finish" and p["data"]["reason"] == "error" for p in decoded)
            if summary:
                summaries += 1
            elif role == "user":
                prompts += 1
            elif role == "assistant" and (kinds - {"finish"} or not error):
                calls += 1
        if prompts:
            out[f"{parent}/{sid}" if parent else sid] = (prompts, calls, summaries)
    con.close()
    return out


def test_detected_as_crush_and_counted(tmp_path: Path) -> None:
    path = crush_db(tmp_path)
    assert detect_format(Source(str(path))) == "crush"
    rows = inspect_json(path)
    got = {r["session_id"]: (r["turns"], r["calls"], len(r["compactions"])) for r in rows}
    assert got == raw_counts(path)
    # by hand: s1 prompts m1 m5 m7 m10; calls m2 m4 m8 m11 m12 (m6 is an API error, the
    # two summaries are Crush's); the sub-agent: a1, a2
    assert got == {"s1": (4, 5, 2), "s1/toolu_agent1": (1, 1, 0)}
    assert {r["format"] for r in rows} == {"crush"}
    assert all(r["calls_with_usage"] == 0 for r in rows)  # no usage per message: estimated


def test_summaries_shell_commands_and_api_errors(tmp_path: Path) -> None:
    warned: list[str] = []
    path = crush_db(tmp_path)
    main = next(c for c in read(path, warn=warned.append) if c.session_id == "s1")
    assert [c.source for c in main.compactions] == ["crush:summary_message"] * 2
    for comp in main.compactions:  # each summary is sent as a user message from there on
        summary = main.messages[comp.message_index]
        assert isinstance(summary, UserMessage) and summary.origin == INJECTED
    prompt = main.messages[4]
    assert isinstance(prompt, UserMessage) and isinstance(prompt.blocks[0], TextBlock)
    assert prompt.blocks[0].text.startswith("$ go test ./...\nok")
    assert prompt.blocks[0].text.endswith("(exit code 0)")
    assert main.warnings == ["messages id=m6: an API error ('API Error'), not a reply; left out"]


def test_forced_opencode_db_reads_the_same_rows(tmp_path: Path) -> None:
    path = crush_db(tmp_path)
    crush = inspect_json(path)
    forced = inspect_json(path, "--format", "opencode-db")
    assert [r["format"] for r in forced] == ["opencode-db"] * 2
    assert [(r["turns"], r["calls"]) for r in forced] == [(r["turns"], r["calls"]) for r in crush]
