"""Claude Code logs as the newest versions (2.1.1xx-2.1.2xx) and unseen real sessions
write them: bookkeeping before the first prompt, runtime notifications, warm-ups,
results logged before their calls, sessions with no person."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tests.support.corpus import FIXTURES, read
from tests.support.detection import detect_format
from transcript_tools.cli.main import cli
from transcript_tools.engine.messages import (
    INJECTED,
    PERSON,
    AssistantMessage,
    Conversation,
    ToolResultMessage,
    ToolUseBlock,
    UserMessage,
)
from transcript_tools.engine.rules import turn_starts
from transcript_tools.formats.source import Source
from transcript_tools.replay.conversation import tool_oddities


def entries(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def one(path: Path, warnings: list[str]) -> Conversation:
    (conv,) = read(path, warn=warnings.append)
    return conv


def calls(conv: Conversation) -> list[AssistantMessage]:
    return [m for m in conv.messages if isinstance(m, AssistantMessage)]


def usage_sum(rows: list[dict[str, object]]) -> int:
    """Each response's recorded total, counted from the raw entries (the last line of an id)."""
    by_id: dict[str, dict[str, int]] = {}
    for row in rows:
        msg = row.get("message")
        if row.get("type") == "assistant" and isinstance(msg, dict):
            by_id[msg["id"]] = msg["usage"]
    return sum(
        u["input_tokens"]
        + u["cache_creation_input_tokens"]
        + u["cache_read_input_tokens"]
        + u["output_tokens"]
        for u in by_id.values()
    )


# ---- bookkeeping before the first prompt (2.1.1xx) --------------------------------------


def test_newest_head_is_detected_and_read_without_warnings() -> None:
    path = FIXTURES / "edge_cases_claude_code_2_1_head.jsonl"
    rows = entries(path)
    first_user = next(i for i, r in enumerate(rows, 1) if r["type"] == "user")
    assert first_user == 11  # ten records of bookkeeping and hooks come first
    assert detect_format(Source(str(path))) == "claude-code"
    warnings: list[str] = []
    conv = one(path, warnings)
    assert warnings == []  # no "unknown type 'mode'" / "'ai-title'"
    prompts = [m for m in conv.messages if isinstance(m, UserMessage) and m.origin == PERSON]
    assert len(prompts) == 1 and len(turn_starts(conv.messages)) == 1
    assert len(calls(conv)) == sum(1 for r in rows if r["type"] == "assistant")
    assert sum(m.usage.total_tokens for m in calls(conv) if m.usage) == usage_sum(rows)


def test_detection_reads_on_until_a_record_tells(tmp_path: Path) -> None:
    """Twelve records no reader claims, then a Claude Code prompt: detection looks past
    the first eight."""
    rows = entries(FIXTURES / "edge_cases_claude_code_2_1_head.jsonl")
    prompt = next(r for r in rows if r["type"] == "user")
    head = [{"type": "attachment", "attachment": {"type": "hook_success"}}] * 12
    path = tmp_path / "late.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [*head, prompt]))
    assert detect_format(Source(str(path))) == "claude-code"


def test_a_bad_record_ends_the_longer_look(tmp_path: Path) -> None:
    """Past the first look, a broken line is not a reason to fail: the file is one tsum
    cannot tell (skipped in a directory run), as before."""
    path = tmp_path / "notes.jsonl"
    path.write_text('{"kind": "note"}\n' * 9 + "not json\n" + '{"kind": "note"}\n')
    assert detect_format(Source(str(path))) is None


# ---- runtime notices are not the person -------------------------------------------------


def test_task_notifications_are_injected_not_turns() -> None:
    path = FIXTURES / "edge_cases_claude_code_task_notification.jsonl"
    rows = entries(path)
    notices = [
        r
        for r in rows
        if isinstance(r.get("origin"), dict) and r["origin"]["kind"] == "task-notification"
    ]  # type: ignore[index]
    typed = [
        r for r in rows if isinstance(r.get("origin"), dict) and r["origin"]["kind"] == "human"
    ]  # type: ignore[index]
    assert (len(notices), len(typed)) == (2, 2)
    warnings: list[str] = []
    conv = one(path, warnings)
    users = [m for m in conv.messages if isinstance(m, UserMessage)]
    assert [m.origin for m in users] == [PERSON, INJECTED, INJECTED, PERSON]
    assert len(turn_starts(conv.messages)) == len(typed)
    # each notice is still sent to the model: its reply is a call of the same turn
    assert len(calls(conv)) == sum(1 for r in rows if r["type"] == "assistant")
    assert warnings == []


# ---- a tool result logged before its call -----------------------------------------------


def test_a_result_logged_before_its_call_follows_the_call() -> None:
    path = FIXTURES / "edge_cases_claude_code_result_before_call.jsonl"
    rows = entries(path)
    uuids = [r["uuid"] for r in rows]
    early = rows[3]  # its parent, the call's line, is the next line
    assert uuids.index(early["parentUuid"]) == 4
    warnings: list[str] = []
    conv = one(path, warnings)
    order = [
        (type(m).__name__, [b.id for b in m.blocks if isinstance(b, ToolUseBlock)])
        if isinstance(m, AssistantMessage)
        else (type(m).__name__, m.tool_call_id if isinstance(m, ToolResultMessage) else None)
        for m in conv.messages
    ]
    assert order == [
        ("UserMessage", None),
        ("AssistantMessage", ["toolu_01E1"]),
        ("ToolResultMessage", "toolu_01E1"),
        ("AssistantMessage", ["toolu_01E2"]),
        ("ToolResultMessage", "toolu_01E2"),
        ("AssistantMessage", []),
    ]
    assert tool_oddities(conv.messages) == [] and warnings == []


def test_a_result_whose_call_never_comes_is_kept_with_a_warning(tmp_path: Path) -> None:
    rows = entries(FIXTURES / "edge_cases_claude_code_result_before_call.jsonl")
    path = tmp_path / "cut.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for i, r in enumerate(rows) if i != 4))
    warnings: list[str] = []
    conv = one(path, warnings)
    assert isinstance(conv.messages[-1], ToolResultMessage)
    assert warnings == [
        f"warning: {path}:4: a tool result whose call (its parentUuid) is not in the log;"
        " read at the end"
    ]


# ---- 2.0's warm-up sidechain -------------------------------------------------------------


def test_a_warm_up_at_the_top_does_not_make_the_file_a_sidechain() -> None:
    path = FIXTURES / "edge_cases_claude_code_warmup_chat.json"
    items = json.loads(path.read_text())
    main = [e for e in items if e["isSidechain"] is False]
    warm = [e for e in items if e["isSidechain"] is True]
    assert [e["message"]["content"] for e in warm if e["type"] == "user"] == ["Warmup"]
    warnings: list[str] = []
    conv = one(path, warnings)
    assert conv.session_id == main[0]["sessionId"]  # not the warm-up's agentId
    assert len(turn_starts(conv.messages)) == sum(
        1 for e in main if e["type"] == "user" and isinstance(e["message"]["content"], str)
    )
    assert len(calls(conv)) == sum(1 for e in main if e["type"] == "assistant")
    assert sum(m.usage.total_tokens for m in calls(conv) if m.usage) == usage_sum(main)
    assert len(warnings) == 1 and warnings[0].startswith(f"warning: {path}[0]: the warm-up")


def test_a_subagent_file_of_only_a_warm_up_still_reads(tmp_path: Path) -> None:
    items = json.loads((FIXTURES / "edge_cases_claude_code_warmup_chat.json").read_text())
    path = tmp_path / "agent-5b1e9c2a.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in items[:2]))
    warnings: list[str] = []
    conv = one(path, warnings)
    assert conv.session_id == "5b1e9c2a" and len(calls(conv)) == 1 and warnings == []


# ---- a session with no person ------------------------------------------------------------


def test_a_session_with_no_person_has_no_turn_and_says_why(tmp_path: Path) -> None:
    path = FIXTURES / "edge_cases_claude_code_no_person.jsonl"
    rows = entries(path)
    assert all(r["isMeta"] for r in rows if r["type"] == "user")
    assert {r["message"]["model"] for r in rows if r["type"] == "assistant"} == {"<synthetic>"}  # type: ignore[index]
    result = CliRunner().invoke(cli, ["inspect", str(path), "--json"])
    (info,) = json.loads(result.stdout)
    assert (info["turns"], info["calls"], info["messages"]["assistant"]) == (0, 0, 0)
    reason = (
        "nothing to replay: no prompt a person wrote (2 isMeta prompts, sent by an SDK or the"
        " runtime) and no model call (2 <synthetic> replies ('Not logged in · Please run"
        " /login')); skipped"
    )
    assert info["warnings"] == [reason]
    replay = CliRunner().invoke(cli, ["replay", str(path), "--dry-run"])
    assert replay.exit_code == 0
    assert f"warning: {path}: session {rows[0]['sessionId']}: {reason}" in replay.stderr
    assert "0 turn(s)" in replay.stderr
