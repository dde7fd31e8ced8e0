"""The presets where the audit of their sources found tsum wrong, each against its source
(docs/policies.md cites them; the audit's rows: cline keeps at least 20k and the whole
latest user turn; codex cuts the middle; gemini-cli masks old tool outputs and has a 1M
window)."""

from __future__ import annotations

from transcript_tools.engine.compaction import keep_plan, prepass_selection
from transcript_tools.engine.messages import (
    AssistantMessage,
    Message,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    UserMessage,
)
from transcript_tools.engine.policy import Keep
from transcript_tools.engine.policy_lines import threshold_tokens
from transcript_tools.engine.policy_toml import preset


def _sized(message: Message) -> int:
    """A test size: the text's length in characters (hand-countable)."""
    if isinstance(message, ToolResultMessage):
        return len(message.content)
    return sum(len(b.text) for b in getattr(message, "blocks", ()) if isinstance(b, TextBlock))


def _region(messages: list[Message]) -> list[tuple[int, Message]]:
    return list(enumerate(messages))


def test_cline_keeps_at_least_its_budget_and_the_whole_latest_user_turn() -> None:
    # cline/cline@21cb8d25 sdk/packages/core/src/extensions/context/compaction-shared.ts
    # :331-364: walk back until cumulative >= preserveRecentTokens (the crossing message
    # is kept), then cut = min(candidate, lastTurnStartIndex)
    keep = preset("cline").keep
    u1 = UserMessage.text("a" * 5_000)
    a1 = AssistantMessage.text("b" * 12_000)
    u2 = UserMessage.text("c" * 1_000)  # the latest user turn starts here
    a2 = AssistantMessage((TextBlock("d" * 30_000), ToolUseBlock("t", "read", {})))
    r2 = ToolResultMessage("t", "e" * 2_000)
    a3 = AssistantMessage.text("f" * 1_000)
    region = _region([u1, a1, u2, a2, r2, a3])
    plan = keep_plan(region, keep, 200_000, _sized)
    # newest first: 1,000 + 2,000 + 30,000 >= 20,000 after a2, which is kept whole; the
    # latest turn starts at u2, so u2 is kept too: kept = u2..a3; dropped = u1, a1
    assert [i for i, _ in plan.kept] == [2, 3, 4, 5]
    assert plan.dropped == (0, 1)
    # at most 20,000 (the old rule) kept r2 and a3 (3,000), then moved past r2 so as not
    # to orphan it from its call: a3 alone
    old = keep_plan(region, Keep(kind="tokens", tokens=20_000), 0, _sized)
    assert [i for i, _ in old.kept] == [5]


def test_cline_crossing_message_is_kept_when_the_latest_turn_is_short() -> None:
    keep = preset("cline").keep
    msgs: list[Message] = [
        UserMessage.text("a" * 100),
        AssistantMessage.text("b" * 15_000),
        AssistantMessage.text("c" * 15_000),
        AssistantMessage.text("d" * 10_000),
    ]
    plan = keep_plan(_region(msgs), keep, 200_000, _sized)
    # 10,000 < 20,000 -> add 15,000 (25,000 >= 20,000, stop): two kept, and the latest
    # turn (from the user message at 0) is kept whole, so everything stays
    assert [i for i, _ in plan.kept] == [0, 1, 2, 3]


def test_gemini_cli_window_and_masking_pre_pass() -> None:
    # google-gemini/gemini-cli@5411f113 packages/core/src/core/tokenLimits.ts:20,35 and
    # context/toolOutputMaskingService.ts:25-26,36-41,92-94,152
    policy = preset("gemini-cli")
    assert threshold_tokens(policy.trigger, policy.trigger.window) == 0.5 * 1_048_576
    prepass = policy.prepass
    assert (prepass.kind, prepass.protect_tokens, prepass.min_freed_tokens) == (
        "clear-tool-results",
        50_000,
        30_000,
    )
    msgs: list[Message] = [UserMessage.text("go")]
    names = {}
    for i in range(4):  # four outputs of 20,000 characters each, newest last
        msgs.append(AssistantMessage((ToolUseBlock(f"t{i}", "read_file", {}),)))
        msgs.append(ToolResultMessage(f"t{i}", "x" * 20_000))
        names[f"t{i}"] = "read_file"
    chosen, freed = prepass_selection(_region(msgs), prepass, names, _sized, set())
    # newest first: t3 (the most recent: protected, its 20,000 count), t2 (20,000 <
    # 50,000) and t1 (40,000 < 50,000) stay; t0 (60,000 >= 50,000) would be masked:
    # 20,000 - placeholder freed, under 30,000, so nothing is masked
    assert (chosen, freed) == ([], 0)
    msgs.append(AssistantMessage((ToolUseBlock("t4", "read_file", {}),)))
    msgs.append(ToolResultMessage("t4", "x" * 20_000))
    names["t4"] = "read_file"
    chosen, freed = prepass_selection(_region(msgs), prepass, names, _sized, set())
    placeholder = len(prepass.placeholder)
    assert chosen == [2, 4]  # t0 and t1: 40,000 chars of output beyond the newest 50,000
    assert freed == 2 * (20_000 - placeholder)
