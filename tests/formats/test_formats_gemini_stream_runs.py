"""Gemini CLI stream-json: two ``gemini -p`` runs appended to one file, the first with a
``message`` written before its ``init``."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.corpus import FIXTURES, read
from transcript_tools.engine.messages import PERSON, AssistantMessage, ToolUseBlock, UserMessage

PATH = FIXTURES / "edge_cases_gemini_stream_two_runs.jsonl"


def test_a_leading_message_belongs_to_the_first_run() -> None:
    events = [json.loads(line) for line in PATH.read_text().splitlines()]
    inits = [e["session_id"] for e in events if e["type"] == "init"]
    tool_ids = [e["tool_id"] for e in events if e["type"] == "tool_use"]
    totals = [e["stats"]["total_tokens"] for e in events if e["type"] == "result"]
    assert events[0]["type"] == "message" and len(inits) == 2
    warnings: list[str] = []
    convs = read(PATH, warn=warnings.append)
    assert [c.session_id for c in convs] == inits
    calls = [[m for m in c.messages if isinstance(m, AssistantMessage)] for c in convs]
    used = [b.id for cs in calls for m in cs for b in m.blocks if isinstance(b, ToolUseBlock)]
    assert used == tool_ids  # every tool_use belongs to a run
    assert [sum(m.usage.total_tokens for m in cs if m.usage) for cs in calls] == totals
    first = convs[0].messages[0]
    assert isinstance(first, UserMessage) and first.origin == PERSON
    assert warnings == []


def test_events_ending_in_a_result_before_any_init_stay_a_run_of_their_own(
    tmp_path: Path,
) -> None:
    """A file cut at the front: the cut run's events end with its result."""
    lines = PATH.read_text().splitlines()
    path = tmp_path / "cut.jsonl"
    path.write_text("\n".join(lines[2:]) + "\n")  # from the first run's tool_use on
    convs = read(path)
    assert [c.session_id for c in convs] == ["cut#1", json.loads(lines[7])["session_id"]]
