"""tau-bench and tau2-bench results: one session per simulation, the user simulator as the person."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.corpus import CORPUS, FIXTURES, needs_corpus, read
from transcript_tools.cli.main import cli
from transcript_tools.engine.messages import (
    OBSERVATION,
    PERSON,
    AssistantMessage,
    Conversation,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    Usage,
    UserMessage,
    is_turn_start,
)
from transcript_tools.engine.rules import split_turns
from transcript_tools.errors import InputError

REAL = CORPUS / "tau2-bench" / "telecom_gpt-4o_user-sim_gpt-4o.json"


def recorded(conv: Conversation) -> int:
    return sum(
        m.usage.total_tokens for m in conv.messages if isinstance(m, AssistantMessage) and m.usage
    )


def calls(conv: Conversation) -> int:
    """Model calls that recorded tokens (the greeting is a zero Usage: no call made it)."""
    return sum(
        1
        for m in conv.messages
        if isinstance(m, AssistantMessage) and m.usage and m.usage.total_tokens
    )


def final_costs(path: Path) -> list[int]:
    """``final cost_so_far`` of each session of ``tsum replay --dry-run``."""
    result = CliRunner().invoke(cli, ["replay", str(path), "--dry-run"])
    assert result.exit_code == 0, result.stderr
    return [
        int(n.replace(",", "")) for n in re.findall(r"final cost_so_far ([\d,]+)", result.stdout)
    ]


def test_tau2_simulations_are_sessions_named_by_task_and_trial() -> None:
    warnings: list[str] = []
    convs = read(FIXTURES / "representative_tau2_bench.json", warn=warnings.append)
    assert [c.session_id for c in convs] == [
        "[mobile_data_issue]data_mode_off[PERSONA:None]/trial-0",
        "[mobile_data_issue]data_mode_off[PERSONA:None]/trial-1",
    ]
    first = convs[0]
    assert first.format == "tau-bench"
    # the policy first; the greeting stays (no usage: no model call); the simulator's tool
    # activity is gone
    assert first.messages[0] == SystemMessage("# Telecom Agent Policy")
    del first.messages[0]
    assert [m.role for m in first.messages] == [
        "assistant", "user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant", "user",
    ]  # fmt: skip
    assert first.messages[0] == AssistantMessage(
        (TextBlock("Hi! How can I help you today?"),), Usage(0, 0), "gpt-4o"
    )
    assert first.messages[2] == AssistantMessage(
        (ToolUseBlock("call_A1", "get_customer_by_phone", {"phone_number": "555-0100"}),),
        Usage(3000, 25),
        "gpt-4o",
    )
    assert first.messages[7] == ToolResultMessage("call_A2", "Error: line not found", True)
    # the text of a simulator message that also called a tool never reached the agent
    assert not any("turn it on now" in str(m) for m in first.messages)
    assert all(m.origin == PERSON for m in first.messages if isinstance(m, UserMessage))
    assert len(split_turns(first.messages)) == 3
    # only the agent's calls: the simulator's usage (900+20, 950+10, ...) is never counted
    assert calls(first) == 4 and recorded(first) == 3025 + 3115 + 3230 + 3310
    assert recorded(convs[1]) == 3012
    # replay adds exactly the agent's calls: nothing estimated for the greeting
    assert final_costs(FIXTURES / "representative_tau2_bench.json") == [12680, 3012]
    # every left-out record is counted, with where it was
    assert warnings == [
        f"warning: {FIXTURES / 'representative_tau2_bench.json'}: simulations[0]: 4 user-simulator"
        " tool call(s) and result(s) left out — the agent never saw them (messages 5, 6, 7, 8)"
    ]


def test_tau2_multi_tool_messages(tmp_path: Path) -> None:
    def result(call_id: str, requestor: str) -> dict[str, object]:
        return {"id": call_id, "role": "tool", "content": call_id, "requestor": requestor}

    calls = [{"id": i, "name": "f", "arguments": {}} for i in ("a", "b")]
    sim = {
        "task_id": "t",
        "trial": 0,
        "messages": [
            {"role": "user", "content": "hi", "tool_calls": None},
            {"role": "assistant", "content": None, "tool_calls": calls, "usage": None},
            {"role": "tool", "tool_messages": [result("a", "assistant"), result("b", "assistant")]},
            {"role": "user", "content": None, "tool_calls": calls},
            {"role": "tool", "tool_messages": [result("c", "user"), result("d", "user")]},
        ],
    }
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"simulations": [sim]}))
    warnings: list[str] = []
    (conv,) = read(path, warn=warnings.append)
    assert conv.messages[2:] == [ToolResultMessage("a", "a"), ToolResultMessage("b", "b")]
    assert "2 user-simulator tool call(s) and result(s) left out" in warnings[0]


def test_old_tau_bench_runs_and_react_observations() -> None:
    convs = read(FIXTURES / "edge_cases_tau_bench.json")
    assert [c.session_id for c in convs] == ["task-12/trial-0", "task-7/trial-2"]
    tool_calling, react = convs
    assert [m.role for m in tool_calling.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    call = tool_calling.messages[2]
    assert isinstance(call, AssistantMessage)
    assert call.blocks == (ToolUseBlock("call_1", "get_order_details", {"order_id": "#W100"}),)
    assert sum(is_turn_start(m) for m in tool_calling.messages) == 2
    # ReAct: tool output comes back as a user message "API output: ..." — an observation
    origins = [m.origin for m in react.messages if isinstance(m, UserMessage)]
    assert origins == [PERSON, OBSERVATION, PERSON, OBSERVATION]
    assert len(split_turns(react.messages)) == 2


def test_malformed_messages_are_errors_naming_the_element() -> None:
    path = FIXTURES / "malformed_tau_bench.json"
    with pytest.raises(InputError) as info:
        read(path)
    assert info.value.location_text().startswith(f"{path}[0]: traj[1]: unknown role 'robot'")
    warnings: list[str] = []
    (conv,) = read(path, skip_bad_lines=True, warn=warnings.append)
    assert [m.role for m in conv.messages] == ["user", "assistant"]
    assert len(warnings) == 2 and "traj[2]: a message must be an object" in warnings[1]


# ---- the real file: counts computed from the raw JSON ----------------------------------------


def raw_counts(path: Path) -> list[dict[str, int]]:
    doc = json.loads(path.read_text())
    out = []
    for sim in doc["simulations"]:
        msgs = sim["messages"]
        agent = [m for m in msgs if m["role"] == "assistant"]
        out.append(
            {
                # the simulator's text messages; one with tool calls goes to the environment
                "turns": sum(1 for m in msgs if m["role"] == "user" and not m["tool_calls"]),
                "calls": sum(1 for m in agent if m["usage"]),
                "greetings": sum(1 for m in agent if m["usage"] is None),
                "recorded": sum(
                    m["usage"]["prompt_tokens"] + m["usage"]["completion_tokens"]
                    for m in agent
                    if m["usage"]
                ),
                "simulator": sum(
                    m["usage"]["prompt_tokens"] + m["usage"]["completion_tokens"]
                    for m in msgs
                    if m["role"] == "user" and m["usage"]
                ),
                "agent_tool_results": sum(
                    1 for m in msgs if m["role"] == "tool" and m["requestor"] == "assistant"
                ),
            }
        )
    return out


@needs_corpus
def test_real_tau2_file_matches_raw_counts() -> None:
    convs = read(REAL, warn=lambda _: None)
    want = raw_counts(REAL)
    assert len(convs) == len(want) == 20
    for conv, expected in zip(convs, want, strict=True):
        assert len(split_turns(conv.messages)) == expected["turns"]
        assert calls(conv) == expected["calls"]
        assert recorded(conv) == expected["recorded"]
        zero = [
            m for m in conv.messages if isinstance(m, AssistantMessage) and m.usage == Usage(0, 0)
        ]
        assert len(zero) == expected["greetings"]
        assert (
            sum(isinstance(m, ToolResultMessage) for m in conv.messages)
            == expected["agent_tool_results"]
        )
        assert expected["simulator"] > 0  # recorded in the file, and never counted above
    # PROVENANCE §6a: usage on 217 of 237 agent messages
    assert sum(w["calls"] for w in want) == 217
    # the dry run's cost_so_far is the agent's recorded usage, nothing more
    assert final_costs(REAL) == [w["recorded"] for w in want]


def test_unreadable_agent_usage_is_a_warning_and_estimated(tmp_path: Path) -> None:
    sim = {
        "task_id": "t",
        "trial": 0,
        "messages": [
            {"role": "user", "content": "hi", "tool_calls": None},
            {
                "role": "assistant",
                "content": "a",
                "usage": {"prompt_tokens": "100", "completion_tokens": 5},
            },
            {
                "role": "assistant",
                "content": "b",
                "usage": {"prompt_tokens": 7, "completion_tokens": 1},
            },
        ],
    }
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"simulations": [sim]}))
    warnings: list[str] = []
    (conv,) = read(path, warn=warnings.append)
    usages = [m.usage for m in conv.messages if isinstance(m, AssistantMessage)]
    assert usages == [None, Usage(7, 1)]
    assert warnings == [
        f"warning: {path}: simulations[0]: usage of 1 agent message(s) not read (expected integer"
        " prompt_tokens and completion_tokens; estimated instead; messages 1)"
    ]
