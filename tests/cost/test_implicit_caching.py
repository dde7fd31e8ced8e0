"""Implicit caching for Gemini 2.5+ and DeepSeek, and each model's minimum cacheable
prefix (docs/cost.md, "Provider rules"; cost/cache_rules.py cites the sources)."""

from __future__ import annotations

import pytest

from tests.cost.test_breakpoints import AFTER, BEFORE, STEPS, U1, S, sizes
from transcript_tools.cost.breakpoints import DEEPSEEK, placement_for
from transcript_tools.cost.cache_rules import NO_CACHE, rules_for
from transcript_tools.cost.model import modeled_call
from transcript_tools.cost.prices import Pricer
from transcript_tools.cost.tokens import CallTokens


def test_anthropic_minimum_prefix_per_model() -> None:
    assert rules_for("claude-haiku-4-5-20251001").min_prefix_tokens == 4096
    assert rules_for("claude-opus-4-6").min_prefix_tokens == 4096
    assert rules_for("claude-opus-4-5-20251101").min_prefix_tokens == 4096
    assert rules_for("claude-3-5-haiku-20241022").min_prefix_tokens == 2048
    assert rules_for("claude-sonnet-4-5").min_prefix_tokens == 1024
    # a 3,000-token prompt on Haiku 4.5 is under its minimum: nothing read or written
    assert rules_for("claude-haiku-4-5").split(3000, 2500) == (0, 0, 3000)
    assert rules_for("claude-sonnet-4-5").split(3000, 2500) == (2500, 500, 0)


def test_gemini_caches_implicitly_from_2_5_on() -> None:
    pro = rules_for("gemini-2.5-pro")
    assert pro.split(5000, 4000) == (4000, 0, 1000)  # read at the cache rate, no write
    assert pro.split(2000, 2000) == (0, 0, 2000)  # under 2,048 tokens: not cached
    assert rules_for("gemini-3-pro-preview").split(4000, 4000) == (0, 0, 4000)  # 4,096
    assert rules_for("gemini-2.0-flash") is NO_CACHE
    quote = Pricer().quote("gemini-2.5-pro", CallTokens(5000, 4000, 0, 0))
    # 4,000 x $0.125 + 1,000 x $1.25 per million (below the 200k-token tier)
    assert quote is not None and quote.usd == pytest.approx(0.00175)


def test_deepseek_reads_a_whole_persisted_prefix_and_writes_nothing() -> None:
    rules = rules_for("deepseek-chat")
    assert placement_for(rules.provider, None, "chat-completions") is DEEPSEEK

    def call(previous: list[object], view: list[object]) -> CallTokens:
        tokens, _ = modeled_call(previous, view, sizes(), rules, output=0, breakpoints=DEEPSEEK)  # type: ignore[arg-type]
        return tokens

    # the previous request's end (after the summary) is not this prompt's prefix: only the
    # system prompt's unit is read; the rest is billed as input (no write premium)
    assert call(BEFORE, AFTER) == CallTokens(3960, 3000, 0, 0)
    # a whole previous prompt is read however much was appended (no lookback)
    assert call([S, U1], [S, U1, *STEPS]) == CallTokens(3710, 3500, 0, 0)
