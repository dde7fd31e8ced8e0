"""Codex CLI rollouts: fixtures, then the real corpus checked against raw counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from corpus import CORPUS, FIXTURES, needs_corpus

from transcript_tools.errors import InputError
from transcript_tools.formats import read_conversations
from transcript_tools.formats.source import Source
from transcript_tools.messages import (
    AssistantMessage,
    Conversation,
    OtherBlock,
    SystemMessage,
    ToolResultMessage,
    ToolUseBlock,
    Usage,
    UserImageMessage,
    UserMessage,
    starts_turn,
)


def one(path: Path, **kw: object) -> Conversation:
    convs = list(read_conversations(Source(str(path), **kw)))  # type: ignore[arg-type]
    assert len(convs) == 1
    return convs[0]


def usages(conv: Conversation) -> list[Usage]:
    return [
        m.usage for m in conv.messages if isinstance(m, AssistantMessage) and m.usage is not None
    ]


def test_representative_rollout() -> None:
    conv = one(FIXTURES / "representative_codex.jsonl")
    msgs = conv.messages
    assert conv.format == "codex"
    assert conv.session_id == "019c0000-1111-7222-8333-444455556666"
    assert conv.context_window == 258400
    # base instructions, developer message, AGENTS.md and environment context: system, not prompts
    assert all(isinstance(m, SystemMessage) for m in msgs[:4])
    # prompts counted once though Codex logs each twice (item + event, in either order)
    assert [m for m in msgs if starts_turn(m)] == [
        UserMessage.text("Fix the failing test in test_app.py"),
        UserMessage.text("Now run the linter"),
    ]
    call = msgs[5]
    assert isinstance(call, AssistantMessage) and call.model == "gpt-5.3-codex"
    assert [type(b) for b in call.blocks] == [OtherBlock, type(call.blocks[1]), ToolUseBlock]
    assert call.blocks[2] == ToolUseBlock("call_A1", "exec_command", {"cmd": "pytest -q"})
    patch = msgs[7]
    assert isinstance(patch, AssistantMessage) and isinstance(patch.blocks[0].input, str)  # type: ignore[union-attr]
    # repeated token_count events are skipped: usage sums to the final total
    assert sum(u.total_tokens for u in usages(conv)) == 53400 + 560
    assert usages(conv)[0] == Usage(12000, 150, cache_read_tokens=3000)
    assert len(conv.compactions) == 1
    comp = conv.compactions[0]
    assert (comp.message_index, comp.source, comp.pre_tokens) == (13, "codex:compacted", 13160)
    assert sum(isinstance(m, ToolResultMessage) for m in msgs) == 3


def test_edge_cases_without_user_message_events() -> None:
    conv = one(FIXTURES / "edge_cases_codex.jsonl")
    msgs = conv.messages
    assert conv.context_window == 272000
    assert isinstance(msgs[0], SystemMessage) and isinstance(msgs[1], SystemMessage)
    assert msgs[2] == UserMessage.text(
        "What does main.py do?"
    )  # no events at all: the item is the prompt
    first = msgs[3]
    assert isinstance(first, AssistantMessage)
    assert first.blocks[0] == OtherBlock(
        "web_search", {"type": "search", "query": "python argparse"}
    )
    assert isinstance(first.blocks[1], ToolUseBlock) and first.blocks[1].name == "local_shell"
    result = msgs[4]
    assert (
        isinstance(result, ToolResultMessage)
        and result.is_error
        and result.content.startswith("cat:")
    )
    # a call with no output item still keeps its usage, on an empty assistant message
    assert msgs[5] == AssistantMessage((), Usage(1000, 30, cache_read_tokens=800), "gpt-5-codex")
    assert isinstance(msgs[6], UserImageMessage)
    assert sum(u.total_tokens for u in usages(conv)) == 4100 + 100
    assert sum(starts_turn(m) for m in msgs) == 2


def test_malformed_rollout() -> None:
    path = FIXTURES / "malformed_codex.jsonl"
    with pytest.raises(InputError) as info:
        one(path)
    assert info.value.line == 4  # line 6, the truncated last line, is only a warning
    warnings: list[str] = []
    conv = one(path, skip_bad_lines=True, warn=warnings.append)
    assert any(":4: response_item line without a 'payload' object" in w for w in warnings)
    assert any(":6: truncated last line skipped" in w for w in warnings)
    assert [m.role for m in conv.messages] == ["user", "assistant"]


# ---- the real corpus: expectations computed from the raw JSON, not by the reader ----------


def expected(path: Path) -> dict[str, object]:
    prompts = calls = outputs = 0
    recorded = max_input = 0
    last_total = None
    compaction_turns: list[int] = []
    window = None
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        p = row["payload"]
        kind = p.get("type")
        if row["type"] == "compacted":
            compaction_turns.append(prompts - 1)
        elif row["type"] == "event_msg" and kind == "user_message":
            prompts += 1
        elif row["type"] == "response_item" and kind in ("function_call", "custom_tool_call"):
            calls += 1
        elif row["type"] == "response_item" and kind in (
            "function_call_output",
            "custom_tool_call_output",
        ):
            outputs += 1
        elif row["type"] == "event_msg" and kind == "token_count" and p.get("info"):
            info = p["info"]
            window = info.get("model_context_window") or window
            if info["total_token_usage"] == last_total:
                continue
            last_total = info["total_token_usage"]
            last = info["last_token_usage"]
            recorded += last["input_tokens"] + last["output_tokens"]
            max_input = max(max_input, last["input_tokens"])
    return {
        "turns": prompts,
        "calls": calls,
        "outputs": outputs,
        "recorded": recorded,
        "max_input": max_input,
        "compaction_turns": compaction_turns,
        "window": window,
    }


def corpus_files() -> list[Path]:
    return sorted((CORPUS / "codex").rglob("rollout-*.jsonl")) if CORPUS.is_dir() else []


@needs_corpus
@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name[9:27])
def test_real_rollout_matches_raw_counts(path: Path) -> None:
    conv = one(path)
    want = expected(path)
    msgs = conv.messages
    assert sum(starts_turn(m) for m in msgs) == want["turns"]
    tool_uses = [
        b
        for m in msgs
        if isinstance(m, AssistantMessage)
        for b in m.blocks
        if isinstance(b, ToolUseBlock)
    ]
    assert len(tool_uses) == want["calls"]
    assert sum(isinstance(m, ToolResultMessage) for m in msgs) == want["outputs"]
    assert sum(u.total_tokens for u in usages(conv)) == want["recorded"]
    assert max(u.input_tokens for u in usages(conv)) == want["max_input"]
    assert conv.context_window == want["window"]
    turns_at = [sum(starts_turn(m) for m in msgs[: c.message_index]) - 1 for c in conv.compactions]
    assert turns_at == want["compaction_turns"]


@needs_corpus
def test_real_rollout_with_compaction() -> None:
    path = next(p for p in corpus_files() if "019c8a59" in p.name)
    conv = one(path)
    assert expected(path)["compaction_turns"] == [18]  # the 19th prompt's turn
    assert [(c.source, c.pre_tokens) for c in conv.compactions] == [("codex:compacted", 212134)]
    # PROVENANCE: 38 user messages, 365 tool calls, max last-turn input 209,950
    assert sum(starts_turn(m) for m in conv.messages) == 38
    assert max(u.input_tokens for u in usages(conv)) == 209_950
