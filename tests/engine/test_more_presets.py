"""The presets of the systems added after the first audit, each value pinned to its source
(docs/policies.md, "More systems"), each trigger line hand-computed, and Aider's measure
of its completed exchanges.

Sources, by preset: roo-code RooCodeInc/Roo-Code src/core/context-management/index.ts@0cc04f43;
kilo-code Kilo-Org/kilocode packages/opencode/src/session/compaction.ts@02bc3f21; goose
block/goose crates/goose/src/context_mgmt/mod.rs@0036b819; kimi-cli MoonshotAI/kimi-cli
src/kimi_cli/config.py@043197d8 and soul/compaction.py@00970276; qwen-code QwenLM/qwen-code
packages/core/src/services/chatCompressionService.ts@00b481a3 and core/tokenLimits.ts@170f731a;
crush charmbracelet/crush internal/agent/agent.go; pi badlogic/pi-mono
packages/coding-agent/src/core/compaction/compaction.ts@04309178; letta letta-ai/letta
letta/services/summarizer/thresholds.py@98c7d106 and https://docs.letta.com/guides/core-concepts/messages/compaction;
openhands OpenHands/software-agent-sdk
openhands-sdk/openhands/sdk/context/condenser/llm_summarizing_condenser.py@118402ab;
anthropic-compaction https://platform.claude.com/docs/en/build-with-claude/compaction;
openai-compaction https://developers.openai.com/api/docs/guides/compaction; opencode-v2
https://opencode.ai/docs/compaction; aider Aider-AI/aider aider/history.py (too_big) and
aider/coders/base_coder.py (move_back_cur_messages).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.engine.test_policy_engine import (
    call_ends,
    conversation,
    fired,
    first_over,
    run,
    turn_ends,
)
from transcript_tools.engine.messages import AssistantMessage, Conversation, Message, Usage
from transcript_tools.engine.policy import Trigger
from transcript_tools.engine.policy_lines import keep_budget_tokens, threshold_tokens
from transcript_tools.engine.policy_toml import preset, trigger_summary
from transcript_tools.errors import ConfigError

PINNED = [
    ("roo-code", "trigger.ratio", 1.0),  # autoCondenseContextPercent 100
    ("roo-code", "trigger.reserve_ratio", 0.1),  # TOKEN_BUFFER_PERCENTAGE
    ("roo-code", "trigger.reserve_tokens", 8_192),  # ANTHROPIC_DEFAULT_MAX_TOKENS
    ("roo-code", "keep.kind", "none"),
    ("kilo-code", "trigger.reserve_tokens", 20_000),  # OpenCode V1's COMPACTION_BUFFER
    ("kilo-code", "keep.turns", 2),
    ("goose", "trigger.ratio", 0.8),  # DEFAULT_COMPACTION_THRESHOLD
    ("goose", "placement.role", "user"),
    ("kimi-cli", "trigger.ratio", 0.85),  # compaction_trigger_ratio
    ("kimi-cli", "trigger.reserve_tokens", 50_000),  # reserved_context_size
    ("kimi-cli", "keep.messages", 2),  # max_preserved_messages
    ("qwen-code", "trigger.ratio", 0.85),  # DEFAULT_PCT
    ("qwen-code", "trigger.reserve_tokens", 33_000),  # SUMMARY_RESERVE + AUTOCOMPACT_BUFFER
    ("qwen-code", "trigger.window", 200_000),  # DEFAULT_TOKEN_LIMIT
    ("qwen-code", "summary.max_tokens", 20_000),  # COMPACT_MAX_OUTPUT_TOKENS
    ("crush", "trigger.ratio", 0.8),  # 1 - smallContextWindowRatio 0.2
    ("pi", "trigger.reserve_tokens", 16_384),  # reserveTokens
    ("pi", "keep.tokens", 20_000),  # keepRecentTokens
    ("pi", "summary.max_tokens", 13_107),  # floor(0.8 x reserveTokens)
    ("letta", "trigger.ratio", 1.0),  # the context window (non-GPT-5 models)
    ("letta", "keep.tokens_ratio", 0.7),  # 1 - sliding_window_percentage 0.3
    ("openhands", "trigger.messages", 241),  # len(view) > max_size 240
    ("openhands", "keep.messages", 117),  # 240 // 2 - keep_first 2 - 1
    ("openhands", "keep.first_user", True),
    ("anthropic-compaction", "trigger.tokens", 150_000),  # trigger default
    ("anthropic-compaction", "placement.role", "assistant"),  # a compaction block
    ("openai-compaction", "trigger.tokens", 200_000),  # compact_threshold (caller-set)
    ("opencode-v2", "trigger.ratio", 0.9),
    ("opencode-v2", "keep.tokens", 15_000),
    ("opencode-v2", "summary.template", "opencode-v2"),
    ("aider", "trigger.measure", "conversation"),  # too_big(done_messages)
]


@pytest.mark.parametrize(("name", "key", "value"), PINNED)
def test_each_value_is_its_source(name: str, key: str, value: object) -> None:
    part, field = key.split(".")
    assert getattr(getattr(preset(name), part), field) == value


@pytest.mark.parametrize(
    ("name", "window", "line"),
    [
        ("roo-code", 200_000, 171_808.0),  # min(200,000, 200,000 x 0.9 - 8,192)
        ("roo-code", 10_000, 808.0),  # 9,000 - 8,192
        ("kimi-cli", 262_144, 212_144.0),  # min(222,822.4, 262,144 - 50,000)
        ("kimi-cli", 40_000, 34_000.0),  # the reserve leaves nothing: 85% alone
        ("qwen-code", 200_000, 167_000.0),  # min(170,000, 200,000 - 33,000)
        ("qwen-code", 1_000_000, 850_000.0),  # min(850,000, 967,000)
        ("qwen-code", 30_000, 25_500.0),  # ceiling -3,000 <= 0: 85% alone
        ("goose", 128_000, 102_400.0),
        ("crush", 200_000, 160_000.0),
        ("pi", 200_000, 183_616.0),  # 200,000 - 16,384
        ("letta", 100_000, 100_000.0),
        ("kilo-code", 200_000, 180_000.0),
        ("anthropic-compaction", 1_000_000, 150_000.0),
        ("openai-compaction", 400_000, 200_000.0),
        ("opencode-v2", 200_000, 180_000.0),
        ("openhands", 200_000, None),  # a message count, not tokens
    ],
)
def test_trigger_lines_hand_computed(name: str, window: int, line: float | None) -> None:
    assert threshold_tokens(preset(name).trigger, window) == line


@pytest.mark.parametrize(
    ("name", "window", "budget"),
    [("pi", 200_000, 20_000), ("letta", 100_000, 70_000), ("opencode-v2", 200_000, 15_000)],
)
def test_keep_budgets_hand_computed(name: str, window: int, budget: int) -> None:
    assert keep_budget_tokens(preset(name).keep, window) == budget


def test_a_reserve_ratio_must_leave_some_window() -> None:
    with pytest.raises(ConfigError, match="trigger.reserve_ratio"):
        Trigger(reserve_ratio=1.0)
    with pytest.raises(ConfigError, match="trigger.reserve_ratio"):
        Trigger(reserve_ratio=-0.1)


def test_policies_list_says_both_lines() -> None:
    assert "window x 0.85 or >= window - 50,000" in trigger_summary(preset("kimi-cli"))
    assert "window x 1 or >= window x 0.9 - 8,192" in trigger_summary(preset("roo-code"))
    assert "conversation >= window x 0.0625" in trigger_summary(preset("aider"))


def test_kimi_fires_at_the_reserve_line_on_a_small_conversation() -> None:
    # window 4,000: 85% is 3,400, the reserve line 4,000 - 50,000 < 0 is dropped
    conv = conversation(16)
    engine = run("kimi-cli", conv, 4_000)
    assert fired(engine)[0] == first_over(conv, call_ends(conv), 3_400)
    # with a 1,000-token reserve the reserve line (3,000) comes first
    engine = run("kimi-cli", conv, 4_000, trigger={"reserve_tokens": 1_000})
    assert fired(engine)[0] == first_over(conv, call_ends(conv), 3_000)


def test_roo_code_fires_at_ninety_percent_less_the_reserve() -> None:
    conv = conversation(16)
    engine = run("roo-code", conv, 12_000)  # min(12,000, 10,800 - 8,192 = 2,608)
    assert fired(engine)[0] == first_over(conv, call_ends(conv), 2_608)


def test_openhands_counts_messages() -> None:
    conv = conversation(16)  # 1 + 16 x 4 messages
    engine = run("openhands", conv, 32_000, trigger={"messages": 30}, keep={"messages": 10})
    held, first = 0, None  # what each call unit appends (the first holds the system message)
    for unit, decision in enumerate(engine.decisions):
        held += decision["messages"]
        if held >= 30:
            first = unit
            break
    assert fired(engine)[0] == first


def _recorded(conv: Conversation, prompt: int) -> Conversation:
    """``conv`` with every reply recording a ``prompt``-token call (Aider's "Tokens: 30k
    sent": its system prompt, repo map and files, which the log does not hold)."""
    out: list[Message] = []
    for message in conv.messages:
        if isinstance(message, AssistantMessage):
            message = replace(message, usage=Usage(input_tokens=prompt, output_tokens=10))
        out.append(message)
    return replace(conv, messages=out)


def test_aider_measures_its_completed_exchanges_not_the_recorded_prompt() -> None:
    conv = _recorded(conversation(10), 30_000)
    window = 8_000  # line: 1,024 (the floor of 8,000 / 16)
    engine = run("aider", conv, window)
    without_system = replace(conv, messages=conv.messages[1:])
    ends = [end - 1 for end in turn_ends(conv)]
    assert fired(engine)[0] == first_over(without_system, ends, 1_024)
    assert fired(engine)[0] > 0
    # the whole recorded prompt (30,000 >= 1,024) would have fired at the first turn
    engine = run("aider", conv, window, trigger={"measure": "current"})
    assert engine.decisions[0]["watermark"] == 30_010
    assert engine.decisions[0]["decision"] != "below_threshold"
