"""Agent trajectories (SWE-agent, OpenHands) and mini-swe-agent runs (read as OpenAI chat)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.corpus import CORPUS, FIXTURES, needs_corpus, read
from transcript_tools.engine.messages import (
    INJECTED,
    OBSERVATION,
    PERSON,
    AssistantMessage,
    Conversation,
    OtherBlock,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    Usage,
    UserMessage,
    is_turn_start,
)
from transcript_tools.errors import InputError


def recorded(conv: Conversation) -> int:
    return sum(
        m.usage.total_tokens for m in conv.messages if isinstance(m, AssistantMessage) and m.usage
    )


def test_swe_agent_function_calling() -> None:
    (conv,) = read(FIXTURES / "representative_swe_agent.traj")
    assert conv.format == "trajectory" and conv.session_id == "representative_swe_agent"
    assert [m.role for m in conv.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
    ]
    assert conv.messages[3] == ToolResultMessage("call_S1", "app.py\ntests/")
    last = conv.messages[4]
    assert isinstance(last, AssistantMessage)
    assert last.blocks[0] == OtherBlock("thinking", "Nothing else to do.")
    assert last.blocks[2] == ToolUseBlock("call_S2", "submit", {})
    assert recorded(conv) == 0


def test_swe_agent_text_actions_become_tool_calls() -> None:
    (conv,) = read(FIXTURES / "edge_cases_swe_agent.traj")
    msgs = conv.messages
    assert isinstance(msgs[1], SystemMessage) and "DEMONSTRATION" in msgs[1].text  # is_demo
    assert msgs[3] == AssistantMessage(
        (
            TextBlock("First, reproduce.\n\n```\ncreate reproduce.py\n```"),
            ToolUseBlock("action_1", "create", "create reproduce.py"),
        )
    )
    assert isinstance(msgs[4], ToolResultMessage) and msgs[4].tool_call_id == "action_1"
    # no action → the next user message is no tool result, but SWE-agent's format-error
    # notice: the runtime's, never a turn (docs/spec.md, "Turns")
    assert msgs[6] == UserMessage((TextBlock("Please always end with a command."),), OBSERVATION)
    assert sum(is_turn_start(m) for m in msgs) == 1


def test_openhands_harness_auto_reply_is_injected() -> None:
    """OpenHands' evaluation harness answers with a canned "user" message: not a turn."""
    (conv,) = read(FIXTURES / "edge_cases_openhands_auto_reply.json")
    users = [m for m in conv.messages if isinstance(m, UserMessage)]
    assert [u.origin for u in users] == [PERSON, INJECTED]
    assert sum(is_turn_start(m) for m in conv.messages) == 1


def test_openhands_instance() -> None:
    (conv,) = read(FIXTURES / "representative_openhands.jsonl")
    msgs = conv.messages
    assert conv.session_id == "demo__app-1"
    assert [m.role for m in msgs] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "tool",
        "assistant",
    ]
    both = msgs[2]
    assert isinstance(both, AssistantMessage)
    # two actions of one LLM response: one message, usage once (token_usages has the cache split)
    assert [b.id for b in both.blocks if isinstance(b, ToolUseBlock)] == ["toolu_01", "toolu_02"]
    assert both.blocks[0] == TextBlock("I'll look around.")
    assert both.usage == Usage(5000, 80, cache_read_tokens=1200)
    assert msgs[5] == ToolResultMessage(
        "error_8", "Parameter 'command' is expected to be one of ['view', 'create'].", True
    )
    assert recorded(conv) == 10600 + 100
    assert conv.warnings == []


def test_openhands_bare_event_stream() -> None:
    (conv,) = read(FIXTURES / "edge_cases_openhands_events.json")
    msgs = conv.messages
    assert msgs[0] == UserMessage(
        (TextBlock("Create hello.py"), OtherBlock("image", "https://example.com/sketch.png"))
    )
    assert isinstance(msgs[1], AssistantMessage) and msgs[1].usage == Usage(900, 40)
    assert msgs[3] == AssistantMessage.text("Created hello.py. Anything else?")
    assert sum(is_turn_start(m) for m in msgs) == 2


def test_malformed_trajectory() -> None:
    path = FIXTURES / "malformed_trajectory.traj"
    with pytest.raises(InputError) as info:
        read(path)
    assert (
        info.value.message == "history[1]: a message must be an object (--skip-bad-lines skips it)"
    )
    warnings: list[str] = []
    (conv,) = read(path, skip_bad_lines=True, warn=warnings.append)
    assert [m.role for m in conv.messages] == ["system"]
    assert "history[2]: unknown role 'wizard'" in warnings[1]


# ---- the real corpus: expectations computed from the raw JSON, not by the reader ----------


@needs_corpus
@pytest.mark.parametrize(
    "name",
    [
        "demo_ctf_web_i_got_id.traj",
        "demo_function_calling_replace_from_source__marshmallow-1867.traj",
        "test_gpt4__pydicom-1458.traj",
    ],
)
def test_real_swe_agent(name: str) -> None:
    path = CORPUS / "agent-trajectories" / "swe-agent" / name
    history = json.loads(path.read_text(encoding="utf-8"))["history"]
    system = sum(m["role"] == "system" or bool(m.get("is_demo")) for m in history)
    tool = sum(m["role"] == "tool" for m in history)
    prompts = 0
    previous = None
    for m in history:
        if m["role"] == "user" and not m.get("is_demo"):
            acted = (
                previous is not None
                and previous["role"] == "assistant"
                and not previous.get("tool_calls")
                and (previous.get("action") or "").strip()
            )
            if acted:
                tool += 1
            else:
                prompts += 1
        previous = m
    (conv,) = read(path)
    assert conv.format == "trajectory"
    assert sum(isinstance(m, SystemMessage) for m in conv.messages) == system
    assert sum(isinstance(m, ToolResultMessage) for m in conv.messages) == tool
    assert sum(is_turn_start(m) for m in conv.messages) == prompts == 1
    assert len(conv.messages) == len(history)
    assert recorded(conv) == 0


@needs_corpus
def test_real_openhands_instances() -> None:
    path = CORPUS / "agent-trajectories" / "openhands" / "multi_swe_bench_examples_output.jsonl"
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    convs = read(path)
    assert [c.session_id for c in convs] == [row["instance_id"] for row in lines]
    for row, conv in zip(lines, convs, strict=True):
        history = row["history"]
        usages = row["metrics"]["token_usages"]
        responses = {
            e["tool_call_metadata"]["model_response"]["id"]
            for e in history
            if "action" in e and e.get("tool_call_metadata")
        }
        observations = sum(
            "observation" in e
            and (bool(e.get("tool_call_metadata")) or e["observation"] == "error")
            for e in history
        )
        prompts = sum(e.get("action") == "message" and e["source"] == "user" for e in history)
        assert sum(is_turn_start(m) for m in conv.messages) == prompts == 1
        assert (
            sum(isinstance(m, AssistantMessage) for m in conv.messages)
            == len(responses)
            == len(usages)
        )
        assert sum(isinstance(m, ToolResultMessage) for m in conv.messages) == observations
        assert recorded(conv) == sum(u["prompt_tokens"] + u["completion_tokens"] for u in usages)
        acc = row["metrics"]["accumulated_token_usage"]
        assert recorded(conv) == acc["prompt_tokens"] + acc["completion_tokens"]


@needs_corpus
def test_real_openhands_event_array() -> None:
    path = CORPUS / "agent-trajectories" / "openhands" / "runtime_trajs_basic.json"
    events = json.loads(path.read_text(encoding="utf-8"))
    responses = {}
    for e in events:
        meta = e.get("tool_call_metadata")
        if "action" in e and meta:
            responses[meta["model_response"]["id"]] = meta["model_response"]["usage"]
    (conv,) = read(path)
    assert recorded(conv) == sum(
        u["prompt_tokens"] + u["completion_tokens"] for u in responses.values()
    )
    assert sum(is_turn_start(m) for m in conv.messages) == 1


def mini_swe_agent_files() -> list[Path]:
    return sorted((CORPUS / "chat-completions").rglob("*.traj.json")) if CORPUS.is_dir() else []


@needs_corpus
@pytest.mark.parametrize(
    "path", mini_swe_agent_files(), ids=lambda p: f"{p.parent.name}/{p.name[:20]}"
)
def test_real_mini_swe_agent(path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    msgs = [m for m in data["messages"] if m["role"] != "exit"]
    tokens = 0
    for m in msgs:
        usage = (
            (m.get("extra") or {}).get("response", {}).get("usage")
            if m["role"] == "assistant"
            else None
        )
        if usage:
            tokens += usage["prompt_tokens"] + usage["completion_tokens"]
    (conv,) = read(path)
    assert conv.format == "openai" and conv.session_id == data["instance_id"]
    assert len(conv.messages) == len(msgs)
    assert (
        sum(is_turn_start(m) for m in conv.messages) == sum(m["role"] == "user" for m in msgs) == 1
    )
    assert sum(isinstance(m, ToolResultMessage) for m in conv.messages) == sum(
        m["role"] == "tool" for m in msgs
    )
    assert recorded(conv) == tokens
