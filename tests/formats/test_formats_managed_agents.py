"""Anthropic managed-agent session events: calls by span, usage with cache, session.usage."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.support.corpus import FIXTURES, read
from transcript_tools.cli.inspect_cmd import inspect_command
from transcript_tools.engine.messages import (
    INJECTED,
    AssistantMessage,
    OtherBlock,
    ToolResultMessage,
    ToolUseBlock,
    UserMessage,
)
from transcript_tools.engine.rules import split_turns
from transcript_tools.errors import InputError

REPRESENTATIVE = FIXTURES / "representative_managed_agents.jsonl"
EDGE = FIXTURES / "edge_cases_managed_agents.json"
# a saved stream that opted in to event deltas, with multi-agent thread events
STREAM = FIXTURES / "edge_cases_managed_agents_stream.jsonl"


def events(path: Path) -> list[dict[str, Any]]:
    if path.suffix == ".json":
        return list(json.loads(path.read_text())["data"])
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def independent_count(path: Path) -> dict[str, int]:
    """From the raw events: person events, calls (spans that wrote an agent event) and the
    tokens of those calls (input + cache creation + cache read + output)."""
    evs = events(path)
    prompts = sum(e["type"] in ("user.message", "user.define_outcome") for e in evs)
    starts = [i for i, e in enumerate(evs) if e["type"] == "span.model_request_start"]
    calls = tokens = 0
    for n, start in enumerate(starts):
        span = evs[start : starts[n + 1] if n + 1 < len(starts) else len(evs)]
        wrote = any(
            e["type"]
            in (
                "agent.message",
                "agent.tool_use",
                "agent.mcp_tool_use",
                "agent.custom_tool_use",
                "agent.thinking",
            )
            for e in span
        )
        usage = [e["model_usage"] for e in span if e["type"] == "span.model_request_end"]
        if wrote:
            calls += 1
            tokens += sum(
                u.get(k, 0)
                for u in usage
                for k in (
                    "input_tokens",
                    "output_tokens",
                    "cache_creation_input_tokens",
                    "cache_read_input_tokens",
                )
            )
    return {"prompts": prompts, "calls": calls, "tokens": tokens}


def inspect_json(path: Path) -> tuple[dict[str, Any], str]:
    # every warning as it comes, each with its own line number (not the summary's first)
    result = CliRunner().invoke(inspect_command, ["--json", "--warnings", "all", str(path)])
    assert result.exit_code == 0, result.output
    (info,) = json.loads(result.stdout)
    return info, result.stderr


@pytest.mark.parametrize("path", [REPRESENTATIVE, EDGE, STREAM])
def test_inspect_agrees_with_an_independent_count(path: Path) -> None:
    info, _ = inspect_json(path)
    got = {"prompts": info["turns"], "calls": info["calls"], "tokens": info["recorded_tokens"]}
    assert got == independent_count(path)
    assert info["format"] == "managed-agents"


def test_the_outcome_is_the_task_and_results_are_observations() -> None:
    (conv,) = read(REPRESENTATIVE)
    first = conv.messages[0]
    assert isinstance(first, UserMessage) and "10 largest files" in first.blocks[0].text  # type: ignore[union-attr]
    assert "rubric" not in str(first.blocks)  # the grader's, not the task
    turns = split_turns(conv.messages)
    assert len(turns) == 2  # the outcome, then the follow-up message; results never start one
    results = [m for m in conv.messages if isinstance(m, ToolResultMessage)]
    assert [(r.tool_call_id, r.is_error) for r in results] == [
        ("sevt_06", False),
        ("sevt_10", True),
        ("sevt_14", False),
    ]
    call = conv.messages[1]
    assert isinstance(call, AssistantMessage)
    assert isinstance(call.blocks[0], OtherBlock) and call.blocks[0].kind == "thinking"
    assert isinstance(call.blocks[-1], ToolUseBlock) and call.blocks[-1].name == "bash"
    assert call.usage is not None
    assert (call.usage.input_tokens, call.usage.cache_creation_tokens) == (4300, 3100)
    assert not conv.warnings  # session.usage agrees with the calls


def test_stream_previews_and_thread_events_are_left_out_with_their_line() -> None:
    info, stderr = inspect_json(STREAM)
    assert (info["turns"], info["calls"], info["recorded_tokens"]) == (1, 2, 2090)
    for line, count, kind in [
        (4, 1, "event_start"),
        (5, 2, "event_delta"),
        (11, 1, "session.thread_created"),
        (15, 1, "session.thread_status_idle"),
    ]:
        assert f"{STREAM}:{line}: {count} event(s) of type '{kind}' left out" in stderr
    (conv,) = read(STREAM)
    first = conv.messages[1]
    assert isinstance(first, AssistantMessage)
    # the previewed text is read once, from the stored agent.message, not from its deltas
    assert [b.text for b in first.blocks if hasattr(b, "text")] == ["Checking the job log."]
    assert not conv.warnings  # session.usage agrees with the calls


def test_edge_cases_are_warnings_with_their_place() -> None:
    info, stderr = inspect_json(EDGE)
    # a request that ended with usage but wrote nothing, an unknown event, and a
    # session.usage that disagrees with the calls: each named by its element
    assert "[8]: a model request with usage (2300 tokens) but no agent event" in stderr
    assert "[15]: 1 event(s) of type 'agent.thread_message_received' left out" in stderr
    assert "[22]: session.usage says 7400 input / 280 output tokens" in stderr
    assert [c["source"] for c in info["compactions"]] == ["managed-agents:compacted"]
    (conv,) = read(EDGE)
    # the usage that came before its events is that call's
    first_call = conv.messages[1]
    assert isinstance(first_call, AssistantMessage) and first_call.usage is not None
    assert first_call.usage.total_tokens == 2150
    assert conv.messages[0] == UserMessage.text("Refactor utils.py into a package.")
    assert all(not (isinstance(m, UserMessage) and m.origin == INJECTED) for m in conv.messages)


def test_an_event_without_type_is_named_by_its_line() -> None:
    with pytest.raises(InputError) as info:
        read(FIXTURES / "malformed_managed_agents.jsonl")
    assert info.value.line == 10
    (conv,) = read(FIXTURES / "malformed_managed_agents.jsonl", skip_bad_lines=True)
    assert len(split_turns(conv.messages)) == 2
