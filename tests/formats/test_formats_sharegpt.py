"""ShareGPT conversations: fixtures, then the real corpus checked against raw counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.corpus import CORPUS, FIXTURES, needs_corpus, read
from transcript_tools.engine.messages import (
    AssistantMessage,
    SystemMessage,
    ToolResultMessage,
    ToolUseBlock,
    UserMessage,
    is_turn_start,
)
from transcript_tools.errors import InputError


def test_representative_jsonl() -> None:
    first, second = read(FIXTURES / "representative_sharegpt.jsonl")
    assert first.format == "sharegpt" and first.session_id == "sg-1"
    assert first.messages[0] == SystemMessage("You are helpful.")
    assert [m.role for m in first.messages[1:]] == ["user", "assistant", "user", "assistant"]
    assert second.session_id == "representative_sharegpt#2" and second.line == 2
    assert second.messages[0] == UserMessage.text("你好")
    assert all(m.usage is None for m in first.messages if isinstance(m, AssistantMessage))


def test_edge_cases_function_calls() -> None:
    tools, empty = read(FIXTURES / "edge_cases_sharegpt.json")
    msgs = tools.messages
    calls = msgs[2]
    assert isinstance(calls, AssistantMessage)
    assert calls.blocks == (
        ToolUseBlock("call_1", "get_weather", {"city": "Paris"}),
        ToolUseBlock("call_2", "get_weather", {"city": "Rome"}),
    )
    # observations answer the oldest open call; a surplus one goes to the latest call
    assert [m.tool_call_id for m in msgs if isinstance(m, ToolResultMessage)] == [
        "call_1",
        "call_2",
        "call_3",
        "call_3",
    ]
    assert msgs[7] == AssistantMessage((ToolUseBlock("call_3", "unknown", "not json at all"),))
    assert sum(is_turn_start(m) for m in msgs) == 2
    assert empty.messages == []


def test_malformed_lines() -> None:
    path = FIXTURES / "malformed_sharegpt.jsonl"
    with pytest.raises(InputError) as info:
        read(path)
    assert info.value.line == 2 and "unknown 'from' 'robot'" in info.value.message
    warnings: list[str] = []
    convs = read(path, skip_bad_lines=True, warn=warnings.append)
    assert len(convs) == 2
    assert ":3: conversations[0]: 'value' must be a string" in warnings[1]


# ---- the real corpus: expectations computed from the raw JSON, not by the reader ----------


def corpus_files() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in (CORPUS / "sharegpt").rglob("*") if p.suffix in (".json", ".jsonl"))


@needs_corpus
@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_real_file_matches_raw_counts(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    rows = (
        json.loads(text)
        if path.suffix == ".json"
        else [json.loads(line) for line in text.splitlines()]
    )
    turns = [r["conversations"] for r in rows]
    convs = read(path)
    assert len(convs) == len(rows)
    for conv, raw in zip(convs, turns, strict=True):
        assert len(conv.messages) == len(raw)
        assert sum(is_turn_start(m) for m in conv.messages) == sum(
            t["from"] == "human" for t in raw
        )
        assert sum(isinstance(m, ToolResultMessage) for m in conv.messages) == sum(
            t["from"] == "observation" for t in raw
        )
    calls = sum(
        isinstance(b, ToolUseBlock)
        for c in convs
        for m in c.messages
        if isinstance(m, AssistantMessage)
        for b in m.blocks
    )
    assert calls == sum(t["from"] == "function_call" for raw in turns for t in raw)


@needs_corpus
def test_real_medical_sharegpt_sizes() -> None:
    path = CORPUS / "sharegpt" / "medicalgpt-sharegpt-zh" / "sharegpt_zh_1K_format.jsonl"
    convs = read(path)
    assert len(convs) == 993  # PROVENANCE: 7 of 1000 removed
    assert max(len(c.messages) for c in convs) == 330
