"""The cost record's rules left unpinned by a mutation run (docs/testing.md, "The rules
pinned against one-point edits"): each test fails on the one-point edit its docstring
names, with expected values worked out by hand.

Prices: ``Pricer.from_options("1")``, $1 per million tokens of every kind, so a call
costs its prompt plus its output, in millionths of a dollar. Sizes: engine/tokens.py
estimates a 400-character message at 110 tokens (100 for its text, 10 of overhead).
"""

from __future__ import annotations

from transcript_tools.cost.meter import CostMeter, _Uncompacted, _WholeHistory, uncompacted_run
from transcript_tools.cost.original import one_hour_shares
from transcript_tools.cost.overflow import run_price
from transcript_tools.cost.prices import Pricer
from transcript_tools.cost.sizes import calibrate
from transcript_tools.cost.tokens import CallTokens
from transcript_tools.engine.messages import (
    INJECTED,
    AssistantMessage,
    Conversation,
    TextBlock,
    Usage,
    UserMessage,
)

PRICER = Pricer.from_options("1")


def _two_calls(
    first: Usage | None, second: Usage | None, window: int | None = None
) -> Conversation:
    messages = [
        UserMessage.text("a" * 400),
        AssistantMessage((TextBlock("b" * 400),), first, "gpt-4o"),
        UserMessage.text("c" * 400),
        AssistantMessage((TextBlock("d" * 400),), second, "gpt-4o"),
    ]
    return Conversation("c", "c.jsonl", "openai", messages, context_window=window)


def _meter(conv: Conversation, pricer: Pricer = PRICER) -> CostMeter:
    return CostMeter(conv, _Uncompacted(_WholeHistory(conv.messages)), pricer)


def test_a_modeled_prompt_of_exactly_the_window_is_not_over_it() -> None:
    """``tokens.prompt > window`` -> ``>=`` (cost/meter.py): the second modeled call's
    prompt is 110 + 110 + 110 = 330 tokens; a window of 330 holds it, one of 329 not."""
    assert run_price(uncompacted_run(_two_calls(None, None, 330), PRICER)).overflow is False
    assert run_price(uncompacted_run(_two_calls(None, None, 329), PRICER)).overflow is True


def _recorded() -> CostMeter:
    """Two recorded calls, all fresh input: 1,000 + 100 and 3,000 + 200 tokens, so the
    original (and the whole bill: no off-chain calls) is $0.0043. The policy's run holds
    one summarizer call of 1,000 tokens: $0.001."""
    meter = _meter(_two_calls(Usage(1_000, 100), Usage(3_000, 200)))
    meter.run.add(PRICER, "gpt-4o", CallTokens(1_000, 0, 0, 0), summarizer=True)
    return meter


def test_the_change_as_a_share_of_the_bill_is_the_change_over_the_bill_to_four_places() -> None:
    """``round(delta / bill, 4)``: ``/`` -> ``*`` and 4 -> 5 places (cost/meter.py).
    Δ = 0.001 - 0.0043 = -0.0033; -0.0033 / 0.0043 = -0.767441..., to four places -0.7674."""
    record = _recorded().record()
    assert record["delta_usd"] == -0.0033
    assert record["billed"]["usd"] == 0.0043
    assert record["delta_of_bill"] == -0.7674


def test_an_overflowed_policy_has_no_change_in_dollars_nor_share_of_the_bill() -> None:
    """A run over the window is not priced (cost/overflow.py), while the original is:
    the change is None (``policy_usd is None or ...`` -> ``and``: a None less a float)
    and so is its share of the bill (``delta is None or ...`` -> ``and``: None / 0.0043)."""
    record = _recorded().record(views_over=1)
    assert record["overflow"] is True
    assert record["delta_usd"] is None
    assert record["billed"]["usd"] == 0.0043
    assert record["delta_of_bill"] is None


def test_a_log_with_no_recorded_call_has_no_whole_bill() -> None:
    """``bill is not None and original.calls`` -> ``or`` (cost/meter.py): with no recorded
    usage there is no original run to bill, so the record's bill is null (the bill of
    nothing would be $0)."""
    meter = _meter(_two_calls(None, None))
    meter.appended(0, 0, 4)
    record = meter.record()
    assert record["policy"]["usd"] == 660e-6  # 110 + 110, then 330 + 110 tokens
    assert record["billed"] is None and record["delta_of_bill"] is None


def test_a_one_token_cache_write_sets_the_one_hour_share() -> None:
    """``cache_creation_tokens > 0`` -> ``> 1`` (cost/original.py ``one_hour_shares``):
    the first call writes 1,000 tokens, all at the 1-hour lifetime (share 1.0); the
    second writes 1 token at the 5-minute lifetime, so its share is 0/1 = 0.0, not the
    first call's share carried on."""
    conv = _two_calls(Usage(1_000, 10, 0, 1_000, 1_000), Usage(1_120, 10, 1_000, 1, 0))
    assert one_hour_shares(conv) == {1: 1.0, 3: 0.0}


def test_a_summary_restart_that_read_one_cached_token_bounds_the_prefix_at_one() -> None:
    """``read > 0`` -> ``> 1`` (cost/sizes.py ``_prefix_bound``): a log opening with the
    runtime's summary shares with earlier prompts only what its first call read from the
    cache — here 1 token, so the hidden prefix is 1 token, not the 5,000-token prompt
    less the summary."""
    messages = [
        UserMessage((TextBlock("summary " * 100),), origin=INJECTED),
        AssistantMessage((TextBlock("ok"),), Usage(5_000, 10, 1, 0), "claude-sonnet-4-5"),
    ]
    conv = Conversation("c", "c.jsonl", "claude-code", messages)
    assert calibrate(conv).hidden == 1


def test_the_price_library_gives_a_known_models_window_and_none_for_others() -> None:
    """``Pricer.context_window`` reads genai-prices' ``ModelInfo.context_window``
    (cost/prices.py ``_library_window``): ``found is None`` -> ``is not None`` loses a
    known window; ``isinstance(...) and window > 0`` -> ``or`` compares None with 0.
    Windows from the vendors' model pages: Claude Sonnet 4.5, 200,000 tokens
    (https://docs.anthropic.com/en/docs/about-claude/models/overview); GPT-4o, 128,000
    (https://platform.openai.com/docs/models/gpt-4o)."""
    pricer = Pricer()
    assert pricer.context_window("claude-sonnet-4-5") == 200_000
    assert pricer.context_window("gpt-4o") == 128_000
    assert pricer.context_window("no-such-model") is None  # a model the library does not know
    assert pricer.context_window(None) is None
