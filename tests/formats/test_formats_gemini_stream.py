"""Gemini CLI headless stream-json: runs, delta chunks, per-run stats, and detection."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.support.corpus import FIXTURES, read
from tests.support.detection import detect_format
from transcript_tools.cli.inspect_cmd import inspect_command
from transcript_tools.engine.messages import AssistantMessage, TextBlock, ToolResultMessage
from transcript_tools.errors import InputError
from transcript_tools.formats import openai_chat
from transcript_tools.formats.source import Record, Source

REPRESENTATIVE = FIXTURES / "representative_gemini_stream.jsonl"
EDGE = FIXTURES / "edge_cases_gemini_stream.jsonl"
# an excerpt of a real run (shun-shobon/gemicord log.jsonl: tests/fixtures/PROVENANCE.md)
NOTICE = FIXTURES / "edge_cases_gemini_stream_cli_notice.jsonl"


def events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def independent_count(path: Path) -> dict[str, dict[str, int]]:
    """Per session id, from the raw events: prompts, model calls, and the runs' tokens.

    A call is a stretch of assistant text / tool_use events not broken by a tool_result,
    a user message or a new run; the tokens are each finished run's stats.total_tokens
    (counted only when the run made a call)."""
    out: dict[str, dict[str, int]] = {}
    session = ""
    in_call = False
    run_calls = 0
    for ev in events(path):
        kind = ev["type"]
        if kind == "init":
            session, in_call, run_calls = ev["session_id"], False, 0
            out.setdefault(session, {"prompts": 0, "calls": 0, "tokens": 0})
        elif kind == "message" and ev["role"] == "user":
            out[session]["prompts"] += 1
            in_call = False
        elif kind == "message" and ev["content"].startswith("The --prompt (-p) flag has been"):
            continue  # the CLI's own notice, written before the model is called
        elif (kind == "message" and ev["role"] == "assistant") or kind == "tool_use":
            if not in_call:
                out[session]["calls"] += 1
                run_calls += 1
            in_call = True
        elif kind == "tool_result":
            in_call = False
        elif kind == "result":
            if run_calls:
                out[session]["tokens"] += ev["stats"]["total_tokens"]
            in_call = False
    return out


def inspect_json(*paths: Path, extra: tuple[str, ...] = ()) -> tuple[list[dict[str, Any]], str]:
    result = CliRunner().invoke(inspect_command, ["--json", *extra, *map(str, paths)])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), result.stderr


@pytest.mark.parametrize("path", [REPRESENTATIVE, EDGE, NOTICE])
def test_inspect_agrees_with_an_independent_count(path: Path) -> None:
    infos, _ = inspect_json(path)
    expected = independent_count(path)
    got = {
        i["session_id"]: {
            "prompts": i["turns"],
            "calls": i["calls"],
            "tokens": i["recorded_tokens"] or 0,
        }
        for i in infos
    }
    assert got == expected
    assert {i["format"] for i in infos} == {"gemini-stream"}


def test_runs_chunks_and_results() -> None:
    first, second = read(REPRESENTATIVE)
    # two runs of one session (the second resumed it) are one conversation; a new id is the next
    assert first.session_id == "70272ea8-4083-4590-ba02-242d377fa77b"
    assert second.session_id == "d5c83334-48c4-40cb-941e-c6ade6ee8c8a"
    replies = [m for m in first.messages if isinstance(m, AssistantMessage)]
    # the delta chunks of a reply are one text, not one call each
    assert replies[0].blocks[0] == TextBlock("I will create the folder first.")
    # the run's stats are its last call's usage; its other calls add nothing
    assert [r.usage.total_tokens if r.usage else None for r in replies] == [0, 0, 24530, 0, 17211]
    assert replies[2].usage is not None and replies[2].usage.cache_read_tokens == 16000
    errors = [m for m in first.messages if isinstance(m, ToolResultMessage) and m.is_error]
    assert [e.content for e in errors] == ["Directory is empty."]
    assert any("error event(s) left out" in w and "line 9" in w for w in first.warnings)


def test_the_clis_deprecation_notice_is_no_model_text() -> None:
    (info,), stderr = inspect_json(NOTICE)
    assert (info["turns"], info["calls"], info["recorded_tokens"]) == (1, 2, 13374)
    assert info["largest_context"] == {"tokens": 12821, "kind": "recorded"}
    assert f"warning: {NOTICE}:3: the CLI's --prompt deprecation notice left out" in stderr
    (conv,) = read(NOTICE)
    first, last = [m for m in conv.messages if isinstance(m, AssistantMessage)]
    assert [type(b).__name__ for b in first.blocks] == ["ToolUseBlock"]  # the notice is not in it
    assert last.blocks[0].text.startswith("はい、現在のディレクトリ")  # type: ignore[union-attr]
    assert last.usage is not None and last.usage.cache_read_tokens == 9598


def test_a_failed_or_cut_off_run_is_a_warning() -> None:
    quota, auth, cut = read(EDGE)
    assert any("TerminalQuotaError" in w and "line 5" in w for w in quota.warnings)
    assert any("401" in w for w in auth.warnings)
    assert any("no result record" in w for w in cut.warnings)
    assert all(
        m.usage is None for m in cut.messages if isinstance(m, AssistantMessage)
    )  # estimated


def test_a_broken_event_is_named_by_its_line() -> None:
    with pytest.raises(InputError) as info:
        read(FIXTURES / "malformed_gemini_stream.jsonl")
    assert info.value.line == 10 and "tool_use" in info.value.message
    (conv,) = read(FIXTURES / "malformed_gemini_stream.jsonl", skip_bad_lines=True)
    assert conv.format == "gemini-stream"


# ---- detection (docs/formats.md, "Gemini CLI headless output") ------------------------


def test_openai_never_takes_records_typed_as_stream_events() -> None:
    user = {"type": "message", "role": "user", "content": "hi"}
    for kind in ("init", "tool_use", "tool_result", "result"):
        head = [Record(user, 1), Record({"type": kind, "role": "x", "content": "y"}, 2)]
        assert not openai_chat.sniff(head), kind
    delta = {"type": "message", "role": "assistant", "content": "he", "delta": True}
    assert not openai_chat.sniff([Record(user, 1), Record(delta, 2)])
    assert openai_chat.sniff([Record({"role": "user", "content": "hi"}, 1)])  # still OpenAI


def test_a_stream_without_its_init_line_is_not_openai(tmp_path: Path) -> None:
    # the file of the issue: the first record is the user message, so it looked like Chat
    # Completions and failed at the tool_use line with "unknown role None"
    path = tmp_path / "run.jsonl"
    path.write_text("".join(line + "\n" for line in REPRESENTATIVE.read_text().splitlines()[1:]))
    assert detect_format(Source(str(path))) == "gemini-stream"


def test_an_unreadable_stream_file_in_a_directory_is_skipped_with_a_warning(
    tmp_path: Path,
) -> None:
    # the head of this file holds a broken event: no reader can take it, so a directory run
    # skips it with the warning every other unknown file gets, and reads the rest
    folder = tmp_path / "logs"
    folder.mkdir()
    lines = REPRESENTATIVE.read_text().splitlines()[1:]
    broken = json.loads(lines[3])
    del broken["tool_id"]
    lines[3] = json.dumps(broken)
    (folder / "broken.jsonl").write_text("\n".join(lines) + "\n")
    shutil.copy(FIXTURES / "representative_codex.jsonl", folder / "codex.jsonl")
    infos, stderr = inspect_json(folder)
    assert [i["format"] for i in infos] == ["codex"]
    assert "broken.jsonl: not a transcript tsum can read (skipped)" in stderr
    assert "unknown role" not in stderr
