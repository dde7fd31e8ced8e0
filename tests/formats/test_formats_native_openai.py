"""The native serialization round-trips exactly; OpenAI Chat Completions in its three layouts."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.rendering import dumps_messages
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
)
from transcript_tools.formats import read_conversations
from transcript_tools.formats.source import Source

text = st.text(max_size=40)
json_value = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
tokens = st.integers(0, 10**9)
usage = st.builds(Usage, tokens, tokens, tokens, tokens)
block = st.one_of(
    st.builds(TextBlock, text),
    st.builds(ToolUseBlock, text, text, json_value),
    st.builds(OtherBlock, st.sampled_from(["image", "audio", "file", "thinking", "x"]), json_value),
)
message = st.one_of(
    st.builds(SystemMessage, text),
    st.builds(UserMessage, st.lists(block, max_size=3).map(tuple)),
    st.builds(UserImageMessage, text, json_value),
    st.builds(
        AssistantMessage,
        st.lists(block, max_size=4).map(tuple),
        st.none() | usage,
        st.none() | text,
    ),
    st.builds(ToolResultMessage, text, text, st.booleans()),
)


@settings(max_examples=200, deadline=None)
@given(messages=st.lists(message, max_size=12), session=st.text(min_size=1, max_size=20))
def test_native_round_trip_is_exact(tmp_path_factory, messages, session) -> None:
    path = tmp_path_factory.mktemp("native") / "c.jsonl"
    data = dumps_messages(messages, session)
    path.write_bytes(data)
    [conv] = read_conversations(Source(str(path)), "native")
    assert conv.messages == messages
    assert conv.session_id == session
    assert dumps_messages(conv.messages, conv.session_id) == data  # and back to the same bytes


CONVERSATION = [
    {"role": "system", "content": "be brief"},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "look"},
            {"type": "image_url", "image_url": {"url": "data:x"}},
        ],
    },
    {
        "role": "assistant",
        "content": None,
        "reasoning_content": "thinking...",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "ls", "arguments": '{"path": "."}'},
            },
            {"id": "c2", "type": "function", "function": {"name": "cat", "arguments": "not json"}},
        ],
        "extra": {
            "response": {
                "model": "deepseek-chat",
                "usage": {
                    "prompt_tokens": 100,
                    "completion_tokens": 7,
                    "prompt_tokens_details": {"cached_tokens": 64},
                },
            }
        },
    },
    {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
    {
        "role": "tool",
        "tool_call_id": "c2",
        "content": [{"type": "text", "text": "x"}, {"type": "input_audio", "input_audio": {}}],
    },
    {
        "role": "assistant",
        "content": "done",
        "usage": {"prompt_tokens": 140, "completion_tokens": 3},
    },
]


def check(conv) -> None:
    system, user, call, r1, r2, final = conv.messages
    assert system == SystemMessage("be brief")
    assert user.blocks[0] == TextBlock("look") and user.blocks[1].kind == "image"
    assert [b.kind for b in call.blocks if isinstance(b, OtherBlock)] == ["thinking"]
    assert [(b.id, b.name) for b in call.blocks if isinstance(b, ToolUseBlock)] == [
        ("c1", "ls"),
        ("c2", "cat"),
    ]
    assert call.usage == Usage(100, 7, cache_read_tokens=64)
    assert call.model == "deepseek-chat"  # read where the usage is, not dropped
    assert final.model is None
    assert r1 == ToolResultMessage("c1", "a.txt") and r2.content == "x [audio]"
    assert final.usage == Usage(140, 3)


def test_openai_one_message_per_line(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in CONVERSATION))
    [conv] = read_conversations(Source(str(path)))
    assert conv.format == "openai" and conv.session_id == "m"
    check(conv)


def test_openai_one_conversation_per_line(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(
        json.dumps({"messages": CONVERSATION})
        + "\n"
        + json.dumps({"id": "second", "messages": CONVERSATION[:2]})
        + "\n"
    )
    first, second = read_conversations(Source(str(path)))
    check(first)
    assert first.session_id == "c#1" and second.session_id == "second"
    assert len(second.messages) == 2


def test_openai_whole_json_file(tmp_path: Path) -> None:
    path = tmp_path / "run.traj.json"
    path.write_text(
        json.dumps(
            {"info": {}, "messages": [*CONVERSATION, {"role": "exit", "content": ""}]}, indent=2
        )
    )
    [conv] = read_conversations(Source(str(path)))
    assert conv.session_id == "run"
    check(conv)  # the runner's "exit" marker is not a message
