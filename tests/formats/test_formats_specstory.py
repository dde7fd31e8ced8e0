"""SpecStory Markdown (`.specstory/history/*.md`): turns, calls and tool calls counted by
hand from the fixtures, against `tsum inspect --json`."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.support.corpus import FIXTURES, read
from tests.support.detection import detect_format
from transcript_tools.cli.inspect_cmd import inspect_command
from transcript_tools.engine.messages import AssistantMessage, OtherBlock, ToolUseBlock
from transcript_tools.errors import InputError
from transcript_tools.formats import detect_text, read_conversations, specstory
from transcript_tools.formats.source import Source


def inspect_json(path: Path, *extra: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(inspect_command, ["--json", "--workers", "1", *extra, str(path)])
    assert result.exit_code == 0, result.output
    return list(json.loads(result.stdout))


def tool_uses(path: Path) -> int:
    """Tool calls counted from the raw Markdown: one per ``<tool-use`` tag."""
    return len(re.findall(r"<tool-use\b", path.read_text(encoding="utf-8")))


# (turns, calls, messages) counted by hand from each fixture:
# - cursor: 2 non-empty User headings (the fenced one is text). Agent 1 makes 3 calls —
#   [thinking, grep, read_file] | [text, search_replace] | [text] — agent 2 one: 4 calls;
#   messages 2 user + 4 assistant + 3 tool results = 9.
# - classic: 2 non-empty User headings (the third is empty), 2 Assistant replies: 4.
# - claude code: 2 User headings; Agent blocks at 13:40:56 (text), 13:41:01 (Bash),
#   13:41:05 ([Read, Bash] | [text]) = 4 calls; the 13:42:30 block is empty: left out;
#   2 + 4 + 3 = 9 messages.
COUNTS = {
    "representative_specstory_cursor.md": (2, 4, 9),
    "representative_specstory_classic.md": (2, 2, 4),
    "edge_cases_specstory_claude_code.md": (2, 4, 9),
}


@pytest.mark.parametrize("name", sorted(COUNTS))
def test_inspect_agrees_with_the_count_by_hand(name: str) -> None:
    path = FIXTURES / name
    [row] = inspect_json(path)
    turns, calls, messages = COUNTS[name]
    assert (row["turns"], row["calls"], row["messages"]["total"]) == (turns, calls, messages)
    assert row["tool_calls"] == tool_uses(path)
    # SpecStory records no usage: every call is estimated, and inspect says so
    assert row["calls_with_usage"] == 0 and row["recorded_tokens"] is None
    assert row["estimated_tokens"] > 0 and row["largest_context"]["kind"] == "estimated"


def test_session_id_model_thinking_and_tool_names() -> None:
    [conv] = read(FIXTURES / "representative_specstory_cursor.md")
    assert conv.session_id == "5f0c2a9e-1b7d-4c1e-9a52-3e8d7b6a4f10"
    replies = [m for m in conv.messages if isinstance(m, AssistantMessage)]
    assert [m.model for m in replies] == ["claude-4.5-opus-high-thinking"] * 3 + ["gpt-5.2"]
    assert isinstance(replies[0].blocks[0], OtherBlock) and replies[0].blocks[0].kind == "thinking"
    names = [b.name for m in replies for b in m.blocks if isinstance(b, ToolUseBlock)]
    assert names == ["grep", "read_file", "search_replace"]
    [cc] = read(FIXTURES / "edge_cases_specstory_claude_code.md")
    assert {m.model for m in cc.messages if isinstance(m, AssistantMessage)} == {"claude-opus-4-8"}


def test_empty_headings_and_stray_lines_are_warnings() -> None:
    [row] = inspect_json(FIXTURES / "edge_cases_specstory_claude_code.md")
    assert row["warnings"] == ["1 heading(s) with nothing under them left out (line 51)"]
    warned: list[str] = []
    text = "stray words\n\n_**User**_\n\nhi\n\n---\n\n_**Assistant**_\n\nhello\n"
    [conv] = specstory.read_text(text, Source("x.md", warn=warned.append))
    assert len(conv.messages) == 2
    assert warned == [
        "warning: x.md:1: 1 line(s) before the first _**User**_ / _**Agent**_ heading left out"
    ]


def test_detected_and_forced(tmp_path: Path) -> None:
    plain = tmp_path / "notes.md"
    plain.write_text("# Notes\n\n```\n_**User**_\n```\n", encoding="utf-8")
    assert detect_text(plain.read_bytes()) is None  # a heading inside a fence is no chat
    with pytest.raises(InputError, match="not a SpecStory chat"):
        list(read_conversations(Source(str(plain)), "specstory"))
    assert detect_format(Source(str(FIXTURES / "representative_specstory_classic.md"))) == (
        "specstory"
    )
