"""Anthropic caches only at breakpoints (docs/cost.md, "Cache breakpoints"): a call reads
an entry an earlier call wrote at one of its breakpoints, found within about 20 blocks
before one of its own; where the breakpoints are is the runtime's (cost/breakpoints.py).
Sizes by hand: hidden prefix 2,000 tokens, then S 1,000, U1 500, A1 300, U2 400, A2 200,
U3 100, A3 50, U4 60 and the summary 150."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from transcript_tools.cost.breakpoints import (
    AUTOMATIC,
    CLAUDE_CODE,
    OPENCODE,
    PLACEMENTS,
    breakpoints_for,
    placement_for,
    positions,
)
from transcript_tools.cost.cache_rules import ANTHROPIC
from transcript_tools.cost.meter import CostMeter
from transcript_tools.cost.model import modeled_call
from transcript_tools.cost.prices import Pricer
from transcript_tools.cost.sizes import Sizes
from transcript_tools.cost.tokens import CallTokens
from transcript_tools.engine.messages import (
    AssistantMessage,
    Conversation,
    Message,
    SystemMessage,
    TextBlock,
    UserMessage,
)
from transcript_tools.engine.policy import RUNTIMES, Policy
from transcript_tools.engine.policy_toml import preset, resolve_policy
from transcript_tools.errors import ConfigError

S = SystemMessage("system prompt")
U1, A1, U2 = UserMessage.text("u1"), AssistantMessage.text("a1"), UserMessage.text("u2")
A2, U3 = AssistantMessage.text("a2"), UserMessage.text("u3")
A3, U4 = AssistantMessage.text("a3"), UserMessage.text("u4")
SUMMARY = SystemMessage("[上下文摘要] the summary")  # the seed's placement: the tail
SUMMARY_USER = UserMessage.text("the summary")  # placed right after the system prompt
STEPS = [UserMessage.text(f"step {i}") for i in range(21)]  # one block each, 10 tokens
SIZE = {S: 1000, U1: 500, A1: 300, U2: 400, A2: 200, U3: 100, A3: 50, U4: 60, SUMMARY: 150}
SIZE[SUMMARY_USER] = 150
SIZE.update({m: 10 for m in STEPS})


def sizes() -> Sizes:
    return Sizes({id(m): float(n) for m, n in SIZE.items()}, 2000, 1.0, True)


def call(previous: list[Message], view: list[Message], placement: object) -> CallTokens:
    tokens, _ = modeled_call(
        previous,
        view,
        sizes(),
        ANTHROPIC,
        output=0,
        breakpoints=placement,  # type: ignore[arg-type]
    )
    return tokens


# after the seed's compaction: the summary at the end, new messages go before it
BEFORE = [S, U2, A2, U3, SUMMARY]
AFTER = [S, U2, A2, U3, A3, U4, SUMMARY]


def test_the_runtimes_breakpoints() -> None:
    assert positions(CLAUDE_CODE, [S, U1, A1, U2]) == [1, 4]  # the system prompt, the tail
    assert positions(OPENCODE, [S, U1, A1, U2]) == [1, 3, 4]  # and the last two messages
    assert positions(CLAUDE_CODE, [U1]) == [0, 1]  # 0: the hidden prefix (tools, system)
    assert breakpoints_for("claude-code", "codex") is CLAUDE_CODE  # the policy's runtime
    assert breakpoints_for(None, "opencode") is OPENCODE  # else the log's runtime
    assert breakpoints_for("", "anthropic") is AUTOMATIC
    assert placement_for("openai", "claude-code", "claude-code") is None  # any prefix


def test_the_apis_automatic_caching_marks_the_system_prompt_and_the_last_message() -> None:
    """One breakpoint after the system prompt, one on the last message (fails when the
    automatic placement marks the last two messages: [1, 3, 4])."""
    assert positions(AUTOMATIC, [S, U1, A1, U2]) == [1, 4]
    assert breakpoints_for(None, "aider") is AUTOMATIC  # a runtime with no placement of its own


def test_every_runtime_a_policy_may_declare_has_a_placement() -> None:
    assert set(PLACEMENTS) == set(RUNTIMES)
    assert preset("claude-code-microcompact").runtime == "claude-code"
    assert preset("opencode-prune").runtime == "opencode"
    assert preset("seed").runtime == "" and preset("codex").runtime == ""  # the log's


def test_a_policy_file_prices_under_the_runtime_it_declares(tmp_path: Path) -> None:
    """A file with no runtime in its name: its ``runtime`` key, not its name nor the log,
    decides the placement (the calls are the ones hand-computed below)."""
    mine = tmp_path / "mine.toml"
    mine.write_text('runtime = "claude-code"\n', encoding="utf-8")
    declared = resolve_policy(str(mine)).runtime
    placement = placement_for(ANTHROPIC.provider, declared, "opencode")  # an OpenCode log
    assert placement is CLAUDE_CODE
    assert call(BEFORE, AFTER, placement) == CallTokens(3960, 3000, 960, 0)
    mine.write_text('name = "claude-code-mine"\n', encoding="utf-8")  # no runtime key
    named = resolve_policy(str(mine)).runtime
    assert call(BEFORE, AFTER, placement_for("anthropic", named, "opencode")) == CallTokens(
        3960, 3700, 260, 0
    )  # the log's OpenCode placement, whatever the name says
    mine.write_text('runtime = "opencode"\n', encoding="utf-8")
    declared = resolve_policy(str(mine)).runtime
    assert call(BEFORE, AFTER, placement_for("anthropic", declared, "claude-code")) == (
        CallTokens(3960, 3700, 260, 0)
    )


def test_a_bad_runtime_is_one_line_naming_file_and_key(tmp_path: Path) -> None:
    mine = tmp_path / "mine.toml"
    mine.write_text('runtime = "claude"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as error:
        resolve_policy(str(mine))
    assert str(error.value) == (
        f"{mine}:1: runtime: must be one of claude-code, opencode, automatic, got 'claude'"
    )
    mine.write_text("runtime = 3\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"mine\.toml:1: runtime: must be one of .*, got 3$"):
        resolve_policy(str(mine))


@dataclass(slots=True)
class _TailSummarySlot:
    """A policy's slot that puts a summary at the end of every view (the seed's
    placement): each call's end entry is gone from the next call's prompt."""

    policy: Policy
    history: list[Message]

    def load_messages(self, upto: int | None = None) -> list[Message]:
        return [*self.history[:upto], SUMMARY]


@dataclass(slots=True)
class _Engine:
    slot: _TailSummarySlot


def _meter_reads(runtime: str, log_format: str) -> list[int]:
    model = "claude-sonnet-4-5"
    long = "words enough to pass any minimum cacheable prefix " * 500  # ~6k tokens each
    history: list[Message] = [SystemMessage(long), UserMessage.text(long)]
    history += [AssistantMessage((TextBlock("a1"),), model=model), UserMessage.text(long)]
    history += [AssistantMessage((TextBlock("a2"),), model=model), UserMessage.text(long)]
    history += [AssistantMessage((TextBlock("a3"),), model=model)]
    conv = Conversation("s", "s.jsonl", log_format, history)
    slot = _TailSummarySlot(replace(Policy(), name="mine", runtime=runtime), history)
    meter = CostMeter(conv, _Engine(slot), Pricer())
    meter.appended(0, 0, len(history))
    return [c.tokens.cache_read for c in meter.run.calls]


def test_the_cost_meter_reads_the_policys_runtime() -> None:
    # OpenCode also wrote an entry before the previous call's tail (its second-last
    # message), so it reads more than Claude Code, which wrote only at the system prompt
    # and the tail; the declared runtime wins over the log's
    opencode = _meter_reads("", "opencode")
    claude_code = _meter_reads("", "claude-code")
    assert sum(opencode) > sum(claude_code)
    assert _meter_reads("claude-code", "opencode") == claude_code
    assert _meter_reads("opencode", "claude-code") == opencode


def test_an_entry_past_the_change_is_not_read() -> None:
    # any shared boundary: hidden + S U2 A2 U3 = 3,700 read, the rest (260) written
    assert call(BEFORE, AFTER, None) == CallTokens(3960, 3700, 260, 0)
    # Claude Code wrote only at the system prompt and at the previous prompt's end (after
    # the summary, which this prompt no longer has there): the system prompt is read
    assert call(BEFORE, AFTER, CLAUDE_CODE) == CallTokens(3960, 3000, 960, 0)
    # OpenCode also wrote before the summary (its second-last message): 3,700 read
    assert call(BEFORE, AFTER, OPENCODE) == CallTokens(3960, 3700, 260, 0)
    # the summary right after the system prompt: the previous prompt's end is a prefix of
    # this one, so Claude Code reads it all (2000 + 1000 + 150 + 400 + 200 + 100)
    before = [S, SUMMARY_USER, U2, A2, U3]
    after = [*before, A3, U4]
    assert call(before, after, CLAUDE_CODE) == CallTokens(3960, 3850, 110, 0)


def test_a_growth_past_the_lookback_misses() -> None:
    within = [S, U1, *STEPS[:20]]  # 20 blocks after the previous prompt's end
    assert call([S, U1], within, CLAUDE_CODE) == CallTokens(3700, 3500, 200, 0)
    beyond = [S, U1, *STEPS]  # 21 blocks: the entry is out of reach, only S is found
    assert call([S, U1], beyond, CLAUDE_CODE) == CallTokens(3710, 3000, 710, 0)
    assert call([S, U1], beyond, None) == CallTokens(3710, 3500, 210, 0)
