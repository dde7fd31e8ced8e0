"""One turn definition in every format (docs/spec.md, "Turns"): a turn starts at a
message a person wrote (or the task statement); observations and injections never do."""

from __future__ import annotations

import json

import pytest

from tests.support.corpus import FIXTURES, read
from transcript_tools.engine.messages import (
    INJECTED,
    OBSERVATION,
    PERSON,
    AssistantMessage,
    TextBlock,
    ToolResultMessage,
    UserImageMessage,
    UserMessage,
    is_turn_start,
)
from transcript_tools.engine.rules import split_turns

TEXT_PROTOCOL = FIXTURES / "edge_cases_mini_swe_agent_text.traj.json"
TOOL_PROTOCOL = FIXTURES / "representative_mini_swe_agent_tools.traj.json"


def test_only_a_person_starts_a_turn() -> None:
    text = (TextBlock("x"),)
    assert is_turn_start(UserMessage(text))
    assert is_turn_start(UserMessage(text, PERSON))
    assert is_turn_start(UserImageMessage())
    assert not is_turn_start(UserMessage(text, OBSERVATION))
    assert not is_turn_start(UserMessage(text, INJECTED))
    assert not is_turn_start(ToolResultMessage("c", "out"))
    assert not is_turn_start(AssistantMessage(text))


@pytest.mark.parametrize(
    "path", [TEXT_PROTOCOL, TOOL_PROTOCOL], ids=["text-protocol", "tool-calls"]
)
def test_same_task_is_one_turn_in_either_protocol(path) -> None:
    raw = json.loads(path.read_text())["messages"]
    calls = sum(1 for m in raw if m["role"] == "assistant")  # independent of the reader
    (conv,) = read(path)
    turns = split_turns(conv.messages)
    assert len(turns) == 1
    assert sum(isinstance(m, AssistantMessage) for m in conv.messages) == calls == 4


def test_text_protocol_observations_are_marked() -> None:
    raw = json.loads(TEXT_PROTOCOL.read_text())["messages"]
    (conv,) = read(TEXT_PROTOCOL)
    users = [m for m in conv.messages if isinstance(m, UserMessage)]
    raw_users = [m for m in raw if m["role"] == "user"]
    assert len(users) == len(raw_users) == 5
    assert users[0].origin == PERSON  # the task statement
    # every later user message is the runtime's, the format-error notice included
    assert [u.origin for u in users[1:]] == [OBSERVATION] * 4


def test_returncode_observation_without_format_marker(tmp_path) -> None:
    """A log that does not name its agent: the observation tag alone marks the message,
    while a person's follow-up question still starts a turn."""
    msgs = [
        {"role": "user", "content": "fix the build"},
        {"role": "assistant", "content": "```bash\nmake\n```"},
        {"role": "user", "content": "<returncode>2</returncode>\n<output>error</output>"},
        {"role": "assistant", "content": "Fixed."},
        {"role": "user", "content": "thanks, now run the tests"},
        {"role": "assistant", "content": "Done."},
    ]
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(json.dumps(m) for m in msgs) + "\n")
    (conv,) = read(path)
    assert [m.origin for m in conv.messages if isinstance(m, UserMessage)] == [
        PERSON,
        OBSERVATION,
        PERSON,
    ]
    assert [start for start, _ in split_turns(conv.messages)] == [0, 4]


def test_a_chat_without_agent_markers_keeps_every_user_message_a_turn(tmp_path) -> None:
    msgs = [
        {"role": "user", "content": f"question {i}"}
        if i % 2 == 0
        else {"role": "assistant", "content": "a"}
        for i in range(6)
    ]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps({"messages": msgs}))
    (conv,) = read(path)
    assert len(split_turns(conv.messages)) == 3


def test_inspect_shows_turns_and_model_calls_side_by_side() -> None:
    """The text-protocol and the tool-call run of one task: 1 turn, 4 calls."""
    from click.testing import CliRunner

    from transcript_tools.cli.main import cli

    result = CliRunner().invoke(cli, ["inspect", "--json", str(TEXT_PROTOCOL), str(TOOL_PROTOCOL)])
    assert result.exit_code == 0, result.stderr
    rows = json.loads(result.stdout)
    assert [(r["turns"], r["calls"]) for r in rows] == [(1, 4), (1, 4)]
    table = CliRunner().invoke(cli, ["inspect", str(TEXT_PROTOCOL)]).stdout.splitlines()
    header = table[0].split()
    assert header[header.index("turns") + 1] == "calls"


def test_sharegpt_observations_never_start_a_turn() -> None:
    """ShareGPT's ``observation`` / ``function_call`` roles: a call and its result (2
    ``human`` messages, 4 observations in the fixture: 2 turns)."""
    conv = read(FIXTURES / "edge_cases_sharegpt.json")[0]
    results = [m for m in conv.messages if isinstance(m, ToolResultMessage)]
    assert len(results) == 4
    assert len(split_turns(conv.messages)) == 2
