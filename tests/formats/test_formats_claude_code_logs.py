"""Claude Code logs as unseen real sessions write them: resume copies,
IDE context, queued prompts, non-string response ids."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.corpus import FIXTURES, read
from transcript_tools.engine.messages import (
    INJECTED,
    PERSON,
    AssistantMessage,
    Conversation,
    TextBlock,
    UserMessage,
)
from transcript_tools.engine.rules import turn_starts


def one(path: Path, warnings: list[str]) -> Conversation:
    (conv,) = read(path, warn=warnings.append)
    return conv


def calls(conv: Conversation) -> list[AssistantMessage]:
    return [m for m in conv.messages if isinstance(m, AssistantMessage)]


def prompts(conv: Conversation) -> list[str]:
    return [
        " ".join(b.text for b in m.blocks if isinstance(b, TextBlock))
        for m in conv.messages
        if isinstance(m, UserMessage) and m.origin == PERSON
    ]


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# ---- 3a: the conversation re-logged on resume -----------------------------------------


def test_resume_copy_is_not_replayed_again() -> None:
    path = FIXTURES / "edge_cases_claude_code_resume_relog.jsonl"
    warnings: list[str] = []
    conv = one(path, warnings)
    assert prompts(conv) == [
        "The cart total ignores the discount code; find out why.",
        "Add a test for a 10% code.",
        "Now show the discount on the receipt too.",
    ]
    assert len(turn_starts(conv.messages)) == 3
    # four API responses before the resume (one of them over two lines), one after
    assert len(calls(conv)) == 5
    entries = lines(path)
    by_id: dict[str, dict[str, int]] = {}
    for entry in entries[:9]:
        msg = entry["message"]
        if entry["type"] == "assistant":
            by_id[msg["id"]] = msg["usage"]  # type: ignore[index]  # the last line's usage
    by_id["msg_01RelogE"] = entries[-1]["message"]["usage"]  # type: ignore[index]
    expected = sum(
        u["input_tokens"]
        + u["cache_creation_input_tokens"]
        + u["cache_read_input_tokens"]
        + u["output_tokens"]
        for u in by_id.values()
    )
    assert sum(m.usage.total_tokens for m in calls(conv) if m.usage) == expected
    assert conv.warnings == [
        "lines 10-18: 9 entries re-log earlier ones (a new root with the same message ids and"
        " timestamps, as Claude Code writes on resume); not replayed again"
    ]
    assert warnings == []


def test_a_response_is_counted_once_wherever_its_lines_are(tmp_path: Path) -> None:
    entries = lines(FIXTURES / "edge_cases_claude_code_resume_relog.jsonl")[:9]
    # the last line of response C logged again after the next prompt (no new root)
    again = dict(entries[6], uuid="late-copy", parentUuid=entries[8]["uuid"])
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in [*entries, again]))
    conv = one(path, [])
    assert len(calls(conv)) == 4
    assert calls(conv)[-1].blocks == (
        TextBlock("Added `test_ten_percent_code` in tests/test_cart.py."),
    )


def test_a_compaction_root_is_not_a_copy(tmp_path: Path) -> None:
    # compact_boundary entries have parentUuid null too; identical timestamps are no copy
    entries = lines(FIXTURES / "edge_cases_claude_code_resume_relog.jsonl")[:9]
    boundary = {
        "type": "system",
        "subtype": "compact_boundary",
        "parentUuid": None,
        "uuid": "b1",
        "timestamp": entries[0]["timestamp"],
        "sessionId": "s",
        "compactMetadata": {"trigger": "auto", "preTokens": 17000},
    }
    prompt = dict(entries[0], uuid="p2", parentUuid="b1", message={"role": "user", "content": "x"})
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in [*entries, boundary, prompt]))
    conv = one(path, [])
    assert conv.warnings == []
    assert prompts(conv)[-1] == "x"


# ---- 3b: IDE context on a line of its own ----------------------------------------------


def test_ide_context_rides_with_its_prompt_or_is_dropped_with_a_warning() -> None:
    path = FIXTURES / "edge_cases_claude_code_ide_context.jsonl"
    warnings: list[str] = []
    conv = one(path, warnings)
    users = [m for m in conv.messages if isinstance(m, UserMessage)]
    assert [len(u.blocks) for u in users] == [2, 2]
    first, second = users
    assert first.blocks[0].text.startswith("<ide_opened_file>")  # type: ignore[union-attr]
    assert first.blocks[1] == TextBlock("Why does this file import requests twice?")
    assert second.blocks[0] == TextBlock("Remove it.")  # the context logged after its prompt
    assert second.blocks[1].text.startswith("<ide_selection>")  # type: ignore[union-attr]
    assert len(turn_starts(conv.messages)) == 2
    assert warnings == [f"warning: {path}:7: IDE context with no prompt beside it; dropped"]


# ---- 3c: a prompt typed while Claude Code was working -----------------------------------


def test_queued_prompt_is_read_where_it_was_delivered() -> None:
    path = FIXTURES / "edge_cases_claude_code_queued_prompt.jsonl"
    warnings: list[str] = []
    conv = one(path, warnings)
    kinds = [type(m).__name__ for m in conv.messages]
    assert kinds == [
        "UserMessage",
        "AssistantMessage",
        "ToolResultMessage",
        "UserMessage",  # delivered with the tool result, before the next call
        "AssistantMessage",
        "ToolResultMessage",
        "AssistantMessage",
    ]
    assert prompts(conv) == [
        "Run the test suite and fix what fails.",
        "also skip the slow network tests",
    ]
    assert warnings == []


def _queued(tmp_path: Path, tail: list[dict[str, object]]) -> Conversation:
    entries = lines(FIXTURES / "edge_cases_claude_code_queued_prompt.jsonl")
    keep = [e for e in entries if e["type"] != "queue-operation"]
    enqueue = next(e for e in entries if e.get("operation") == "enqueue")
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in [*keep[:3], enqueue, *tail, *keep[3:]]))
    return one(path, [])


def test_queued_prompt_delivered_as_an_attachment_is_read_once(tmp_path: Path) -> None:
    # 2.1.x: remove + a queued_command attachment carrying the prompt
    remove = {"type": "queue-operation", "operation": "remove", "sessionId": "s"}
    attachment = {
        "type": "attachment",
        "sessionId": "s",
        "attachment": {
            "type": "queued_command",
            "prompt": "also skip the slow network tests",
            "commandMode": "prompt",
        },
    }
    for tail in ([remove, attachment], [attachment, remove]):
        conv = _queued(tmp_path, tail)
        assert prompts(conv).count("also skip the slow network tests") == 1


def test_queued_runtime_notification_rides_in_the_turn(tmp_path: Path) -> None:
    attachment = {
        "type": "attachment",
        "sessionId": "s",
        "attachment": {
            "type": "queued_command",
            "prompt": "<task-notification>build finished</task-notification>",
            "commandMode": "task-notification",
        },
    }
    conv = _queued(tmp_path, [attachment])
    injected = [m for m in conv.messages if isinstance(m, UserMessage) and m.origin == INJECTED]
    assert len(injected) == 1
    assert len(turn_starts(conv.messages)) == 1


def test_queued_prompt_cancelled_or_never_delivered(tmp_path: Path) -> None:
    stopped = {"type": "queue-operation", "operation": "remove", "reason": "agent_stopped"}
    assert prompts(_queued(tmp_path, [stopped])) == ["Run the test suite and fix what fails."]
    warnings: list[str] = []
    entries = lines(FIXTURES / "edge_cases_claude_code_queued_prompt.jsonl")
    path = tmp_path / "waiting.jsonl"
    path.write_text(
        "".join(json.dumps(e) + "\n" for e in entries if e.get("operation") != "remove")
    )
    one(path, warnings)
    assert warnings == [
        f"warning: {path}:3: a queued prompt never delivered before the log ends (not read)"
    ]


def _entry(kind: str, n: int, content: object) -> dict[str, object]:
    message: dict[str, object] = {"role": kind, "content": content}
    if kind == "assistant":
        message.update(model="claude-sonnet-4-5", id=f"msg_{n}")
    parent = f"u{n - 1}" if n > 1 else None
    return {
        "type": kind,
        "sessionId": "s",
        "uuid": f"u{n}",
        "parentUuid": parent,
        "message": message,
    }


def _queue(operation: str, content: str | None = None) -> dict[str, object]:
    entry: dict[str, object] = {"type": "queue-operation", "operation": operation, "sessionId": "s"}
    if content is not None:
        entry["content"] = content
    return entry


def test_queued_prompts_are_matched_by_their_text(tmp_path: Path) -> None:
    """Which waiting prompt a delivery takes: the one with its text, not the oldest."""
    first, second = "also skip the slow network tests", "and run the linter"
    attachment = {
        "type": "attachment",
        "sessionId": "s",
        "attachment": {"type": "queued_command", "prompt": second, "commandMode": "prompt"},
    }
    cases = {
        # sent as an ordinary user entry: no longer waiting
        "sent": [_queue("enqueue", first), _entry("user", 3, first)],
        # the attachment takes the second prompt; the remove after it takes no other
        "attached": [_queue("enqueue", first), _queue("enqueue", second), attachment],
    }
    for name, middle in cases.items():
        path = tmp_path / f"{name}.jsonl"
        entries = [_entry("user", 1, "Run the tests."), _entry("assistant", 2, "On it."), *middle]
        if name == "attached":
            entries.append(_queue("remove"))  # names no text: the attachment's claim
        path.write_text("".join(json.dumps(e) + "\n" for e in entries))
        warnings: list[str] = []
        one(path, warnings)
        expected = {
            "sent": [],
            "attached": [
                f"warning: {path}:3: a queued prompt never delivered before the log ends (not read)"
            ],
        }
        assert warnings == expected[name], name


# ---- 3d: message.id that is not a string -----------------------------------------------


def test_numeric_message_id_still_merges_one_response() -> None:
    path = FIXTURES / "malformed_claude_code_numeric_id.jsonl"
    warnings: list[str] = []
    conv = one(path, warnings)
    assert [len(m.blocks) for m in calls(conv)] == [3, 2, 2]
    assert [m.usage.output_tokens for m in calls(conv) if m.usage] == [42, 38, 22]
    assert warnings == [
        f"warning: {path}:2: message.id is not a string ('20251020001'); lines with the same"
        " id are still read as one response"
    ]
