"""``tsum inspect``: the library statistics and the command."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from tests.support.corpus import CORPUS, FIXTURES
from transcript_tools.cli.main import cli
from transcript_tools.engine.messages import (
    AssistantMessage,
    Compaction,
    Conversation,
    SystemMessage,
    ToolResultMessage,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from transcript_tools.engine.rules import last_call_end
from transcript_tools.engine.tokens import estimate_message_tokens
from transcript_tools.formats import read_conversations
from transcript_tools.formats.source import Source
from transcript_tools.inspection import InspectRun, inspect_conversation


def conversation(name: str) -> Conversation:
    (conv,) = read_conversations(Source(str(FIXTURES / name)))
    return conv


def test_stats_of_a_claude_code_session() -> None:
    info = inspect_conversation(conversation("edge_cases_claude_code.jsonl"))
    assert info.format == "claude-code"
    assert info.turns == 5  # the compaction summary is a user message but starts no turn
    assert info.messages == {"system": 0, "user": 5, "user_image": 1, "assistant": 8, "tool": 3}
    assert info.tool_calls == 3
    assert info.calls_with_usage == 8
    assert info.largest_context_kind == "recorded" and info.largest_context == 9508
    assert info.estimate_error is not None and info.estimate_error.calls == 8
    # reported at the turn the agent compacted (the summary rides in it)
    assert [(c.turn, c.message_index, c.pre_tokens) for c in info.compactions] == [(3, 13, 155321)]
    assert len(info.warnings) == 1


def test_estimates_follow_the_messages() -> None:
    messages = [
        SystemMessage("You are terse."),
        UserMessage.text("What is 2+2? " * 10),
        AssistantMessage((ToolUseBlock("c1", "calc", {"x": "2+2"}),), Usage(100, 5)),
        ToolResultMessage("c1", "4"),
        AssistantMessage.text("4", Usage(110, 1)),
        UserMessage.text("thanks"),
        AssistantMessage.text("You're welcome."),
    ]
    conv = Conversation("s", "p", "native", messages, compactions=[Compaction(5, "test", None)])
    info = inspect_conversation(conv)
    tokens = [estimate_message_tokens(m) for m in messages]
    assert info.estimated_tokens == sum(tokens)
    assert info.recorded_tokens == 105 + 111
    err = info.estimate_error
    assert err is not None and err.calls == 2
    first = (sum(tokens[:2]) - 100) / 100
    second = (sum(tokens[:4]) - 110) / 110
    assert err.median == pytest.approx((abs(first) + abs(second)) / 2)
    assert err.p90 == pytest.approx(max(abs(first), abs(second)))
    assert info.turns == 2
    assert [c.turn for c in info.compactions] == [0]


def test_without_usage_the_largest_context_is_estimated() -> None:
    info = inspect_conversation(conversation("representative_swe_agent.traj"))
    assert info.recorded_tokens is None and info.estimate_error is None
    # the view a model is called with: up to the last call, not the final result
    conv = conversation("representative_swe_agent.traj")
    end = last_call_end(conv.messages)
    assert 0 < end < len(conv.messages)
    assert info.largest_context_kind == "estimated"
    assert info.largest_context == sum(estimate_message_tokens(m) for m in conv.messages[:end])
    assert info.largest_context < info.estimated_tokens


def test_run_over_a_directory_warns_about_unknown_files(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "representative_codex.jsonl", tmp_path / "a.jsonl")
    (tmp_path / "sub").mkdir()
    shutil.copy(FIXTURES / "representative_sharegpt.jsonl", tmp_path / "sub" / "b.jsonl")
    (tmp_path / "manifest.json").write_text('{"version": 1}')
    (tmp_path / "agent-x.meta.json").write_text('{"agentType": "Explore"}')
    (tmp_path / "notes.md").write_text("not a transcript")
    warnings: list[str] = []
    run = InspectRun([str(tmp_path)], warn=warnings.append)
    infos = list(run)
    assert [i.format for i in infos] == ["codex", "sharegpt", "sharegpt"]
    # the skipped manifest.json is a file read, as replay, sweep, eval and fidelity count it
    assert run.files == 3 and run.failed == 0 and run.sessions == 3
    assert warnings == [
        f"warning: {tmp_path / 'manifest.json'}: not a transcript tsum can read (skipped)"
    ]


def invoke(*args: str) -> object:
    # through the group, as a user runs it: a command invoked alone keeps a help option
    # without -h, which the docs test (tests/cli/test_cli_docs.py) would then read
    return CliRunner().invoke(cli, ["inspect", *args])


def test_command_prints_a_table() -> None:
    result = invoke(
        str(FIXTURES / "representative_codex.jsonl"),
        str(FIXTURES / "representative_claude_code.jsonl"),
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split()[:3] == ["file", "session", "format"]
    assert len(lines) == 5  # the table, then what fills the context and the commands
    assert lines[3].startswith("what fills the context") and lines[4].startswith("commands: ")
    assert "codex" in lines[1] and "53,960" in lines[1]
    assert "claude-code" in lines[2] and "52,708" in lines[2]
    assert result.stderr.strip() == "2 sessions in 2 files"


def test_command_json() -> None:
    result = invoke("--json", str(FIXTURES / "representative_codex.jsonl"))
    assert result.exit_code == 0
    (data,) = orjson.loads(result.stdout)
    assert data["format"] == "codex"
    assert data["turns"] == 2
    assert data["messages"] == {
        "system": 4,
        "user": 2,
        "user_image": 0,
        "assistant": 5,
        "tool": 3,
        "total": 14,
    }
    assert data["tool_calls"] == 3
    assert data["recorded_tokens"] == 53960
    assert data["largest_context"] == {"tokens": 13100, "kind": "recorded"}
    assert data["context_window"] == 258400
    assert data["compactions"] == [
        {"turn": 1, "message_index": 13, "source": "codex:compacted", "pre_tokens": 13160}
    ]
    assert set(data["estimate_error"]) == {"calls", "median", "p90", "bias"}


def test_command_bad_file_is_one_line_and_exit_3() -> None:
    bad = FIXTURES / "malformed_sharegpt.jsonl"
    good = FIXTURES / "representative_anthropic.jsonl"
    result = invoke(str(bad), str(good))
    assert result.exit_code == 3
    # the bad file's first conversation is still reported, the other file goes on
    assert "sharegpt" in result.stdout and "anthropic" in result.stdout
    errors = [line for line in result.stderr.splitlines() if "robot" in line]
    assert errors == [
        f"tsum: error: {bad}:2: conversations[1]: unknown 'from' 'robot' (expected one of: assistant, bard, bing, chatgpt, function, function_call, gpt, human, model, observation, system, tool, user) (--skip-bad-lines skips it)"
    ]
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines()[-1] == "3 sessions in 2 files, 1 failed"


def test_json_with_errors_names_every_file_it_leaves_out(tmp_path: Path) -> None:
    """--json's list names sessions only: a file that failed, or that a directory walk
    skipped, was only on stderr. --with-errors wraps the same list in an object that
    names them too (on a pool of workers alike)."""
    shutil.copy(FIXTURES / "representative_codex.jsonl", tmp_path / "a.jsonl")
    bad = tmp_path / "b.jsonl"  # its first conversation is read, then line 2 fails
    shutil.copy(FIXTURES / "malformed_sharegpt.jsonl", bad)
    (tmp_path / "manifest.json").write_text('{"version": 1}')
    missing = tmp_path / "gone.jsonl"
    listed = invoke("--json", str(tmp_path), str(missing))
    assert listed.exit_code == 3
    sessions = orjson.loads(listed.stdout)
    assert all("error" not in s for s in sessions) and len(sessions) == 2
    for workers in ("1", "2"):
        result = invoke(
            "--json", "--with-errors", "--workers", workers, str(tmp_path), str(missing)
        )
        assert result.exit_code == 3
        assert result.stderr == listed.stderr
        doc = orjson.loads(result.stdout)
        assert doc["sessions"] == sessions  # the list's entries, unchanged
        assert (doc["files"], doc["failed"]) == (4, 2)
        assert [(e["path"], e["line"], e["item"]) for e in doc["errors"]] == [
            (str(bad), 2, None),
            (str(missing), None, None),
        ]
        assert doc["errors"][0]["error"].startswith("conversations[1]: unknown 'from' 'robot'")
        assert doc["errors"][1]["error"] == "no such file"
        manifest = str(tmp_path / "manifest.json")
        assert doc["skipped"] == [
            {
                "path": manifest,
                "warnings": [f"{manifest}: not a transcript tsum can read (skipped)"],
            }
        ]


def test_with_errors_needs_json() -> None:
    result = invoke("--with-errors", str(FIXTURES / "representative_codex.jsonl"))
    assert result.exit_code == 2
    assert "--with-errors shapes the output of --json: give --json too" in result.stderr


def test_command_skip_bad_lines_and_force_format(tmp_path: Path) -> None:
    result = invoke(
        "--skip-bad-lines", "--format", "sharegpt", str(FIXTURES / "malformed_sharegpt.jsonl")
    )
    assert result.exit_code == 0
    assert result.stderr.count("warning:") == 2
    assert len(result.stdout.splitlines()) == 5  # table (2 sessions), context, commands


def test_command_undetectable_file_given_directly_fails(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"hello": "world"}')
    result = invoke(str(path))
    assert result.exit_code == 3
    assert result.stdout == ""
    assert f"{path}: cannot tell the format (tried: " in result.stderr


def test_command_no_sessions_is_exit_3(tmp_path: Path) -> None:
    result = invoke(str(tmp_path))
    assert result.exit_code == 3
    assert "no sessions found" in result.stderr


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"real corpus not found at {CORPUS}")
def test_command_on_the_real_corpus() -> None:
    result = invoke("--json", str(CORPUS))
    assert result.exit_code == 0, result.stderr
    data = orjson.loads(result.stdout)
    by_id = {d["session_id"]: d for d in data}
    codex = by_id["019c8a59-e9dd-71f0-9ae3-4079fe9726a9"]
    assert codex["turns"] == 38 and codex["tool_calls"] == 365 and len(codex["compactions"]) == 1
    cc = by_id["d4519010-880f-47f6-a04c-abc13d7ea21d"]
    assert cc["largest_context"] == {"tokens": 163_695, "kind": "recorded"}  # PROVENANCE: max ctx
    assert [c["source"] for c in cc["compactions"]] == ["claude-code:isCompactSummary"]
    assert "manifest.json: not a transcript" in result.stderr


def test_command_with_the_wrong_format_warns_as_replay_does() -> None:
    # a Claude Code file read as Codex: every line named, and the empty session
    path = FIXTURES / "representative_claude_code.jsonl"
    result = invoke("--format", "codex", str(path))
    assert f"warning: {path}:2: 10 lines of unknown type 'user' skipped" in result.stderr
    assert (
        f"warning: {path}: session representative_claude_code: no messages read as codex"
        " (is the file in that format? see --format)" in result.stderr
    )
