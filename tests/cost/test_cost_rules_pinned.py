"""The cost model's rules, each pinned by a test that fails when a one-point edit breaks
it (a single-point mutation run, docs/testing.md, found these unpinned).

Each rule is checked through the smallest public function that carries it (``Rates.cost``,
``CallTokens.fresh``, ``compare_costs``, ``CacheRules.split``, ``recorded_breaks``,
``modeled_call``, ``CostMeter.summarized``), with expected values computed by hand in the
test. The test names say which rule each one protects; the edit it fails under is in its
docstring.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from transcript_tools.cost.cache_rules import ANTHROPIC, rules_for
from transcript_tools.cost.gate import compare_costs
from transcript_tools.cost.meter import CostMeter
from transcript_tools.cost.model import modeled_call
from transcript_tools.cost.original import BREAK_SLACK_TOKENS, recorded_breaks
from transcript_tools.cost.prices import Pricer, Rates
from transcript_tools.cost.records import CostRecord
from transcript_tools.cost.sizes import Sizes
from transcript_tools.cost.tokens import CallTokens
from transcript_tools.engine.messages import (
    AssistantMessage,
    Conversation,
    Message,
    TextBlock,
    Usage,
    UserMessage,
)
from transcript_tools.engine.requests import SummaryOutcome, SummaryRequest, SummaryResponse

SONNET = "claude-sonnet-4-5"


# ---- tokens and prices -----------------------------------------------------------------


def test_fresh_input_is_the_prompt_less_cache_read_and_cache_write() -> None:
    """fresh = prompt - cache read - cache write (fails on ``+ cache_write``)."""
    tokens = CallTokens(prompt=4000, cache_read=1000, cache_write=2000, output=7)
    assert tokens.fresh == 1000
    assert tokens.to_json()["fresh"] == 1000


def test_a_cache_write_is_added_to_the_price_at_the_write_rate() -> None:
    """USD = (fresh × input + read × cache read + write × cache write + output × output)
    / 1M: with 3/15/0.3/3.75 per million, 1M fresh, 1M read, 2M written and 1M output
    cost 3 + 0.3 + 7.5 + 15 = 25.8 (fails when the write is subtracted: 10.8)."""
    rates = Rates(3.0, 15.0, 0.3, 3.75)
    tokens = CallTokens(4_000_000, 1_000_000, 2_000_000, 1_000_000)
    assert rates.cost(tokens) == pytest.approx(25.8)
    # without cache rates, the cached tokens are priced as input: 4M × 3 + 1M × 15 = 27
    assert Rates(3.0, 15.0).cost(tokens) == pytest.approx(27.0)


# ---- the cost gate ---------------------------------------------------------------------


def _costs(usd: float) -> dict[str, CostRecord]:
    record = {"session": "s", "policy": {"usd": usd, "priced_by": ["--price-per-mtok 3"]}}
    return {"s": record}  # type: ignore[dict-item]  # only the fields the gate reads


def test_the_cost_gate_passes_at_exactly_the_allowed_increase() -> None:
    """$4 -> $5 is +25%: the gate passes at a +25% limit and fails at +24.9% (fails when
    the gate's comparison is ``>=``). 0.25 is exact in binary, so the boundary is too."""
    at_limit = compare_costs(_costs(4.0), _costs(5.0), 0.25)
    assert at_limit.failed is False
    assert at_limit.lines == [
        "cost: $4.0000 -> $5.0000 over 1 session(s) (+25.0%; limit +25.0%) [--price-per-mtok 3]"
    ]
    over = compare_costs(_costs(4.0), _costs(5.0), 0.249)
    assert over.failed is True
    assert over.lines[0].endswith("; FAILED, most of it in s")


# ---- the cache rules -------------------------------------------------------------------


def test_haiku_cache_writes_are_charged_as_writes() -> None:
    """A Haiku model's uncached rest is a cache write (Anthropic writes at a premium),
    not fresh input: 10,000 tokens sharing 8,000 read 8,000 and write 2,000 (fails when
    Haiku's rules lose their ``writes_at_premium`` flag)."""
    rules = rules_for("claude-3-5-haiku-20241022")
    assert rules.provider == "anthropic"
    assert rules.writes_at_premium is True
    assert rules.split(10_000, 8_000) == (8_000, 2_000, 0)


def test_a_gap_of_exactly_the_cache_lifetime_still_finds_the_cache() -> None:
    """A cache entry lives ``lifetime_seconds``: a call that many seconds later still
    reads it, one a second later finds it empty (fails when expiry is ``>=``)."""
    lifetime = ANTHROPIC.lifetime_seconds
    assert lifetime is not None
    assert ANTHROPIC.split(5_000, 4_000, lifetime) == (4_000, 1_000, 0)
    assert ANTHROPIC.split(5_000, 4_000, lifetime + 1) == (0, 5_000, 0)


# ---- the original run's recorded cache breaks ------------------------------------------


def _recorded(input_tokens: int, cache_read: int) -> AssistantMessage:
    return AssistantMessage((TextBlock("ok"),), Usage(input_tokens, 10, cache_read, 0), SONNET)


def test_a_read_exactly_the_slack_below_the_previous_prompt_is_no_break() -> None:
    """A recorded call is a cache break when its read is *more than* the slack
    (``BREAK_SLACK_TOKENS``, 1,024) below the previous call's whole prompt: 5,000 then a
    read of 3,976 is none, 3,975 is one (fails when the rule is ``<=``). The first call
    always counts, with what it read."""
    assert BREAK_SLACK_TOKENS == 1024
    messages: list[Message] = [
        UserMessage.text("a"),
        _recorded(5_000, 0),
        UserMessage.text("b"),
        _recorded(6_000, 5_000 - 1024),
    ]
    assert recorded_breaks(Conversation("c", "c.jsonl", "test", messages)) == {1: 0}
    messages[3] = _recorded(6_000, 5_000 - 1025)
    assert recorded_breaks(Conversation("c", "c.jsonl", "test", messages)) == {1: 0, 3: 3_975}


# ---- the modeled call ------------------------------------------------------------------


def test_a_view_extending_the_whole_previous_prompt_reads_all_of_it() -> None:
    """When the previous view is a prefix of this one, the cache holds the whole previous
    prompt (5,000 recorded tokens), whatever the estimated sizes say (here 2 tokens): a
    6,000-token prompt reads 5,000 and writes 1,000 (fails when the prefix test is ``!=``:
    then the estimate caps the read, below Anthropic's minimum, and nothing is read)."""
    one, two, three = (UserMessage.text(c) for c in "abc")
    sizes = Sizes({id(one): 1.0, id(two): 1.0, id(three): 1.0}, 0, 1.0, True)
    tokens, broken = modeled_call(
        [one, two],
        [one, two, three],
        sizes,
        ANTHROPIC,
        output=10,
        previous_prompt=5_000,
        prompt_tokens=6_000,
    )
    assert tokens == CallTokens(6_000, 5_000, 1_000, 10)
    assert broken == 0
    # a previous view that is not a prefix: the read is the shared part's sizes (2 tokens),
    # too short to cache, so the whole prompt is written
    other = UserMessage.text("z")
    changed, _ = modeled_call(
        [one, other],
        [one, two, three],
        sizes,
        ANTHROPIC,
        output=10,
        previous_prompt=5_000,
        prompt_tokens=6_000,
    )
    assert changed == CallTokens(6_000, 0, 6_000, 10)


# ---- the meter's summarizer calls ------------------------------------------------------


@dataclass
class _Slot:
    messages: list[Message]

    def load_messages(self, upto: int | None = None) -> list[Message]:
        return self.messages[:upto]


@dataclass
class _Engine:
    slot: _Slot


def test_a_summarizer_call_is_all_fresh_input_with_no_cache_read() -> None:
    """A summary prompt is new text each time: its recorded 2,000 input tokens are fresh,
    none read from the cache; at 3/15 per million it costs (2,000 × 3 + 300 × 15) / 1M
    (fails when the call's cache read is counted as 1 token)."""
    conv = Conversation("c", "c.jsonl", "test", [UserMessage.text("a")])
    meter = CostMeter(conv, _Engine(_Slot(conv.messages)), Pricer.from_options("3/15"))
    request = SummaryRequest("c", 1, "summarize this", SONNET)
    response = SummaryResponse("the summary", SONNET, Usage(2_000, 300))
    meter.summarized(request, SummaryOutcome(response, attempts=1))
    (call,) = meter.run.calls
    assert call.summarizer is True
    assert call.tokens == CallTokens(2_000, 0, 0, 300)
    assert call.tokens.fresh == 2_000
    assert call.usd == pytest.approx((2_000 * 3 + 300 * 15) / 1e6)
