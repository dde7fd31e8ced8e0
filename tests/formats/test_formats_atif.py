"""ATIF trajectories: steps, per-step metrics, subagents and the compaction recorded as a
continuation (`continued_trajectory_ref` / `is_copied_context`); counts from the raw JSON
and by hand, against `tsum inspect --json`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from tests.support.corpus import FIXTURES, read
from tests.support.detection import detect_format
from transcript_tools.cli.inspect_cmd import inspect_command
from transcript_tools.engine.messages import (
    INJECTED,
    SYNTHETIC_MODEL,
    AssistantMessage,
    UserMessage,
)
from transcript_tools.formats.source import Source

MAIN = FIXTURES / "representative_atif.json"
CONTINUATION = FIXTURES / "edge_cases_atif_continuation.json"


def inspect_json(path: Path) -> dict[str, dict[str, Any]]:
    result = CliRunner().invoke(inspect_command, ["--json", "--workers", "1", str(path)])
    assert result.exit_code == 0, result.output
    return {row["session_id"]: row for row in json.loads(result.stdout)}


def raw_counts(steps: list[dict[str, Any]]) -> tuple[int, int, int, int]:
    """(turns, calls, tool calls, tokens) from the raw steps: copied steps and the summary
    handed over before them are not counted; an agent step with llm_call_count 0 is no call."""
    last_copied = max((s["step_id"] for s in steps if s.get("is_copied_context")), default=0)
    turns = calls = tools = tokens = 0
    for step in steps:
        if (
            step["step_id"] <= last_copied
            and step["source"] == "user"
            or step.get("is_copied_context")
        ):
            continue
        if step["source"] == "user":
            turns += 1
        elif step["source"] == "agent" and step.get("llm_call_count") != 0:
            calls += 1
            tools += len(step.get("tool_calls") or [])
            m = step.get("metrics") or {}
            tokens += m.get("prompt_tokens", 0) + m.get("completion_tokens", 0)
    return turns, calls, tools, tokens


def test_steps_metrics_and_subagents_against_the_raw_json() -> None:
    rows = inspect_json(MAIN)
    doc = json.loads(MAIN.read_text(encoding="utf-8"))
    main, sub = rows["run-7f3a-main"], rows["run-7f3a-main/sub-1"]
    got = (main["turns"], main["calls"], main["tool_calls"], main["recorded_tokens"])
    assert got == raw_counts(doc["steps"]) == (1, 2, 3, 2740)  # 1260 + 1480, by hand
    sub_doc = doc["subagent_trajectories"][0]["steps"]
    assert (sub["turns"], sub["calls"], sub["recorded_tokens"]) == raw_counts(sub_doc)[:2] + (320,)
    assert main["warnings"] == []  # final_metrics.total_prompt_tokens agrees: 1200 + 1400


def test_the_continuation_is_a_recorded_compaction_on_both_sides() -> None:
    [first, _sub] = read(MAIN)
    [comp] = first.compactions
    assert (comp.source, comp.message_index) == ("atif:continued_trajectory_ref", 8)
    dispatch = first.messages[-1]
    assert isinstance(dispatch, AssistantMessage) and dispatch.model == SYNTHETIC_MODEL
    [cont] = read(CONTINUATION)
    [carried] = cont.compactions
    assert (carried.source, carried.message_index) == ("atif:is_copied_context", 0)
    assert carried.summary is not None and carried.summary.startswith("Summary so far")
    assert [m.origin for m in cont.messages[:2] if isinstance(m, UserMessage)] == [INJECTED] * 2


def test_continuation_counts_copied_steps_once() -> None:
    [row] = inspect_json(CONTINUATION).values()
    doc = json.loads(CONTINUATION.read_text(encoding="utf-8"))
    got = (row["turns"], row["calls"], row["tool_calls"], row["recorded_tokens"])
    assert got == raw_counts(doc["steps"]) == (1, 2, 1, 1980)  # 950 + 1030, by hand
    assert row["session_id"] == "run-7f3a/edge_cases_atif_continuation"
    assert row["warnings"] == [
        "1 agent step(s) add up several model calls (llm_call_count > 1): each read as one call"
    ]


def test_totals_that_disagree_are_a_warning(tmp_path: Path) -> None:
    doc = json.loads(MAIN.read_text(encoding="utf-8"))
    doc["final_metrics"]["total_prompt_tokens"] = 9999
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert detect_format(Source(str(path))) == "atif"
    row = inspect_json(path)["run-7f3a-main"]
    assert row["warnings"] == [
        "final_metrics.total_prompt_tokens is 9,999; the steps' prompt_tokens add up to 2,600"
    ]


def test_forced_on_another_format_is_one_error_naming_the_line() -> None:
    path = FIXTURES / "representative_pi.jsonl"
    result = CliRunner().invoke(inspect_command, ["--format", "atif", str(path)])
    assert result.exit_code != 0
    assert f"{path}:1: not an ATIF trajectory (no 'steps' list)" in result.stderr
