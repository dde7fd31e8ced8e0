"""Anthropic caches only at breakpoints (docs/cost.md, "Cache breakpoints"): a call reads
an entry an earlier call wrote at one of its breakpoints, found within about 20 blocks
before one of its own; where the breakpoints are is the runtime's (cost/breakpoints.py).
Sizes by hand: hidden prefix 2,000 tokens, then S 1,000, U1 500, A1 300, U2 400, A2 200,
U3 100, A3 50, U4 60 and the summary 150."""

from __future__ import annotations

from transcript_tools.cost.breakpoints import (
    AUTOMATIC,
    CLAUDE_CODE,
    OPENCODE,
    breakpoints_for,
    placement_for,
    positions,
)
from transcript_tools.cost.cache_rules import ANTHROPIC
from transcript_tools.cost.model import modeled_call
from transcript_tools.cost.sizes import Sizes
from transcript_tools.cost.tokens import CallTokens
from transcript_tools.engine.messages import AssistantMessage, Message, SystemMessage, UserMessage

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
    assert breakpoints_for("claude-code-microcompact", "codex") is CLAUDE_CODE
    assert breakpoints_for("seed", "opencode") is OPENCODE  # the log's runtime
    assert breakpoints_for("seed", "anthropic") is AUTOMATIC
    assert placement_for("openai", "claude-code", "claude-code") is None  # any prefix


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
