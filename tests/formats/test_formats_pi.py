"""pi coding-agent sessions: the branch read, usage, the recorded compaction; counts by
hand from the fixtures and from their raw JSON, against `tsum inspect --json`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from tests.support.corpus import FIXTURES, read
from tests.support.detection import detect_format
from transcript_tools.cli.inspect_cmd import inspect_command
from transcript_tools.engine.messages import INJECTED, OBSERVATION, UserMessage
from transcript_tools.formats.source import Source

TREE = FIXTURES / "representative_pi.jsonl"
V1 = FIXTURES / "edge_cases_pi_v1.jsonl"


def inspect_json(path: Path) -> list[dict[str, Any]]:
    result = CliRunner().invoke(inspect_command, ["--json", "--workers", "1", str(path)])
    assert result.exit_code == 0, result.output
    return list(json.loads(result.stdout))


def raw(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def tokens(entry: dict[str, Any]) -> int:
    """A call's recorded tokens from its raw usage: the whole prompt plus the output."""
    u = entry["message"]["usage"]
    return int(u["input"] + u["cacheRead"] + u["cacheWrite"] + u["output"])


def test_the_branch_ending_at_the_last_entry_is_read() -> None:
    [row] = inspect_json(TREE)
    # by hand: the person went back to a6 (/tree) and typed a9, so a7 (a prompt) and a8
    # (its reply) are on another branch. On the branch: prompts a3, a9 (2 turns); replies
    # a4, a6, a11, a14 (4 calls); messages a3 a4 a5 a6 a9 c1 a11 a12 a13 a14 (10).
    assert (row["turns"], row["calls"], row["messages"]["total"]) == (2, 4, 10)
    entries = {e.get("id"): e for e in raw(TREE)}
    assert row["recorded_tokens"] == sum(tokens(entries[i]) for i in ("a4", "a6", "a11", "a14"))
    assert row["recorded_tokens"] == 3495  # 1280 + 1350 + 420 + 445, by hand
    assert row["largest_context"] == {"tokens": 1310, "kind": "recorded"}  # a6: 50+1200+60
    assert row["tool_calls"] == 2
    assert row["warnings"] == [
        "2 entries on other branches of the session tree left out"
        " (the branch ending at the last entry is read)"
    ]


def test_the_compaction_is_recorded_with_its_summary() -> None:
    [conv] = read(TREE)
    [comp] = conv.compactions
    assert (comp.source, comp.pre_tokens) == ("pi:compaction", 1350)
    summary = conv.messages[comp.message_index]
    assert isinstance(summary, UserMessage) and summary.origin == INJECTED
    assert comp.summary is not None and comp.summary.startswith("The build failed")
    assert [type(m).__name__ for m in conv.messages][comp.message_index - 1] == "UserMessage"
    lint = conv.messages[comp.message_index + 3]
    assert isinstance(lint, UserMessage) and lint.origin == INJECTED  # the custom_message


def test_version_1_file_order_bash_commands_and_api_errors() -> None:
    warned: list[str] = []
    [conv] = read(V1, warn=warned.append)
    [row] = inspect_json(V1)
    records = raw(V1)
    prompts = [r for r in records if r.get("message", {}).get("role") == "user"]
    replies = [
        r
        for r in records
        if r.get("message", {}).get("role") == "assistant" and r["message"]["content"]
    ]
    assert (row["turns"], row["calls"]) == (len(prompts), len(replies)) == (2, 2)
    assert row["recorded_tokens"] == sum(tokens(r) for r in replies) == 65
    origins = [m.origin for m in conv.messages if isinstance(m, UserMessage)]
    # the prompt, the person's `git status` (an observation), the prompt, the hook message;
    # the `!!` command is never sent to the model
    assert origins == ["person", OBSERVATION, "person", INJECTED]
    assert warned == [
        f"warning: {V1}:11: entry of unknown type 'workspace_snapshot' left out",
        f"warning: {V1}:7: an API error pi logged ('529 overloaded_error'), not a reply; left out",
    ]


def test_detected() -> None:
    assert detect_format(Source(str(TREE))) == "pi"
    assert detect_format(Source(str(V1))) == "pi"
