"""Each preset's trigger and keep rule, hand-computed on a small conversation.

The conversation has no recorded usage, so every measure is the estimated size of the view
(``estimate_message_tokens``): the expected unit of each trigger is computed here from
the messages' sizes by the rule ``docs/policies.md`` states, and the kept messages from the
keep rule, never read back from the engine.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

import pytest

from transcript_tools.engine.compaction import shown_entries
from transcript_tools.engine.config import ReplaySettings, SummaryConfig
from transcript_tools.engine.drive import drive_conversation
from transcript_tools.engine.messages import (
    AssistantMessage,
    Conversation,
    Message,
    SystemMessage,
    ToolResultMessage,
    ToolUseBlock,
    UserMessage,
)
from transcript_tools.engine.policy_engine import with_policy
from transcript_tools.engine.policy_slot import PolicySlot
from transcript_tools.engine.policy_toml import preset
from transcript_tools.engine.requests import SummaryOutcome, SummaryRequest, SummaryResponse
from transcript_tools.engine.session import SessionEngine
from transcript_tools.engine.tokens import estimate_message_tokens as size

SYSTEM = SystemMessage("You are a coding agent.")


def turn(i: int, words: int = 200) -> list[Message]:
    """One person turn: a request, a tool call, its (large) result, a reply."""
    return [
        UserMessage.text(f"task {i}: fix module_{i}.py"),
        AssistantMessage((ToolUseBlock(f"c{i}", "bash", {"cmd": f"pytest t{i}"}),)),
        ToolResultMessage(f"c{i}", f"out{i} " + "word " * words),
        AssistantMessage.text(f"done {i}"),
    ]


def conversation(turns: int, words: int = 200) -> Conversation:
    messages: list[Message] = [SYSTEM]
    for i in range(turns):
        messages += turn(i, words)
    return Conversation("s", "mem.jsonl", "test", messages)


def run(name: str, conv: Conversation, window: int, **changes: object) -> SessionEngine:
    policy = preset(name)
    for part, values in changes.items():
        policy = replace(policy, **{part: replace(getattr(policy, part), **values)})  # type: ignore[arg-type]
    settings = with_policy(ReplaySettings(summary=SummaryConfig(max_context_tokens=window)), policy)
    engine = SessionEngine("s", settings)

    async def execute(request: SummaryRequest, _left: int) -> SummaryOutcome:
        n = len(engine.summaries) + 1
        return SummaryOutcome(SummaryResponse(f"SUMMARY-{n}", "fake"))

    asyncio.run(drive_conversation(conv, engine, execute))
    return engine


def call_ends(conv: Conversation) -> list[int]:
    """The history length after each call unit (a unit ends before the next model call)."""
    calls = [i for i, m in enumerate(conv.messages) if isinstance(m, AssistantMessage)]
    return [*calls[1:], len(conv.messages)]


def turn_ends(conv: Conversation) -> list[int]:
    starts = [i for i, m in enumerate(conv.messages) if isinstance(m, UserMessage)]
    return [*starts[1:], len(conv.messages)]


def first_over(conv: Conversation, ends: list[int], line: float) -> int:
    """The first unit whose whole history (no summary yet) is at least ``line`` tokens."""
    for unit, end in enumerate(ends):
        if sum(size(m) for m in conv.messages[:end]) >= line:
            return unit
    raise AssertionError("never over the line")


def paired_tail_start(region: list[Message], budget: int) -> int:
    """Where the newest messages within ``budget`` tokens start, moved past any tool
    result whose call it would leave behind."""
    total, start = 0, len(region)
    while start and total + size(region[start - 1]) <= budget:
        start -= 1
        total += size(region[start])
    while isinstance(region[start], ToolResultMessage):  # never a result without its call
        start += 1
    return start


def fired(engine: SessionEngine) -> list[int]:
    unit = "call" if engine.settings.checkpoint.value == "call" else "turn"
    return [d[unit] for d in engine.decisions if d["decision"] == "summarized"]


def view(engine: SessionEngine) -> list[Message]:
    return engine.load_messages()


def test_the_seed_policy_is_the_seed_path() -> None:
    settings = ReplaySettings()
    assert with_policy(settings, preset("seed")) is settings
    renamed = replace(preset("seed"), name="mine", description="a copy")
    assert with_policy(settings, renamed) is settings


def test_claude_code_reserve_trigger_and_nothing_kept() -> None:
    conv = conversation(6)
    window = 33_000 + 1_500  # threshold = window - 33,000 reserve = 1,500
    engine = run("claude-code", conv, window)
    assert fired(engine)[0] == first_over(conv, call_ends(conv), 1_500)
    first = engine.summaries[0]
    assert first["messages_kept"] == 0
    # the view right after: system, the summary as a user message, nothing else kept
    assert isinstance(engine.slot, PolicySlot)
    slot = engine.slot
    assert slot.head == [0] and slot.kept == []
    summary = slot.summary[0]
    assert isinstance(summary, UserMessage) and "SUMMARY-" in summary.blocks[0].text  # type: ignore[union-attr]


def test_codex_keeps_the_persons_messages_and_puts_the_summary_after_them() -> None:
    conv = conversation(16)
    window = 4_000  # threshold 0.9 x 4,000 = 3,600
    engine = run("codex", conv, window)
    assert fired(engine)[0] == first_over(conv, call_ends(conv), 3_600)
    at = engine.summaries[0]
    # every person message so far is kept (far below the 20,000-token budget)
    persons = [m for m in conv.messages if isinstance(m, UserMessage)]
    end = call_ends(conv)[fired(engine)[0]]
    expected = [m for m in conv.messages[:end] if isinstance(m, UserMessage)]
    assert at["messages_kept"] == len(expected) <= len(persons)
    slot = engine.slot
    assert isinstance(slot, PolicySlot)
    shown = slot.load_messages(upto=slot.base)  # the view at the compaction
    assert shown[0] is SYSTEM
    assert shown[1 : 1 + len(expected)] == expected
    assert isinstance(shown[-1], UserMessage) and shown[-1].origin == "injected"


def test_codex_cuts_the_oldest_kept_user_message_to_its_budget() -> None:
    conv = conversation(16)
    persons = [m for m in conv.messages if isinstance(m, UserMessage)]
    budget = size(persons[-1]) + size(persons[-2]) + 3  # two whole ones and a part of one
    engine = run("codex", conv, 4_000, keep={"tokens": budget})
    slot = engine.slot
    assert isinstance(slot, PolicySlot)
    kept = [
        m for _, m in shown_entries(slot.messages, slot.replaced, slot.kept, len(conv.messages))
    ]
    assert len(kept) == 3
    assert all(isinstance(m, UserMessage) for m in kept)
    # Codex cuts the middle of the oldest kept one (truncate_text: "Truncate the middle
    # ... preserving the beginning and the end", openai/codex codex-rs/core/src/truncate.rs)
    # and says how much went; the note rides beyond the budget, as Codex's marker does
    first_text = kept[0].blocks[0].text  # type: ignore[union-attr]
    original = conv.messages[slot.kept[0]].blocks[0].text  # type: ignore[union-attr]
    head = first_text.partition("…")[0]
    note = "…" + first_text.split("…")[1] + "…"
    assert note.endswith(" tokens truncated…")
    assert original.startswith(head) and original.endswith(first_text.rsplit("…", 1)[1])
    assert sum(size(m) for m in kept) <= budget + size(UserMessage.text(note))


def test_opencode_keeps_the_last_two_turns_and_places_an_assistant_summary_after_them() -> None:
    conv = conversation(8)
    window = 20_000 + 1_500  # reserve 20,000: threshold 1,500; tail budget clamp(25%, 2k, 8k)
    engine = run("opencode", conv, window)
    unit = fired(engine)[0]
    assert unit == first_over(conv, call_ends(conv), 1_500)
    end = call_ends(conv)[unit]
    # the last two person turns before the checkpoint (whole, far below 5,375 tokens)
    starts = [i for i, m in enumerate(conv.messages[:end]) if isinstance(m, UserMessage)]
    assert engine.summaries[0]["messages_kept"] == end - starts[-2]
    shown = view(engine)
    at = next(i for i, m in enumerate(shown) if "SUMMARY-" in str(m))
    lead_in, summary = shown[at - 1], shown[at]
    assert isinstance(lead_in, UserMessage) and lead_in.origin == "injected"
    assert isinstance(summary, AssistantMessage) and summary.model == "<synthetic>"
    assert isinstance(shown[at - 2], (AssistantMessage, ToolResultMessage))  # the kept tail


def test_gemini_cli_keeps_the_newest_thirty_percent_from_a_turn_start() -> None:
    conv = conversation(10)
    window = 4_000  # 0.5 x window
    engine = run("gemini-cli", conv, window)
    unit = fired(engine)[0]
    assert unit == first_over(conv, call_ends(conv), 2_000)
    end = call_ends(conv)[unit]
    region = conv.messages[1:end]
    sizes = [size(m) for m in region]
    # the first person turn start with at least 70% of the region before it
    cut = next(
        p
        for p in range(1, len(region))
        if isinstance(region[p], UserMessage) and sum(sizes[:p]) >= 0.7 * sum(sizes)
    )
    assert engine.summaries[0]["messages_kept"] == len(region) - cut
    slot = engine.slot
    assert isinstance(slot, PolicySlot)
    shown = slot.load_messages(upto=end)
    assert isinstance(shown[1], UserMessage) and isinstance(shown[2], AssistantMessage)
    assert shown[2].blocks[0].text.startswith("Got it.")  # chatCompressionService.ts:438  # type: ignore[union-attr]


def test_cline_keeps_a_tail_of_twenty_thousand_tokens_and_summarizes_only_the_rest() -> None:
    conv = conversation(14, words=2_000)
    window = 30_000  # 0.81 x 30,000 = 24,300
    engine = run("cline", conv, window)
    unit = fired(engine)[0]
    assert unit == first_over(conv, call_ends(conv), 24_300)
    end = call_ends(conv)[unit]
    region = conv.messages[1:end]
    start = paired_tail_start(region, 20_000)
    first = engine.summaries[0]
    assert first["messages_kept"] == len(region) - start
    assert first["messages_summarized"] == start  # dropped only (no earlier summary)


def test_aider_clamps_its_line_and_its_tail() -> None:
    conv = conversation(10)
    window = 8_000  # line: 8,000 / 16 = 500, clamped up to 1,024; tail 250 -> 512
    engine = run("aider", conv, window)
    unit = fired(engine)[0]
    # Aider measures its completed exchanges (done_messages): the system message is not one
    without_system = Conversation("s", "mem.jsonl", "test", conv.messages[1:])
    assert unit == first_over(without_system, [e - 1 for e in turn_ends(conv)], 1_024)
    end = turn_ends(conv)[unit]
    region = conv.messages[1:end]
    start = paired_tail_start(region, 512)
    assert engine.summaries[0]["messages_kept"] == len(region) - start


def test_langchain_keeps_twenty_messages_and_summarizes_the_dropped_tail() -> None:
    conv = conversation(16)
    engine = run("langchain", conv, 32_000)  # tokens = 4,000
    unit = fired(engine)[0]
    assert unit == first_over(conv, call_ends(conv), 4_000)
    end = call_ends(conv)[unit]
    region = conv.messages[1:end]
    start = len(region) - 20
    while isinstance(region[start], ToolResultMessage):
        start += 1
    first = engine.summaries[0]
    assert first["messages_kept"] == len(region) - start
    dropped = region[:start]
    total, tail = 0, len(dropped)
    while tail and total + size(dropped[tail - 1]) <= 4_000:
        tail -= 1
        total += size(dropped[tail])
    assert first["messages_summarized"] == len(dropped) - tail


def test_inspect_ai_keeps_the_system_prompt_and_the_task() -> None:
    conv = conversation(16)
    engine = run("inspect-ai", conv, 4_000)
    unit = fired(engine)[0]
    assert unit == first_over(conv, call_ends(conv), 3_600)
    slot = engine.slot
    assert isinstance(slot, PolicySlot)
    end = call_ends(conv)[unit]
    shown = slot.load_messages(upto=end)
    assert shown[0] is SYSTEM and shown[1] is conv.messages[1]  # the task
    assert isinstance(shown[2], UserMessage) and shown[2].origin == "injected"
    assert len(shown) == 3


def results_shown(engine: SessionEngine) -> list[str]:
    return [m.content for m in view(engine) if isinstance(m, ToolResultMessage)]


def test_clear_tool_uses_keeps_the_three_newest_results_once_over_its_trigger() -> None:
    conv = conversation(12)
    line = sum(size(m) for m in conv.messages[: call_ends(conv)[10]]) + 1
    engine = run("clear-tool-uses", conv, 32_000, prepass={"trigger_tokens": line})
    decisions = [d for d in engine.decisions if "cleared" in d]
    assert decisions and decisions[0]["call"] == first_over(conv, call_ends(conv), line)
    shown = results_shown(engine)
    assert shown[:-3] == ["[tool result cleared]"] * (len(shown) - 3)
    assert all(text.startswith("out") for text in shown[-3:])
    assert not engine.summaries  # a pre-pass only: no LLM call


def test_observation_masking_keeps_ten_observations() -> None:
    conv = conversation(14)
    engine = run("observation-masking", conv, 32_000)
    shown = results_shown(engine)
    assert len(shown) == 14
    assert shown[:4] == ["[old observation omitted]"] * 4
    assert all(text.startswith("out") for text in shown[4:])


def _named(conv: Conversation, names: dict[str, str]) -> Conversation:
    """``conv`` with the tool calls whose id ``names`` lists renamed (their results keep
    their ids)."""
    messages: list[Message] = []
    for message in conv.messages:
        if isinstance(message, AssistantMessage):
            blocks = tuple(
                ToolUseBlock(b.id, names.get(b.id, b.name), b.input)
                if isinstance(b, ToolUseBlock)
                else b
                for b in message.blocks
            )
            message = AssistantMessage(blocks, message.usage, message.model)
        messages.append(message)
    return replace(conv, messages=messages)


def test_microcompact_waits_for_more_than_ten_results_then_clears_only_built_in_tools() -> None:
    # Claude Code clears only COMPACTABLE_TOOLS (Read, Bash, Grep, Glob, WebSearch,
    # WebFetch, Edit, Write; git.orcs.to/orcs-oss/orcs-code@1e72fc94
    # src/services/compact/microCompact.ts): an MCP tool's result stays; the count that
    # triggers it is 10 (the reconstructed cachedMicrocompact.ts TRIGGER_THRESHOLD)
    base = conversation(13)
    names = {f"c{i}": "Bash" for i in range(13)}
    names["c0"] = "mcp__github__get_issue"
    conv = _named(base, names)
    engine = run("claude-code-microcompact", conv, 32_000)
    cleared = [d for d in engine.decisions if "cleared" in d]
    # the 11th result comes in turn 10's first call unit: 2 call units a turn
    assert cleared and cleared[0]["call"] == 2 * 10
    shown = results_shown(engine)
    # 13 results, 5 newest kept, the MCP one (the oldest) kept: 7 cleared
    assert shown.count("[old tool result cleared]") == 7
    assert not shown[0].startswith("[old")


def test_opencode_prune_frees_only_more_than_twenty_thousand_tokens() -> None:
    big = conversation(30, words=2_000)  # ~2.2k tokens of output a turn: 66k in all
    engine = run("opencode-prune", big, 32_000)
    cleared = [d["cleared"] for d in engine.decisions if "cleared" in d]
    assert cleared, "the pre-pass never freed enough"
    assert all(c["freed_tokens"] > 20_000 for c in cleared)
    small = run("opencode-prune", conversation(12), 32_000)  # too little output to prune
    assert not any("cleared" in d for d in small.decisions)


@pytest.mark.parametrize("name", ["claude-code", "codex", "gemini-cli", "langchain"])
def test_a_policy_run_records_name_span_and_views(name: str) -> None:
    engine = run(name, conversation(16), 34_500 if name == "claude-code" else 4_000)
    assert engine.summaries
    for record in engine.summaries:
        assert record["policy"] == name
        assert record["view_tokens_after"] < record["view_tokens_before"]
    assert all(d["policy"] == name for d in engine.decisions)
    assert all("violations" in s for s in engine.summaries if s["status"] == "ok")


def test_a_policy_replay_through_a_local_openai_server(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The real OpenAI SDK against the stdlib fake server on 127.0.0.1: the claude-code
    preset's prompt (its template, its max_tokens) is what is sent, and the records of
    the run carry the policy."""
    from click.testing import CliRunner

    from tests.support.fake_llm_server import FakeLLMServer
    from transcript_tools.cli.main import cli

    monkeypatch.delenv("TSUM_OFFLINE", raising=False)
    monkeypatch.chdir(tmp_path)
    sample = Path(__file__).resolve().parents[2] / "samples" / "long_session.jsonl"
    with FakeLLMServer() as server:
        args = ["replay", str(sample), "--policy", "claude-code", "--max-context-tokens", "36000"]
        args += ["--provider", "openai", "--base-url", server.openai_base_url]
        args += ["--model", "local-model", "--no-cache", "--out", str(tmp_path / "out")]
        result = CliRunner().invoke(cli, args, catch_exceptions=False)
        assert result.exit_code == 0, result.output
        sent = [r.body for r in server.requests]
    records = [
        json.loads(line) for line in (tmp_path / "out" / "summaries.jsonl").read_text().splitlines()
    ]
    assert len(sent) == len(records) >= 1
    assert all(body["max_tokens"] == 20_000 for body in sent)  # MAX_OUTPUT_TOKENS_FOR_SUMMARY
    prompt = sent[0]["messages"][-1]["content"]
    assert "Primary Request" in prompt or "primary request" in prompt.lower()
    assert all(r["policy"] == "claude-code" and r["text"] == "a summary" for r in records)
    run = json.loads((tmp_path / "out" / "run.json").read_text())
    assert run["policy"]["name"] == "claude-code"
    assert run["template"]["name"] == "claude-code"
