"""Gemini CLI chat logs: header, records rewritten under the same id, $set patches, notices."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.corpus import FIXTURES, read
from transcript_tools.engine.messages import (
    AssistantMessage,
    Conversation,
    OtherBlock,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from transcript_tools.engine.rules import split_turns
from transcript_tools.errors import InputError


def usages(conv: Conversation) -> list[Usage]:
    return [
        m.usage for m in conv.messages if isinstance(m, AssistantMessage) and m.usage is not None
    ]


def raw_counts(path: Path) -> dict[str, int]:
    """Counted from the raw lines: the last version of each model record id, once."""
    if path.suffix == ".json":
        rows = json.loads(path.read_text())["messages"]
    else:
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    last: dict[str, dict] = {}
    for row in rows:
        if row.get("type") == "gemini":
            last[row.get("id", f"line {len(last)}")] = row  # no id: a record of its own
    with_tokens = [r["tokens"] for r in last.values() if "tokens" in r]
    return {
        "turns": sum(1 for r in rows if r.get("type") == "user"),
        "model_messages": len(last),
        "calls": len(with_tokens),
        "recorded": sum(t["total"] for t in with_tokens),
        "tool_results": sum(
            1 for r in last.values() for c in r.get("toolCalls", []) if "result" in c
        ),
        "notices": sum(1 for r in rows if r.get("type") in ("info", "error", "warning")),
    }


@pytest.mark.parametrize(
    "name",
    ["representative_gemini.jsonl", "edge_cases_gemini.jsonl", "edge_cases_gemini_session.json"],
)
def test_counts_match_the_raw_records(name: str) -> None:
    path = FIXTURES / name
    (conv,) = read(path)
    want = raw_counts(path)
    assert conv.format == "gemini-cli"
    assert len(split_turns(conv.messages)) == want["turns"]
    assert sum(isinstance(m, AssistantMessage) for m in conv.messages) == want["model_messages"]
    assert len(usages(conv)) == want["calls"]
    # Gemini's total = input + tool-use prompt + output + thoughts: the same parts tsum sums
    assert sum(u.total_tokens for u in usages(conv)) == want["recorded"]
    assert sum(isinstance(m, ToolResultMessage) for m in conv.messages) == want["tool_results"]
    if want["notices"]:
        assert f"{want['notices']} info/error record(s) left out" in conv.warnings[0]


def test_representative_session() -> None:
    (conv,) = read(FIXTURES / "representative_gemini.jsonl")
    msgs = conv.messages
    assert conv.session_id == "representative_gemini" and conv.line == 1
    assert [m.role for m in msgs] == [
        "user", "assistant", "tool", "assistant", "tool", "tool", "assistant", "user", "assistant",
    ]  # fmt: skip
    # g1 was written twice: only its last version, with the call and its result
    assert msgs[1] == AssistantMessage(
        (
            OtherBlock("thinking", "Listing files\nI'll list the directory first."),
            ToolUseBlock("list_directory-1", "list_directory", {"path": "."}),
        ),
        Usage(5120, 84),
        "gemini-2.5-pro",
    )
    assert msgs[2] == ToolResultMessage("list_directory-1", "a.py\nb.py")
    assert msgs[5] == ToolResultMessage(
        "run_shell_command-3", "Command rejected by the user.", True
    )
    second = msgs[3]
    assert isinstance(second, AssistantMessage) and second.usage == Usage(
        5312, 40, cache_read_tokens=4096
    )
    image = msgs[7]
    assert isinstance(image, UserMessage) and image.blocks[0] == TextBlock(
        "Thanks. What is in this screenshot?"
    )
    assert isinstance(image.blocks[1], OtherBlock) and image.blocks[1].kind == "image"
    assert conv.warnings == [
        "2 info/error record(s) left out: notices shown to the person, never sent to the model (line 9, line 11)"
    ]


def test_edge_cases() -> None:
    (conv,) = read(FIXTURES / "edge_cases_gemini.jsonl")
    msgs = conv.messages
    assert msgs[0] == UserMessage.text("Explain utils.py")  # content as a plain string
    assert [m.role for m in msgs] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
        "assistant",
    ]
    assert isinstance(msgs[3], AssistantMessage) and msgs[3].usage is None  # no tokens: estimated
    assert conv.warnings == ["1 record(s) of unknown type left out (line 6 ('compression'))"]


def test_older_single_object_file() -> None:
    (conv,) = read(FIXTURES / "edge_cases_gemini_session.json")
    assert [m.role for m in conv.messages] == ["user", "assistant"]
    assert usages(conv) == [Usage(2000, 10)]
    assert "(messages[2])" in conv.warnings[0]


def test_malformed_line_is_an_error_naming_it() -> None:
    path = FIXTURES / "malformed_gemini.jsonl"
    with pytest.raises(InputError) as info:
        read(path)
    assert (
        info.value.location_text()
        == f"{path}:3: neither a Gemini CLI record (no 'type') nor a $set patch (--skip-bad-lines skips it)"
    )
    warnings: list[str] = []
    (conv,) = read(path, skip_bad_lines=True, warn=warnings.append)
    assert [m.role for m in conv.messages] == ["user", "assistant"] and len(warnings) == 1


def test_unreadable_tokens_are_a_warning_and_estimated(tmp_path: Path) -> None:
    path = tmp_path / "session-1.jsonl"
    rows = [
        {
            "sessionId": "s",
            "projectHash": "h",
            "startTime": "t",
            "lastUpdated": "t",
            "kind": "main",
        },
        {"id": "u1", "type": "user", "content": [{"text": "hi"}]},
        {
            "id": "g1",
            "type": "gemini",
            "content": "hello",
            "tokens": {"input": "5120", "output": 3},
        },
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (conv,) = read(path)
    assert isinstance(conv.messages[1], AssistantMessage) and conv.messages[1].usage is None
    assert conv.warnings == [
        "tokens of 1 model record(s) not read (expected integers from 0 to 100,000,000;"
        " estimated instead; line 3)"
    ]
