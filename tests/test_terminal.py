"""Terminal safety: transcript text never reaches a terminal as a control sequence."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from transcript_tools import terminal
from transcript_tools.cli.main import cli
from transcript_tools.terminal import escape_controls

TITLE = "\x1b]0;TITLE\x07"  # OSC: sets the window title
CLEAR = "\x1b[2J"  # CSI: clears the screen
EVIL = f"hello {TITLE} and {CLEAR} done"
SHOWN = "hello \\x1b]0;TITLE\\x07 and \\x1b[2J done"


def run(*args: str) -> object:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def assert_no_controls(text: str) -> None:
    assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text


@pytest.fixture
def evil_file(tmp_path: Path) -> Path:
    rows: list[dict[str, object]] = [{"role": "system", "content": "be brief"}]
    for turn in range(6):
        rows.append({"role": "user", "content": f"{EVIL} {turn}"})
        rows.append(
            {
                "role": "assistant",
                "content": f"answer {CLEAR} {turn}",
                "usage": {"prompt_tokens": 600, "completion_tokens": 10},
            }
        )
    path = tmp_path / "evil.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


def test_escape_controls_keeps_newline_and_tab_and_escapes_c0_c1_del() -> None:
    assert escape_controls("a\tb\nc") == "a\tb\nc"
    assert escape_controls(EVIL) == SHOWN
    assert escape_controls("\r\x00\x7f\x9b\x9d") == "\\x0d\\x00\\x7f\\x9b\\x9d"
    assert escape_controls("中文 ✓") == "中文 ✓"


def test_replay_report_escapes_transcript_text(evil_file: Path) -> None:
    result = run("replay", str(evil_file), "--max-context-tokens", "1000")
    assert result.exit_code == 0, result.stderr
    assert "summarized" in result.stdout
    assert_no_controls(result.stdout)
    assert SHOWN in result.stdout


def test_jsonl_outputs_keep_the_exact_text(evil_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert (
        run("replay", str(evil_file), "--max-context-tokens", "1000", "--out", str(out)).exit_code
        == 0
    )
    prompts = [
        json.loads(line)["text"] for line in (out / "prompts.jsonl").read_text().splitlines()
    ]
    assert any(EVIL in text for text in prompts)
    assert b"\x1b" not in (out / "prompts.jsonl").read_bytes()  # JSON escapes it itself


def test_inspect_table_escapes_session_ids_and_paths(tmp_path: Path, evil_file: Path) -> None:
    named = tmp_path / f"x{CLEAR}.jsonl"
    named.write_bytes(evil_file.read_bytes())
    result = run("inspect", str(named))
    assert result.exit_code == 0, result.stderr
    assert "x\\x1b[2J" in result.stdout
    assert_no_controls(result.stdout)
    as_json = run("inspect", str(named), "--json")
    assert json.loads(as_json.stdout)[0]["session_id"] == f"x{CLEAR}"  # JSON: the exact text


def test_diff_and_check_escape_prompt_diffs(evil_file: Path, tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    common = ["--max-context-tokens", "1000"]
    assert run("replay", str(evil_file), *common, "--out", str(old)).exit_code == 0
    assert (
        run("replay", str(evil_file), *common, "--prompt", "en", "--out", str(new)).exit_code == 0
    )
    for extra in ([], ["--markdown"]):
        result = run("diff", str(old), str(new), "--context", "50", *extra)
        assert result.exit_code == 1
        assert SHOWN in result.stdout
        assert_no_controls(result.stdout)
    check = run(
        "check",
        "--baseline",
        str(old),
        str(evil_file),
        *common,
        "--prompt",
        "en",
        "--context",
        "50",
    )
    assert check.exit_code == 1
    assert SHOWN in check.stdout
    assert_no_controls(check.stdout)


def test_errors_and_warnings_on_stderr_escape(tmp_path: Path) -> None:
    # The error names the file, whose name came from somewhere else: escaped like the rest.
    path = tmp_path / f"s{TITLE}.jsonl"
    path.write_bytes(b'{"role": "user", "content": "x"}\n{oops\n{"role": "user", "content": "y"}\n')
    for command in ("sweep", "replay", "inspect"):
        result = run(command, str(path))
        assert result.exit_code == 3, (command, result.stderr)
        assert "s\\x1b]0;TITLE\\x07.jsonl:2" in result.stderr, command
        assert_no_controls(result.stderr)


@pytest.mark.parametrize("command", ["format", "prompt"])
def test_format_and_prompt_exact_to_a_pipe_escaped_to_a_terminal(
    command: str, evil_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    piped = run(command, str(evil_file), "--turn", "0")
    assert piped.exit_code == 0
    assert EVIL in piped.stdout  # exact, colour codes and all

    monkeypatch.setattr(terminal, "is_terminal", lambda stream: True)
    shown = run(command, str(evil_file), "--turn", "0")
    assert shown.exit_code == 0
    assert SHOWN in shown.stdout
    assert_no_controls(shown.stdout)
