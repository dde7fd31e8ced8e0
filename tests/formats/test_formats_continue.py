"""Continue sessions: history, context items, prompt logs; `tsum inspect` against an
independent count."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.support.corpus import FIXTURES
from transcript_tools.cli.inspect_cmd import inspect_command
from transcript_tools.engine.messages import AssistantMessage, OtherBlock, ToolUseBlock, UserMessage
from transcript_tools.engine.tokens import estimate_text_tokens
from transcript_tools.formats import read_conversations
from transcript_tools.formats.source import Source


def independent(path: Path) -> tuple[int, int, int]:
    """(prompts, calls, tokens): non-empty user items, assistant items, and the estimate of
    every prompt log's prompt and completion."""
    history: list[dict[str, Any]] = json.loads(path.read_text())["history"]
    prompts = sum(
        1 for h in history if h["message"]["role"] == "user" and (h["message"]["content"])
    )
    calls = sum(1 for h in history if h["message"]["role"] == "assistant")
    tokens = sum(
        estimate_text_tokens(log["prompt"]) + estimate_text_tokens(log["completion"])
        for h in history
        for log in h.get("promptLogs") or []
        if isinstance(log, dict)
    )
    return prompts, calls, tokens


@pytest.mark.parametrize("name", ["representative_continue.json", "edge_cases_continue.json"])
def test_inspect_agrees_with_an_independent_count(name: str) -> None:
    result = CliRunner().invoke(inspect_command, ["--json", "--workers", "1", str(FIXTURES / name)])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)
    assert (row["turns"], row["calls"], row["recorded_tokens"]) == independent(FIXTURES / name)


def test_context_items_ride_in_the_prompt_and_reasoning_is_thinking() -> None:
    (conv,) = read_conversations(Source(str(FIXTURES / "representative_continue.json")))
    assert conv.session_id == "0b1c2d3e-0000-4000-8000-000000000001"
    prompt, reply = conv.messages[:2]
    assert isinstance(prompt, UserMessage) and len(prompt.blocks) == 2
    assert prompt.blocks[0].text.startswith("cache.py\n```python")  # type: ignore[union-attr]
    assert isinstance(reply, AssistantMessage) and reply.model == "qwen2.5-coder:7b"
    assert reply.blocks[0] == OtherBlock("thinking", "The file defines one function.")


def test_agent_mode_tool_calls_thinking_and_left_out_items() -> None:
    (conv,) = read_conversations(Source(str(FIXTURES / "edge_cases_continue.json")))
    roles = [m.role for m in conv.messages]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "assistant"]
    call = conv.messages[2]
    assert isinstance(call, AssistantMessage)
    assert call.blocks == (
        OtherBlock("thinking", "I should call the terminal tool."),
        ToolUseBlock("tc1", "run_terminal_command", {"command": "pytest"}),
    )
    assert conv.warnings == [
        "history[3]: 2 prompt logs on one message; their estimates are summed",
        "history[5]: promptLogs[0] is not a prompt log; left out",
        "history[6]: not a message (role 'critic'); left out",
        "history[7]: empty user message left out",
    ]
    assert conv.messages[4].usage is None  # type: ignore[union-attr]  # estimated by tsum


def test_the_session_index_says_what_it_is(tmp_path: Path) -> None:
    from transcript_tools.errors import InputError
    from transcript_tools.formats import read_input

    index = tmp_path / "sessions.json"
    index.write_text(
        json.dumps([{"sessionId": "a", "title": "t", "dateCreated": "1", "workspaceDirectory": ""}])
    )
    with pytest.raises(InputError, match="Continue's session index"):
        list(read_conversations(Source(str(index))))
    warnings: list[str] = []
    assert not list(read_input(Source(str(index), warn=warnings.append), from_directory=True))
    assert warnings == [
        f"warning: {index}: Continue's session index (sessions.json), not a session: read the"
        " <session id>.json files beside it (skipped)"
    ]
