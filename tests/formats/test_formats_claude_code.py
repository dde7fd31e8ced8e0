"""Claude Code session logs: fixtures, then the real corpus checked against raw counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.corpus import CORPUS, FIXTURES, needs_corpus, read
from transcript_tools.engine.messages import (
    INJECTED,
    SYNTHETIC_MODEL,
    AssistantMessage,
    Conversation,
    OtherBlock,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    Usage,
    UserImageMessage,
    UserMessage,
    is_turn_start,
)
from transcript_tools.errors import InputError
from transcript_tools.inspection import inspect_conversation


def one(path: Path) -> Conversation:
    convs = read(path)
    assert len(convs) == 1
    return convs[0]


def recorded(conv: Conversation) -> int:
    return sum(
        m.usage.total_tokens for m in conv.messages if isinstance(m, AssistantMessage) and m.usage
    )


def test_representative_session() -> None:
    conv = one(FIXTURES / "representative_claude_code.jsonl")
    assert conv.format == "claude-code"
    assert conv.session_id == "11111111-aaaa-4bbb-8ccc-000000000001"
    kinds = [type(m).__name__ for m in conv.messages]
    assert kinds == [
        "UserMessage",
        "AssistantMessage",
        "ToolResultMessage",
        "AssistantMessage",
        "ToolResultMessage",
        "AssistantMessage",
        "ToolResultMessage",
        "AssistantMessage",
        "UserMessage",
        "AssistantMessage",
        "UserMessage",
        "AssistantMessage",
    ]
    first = conv.messages[1]
    assert isinstance(first, AssistantMessage)
    # three lines of one response → one message, usage from the last line, cache included
    assert [type(b) for b in first.blocks] == [OtherBlock, TextBlock, ToolUseBlock]
    assert first.usage == Usage(10204, 57, cache_read_tokens=9000, cache_creation_tokens=1200)
    error = conv.messages[4]
    assert (
        isinstance(error, ToolResultMessage)
        and error.is_error
        and error.content == "Error: file changed on disk"
    )
    synthetic = conv.messages[9]
    assert (
        isinstance(synthetic, AssistantMessage)
        and synthetic.usage is None
        and synthetic.model == "<synthetic>"
    )
    # the /model echo, its output, the caveat, hook lines and the interrupt marker are not prompts
    assert sum(is_turn_start(m) for m in conv.messages) == 3
    assert recorded(conv) == 10261 + 10441 + 10503 + 10558 + 10945
    assert conv.compactions == []


def test_edge_cases_parallel_tools_images_init_compaction_rewind() -> None:
    conv = one(FIXTURES / "edge_cases_claude_code.jsonl")
    msgs = conv.messages
    assert (
        conv.session_id == "22222222-aaaa-4bbb-8ccc-000000000002"
    )  # the first of the alternating ids
    # one response split around its streamed tool result: one message, both calls, usage once
    call = msgs[1]
    assert isinstance(call, AssistantMessage)
    assert [b.name for b in call.blocks if isinstance(b, ToolUseBlock)] == ["Read", "Grep"]
    assert call.usage == Usage(5010, 64, cache_read_tokens=0, cache_creation_tokens=5000)
    assert [m.tool_call_id for m in msgs[2:4] if isinstance(m, ToolResultMessage)] == [
        "toolu_11",
        "toolu_12",
    ]
    assert isinstance(msgs[3], ToolResultMessage) and msgs[3].content.endswith("</system-reminder>")
    # sidechain (inline Task subagent) lines are skipped
    assert not any(
        isinstance(m, AssistantMessage) and m.blocks == (TextBlock("Found it."),) for m in msgs
    )
    assert isinstance(msgs[5], UserImageMessage) and msgs[5].media_type == "image/png"
    assert isinstance(msgs[7], UserMessage) and isinstance(msgs[7].blocks[0], OtherBlock)
    # /init: the expanded isMeta prompt is the turn's prompt
    assert msgs[9] == UserMessage.text("Please analyze this codebase and create a CLAUDE.md file.")
    # compact_boundary + isCompactSummary = one compaction, at the summary
    assert len(conv.compactions) == 1
    comp = conv.compactions[0]
    assert (comp.message_index, comp.source, comp.pre_tokens) == (
        13,
        "claude-code:compact_boundary",
        155321,
    )
    # the summary is the runtime's message: it never starts a turn (docs/spec.md, "Turns")
    assert isinstance(msgs[13], UserMessage) and msgs[13].origin == INJECTED
    assert not is_turn_start(msgs[13])
    # the rewind drops the abandoned prompt and its answer
    assert UserMessage.text("Remove the crash() call") not in msgs
    assert msgs[15] == UserMessage.text("Actually, keep crash() but guard it with a flag")
    assert len(msgs) == 17
    assert sum(is_turn_start(m) for m in msgs) == 5
    assert len(conv.warnings) == 1 and "2 messages of the abandoned branch" in conv.warnings[0]


def test_subagent_file_replays_as_its_own_session() -> None:
    conv = one(FIXTURES / "representative_claude_code_subagent.jsonl")
    assert conv.session_id == "a9f3c2"  # agentId, not the parent's sessionId
    assert len(conv.messages) == 4 and is_turn_start(conv.messages[0])
    assert recorded(conv) == 2033 + 2055


def test_chat_json_array_variant() -> None:
    conv = one(FIXTURES / "representative_claude_code_chat.json")
    assert conv.format == "claude-code"
    assert [m.role for m in conv.messages] == ["user", "assistant", "tool", "assistant"]
    assert recorded(conv) == 3029 + 3042


def test_malformed_fails_with_location() -> None:
    path = FIXTURES / "malformed_claude_code.jsonl"
    with pytest.raises(InputError) as info:
        read(path)
    # line 3 has no message object; line 5, the truncated last line, is only a warning
    assert info.value.line == 3 and "--skip-bad-lines" in info.value.message


def test_malformed_skip_bad_lines_warns_and_goes_on() -> None:
    warnings: list[str] = []
    convs = read(
        FIXTURES / "malformed_claude_code.jsonl", skip_bad_lines=True, warn=warnings.append
    )
    assert [m.role for m in convs[0].messages] == ["user", "assistant", "user"]
    assert any(":3: user entry without a 'message' object" in w for w in warnings)
    assert any(":5: truncated last line" in w for w in warnings)


# ---- <synthetic> messages: written by Claude Code, not a model call ----------------------
SYNTHETIC = FIXTURES / "edge_cases_claude_code_synthetic.jsonl"
SUMMARY_EVERY_TURN = ["--max-context-tokens", "8000", "--debounce", "1"]


def test_synthetic_api_error_keeps_its_text_and_has_no_usage() -> None:
    conv = one(SYNTHETIC)
    (error,) = [
        m for m in conv.messages if isinstance(m, AssistantMessage) and m.model == SYNTHETIC_MODEL
    ]
    assert error.usage is None and error.blocks[0].text.startswith("API Error: 529")  # type: ignore[union-attr]
    assert recorded(conv) == sum(1704 + 900 * k + 220 for k in range(5)) + 6704 + 60


def _decisions(*args: str, out: Path) -> list[dict[str, object]]:
    from click.testing import CliRunner

    from transcript_tools.cli.main import cli

    result = CliRunner().invoke(cli, ["replay", *args, "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    return [json.loads(x) for x in (out / "decisions.jsonl").read_text().splitlines()]


def test_synthetic_message_is_not_estimated_as_a_call(tmp_path: Path) -> None:
    turns = _decisions("--dry-run", str(SYNTHETIC), out=tmp_path)
    error_turn = turns[5]  # "Now update the changelog…" answered only by the API error
    assert error_turn["turn_tokens"] == 0 and error_turn["tokens"] == "none"
    assert all(t["tokens"] in ("recorded", "none") for t in turns)
    assert turns[-1]["cost_so_far"] == recorded(one(SYNTHETIC))


def test_cost_so_far_does_not_depend_on_whether_summaries_were_written(tmp_path: Path) -> None:
    full = _decisions(*SUMMARY_EVERY_TURN, str(SYNTHETIC), out=tmp_path / "full")
    dry = _decisions(*SUMMARY_EVERY_TURN, "--dry-run", str(SYNTHETIC), out=tmp_path / "dry")
    assert [t["decision"] for t in full].count("summarized") == 5  # the summaries changed the view
    assert [t["cost_so_far"] for t in full] == [t["cost_so_far"] for t in dry]


# ---- a compaction summary is the runtime's, never the person's ----------------------------
COMPACTED = FIXTURES / "edge_cases_claude_code_compact_summary.jsonl"


def test_compact_summary_is_injected_and_starts_no_turn() -> None:
    conv = one(COMPACTED)
    msgs = conv.messages
    summary = msgs[4]
    assert isinstance(summary, UserMessage) and summary.origin == INJECTED
    assert summary.blocks[0].text.startswith("This session is being continued")  # type: ignore[union-attr]
    # three prompts, three turns: the summary rides in the turn it compacted
    assert [m.blocks[0].text[:10] for m in msgs if is_turn_start(m)] == [  # type: ignore[union-attr]
        "Add an RSS",
        "The feed m",
        "Now valida",
    ]
    assert [(c.message_index, c.source) for c in conv.compactions] == [
        (4, "claude-code:isCompactSummary")
    ]
    assert inspect_conversation(conv).turns == 3
    assert [c.turn for c in inspect_conversation(conv).compactions] == [1]


def test_compact_summary_is_not_among_the_goals_and_requests() -> None:
    from transcript_tools.engine.formatting import format_messages_as_text
    from transcript_tools.providers.offline import summarize

    conv = one(COMPACTED)
    for end in (5, len(conv.messages)):  # the summary last (pending?) and in the middle
        text = summarize(format_messages_as_text(conv.messages[:end]), 1024)
        goals = text.split("Goals and requests:")[1].split("\n\n")[0]
        assert "This session is being continued" not in goals, text
        assert "Add an RSS feed" in goals


# ---- nothing is dropped or ignored without a word ------------------------------------------


def test_odd_fields_and_types_are_warnings_naming_the_line() -> None:
    path = FIXTURES / "malformed_claude_code_fields.jsonl"
    warnings: list[str] = []
    (conv,) = read(path, warn=warnings.append)
    assert warnings == [
        f"warning: {path}:2: usage.input_tokens is a string ('1200'); read as 1200",
        f"warning: {path}:3: entry 'type' is ['user'], not a string (entry skipped)",
        f"warning: {path}:4: usage.input_tokens is not a number ('n/a'); ignored",
    ]
    first, second = [m.usage for m in conv.messages if isinstance(m, AssistantMessage)]
    assert first == Usage(1200 + 2100, 40, cache_read_tokens=2100)
    assert second == Usage(2100, 25, cache_read_tokens=2100)


def test_unknown_entry_types_are_one_warning_per_type(tmp_path: Path) -> None:
    lines = (FIXTURES / "malformed_claude_code_fields.jsonl").read_text().splitlines()[:2]
    extra = [json.dumps({"type": "hologram", "sessionId": "s", "uuid": f"h{i}"}) for i in range(3)]
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join([lines[0], *extra, lines[1]]) + "\n")
    warnings: list[str] = []
    read(path, warn=warnings.append)
    assert f"warning: {path}:2: 3 entries of unknown type 'hologram' skipped" in warnings


def test_unreadable_content_blocks_are_warnings(tmp_path: Path) -> None:
    first, second = (FIXTURES / "malformed_claude_code_fields.jsonl").read_text().splitlines()[:2]
    answer = json.loads(second)
    answer["message"]["content"].insert(0, 42)  # a block that is not an object
    answer["message"]["usage"]["input_tokens"] = 4
    path = tmp_path / "session.jsonl"
    path.write_text(first + "\n" + json.dumps(answer) + "\n")
    warnings: list[str] = []
    (conv,) = read(path, warn=warnings.append)
    assert warnings == [f"warning: {path}:2: content[0] is not a readable block (42); skipped"]
    assert conv.messages[1].blocks == (
        TextBlock("It opens a new DB connection per call; pool it."),
    )  # type: ignore[union-attr]


# ---- the real corpus: expectations computed from the raw JSON, not by the reader ----------
# Written from FORMATS.md's rules, not from the reader: no shared prefix list and no
# line-by-line state, so a slip in the reader's classification is not mirrored here.


def _blocks(content: str | list[dict[str, object]]) -> list[dict[str, object]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def _typed_by_a_human(text: str) -> bool:
    """Claude Code's own user-side text is tag-wrapped (``<command-name>``, ``<local-command-
    stdout>``, ``<system-reminder>`` ...) or an interrupt marker; a human's text is neither."""
    text = text.strip()
    return bool(text) and not text.startswith(("<", "[Request interrupted"))


def _is_compact_summary(entry: dict) -> bool:
    """The summary the rest of the session continues from: kept, but the runtime wrote it."""
    texts = [
        str(b["text"]) for b in _blocks(entry["message"]["content"]) if b.get("type") == "text"
    ]
    return bool(entry.get("isCompactSummary")) or bool(
        texts and texts[0].lstrip().startswith("This session is being continued")
    )


def _is_prompt(entry: dict, by_uuid: dict[str, dict]) -> bool:
    """Does this user entry (no tool_result, not a compaction summary) start a turn?"""
    blocks = _blocks(entry["message"]["content"])
    texts = [str(b["text"]) for b in blocks if b.get("type") == "text"]
    if entry.get("isMeta"):  # hidden context, except what a slash command expands to (/init)
        parent = by_uuid.get(entry.get("parentUuid") or "", {})
        return "<command-name>" in json.dumps(parent.get("message", {}).get("content"))
    return any(b.get("type") == "image" for b in blocks) or any(map(_typed_by_a_human, texts))


def expected(path: Path) -> dict[str, object]:
    """Turns, messages, recorded tokens and compaction turns from the raw entries."""
    entries = [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    by_uuid = {e["uuid"]: e for e in entries if "uuid" in e}
    chat = [e for e in entries if e.get("type") in ("user", "assistant")]
    if chat and not chat[0].get("isSidechain"):  # else a subagent file: all of it is the session
        chat = [e for e in chat if not e.get("isSidechain")]
    responses = {}  # message.id -> its last line, which has the final usage (gotcha a)
    tool_results = 0
    prompts = []
    summaries = []  # compaction summaries: messages, never turns (docs/spec.md, "Turns")
    compaction_turns = []  # prompts before each recorded compaction
    for e in chat:
        if e["type"] == "assistant":
            responses[e["message"]["id"]] = e["message"]
            continue
        found = sum(b.get("type") == "tool_result" for b in _blocks(e["message"]["content"]))
        tool_results += found
        if found:
            continue
        if _is_compact_summary(e):
            summaries.append(e)
            if e.get("isCompactSummary"):
                compaction_turns.append(len(prompts))
        elif _is_prompt(e, by_uuid):
            prompts.append(e)
    recorded = sum(
        u["input_tokens"]
        + u.get("cache_creation_input_tokens", 0)
        + u.get("cache_read_input_tokens", 0)
        + u["output_tokens"]
        for m in responses.values()
        if m.get("model") != "<synthetic>" and (u := m.get("usage"))  # gotcha e
    )
    return {
        "turns": len(prompts),
        "assistant": len(responses),
        "tool": tool_results,
        "messages": len(prompts) + len(summaries) + len(responses) + tool_results,
        "recorded": recorded,
        "compaction_turns": compaction_turns,
    }


def corpus_files() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in (CORPUS / "claude-code").rglob("*.jsonl"))


# 03eb5929 holds a rewind (checked on its own below); every other file is linear.
REWIND = "03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl"


@needs_corpus
@pytest.mark.parametrize(
    "path", [p for p in corpus_files() if p.name != REWIND], ids=lambda p: p.name[:13]
)
def test_real_session_matches_raw_counts(path: Path) -> None:
    conv = one(path)
    want = expected(path)
    msgs = conv.messages
    assert sum(is_turn_start(m) for m in msgs) == want["turns"]
    assert sum(isinstance(m, AssistantMessage) for m in msgs) == want["assistant"]
    assert sum(isinstance(m, ToolResultMessage) for m in msgs) == want["tool"]
    assert len(msgs) == want["messages"]
    assert recorded(conv) == want["recorded"]
    turns_at = [sum(is_turn_start(m) for m in msgs[: c.message_index]) for c in conv.compactions]
    assert turns_at == want["compaction_turns"]
    assert conv.warnings == []


@needs_corpus
def test_real_compactions_where_the_logs_say() -> None:
    base = CORPUS / "claude-code"
    cases = {
        "kesslerio-attio-mcp-server/f89f86a1-90f7-4671-8587-88710a331c6f.jsonl": [5],
        "kesslerio-attio-mcp-server/d4519010-880f-47f6-a04c-abc13d7ea21d.jsonl": [3],
        "conneroisu-templar/8e6737a7-4309-4012-bf3d-69084fa0ffb2.jsonl": [
            0,
            3,
        ],  # prompts before each
        "conneroisu-templar/8f2aa855-be79-4406-9e9a-b94d54e4beed.jsonl": [
            8
        ],  # line 3: unflagged continuation
    }
    for name, turns in cases.items():
        conv = one(base / name)
        assert [
            sum(is_turn_start(m) for m in conv.messages[: c.message_index])
            for c in conv.compactions
        ] == turns
        assert all(c.source == "claude-code:isCompactSummary" for c in conv.compactions)
        assert expected(base / name)["compaction_turns"] == turns


@needs_corpus
def test_real_rewind_keeps_the_active_branch() -> None:
    path = next(p for p in corpus_files() if p.name == REWIND)
    entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    by_uuid = {e["uuid"]: e for e in entries if "uuid" in e}
    # the active branch: ancestors of the last entry, by parentUuid
    active, uuid = set(), entries[-1].get("uuid")
    while uuid:
        active.add(uuid)
        uuid = by_uuid[uuid].get("parentUuid")
    ids = {
        e["message"]["id"] for e in entries if e.get("type") == "assistant" and e["uuid"] in active
    }
    prompts = [
        e
        for e in entries
        if e.get("type") == "user"
        and e["uuid"] in active
        and not e.get("isMeta")
        and isinstance(e["message"]["content"], str)
        and _typed_by_a_human(e["message"]["content"])
    ]
    conv = one(path)
    assert sum(is_turn_start(m) for m in conv.messages) == len(prompts) == 4
    assert sum(isinstance(m, AssistantMessage) for m in conv.messages) == len(ids) == 6
    assert len(conv.warnings) == 1


def test_estimated_cost_so_far_does_not_depend_on_summaries_either(tmp_path: Path) -> None:
    """With no recorded usage every call is estimated, on the original run's history: the
    full replay (whose summaries shrink the focused view), the dry run and Full mode end
    at the same cost_so_far, turn by turn ('never')."""
    stripped = tmp_path / "no_usage.jsonl"
    lines = [json.loads(x) for x in SYNTHETIC.read_text().splitlines()]
    for line in lines:
        message = line.get("message")
        if isinstance(message, dict):
            message.pop("usage", None)
    stripped.write_text("".join(json.dumps(x) + "\n" for x in lines))
    args = ["--max-context-tokens", "2000", "--debounce", "1"]
    full = _decisions(*args, str(stripped), out=tmp_path / "full")
    dry = _decisions(*args, "--dry-run", str(stripped), out=tmp_path / "dry")
    whole = _decisions(*args, "--mode", "full", str(stripped), out=tmp_path / "whole")
    assert [t["decision"] for t in full].count("summarized") >= 2  # the summaries changed the view
    assert "estimated" in {t["tokens"] for t in full} and "recorded" not in {
        t["tokens"] for t in full
    }
    assert (
        [t["cost_so_far"] for t in full]
        == [t["cost_so_far"] for t in dry]
        == [t["cost_so_far"] for t in whole]
    )
