"""Reading a file into records: live logs, byte-order marks, and where bad lines are errors."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from transcript_tools.cli.main import cli
from transcript_tools.engine.messages import Conversation
from transcript_tools.errors import InputError
from transcript_tools.formats import read_conversations
from transcript_tools.formats.source import Source

LINES = [
    {"type": "user", "sessionId": "s1", "uuid": "u1", "parentUuid": None,
     "message": {"role": "user", "content": "hello"}},
    {"type": "assistant", "sessionId": "s1", "uuid": "a1", "parentUuid": "u1",
     "message": {"id": "msg_1", "role": "assistant", "model": "claude-x",
                 "content": [{"type": "text", "text": "hi"}],
                 "usage": {"input_tokens": 10, "output_tokens": 5}}},
]  # fmt: skip
CUT = b'{"type":"user","sessionId":"s1","uuid":"u2","parentUuid":"a1","message":{"role":"user","content":"mo'


def jsonl(*lines: dict[str, object]) -> bytes:
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


def read(path: Path, warnings: list[str] | None = None, **kw: object) -> list[Conversation]:
    warn = (warnings if warnings is not None else []).append
    return list(read_conversations(Source(str(path), warn=warn, **kw)))  # type: ignore[arg-type]


def test_truncated_final_line_of_a_live_log_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    path.write_bytes(jsonl(*LINES) + CUT)
    warnings: list[str] = []
    (conv,) = read(path, warnings)
    assert [m.role for m in conv.messages] == ["user", "assistant"]
    assert warnings == [
        f"warning: {path}:3: truncated last line skipped"
        " (the writer may still be running, or stopped mid-line)"
    ]


def test_truncated_final_line_cut_inside_a_character_is_still_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    path.write_bytes(jsonl(*LINES) + CUT + "é".encode()[:1])
    warnings: list[str] = []
    read(path, warnings)
    assert len(warnings) == 1 and ":3: truncated last line skipped" in warnings[0]


def test_bad_line_before_the_end_is_an_error_naming_skip_bad_lines(tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_bytes(jsonl(LINES[0]) + CUT + b"\n" + jsonl(LINES[1]))
    with pytest.raises(InputError) as info:
        read(path)
    assert info.value.line == 2
    assert info.value.location_text().startswith(f"{path}:2: invalid JSON")
    assert "--skip-bad-lines" in info.value.location_text()


def test_utf8_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + jsonl(*LINES))
    warnings: list[str] = []
    (conv,) = read(path, warnings)
    assert conv.format == "claude-code" and len(conv.messages) == 2 and warnings == []


def test_utf8_byte_order_mark_on_a_whole_file_json(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + orjson.dumps(LINES))
    (conv,) = read(path)
    assert len(conv.messages) == 2


def test_cli_live_log_exits_0_and_bad_middle_line_exits_3(tmp_path: Path) -> None:
    live = tmp_path / "live.jsonl"
    live.write_bytes(jsonl(*LINES) + CUT)
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(jsonl(LINES[0]) + CUT + b"\n" + jsonl(LINES[1]))
    runner = CliRunner()
    ok = runner.invoke(cli, ["replay", "--dry-run", str(live)])
    assert ok.exit_code == 0, ok.stderr
    assert f"warning: {live}:3: truncated last line skipped" in ok.stderr
    bad = runner.invoke(cli, ["replay", "--dry-run", str(broken)])
    assert bad.exit_code == 3
    assert f"error: {broken}:2: invalid JSON" in bad.stderr and "--skip-bad-lines" in bad.stderr
    assert "Traceback" not in bad.stderr
