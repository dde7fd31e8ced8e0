"""Codex CLI rollouts: fixtures, then the real corpus checked against raw counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.corpus import CORPUS, FIXTURES, needs_corpus
from transcript_tools.engine.messages import (
    AssistantMessage,
    Conversation,
    OtherBlock,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    Usage,
    UserImageMessage,
    UserMessage,
    is_turn_start,
)
from transcript_tools.errors import InputError
from transcript_tools.formats import read_conversations
from transcript_tools.formats.source import Source


def one(path: Path, **kw: object) -> Conversation:
    convs = list(read_conversations(Source(str(path), **kw)))  # type: ignore[arg-type]
    assert len(convs) == 1
    return convs[0]


def usages(conv: Conversation) -> list[Usage]:
    return [
        m.usage for m in conv.messages if isinstance(m, AssistantMessage) and m.usage is not None
    ]


def test_representative_rollout() -> None:
    conv = one(FIXTURES / "representative_codex.jsonl")
    msgs = conv.messages
    assert conv.format == "codex"
    assert conv.session_id == "019c0000-1111-7222-8333-444455556666"
    assert conv.context_window == 258400
    # base instructions, developer message, AGENTS.md and environment context: system, not prompts
    assert all(isinstance(m, SystemMessage) for m in msgs[:4])
    # prompts counted once though Codex logs each twice (item + event, in either order)
    assert [m for m in msgs if is_turn_start(m)] == [
        UserMessage.text("Fix the failing test in test_app.py"),
        UserMessage.text("Now run the linter"),
    ]
    call = msgs[5]
    assert isinstance(call, AssistantMessage) and call.model == "gpt-5.3-codex"
    assert [type(b) for b in call.blocks] == [OtherBlock, type(call.blocks[1]), ToolUseBlock]
    assert call.blocks[2] == ToolUseBlock("call_A1", "exec_command", {"cmd": "pytest -q"})
    patch = msgs[7]
    assert isinstance(patch, AssistantMessage) and isinstance(patch.blocks[0].input, str)  # type: ignore[union-attr]
    # repeated token_count events are skipped: usage sums to the final total
    assert sum(u.total_tokens for u in usages(conv)) == 53400 + 560
    assert usages(conv)[0] == Usage(12000, 150, cache_read_tokens=3000)
    assert len(conv.compactions) == 1
    comp = conv.compactions[0]
    assert (comp.message_index, comp.source, comp.pre_tokens) == (13, "codex:compacted", 13160)
    assert sum(isinstance(m, ToolResultMessage) for m in msgs) == 3


def test_edge_cases_without_user_message_events() -> None:
    conv = one(FIXTURES / "edge_cases_codex.jsonl")
    msgs = conv.messages
    assert conv.context_window == 272000
    assert isinstance(msgs[0], SystemMessage) and isinstance(msgs[1], SystemMessage)
    assert msgs[2] == UserMessage.text(
        "What does main.py do?"
    )  # no events at all: the item is the prompt
    first = msgs[3]
    assert isinstance(first, AssistantMessage)
    assert first.blocks[0] == OtherBlock(
        "web_search", {"type": "search", "query": "python argparse"}
    )
    assert isinstance(first.blocks[1], ToolUseBlock) and first.blocks[1].name == "local_shell"
    result = msgs[4]
    assert (
        isinstance(result, ToolResultMessage)
        and result.is_error
        and result.content.startswith("cat:")
    )
    # line 9 counts the call before it (written after its tool output); line 10 counts a
    # call with no output item: no message of its own, its usage joins the latest call
    assert first.usage == Usage(900, 30) + Usage(1000, 30, cache_read_tokens=800)
    assert isinstance(msgs[5], UserImageMessage)
    assert msgs[6].usage == Usage(2200, 40, cache_read_tokens=1000)  # type: ignore[union-attr]
    assert not any(isinstance(m, AssistantMessage) and not m.blocks for m in msgs)
    assert sum(u.total_tokens for u in usages(conv)) == 4100 + 100
    assert conv.warnings == [
        "1 token_count(s) of model calls that left no output item (line 10):"
        " their usage is added to a neighbouring call"
    ]
    assert sum(is_turn_start(m) for m in msgs) == 2


# ---- token_count before, or before and after, the items it counts -------------------
# Codex 0.34 writes each count once, BEFORE the call's items; 0.55–0.58 before and again
# after them; 0.104 (representative_codex.jsonl) after them.
ORDERINGS = [
    "edge_cases_codex_0_34_tokens_before.jsonl",
    "edge_cases_codex_0_55_tokens_before_and_after.jsonl",
]


def final_total(path: Path) -> int:
    totals = [
        row["payload"]["info"]["total_token_usage"]["total_tokens"]
        for row in map(json.loads, path.read_text().splitlines())
        if row["type"] == "event_msg"
        and row["payload"]["type"] == "token_count"
        and row["payload"]["info"]
    ]
    return totals[-1]


@pytest.mark.parametrize("name", ORDERINGS)
def test_token_count_attaches_to_the_call_it_counts_whatever_the_order(name: str) -> None:
    conv = one(FIXTURES / name)
    calls = [m for m in conv.messages if isinstance(m, AssistantMessage)]
    # three calls, none empty: a token_count never creates a message
    assert [[type(b).__name__ for b in c.blocks] for c in calls] == [
        ["OtherBlock", "ToolUseBlock"],
        ["TextBlock"],
        ["TextBlock"],
    ]
    assert [c.usage for c in calls] == [
        Usage(4200, 180),
        Usage(4600, 95, cache_read_tokens=4096),
        Usage(4900, 40, cache_read_tokens=4480),
    ]
    # each count once (0.55 repeats it), summing to the log's final total_token_usage
    assert sum(u.total_tokens for u in usages(conv)) == final_total(FIXTURES / name) == 14015
    assert conv.warnings == []


@pytest.mark.parametrize("name", [*ORDERINGS, "representative_codex.jsonl"])
def test_replay_and_inspect_agree_with_the_logged_total(name: str, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from transcript_tools.cli.main import cli

    path = FIXTURES / name
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["replay", "--dry-run", str(path), "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    decisions = [json.loads(x) for x in (out / "decisions.jsonl").read_text().splitlines()]
    assert all(d["tokens"] == "recorded" for d in decisions)  # nothing estimated
    inspected = CliRunner().invoke(cli, ["inspect", "--json", str(path)])
    (info,) = json.loads(inspected.stdout)
    assert decisions[-1]["cost_so_far"] == info["recorded_tokens"] == final_total(path)


def _rollout_line(kind: str, payload: dict[str, object]) -> str:
    return json.dumps({"timestamp": "2025-10-01T09:00:00.000Z", "type": kind, "payload": payload})


def _count(total: int, last: int) -> str:
    usage = {"input_tokens": last - 10, "cached_input_tokens": 0, "output_tokens": 10}
    return _rollout_line(
        "event_msg",
        {
            "type": "token_count",
            "info": {
                "total_token_usage": {"total_tokens": total},
                "last_token_usage": {**usage, "total_tokens": last},
            },
        },
    )


def test_counts_first_log_with_an_itemless_call_keeps_every_token(tmp_path: Path) -> None:
    answer = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "ok"}],
    }
    prompt = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}
    path = tmp_path / "rollout.jsonl"
    path.write_text(
        "\n".join(
            [
                _rollout_line("session_meta", {"id": "s", "cli_version": "0.34.0"}),
                _rollout_line("response_item", prompt),
                _count(100, 100),  # a call that wrote nothing (an aborted stream)
                _count(300, 200),  # the answer's call, before its item
                _rollout_line("response_item", answer),
                _rollout_line("response_item", prompt),
                _count(700, 400),  # the last call's items were never written (live log)
            ]
        )
        + "\n"
    )
    conv = one(path)
    calls = [m for m in conv.messages if isinstance(m, AssistantMessage)]
    assert len(calls) == 1 and calls[0].blocks
    assert calls[0].usage is not None and calls[0].usage.total_tokens == 700  # 200 + 100 + 400
    assert conv.warnings == [
        "2 token_count(s) of model calls that left no output item (line 3, 7):"
        " their usage is added to a neighbouring call"
    ]


def test_counts_that_do_not_add_up_to_the_logged_total_are_a_warning(tmp_path: Path) -> None:
    answer = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "ok"}],
    }
    path = tmp_path / "rollout.jsonl"
    path.write_text(
        "\n".join(
            [
                _rollout_line("session_meta", {"id": "s"}),
                _rollout_line("response_item", answer),
                _count(900, 200),  # 700 tokens of earlier counts are missing from the log
            ]
        )
        + "\n"
    )
    conv = one(path)
    assert conv.warnings == [
        "the calls' token_count events sum to 200 tokens but the log's final"
        " total_token_usage says 900"
    ]


def test_odd_lines_and_counts_are_warnings_naming_the_line(tmp_path: Path) -> None:
    answer = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "ok"}],
    }
    count = json.loads(_count(130, 130))
    count["payload"]["info"]["last_token_usage"]["input_tokens"] = "120"
    count["payload"]["info"]["last_token_usage"]["output_tokens"] = None  # missing: 0, no word
    count["payload"]["info"]["last_token_usage"]["cached_input_tokens"] = "lots"
    path = tmp_path / "rollout.jsonl"
    path.write_text(
        "\n".join(
            [
                _rollout_line("session_meta", {"id": "s"}),
                json.dumps({"type": ["response_item"], "payload": answer}),
                _rollout_line("response_item", answer),
                _rollout_line("hologram", {}),
                json.dumps(count),
                _rollout_line("hologram", {}),
            ]
        )
        + "\n"
    )
    warnings: list[str] = []
    conv = one(path, warn=warnings.append)
    assert warnings == [
        f"warning: {path}:2: line 'type' is ['response_item'], not a string (line skipped)",
        f"warning: {path}:5: last_token_usage.input_tokens is a string ('120'); read as 120",
        f"warning: {path}:5: last_token_usage.cached_input_tokens is not a number ('lots'); ignored",
        f"warning: {path}:4: 2 lines of unknown type 'hologram' skipped",
    ]
    assert usages(conv) == [Usage(120, 0)]


def test_content_parts_that_are_not_objects_are_warnings(tmp_path: Path) -> None:
    answer = {
        "type": "message",
        "role": "assistant",
        "content": ["ok", {"type": "output_text", "text": "ok"}],
    }
    path = tmp_path / "rollout.jsonl"
    path.write_text(
        "\n".join(
            [_rollout_line("session_meta", {"id": "s"}), _rollout_line("response_item", answer)]
        )
        + "\n"
    )
    warnings: list[str] = []
    conv = one(path, warn=warnings.append)
    assert warnings == [f"warning: {path}:2: content[0] is not a content part ('ok'); skipped"]
    assert conv.messages[-1].blocks == (TextBlock("ok"),)  # type: ignore[union-attr]


def test_malformed_rollout() -> None:
    path = FIXTURES / "malformed_codex.jsonl"
    with pytest.raises(InputError) as info:
        one(path)
    assert info.value.line == 4  # line 6, the truncated last line, is only a warning
    warnings: list[str] = []
    conv = one(path, skip_bad_lines=True, warn=warnings.append)
    assert any(":4: response_item line without a 'payload' object" in w for w in warnings)
    assert any(":6: truncated last line skipped" in w for w in warnings)
    assert [m.role for m in conv.messages] == ["user", "assistant"]


# ---- the real corpus: expectations computed from the raw JSON, not by the reader ----------


def expected(path: Path) -> dict[str, object]:
    prompts = calls = outputs = 0
    recorded = max_input = 0
    last_total = None
    compaction_turns: list[int] = []
    window = None
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        p = row["payload"]
        kind = p.get("type")
        if row["type"] == "compacted":
            compaction_turns.append(prompts - 1)
        elif row["type"] == "event_msg" and kind == "user_message":
            prompts += 1
        elif row["type"] == "response_item" and kind in ("function_call", "custom_tool_call"):
            calls += 1
        elif row["type"] == "response_item" and kind in (
            "function_call_output",
            "custom_tool_call_output",
        ):
            outputs += 1
        elif row["type"] == "event_msg" and kind == "token_count" and p.get("info"):
            info = p["info"]
            window = info.get("model_context_window") or window
            if info["total_token_usage"] == last_total:
                continue
            last_total = info["total_token_usage"]
            last = info["last_token_usage"]
            recorded += last["input_tokens"] + last["output_tokens"]
            max_input = max(max_input, last["input_tokens"])
    return {
        "turns": prompts,
        "calls": calls,
        "outputs": outputs,
        "recorded": recorded,
        "max_input": max_input,
        "compaction_turns": compaction_turns,
        "window": window,
    }


def corpus_files() -> list[Path]:
    return sorted((CORPUS / "codex").rglob("rollout-*.jsonl")) if CORPUS.is_dir() else []


@needs_corpus
@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name[9:27])
def test_real_rollout_matches_raw_counts(path: Path) -> None:
    conv = one(path)
    want = expected(path)
    msgs = conv.messages
    assert sum(is_turn_start(m) for m in msgs) == want["turns"]
    tool_uses = [
        b
        for m in msgs
        if isinstance(m, AssistantMessage)
        for b in m.blocks
        if isinstance(b, ToolUseBlock)
    ]
    assert len(tool_uses) == want["calls"]
    assert sum(isinstance(m, ToolResultMessage) for m in msgs) == want["outputs"]
    assert sum(u.total_tokens for u in usages(conv)) == want["recorded"]
    assert max(u.input_tokens for u in usages(conv)) == want["max_input"]
    assert conv.context_window == want["window"]
    turns_at = [
        sum(is_turn_start(m) for m in msgs[: c.message_index]) - 1 for c in conv.compactions
    ]
    assert turns_at == want["compaction_turns"]


@needs_corpus
def test_real_rollout_with_compaction() -> None:
    path = next(p for p in corpus_files() if "019c8a59" in p.name)
    conv = one(path)
    assert expected(path)["compaction_turns"] == [18]  # the 19th prompt's turn
    assert [(c.source, c.pre_tokens) for c in conv.compactions] == [("codex:compacted", 212134)]
    # PROVENANCE: 38 user messages, 365 tool calls, max last-turn input 209,950
    assert sum(is_turn_start(m) for m in conv.messages) == 38
    assert max(u.input_tokens for u in usages(conv)) == 209_950
