"""Gemini CLI's own history rewrites (``$set.messages``): a chat compression is a
Compaction, a masking rewrite of known turns is one warning."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.corpus import read
from transcript_tools.engine.messages import AssistantMessage, ToolResultMessage, UserMessage

HEADER = {"sessionId": "s", "projectHash": "h", "startTime": "t", "lastUpdated": "t"}
TOKENS = {"input": 900, "output": 40, "cached": 0, "thoughts": 0, "tool": 0, "total": 940}


def user(uid: str, text: str) -> dict[str, Any]:
    return {"id": uid, "type": "user", "content": [{"text": text}]}


def model(mid: str, text: str) -> dict[str, Any]:
    return {
        "id": mid,
        "type": "gemini",
        "content": text,
        "tokens": TOKENS,
        "model": "gemini-2.5-pro",
    }


def write(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    path = tmp_path / "session-1.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def compressed(command: bool) -> list[dict[str, Any]]:
    """Two turns, a compression that keeps the second person message, a third turn."""
    before = [
        HEADER,
        user("u1", "fix the parser"),
        model("g1", "done"),
        user("u2", "now the tests"),
    ]
    before += [model("g2", "tests pass")]
    if command:
        before.append(user("c1", "/compress"))
    summary = {
        "id": "n1",
        "type": "user",
        "content": [{"text": "<state_snapshot>parser</state_snapshot>"}],
    }
    ack = {"id": "n2", "type": "gemini", "content": [{"text": "Got it."}]}
    kept = [user("u2", "now the tests"), model("g2", "tests pass")]
    rewrite = {"$set": {"messages": [summary, ack, *kept], "lastUpdated": "t2"}}
    return [*before, rewrite, user("u3", "and the docs"), model("g3", "docs written")]


def test_a_compression_is_a_compaction_at_its_place(tmp_path: Path) -> None:
    (conv,) = read(write(tmp_path, compressed(command=False)))
    # the messages read before it stay; the run goes on after it
    assert [type(m) for m in conv.messages] == [UserMessage, AssistantMessage] * 3
    (comp,) = conv.compactions
    assert comp.message_index == 4  # before "and the docs"
    assert comp.source == "gemini-cli:chat-compression"
    assert comp.summary == "<state_snapshot>parser</state_snapshot>"
    assert comp.kept_texts == ("now the tests",)
    assert comp.kept_messages == 1
    assert comp.trigger is None and comp.pre_tokens is None
    assert comp.model == "gemini-2.5-pro"
    assert conv.warnings == []


def test_a_compress_command_just_before_makes_it_manual(tmp_path: Path) -> None:
    (conv,) = read(write(tmp_path, compressed(command=True)))
    (comp,) = conv.compactions
    assert comp.trigger == "manual" and comp.message_index == 5


def test_masking_only_is_one_warning_and_keeps_the_original_text(tmp_path: Path) -> None:
    call = {"id": "t1", "name": "read_file", "args": {}, "status": "success"}
    result = [
        {"functionResponse": {"id": "t1", "name": "read_file", "response": {"output": "BIG"}}}
    ]
    masked = [
        {"functionResponse": {"id": "t1", "name": "read_file", "response": {"output": "<masked>"}}}
    ]
    g1 = {**model("g1", ""), "toolCalls": [{**call, "result": result}]}
    g1_masked = {**model("g1", ""), "toolCalls": [{**call, "result": masked}]}
    rows = [HEADER, user("u1", "read it"), g1, model("g2", "read")]
    rows.append({"$set": {"messages": [user("u1", "read it"), g1_masked, model("g2", "read")]}})
    rows.append({"$set": {"messages": [user("u1", "read it"), g1_masked, model("g2", "read")]}})
    (conv,) = read(write(tmp_path, rows))
    assert conv.compactions == []
    assert conv.messages[2] == ToolResultMessage("t1", "BIG")
    assert conv.warnings == [
        "history rewritten in place 2 time(s) ($set.messages, e.g. tool-output masking):"
        " tsum keeps the original text (line 5, line 6)"
    ]


def test_a_new_turn_that_leaves_nothing_out_is_a_rewrite(tmp_path: Path) -> None:
    rows = [HEADER, user("u1", "hi"), model("g1", "hello")]
    rows.append({"$set": {"messages": [user("u1", "hi"), model("g1", "hello"), user("x", "more")]}})
    (conv,) = read(write(tmp_path, rows))
    assert conv.compactions == [] and len(conv.warnings) == 1


def test_a_second_compression_drops_the_first_summary(tmp_path: Path) -> None:
    rows = compressed(command=False)
    second = {"id": "n3", "type": "user", "content": [{"text": "second summary"}]}
    rows.append({"$set": {"messages": [second, model("g3", "docs written")]}})
    rows += [user("u4", "ship it"), model("g4", "shipped")]
    (conv,) = read(write(tmp_path, rows))
    assert [(c.message_index, c.summary, c.kept_texts) for c in conv.compactions] == [
        (4, "<state_snapshot>parser</state_snapshot>", ("now the tests",)),
        (6, "second summary", ()),
    ]
    assert len(conv.messages) == 8 and conv.warnings == []
