"""Anthropic Messages conversations and claude-trace API captures."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.support.corpus import FIXTURES, read
from transcript_tools.engine.messages import (
    AssistantMessage,
    OtherBlock,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    Usage,
    UserImageMessage,
    UserMessage,
    is_turn_start,
)
from transcript_tools.errors import InputError
from transcript_tools.formats.anthropic_api import usage_from_anthropic
from transcript_tools.formats.claude_trace import response_from_sse


def test_usage_includes_cache_tokens() -> None:
    usage = {
        "input_tokens": 3,
        "cache_creation_input_tokens": 100,
        "cache_read_input_tokens": 900,
        "output_tokens": 7,
    }
    assert usage_from_anthropic(usage) == Usage(
        1003, 7, cache_read_tokens=900, cache_creation_tokens=100
    )
    assert usage_from_anthropic({"input_tokens": 5, "output_tokens": 1}) == Usage(5, 1)
    assert usage_from_anthropic(None) is None
    assert usage_from_anthropic({"service_tier": "standard"}) is None


def test_representative_conversations_per_line() -> None:
    first, second = read(FIXTURES / "representative_anthropic.jsonl")
    assert first.session_id == "conv-weather" and first.format == "anthropic"
    assert second.session_id == "representative_anthropic#2"
    msgs = first.messages
    assert msgs[0] == SystemMessage("You are a weather assistant.")
    call = msgs[2]
    assert isinstance(call, AssistantMessage)
    assert call.blocks == (
        OtherBlock("thinking", "I should call the tool."),
        TextBlock("Let me check."),
        ToolUseBlock("toolu_W1", "get_weather", {"city": "Paris"}),
    )
    assert call.usage == Usage(420, 60, cache_read_tokens=0, cache_creation_tokens=400)
    assert msgs[3] == ToolResultMessage("toolu_W1", "18°C, cloudy")
    assert msgs[6] == AssistantMessage.text("I can only see today's weather.")  # no usage recorded
    assert sum(is_turn_start(m) for m in msgs) == 2
    assert second.messages[0] == SystemMessage("You are terse.\nAnswer in one word.")


def test_edge_cases_blocks() -> None:
    (conv,) = read(FIXTURES / "edge_cases_anthropic.json")
    msgs = conv.messages
    assert msgs[1] == UserImageMessage("image/jpeg", "/9j/4AAQ")
    assert isinstance(msgs[2], AssistantMessage) and msgs[2].blocks[0] == OtherBlock(
        "thinking", None
    )
    doc = msgs[3]
    assert (
        isinstance(doc, UserMessage)
        and isinstance(doc.blocks[0], OtherBlock)
        and doc.blocks[0].kind == "document"
    )
    # tool results never start a turn; the text beside them goes into the last result
    assert msgs[5] == ToolResultMessage("toolu_E1", "4")
    assert msgs[6] == ToolResultMessage(
        "toolu_E2", "ZeroDivisionError\n[image]\nKeep going.", is_error=True
    )
    assert msgs[7] == AssistantMessage(())
    assert sum(is_turn_start(m) for m in msgs) == 2


def test_claude_trace_takes_the_last_request_of_each_chain() -> None:
    main, topic = read(FIXTURES / "representative_claude_trace.jsonl")
    assert [m.role for m in main.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    usages = [m.usage for m in main.messages if isinstance(m, AssistantMessage)]
    # every response of the chain counted once, on the message it produced
    assert usages == [
        Usage(3005, 40, cache_read_tokens=0, cache_creation_tokens=3000),
        Usage(3064, 35, cache_read_tokens=3000, cache_creation_tokens=60),
        Usage(3094, 12, cache_read_tokens=3060, cache_creation_tokens=30),
    ]
    assert [m.role for m in topic.messages] == ["user", "assistant"]
    assert main.session_id.endswith("#1") and topic.session_id.endswith("#2")


def test_claude_trace_ignores_cache_control_and_counts_every_request() -> None:
    # request 2 repeats request 1 byte for byte (a retry: a second call); request 3 moves
    # the cache breakpoint off the first message
    (conv,) = read(FIXTURES / "edge_cases_claude_trace.jsonl")
    assert [m.role for m in conv.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
    ]
    usages = [m.usage for m in conv.messages if isinstance(m, AssistantMessage)]
    assert usages == [
        Usage(2904, 61, 0, 2900) + Usage(2904, 61, 2900, 0),
        Usage(3024, 18, 2900, 120),
        Usage(3064, 12, 3020, 40),
    ]
    assert sum(u.total_tokens for u in usages if u) == 2 * 2965 + 3042 + 3076


def test_claude_trace_usage_without_its_message_is_a_warning(tmp_path: Path) -> None:
    rows = [
        orjson.loads(x)
        for x in (FIXTURES / "edge_cases_claude_trace.jsonl").read_bytes().splitlines()
    ]
    # the last request rewrote the first answer (a user message where the call was)
    rows[3]["request"]["body"]["messages"][1] = {"role": "user", "content": "(edited)"}
    path = tmp_path / "trace.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    warnings: list[str] = []
    read(path, warn=warnings.append)
    assert [w for w in warnings if "usage" in w] == [
        f"warning: {path}:1: the response's usage (2965 tokens) has no assistant message"
        " in the conversation's last request (ignored)",
        f"warning: {path}:2: the response's usage (2965 tokens) has no assistant message"
        " in the conversation's last request (ignored)",
    ]


def test_usage_that_is_not_a_number_is_a_warning_naming_the_line(tmp_path: Path) -> None:
    rows = [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "…"}], "usage": {"input_tokens": "12", "output_tokens": 3}},
        {"role": "user", "content": "and?"},
        {"role": "assistant", "content": "done", "usage": "n/a"},
    ]  # fmt: skip
    path = tmp_path / "messages.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    warnings: list[str] = []
    (conv,) = read(path, warn=warnings.append)
    assert warnings == [
        f"warning: {path}:2: usage.input_tokens is a string ('12'); read as 12",
        f"warning: {path}:4: usage is not an object (str); ignored",
    ]
    assert [m.usage for m in conv.messages if isinstance(m, AssistantMessage)] == [
        Usage(12, 3),
        None,
    ]


def test_sse_stream_is_reassembled() -> None:
    raw = "\n".join(
        "data: " + orjson.dumps(e).decode()
        for e in [
            {
                "type": "message_start",
                "message": {
                    "id": "m",
                    "model": "c",
                    "usage": {"input_tokens": 9, "output_tokens": 1},
                },
            },
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "thinking", "thinking": ""},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "thinking_delta", "thinking": "hm"},
            },
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "tool_use", "id": "t", "name": "n"},
            },
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": '{"a":'},
            },
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": "1}"},
            },
            {"type": "message_delta", "delta": {}, "usage": {"output_tokens": 12}},
        ]
    )
    message = response_from_sse(raw + "\nevent: ping\ndata: not json\n")
    assert message["content"] == [
        {"type": "thinking", "thinking": "hm"},
        {"type": "tool_use", "id": "t", "name": "n", "input": {"a": 1}},
    ]
    assert usage_from_anthropic(message["usage"]) == Usage(9, 12)


def test_malformed_roles_and_content() -> None:
    path = FIXTURES / "malformed_anthropic.jsonl"
    with pytest.raises(InputError) as info:
        read(path)
    assert info.value.line == 2 and "unknown role 'robot'" in info.value.message
    warnings: list[str] = []
    convs = read(path, skip_bad_lines=True, warn=warnings.append)
    assert len(convs) == 1
    assert len(warnings) == 2 and ":3: messages[0]: content must be a string" in warnings[1]
