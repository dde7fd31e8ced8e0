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
from pathlib import Path

import pytest

from transcript_tools.cost.cache_rules import ANTHROPIC, rules_for
from transcript_tools.cost.gate import compare_costs, read_costs
from transcript_tools.cost.meter import CostMeter, cost_line, uncompacted_run
from transcript_tools.cost.model import RunCost, modeled_call, warm
from transcript_tools.cost.original import (
    BREAK_SLACK_TOKENS,
    model_error,
    reconstructed_run,
    recorded_breaks,
)
from transcript_tools.cost.prices import (
    Pricer,
    Rates,
    parse_rates,
    pricer_for,
    provider_of,
    read_prices_file,
)
from transcript_tools.cost.records import CostRecord
from transcript_tools.cost.sizes import Sizes, calibrate
from transcript_tools.cost.tokens import CallTokens
from transcript_tools.engine.messages import (
    AssistantMessage,
    Compaction,
    Conversation,
    Message,
    TextBlock,
    Usage,
    UserMessage,
)
from transcript_tools.engine.requests import SummaryOutcome, SummaryRequest, SummaryResponse
from transcript_tools.errors import ConfigError, InputError

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
        "cost: $4.0000 -> $5.0000 over 1 session(s) (+25.0%; limit +25.0%), the agent's calls and the summary calls [--price-per-mtok 3]"
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


# ---- the cache rules' figures, at their boundaries -------------------------------------
# Anthropic: a cached prefix of at least 1,024 tokens (2,048 for Haiku), read to the
# token, 5 minutes of life; OpenAI: 1,024 tokens, hits in 128-token steps, no write
# premium, 5-10 minutes (600 s taken). Sources: cost/cache_rules.py's docstring.


def test_anthropic_caches_a_prefix_of_1024_tokens_read_to_the_token() -> None:
    rules = rules_for(SONNET)
    assert rules.split(2_000, 1_024) == (1_024, 976, 0)  # the minimum itself is cached
    assert rules.split(2_000, 1_023) == (0, 2_000, 0)  # below it: nothing read, all written
    assert rules.split(2_000, 1_025) == (1_025, 975, 0)  # read to the token, no steps
    assert rules.split(1_024, 0) == (0, 1_024, 0)  # a 1,024-token prompt is written
    assert rules.split(1_023, 0) == (0, 0, 1_023)  # a shorter one is not: fresh input
    assert rules.split(5_000, 4_000, 300.0) == (4_000, 1_000, 0)  # 5 minutes: still cached
    assert rules.split(5_000, 4_000, 300.5) == (0, 5_000, 0)  # then gone


def test_haiku_caches_a_prefix_of_2048_tokens() -> None:
    rules = rules_for("claude-3-5-haiku-20241022")
    assert rules.split(3_000, 2_048) == (2_048, 952, 0)
    assert rules.split(3_000, 2_047) == (0, 3_000, 0)  # a Sonnet would read 2,047
    assert rules.split(3_000, 2_049) == (2_049, 951, 0)
    assert rules.split(2_047, 0) == (0, 0, 2_047)
    assert rules.split(5_000, 4_000, 300.0) == (4_000, 1_000, 0)
    assert rules.split(5_000, 4_000, 300.5) == (0, 5_000, 0)


def test_openai_reads_in_128_token_steps_from_1024_and_writes_nothing() -> None:
    rules = rules_for("gpt-4o")
    assert rules.split(2_000, 1_100) == (1_024, 0, 976)  # 8 steps of 128; the rest fresh
    assert rules.split(2_000, 1_023) == (0, 0, 2_000)  # 7 steps = 896: below the minimum
    assert rules.split(2_000, 1_152) == (1_152, 0, 848)  # 9 steps
    assert rules.split(3_000, 2_000, 600.0) == (1_920, 0, 1_080)  # 10 minutes: still cached
    assert rules.split(3_000, 2_000, 600.5) == (0, 0, 3_000)


def test_other_providers_cache_nothing() -> None:
    assert rules_for("llama-3-70b").split(5_000, 4_000, 1.0) == (0, 0, 5_000)
    assert rules_for(None).split(5_000, 4_000) == (0, 0, 5_000)


# ---- the cost gate's edges -------------------------------------------------------------


def _priced(**usd: float | None) -> dict[str, CostRecord]:
    return {
        name: {"session": name, "policy": {"usd": value, "priced_by": []}}  # type: ignore[misc]
        for name, value in usd.items()
    }


def test_the_cost_gate_compares_only_sessions_priced_on_both_sides() -> None:
    # nothing compared fails closed: a gate that compared nothing cannot pass (docs/cost.md)
    nothing = "cost: FAILED, no session priced on both sides: nothing compared"
    assert compare_costs(_priced(a=1.0), _priced(b=1.0), 0.1).lines == [nothing]  # none shared
    assert compare_costs(_priced(a=1.0), _priced(a=None), 0.1).lines == [nothing]
    assert compare_costs(_priced(a=None), _priced(a=1.0), 0.1).lines == [nothing]
    assert compare_costs(_priced(a=1.0), _priced(a=None), 0.1).failed is True


def test_the_cost_gate_from_a_zero_baseline() -> None:
    """$0 -> $0 is no change; $0 -> any cost is an unbounded increase."""
    same = compare_costs(_priced(a=0.0), _priced(a=0.0), 0.0)
    assert same.failed is False
    assert "(+0.0%; limit +0.0%)" in same.lines[0]
    grew = compare_costs(_priced(a=0.0), _priced(a=0.5), 10.0)
    assert grew.failed is True
    assert "(+inf%; limit +1000.0%)" in grew.lines[0]


def test_a_failed_cost_gate_names_the_three_sessions_that_grew_most() -> None:
    """Sorted by their own increase (new - old), largest first, at most three; a session
    that cost $0 on either side is compared at $0."""
    old = _priced(a=1.0, b=1.0, c=0.0, d=2.0, e=0.5)
    new = _priced(a=1.4, b=3.0, c=0.25, d=2.1, e=0.0)  # +0.4, +2.0, +0.25, +0.1, -0.5
    result = compare_costs(old, new, 0.1)
    assert result.failed is True
    assert result.lines[0].endswith("; FAILED, most of it in b, a, c")


def test_a_bad_cost_record_is_reported_with_its_line(tmp_path: Path) -> None:
    (tmp_path / "costs.jsonl").write_text('{"session": "a", "policy": {"usd": 1}}\nnot json\n')
    with pytest.raises(InputError) as caught:
        read_costs(tmp_path)
    assert caught.value.line == 2
    assert read_costs(tmp_path / "missing") is None


# ---- a call as recorded, and when the recording is used --------------------------------


def test_recorded_cache_parts_never_exceed_the_prompt() -> None:
    """A log's cache read is capped at the prompt, its cache write at what the read
    leaves: 1,000 tokens reading 800 and "creating" 500 wrote 200 (``CallTokens.recorded``)."""
    assert CallTokens.recorded(Usage(1_000, 10, 800, 500)) == CallTokens(1_000, 800, 200, 10)
    assert CallTokens.recorded(Usage(1_000, 10, 1_500, 0)) == CallTokens(1_000, 1_000, 0, 10)
    assert CallTokens.recorded(Usage(1_000, 10, 300, 200)) == CallTokens(1_000, 300, 200, 10)


def _two_recorded_calls() -> Conversation:
    messages: list[Message] = [
        UserMessage.text("fix the bug"),
        AssistantMessage((TextBlock("looking"),), Usage(3_000, 50, 0, 3_000), SONNET),
        UserMessage.text("and the test"),
        AssistantMessage((TextBlock("done"),), Usage(3_500, 20, 3_000, 500), SONNET),
    ]
    return Conversation("c", "c.jsonl", "test", messages)


@dataclass
class _Shortened:
    """A slot whose view before each call leaves out the newest message (a compaction
    that is still a prefix of the history)."""

    messages: list[Message]

    def load_messages(self, upto: int | None = None) -> list[Message]:
        return self.messages[: (len(self.messages) if upto is None else upto) - 1]


def test_a_call_sent_the_whole_history_is_priced_from_its_recorded_usage() -> None:
    """Uncompacted, each call's prompt is the whole history before it: its tokens are the
    recorded ones (3,000 written; then 3,000 read and 500 written), not modeled."""
    conv = _two_recorded_calls()
    run = uncompacted_run(conv, Pricer.from_options("3/15"))
    assert [(c.tokens, c.modeled, c.at) for c in run.calls] == [
        (CallTokens(3_000, 0, 3_000, 50), False, 1),
        (CallTokens(3_500, 3_000, 500, 20), False, 3),
    ]


def test_a_call_sent_less_than_the_whole_history_is_modeled() -> None:
    """A view that is only a prefix of the history (one message short) is not the
    original prompt, even though every message it holds is the history's own."""
    conv = _two_recorded_calls()
    engine = _Engine(_Shortened(conv.messages))  # type: ignore[arg-type]
    meter = CostMeter(conv, engine, Pricer.from_options("3/15"))
    meter.appended(0, 0, len(conv.messages))
    assert [(c.modeled, c.at) for c in meter.run.calls] == [(True, 1), (True, 3)]


# ---- the meter's summarizer calls: what is counted, at which model's price -------------

HAIKU = "claude-3-5-haiku-20241022"
TABLE = Pricer(table={SONNET: Rates(3.0, 15.0), HAIKU: Rates(1.0, 5.0)}, table_path="p.json")


def _meter(pricer: Pricer = TABLE, agent: str | None = HAIKU) -> CostMeter:
    """A meter over one unrecorded call of ``agent`` (no usage: sizes are the estimates)."""
    messages: list[Message] = [UserMessage.text("1"), AssistantMessage.text("2")]
    if agent is not None:
        messages[1] = AssistantMessage((TextBlock("2"),), None, agent)
    conv = Conversation("c", "c.jsonl", "test", messages)
    meter = CostMeter(conv, _Engine(_Slot(conv.messages)), pricer)
    meter.appended(0, 0, 2)
    meter.run.calls.clear()  # only the summarizer calls below
    return meter


def _summarize(meter: CostMeter, outcome: SummaryOutcome, model: str | None = None) -> None:
    meter.summarized(SummaryRequest("c", 1, "12345", model), outcome)


def test_a_summarizer_call_that_sent_nothing_costs_nothing() -> None:
    meter = _meter()
    _summarize(meter, SummaryOutcome(None, error="no key", attempts=0), SONNET)
    assert meter.run.calls == []


def test_a_failed_summarizer_call_is_priced_on_its_estimated_prompt() -> None:
    """Sent but no response: the prompt "12345" is 8 + 5 = 13 tokens, no output."""
    meter = _meter()
    _summarize(meter, SummaryOutcome(None, error="timeout", attempts=1), SONNET)
    (call,) = meter.run.calls
    assert (call.tokens, call.summarizer) == (CallTokens(13, 0, 0, 0), True)
    assert call.usd == pytest.approx(13 * 3 / 1e6)


def test_a_summary_without_usage_is_priced_on_its_estimated_text() -> None:
    """A cached response (no attempt made now) still counts; "123" is 3 output tokens."""
    meter = _meter()
    _summarize(meter, SummaryOutcome(SummaryResponse("123", SONNET), cached=True), SONNET)
    (call,) = meter.run.calls
    assert call.tokens == CallTokens(13, 0, 0, 3)
    assert call.usd == pytest.approx((13 * 3 + 3 * 15) / 1e6)


def test_a_summary_is_priced_at_the_request_model_else_the_response_model() -> None:
    usage = Usage(1_000, 100)
    meter = _meter()
    _summarize(meter, SummaryOutcome(SummaryResponse("s", HAIKU, usage), attempts=1), SONNET)
    _summarize(meter, SummaryOutcome(SummaryResponse("s", SONNET, usage), attempts=1), None)
    assert [c.model for c in meter.run.calls] == [SONNET, SONNET]
    assert [c.usd for c in meter.run.calls] == pytest.approx([4.5e-3, 4.5e-3])  # 3 + 1.5 m$


def test_an_unpriced_summarizer_model_is_priced_as_the_agents_model() -> None:
    """The offline summarizer's model is in no price list: its call is priced at the
    agent's own model (Haiku here, 1/5 per million): (1,000 × 1 + 100 × 5) / 1M."""
    meter = _meter()
    response = SummaryResponse("s", "offline-summarizer", Usage(1_000, 100))
    _summarize(meter, SummaryOutcome(response, attempts=1), "offline-summarizer")
    (call,) = meter.run.calls
    assert call.model == HAIKU
    assert call.usd == pytest.approx(1.5e-3)


def test_the_session_delta_is_rounded_to_the_micro_dollar() -> None:
    """Uncompacted, the policy's run is the original plus the summarizer: one 1-token
    summary prompt at $1.4 per million is a delta of $0.0000014, recorded as $0.000001."""
    messages: list[Message] = [UserMessage.text("a"), _recorded(3_000, 0)]
    conv = Conversation("c", "c.jsonl", "test", messages)
    meter = CostMeter(conv, _Engine(_Slot(messages)), Pricer.from_options("1.4/0"))
    meter.appended(0, 0, 2)
    meter.summarized(
        SummaryRequest("c", 1, "x", SONNET),
        SummaryOutcome(SummaryResponse("s", SONNET, Usage(1, 0)), attempts=1),
    )
    record = meter.record()
    assert record["delta_usd"] == 0.000001
    assert record["delta_usd_same_model"] == 0.000001  # no call was modeled: the summary alone


# ---- the replay report's cost line -----------------------------------------------------


def _record(**changes: object) -> CostRecord:
    tokens = {
        "prompt": 3_300,
        "cache_read": 1_000,
        "cache_write": 2_000,
        "fresh": 300,
        "output": 40,
    }
    record = {
        "policy": {
            "usd": 1.5,
            "tokens": tokens,
            "summarizer_usd": 0.25,
            "cache_break_usd": 0.125,
            "priced_by": ["p.json: x"],
        },
        "original": {"usd": 1.0},
        "delta_usd": 0.5,
        "delta_usd_same_model": 0.375,
        "model_error": {"usd": 0.02, "cache_recorded": True},
        "outcome": {"reward": 1.0, "steps": 3},
    }
    record.update(changes)
    return record  # type: ignore[return-value]


def test_the_cost_line_says_every_figure_of_the_record() -> None:
    assert cost_line(_record()) == (
        "cost $1.5000: 1,000 cache read, 2,000 cache write, 300 fresh, 40 output tokens"
        "; summarizer $0.2500, cache breaks $0.1250"
        "; original run $1.0000 (Δ +0.5000, same-model Δ +0.3750"
        ", model error on the original +2.0%)"
        "; the original run's task outcome: reward 1.0, steps 3 [p.json: x]"
    )


def test_the_cost_line_leaves_out_what_the_record_does_not_have() -> None:
    record = _record(delta_usd=None, outcome=None)
    assert cost_line(record) == (
        "cost $1.5000: 1,000 cache read, 2,000 cache write, 300 fresh, 40 output tokens"
        "; summarizer $0.2500, cache breaks $0.1250 [p.json: x]"
    )
    unchecked = _record(model_error={"usd": None, "cache_recorded": False})
    del unchecked["outcome"]
    unchecked["delta_usd_same_model"] = None
    unchecked["policy"] = {**unchecked["policy"], "usd": None, "priced_by": []}
    assert cost_line(unchecked) == (
        "cost unpriced: 1,000 cache read, 2,000 cache write, 300 fresh, 40 output tokens"
        "; summarizer $0.2500, cache breaks $0.1250"
        "; original run $1.0000 (Δ +0.5000"
        ", the log records no cache use: the model's split is unchecked) [no price]"
    )


def test_the_cost_line_without_a_model_error_says_no_error_bar() -> None:
    record = _record(delta_usd_same_model=None, outcome=None)
    del record["model_error"]
    assert cost_line(record).endswith("; original run $1.0000 (Δ +0.5000) [p.json: x]")


# ---- a run's calls: the price of a cache break, the sums, the same-model change ---------

RATES = Pricer.from_options("3/15/0.3/3.75")  # USD per million: input/output/read/write


def test_warm_reads_the_broken_tokens_from_the_cache_taking_them_from_the_write() -> None:
    assert warm(CallTokens(5_000, 1_000, 4_000, 10), 3_000) == CallTokens(5_000, 4_000, 1_000, 10)
    # more broken than written: the rest came out of fresh input
    assert warm(CallTokens(5_000, 1_000, 2_000, 10), 3_000) == CallTokens(5_000, 4_000, 0, 10)


def test_a_cache_break_costs_the_call_less_the_same_call_warm() -> None:
    """1,000 read, 4,000 written, 10 out: 300 + 15,000 + 150 = $0.01545 per 1M units;
    warm (3,000 broken tokens read instead): 4,000 read, 1,000 written: 1,200 + 3,750 +
    150 = $0.0051. The break cost $0.01035."""
    run = RunCost()
    run.add(RATES, SONNET, CallTokens(5_000, 1_000, 4_000, 10), broken=3_000, at=1)
    run.add(RATES, SONNET, CallTokens(5_000, 1_000, 4_000, 10), at=3)  # no break
    assert [c.usd for c in run.calls] == pytest.approx([0.01545, 0.01545])
    assert [c.break_usd for c in run.calls] == pytest.approx([0.01035, 0.0])
    assert run.break_usd == pytest.approx(0.01035)


def test_a_runs_sums_split_the_summarizer_from_the_agents_calls() -> None:
    run = RunCost()
    run.add(RATES, SONNET, CallTokens(2_000, 0, 2_000, 10), at=1)  # 7,500 + 150
    run.add(RATES, SONNET, CallTokens(1_000, 0, 0, 100), summarizer=True)  # 3,000 + 1,500
    run.add(RATES, SONNET, CallTokens(3_000, 2_000, 1_000, 20), at=3)  # 600 + 3,750 + 300
    assert run.tokens() == CallTokens(6_000, 2_000, 3_000, 130)
    assert run.tokens(summarizer=False) == CallTokens(5_000, 2_000, 3_000, 30)
    assert run.tokens(summarizer=True) == CallTokens(1_000, 0, 0, 100)
    assert run.usd == pytest.approx(0.0168)
    assert run.summarizer_usd == pytest.approx(0.0045)
    as_json = run.to_json()
    assert (as_json["calls"], as_json["summarizer_calls"]) == (2, 1)
    assert (as_json["usd"], as_json["summarizer_usd"]) == (0.0168, 0.0045)
    assert as_json["tokens"]["fresh"] == 0 and as_json["summarizer_tokens"]["fresh"] == 1_000
    assert as_json["priced_by"] == ["--price-per-mtok 3/15/0.3/3.75"]


def test_a_run_with_an_unpriced_call_has_no_total() -> None:
    run = RunCost()
    run.add(RATES, SONNET, CallTokens(1_000, 0, 0, 0))
    run.add(Pricer(), "no-such-model", CallTokens(1_000, 0, 0, 0), broken=500)
    assert run.usd is None and run.to_json()["usd"] is None
    assert run.calls[1].break_usd == 0.0  # an unpriced break costs nothing known
    assert run.sources() == ["--price-per-mtok 3/15/0.3/3.75"]


def test_the_same_model_change_counts_modeled_calls_against_the_original_and_the_summary() -> None:
    """Against the original's modeled calls (at 1: $0.003, at 3: $0.006): this run's
    modeled call at 1 costs $0.0015 (-0.0015), its recorded call at 3 is not compared,
    the summary adds $0.0045: +0.003."""
    original = RunCost()
    original.add(RATES, SONNET, CallTokens(1_000, 0, 0, 0), at=1, modeled=True)
    original.add(RATES, SONNET, CallTokens(2_000, 0, 0, 0), at=3, modeled=True)
    run = RunCost()
    run.add(RATES, SONNET, CallTokens(500, 0, 0, 0), at=1, modeled=True)
    run.add(RATES, SONNET, CallTokens(9_000, 0, 0, 0), at=3)
    run.add(RATES, SONNET, CallTokens(1_000, 0, 0, 100), summarizer=True)
    assert run.same_model_delta(original) == pytest.approx(-0.0015 + 0.0045)
    unpriced = RunCost()
    unpriced.add(Pricer(), "no-such-model", CallTokens(500, 0, 0, 0), at=1, modeled=True)
    assert unpriced.same_model_delta(original) is None
    unpriced_summary = RunCost()
    unpriced_summary.add(Pricer(), "no-such-model", CallTokens(1, 0, 0, 0), summarizer=True)
    assert unpriced_summary.same_model_delta(original) is None


def test_an_unpriced_run_with_no_modeled_call_has_no_same_model_change() -> None:
    """A replay that never compacted has only recorded calls: none is compared, but the run
    is unpriced, so its change is no figure, as its ``delta_usd`` is (not 0.0)."""
    original = RunCost()
    original.add(Pricer(), "no-such-model", CallTokens(1_000, 0, 0, 0), at=1, modeled=True)
    run = RunCost()
    run.add(Pricer(), "no-such-model", CallTokens(1_000, 0, 0, 0), at=1)
    assert run.usd is None
    assert run.same_model_delta(original) is None
    priced = RunCost()
    priced.add(RATES, SONNET, CallTokens(1_000, 0, 0, 0), at=1)
    assert priced.same_model_delta(original) is None  # the original is unpriced


def test_a_first_call_after_a_recorded_break_reads_what_the_recording_read() -> None:
    """The first call finds nothing of its own cached, but what the original call read
    (another session's prefix, ``survived``): 2,000 of 5,000 read, 3,000 written."""
    one = UserMessage.text("a")
    sizes = Sizes({id(one): 1.0}, 0, 1.0, True)
    tokens, _ = modeled_call(
        None, [one], sizes, ANTHROPIC, output=5, survived=2_000, prompt_tokens=5_000
    )
    assert tokens == CallTokens(5_000, 2_000, 3_000, 5)


def test_a_break_is_the_uncached_part_beyond_the_new_messages() -> None:
    """Previous view [task, old]; this one [task, summary, new] (hidden prefix 2,000;
    task 1,000, summary 500, new 1,500): prompt 5,000, the shared 3,000 read, 2,000
    written. Of those, the 1,500 appended since are new anyway: the break is the 500
    the compaction rewrote."""
    task, old, summary, new = (UserMessage.text(c) for c in "abcd")
    sizes = Sizes(
        {id(task): 1_000.0, id(old): 500.0, id(summary): 500.0, id(new): 1_500.0}, 2_000, 1.0, True
    )
    tokens, broken = modeled_call(
        [task, old], [task, summary, new], sizes, ANTHROPIC, output=5, new_tokens=1_500
    )
    assert tokens == CallTokens(5_000, 3_000, 2_000, 5)
    assert broken == 500
    # with no cache at all there is nothing to break
    _, none = modeled_call(
        [task, old], [task, summary, new], sizes, rules_for(None), output=5, new_tokens=1_500
    )
    assert none == 0


@dataclass
class _Compacting:
    """A slot whose view before the second call is a summary and the newest message."""

    views: dict[int, list[Message]]

    def load_messages(self, upto: int | None = None) -> list[Message]:
        assert upto is not None
        return self.views[upto]


def test_the_meter_charges_a_break_for_what_a_compaction_rewrote() -> None:
    """No usage recorded: sizes are the estimates (8 per message, 1 per digit). The
    second call's view is [summary 108, request 58]: 166 tokens, too few to cache, all
    fresh. Of them the request (58) is new since the first call; the compaction's break
    is the other 108, priced as fresh instead of read: 108 × (3 - 0.3) / 1M."""
    task = UserMessage.text("1" * 10)
    first = AssistantMessage((TextBlock("4" * 20),), None, SONNET)
    request = UserMessage.text("3" * 50)
    second = AssistantMessage((TextBlock("5" * 20),), None, SONNET)
    summary = UserMessage.text("2" * 100)
    conv = Conversation("c", "c.jsonl", "test", [task, first, request, second])
    slot = _Compacting({1: [task], 3: [summary, request]})
    meter = CostMeter(conv, _Engine(slot), RATES)  # type: ignore[arg-type]
    meter.appended(0, 0, 4)
    assert [c.tokens for c in meter.run.calls] == [
        CallTokens(18, 0, 0, 28),
        CallTokens(166, 0, 0, 28),
    ]
    assert [c.break_usd for c in meter.run.calls] == pytest.approx([0.0, 108 * 2.7 / 1e6])


def test_a_free_call_adds_nothing_to_a_runs_cost() -> None:
    """A call priced at $0 is $0 (not "unpriced", not a default): here the only call
    of the run, and the only summarizer call."""
    run = RunCost()
    run.add(RATES, SONNET, CallTokens(), at=0)
    run.add(RATES, SONNET, CallTokens(), summarizer=True)
    assert (run.usd, run.summarizer_usd) == (0.0, 0.0)


def test_the_same_model_change_compares_a_call_at_message_zero() -> None:
    original = RunCost()
    original.add(RATES, SONNET, CallTokens(1_000, 0, 0, 0), at=0, modeled=True)  # $0.003
    run = RunCost()
    run.add(RATES, SONNET, CallTokens(2_000, 0, 0, 0), at=0, modeled=True)  # $0.006
    assert run.same_model_delta(original) == pytest.approx(0.003)


# ---- prices: overrides, price files, which provider a model name says ------------------


def test_an_override_of_zero_is_a_price_and_one_figure_prices_input_and_output() -> None:
    assert parse_rates("0") == Rates(0.0, 0.0)
    assert parse_rates("3") == Rates(3.0, 3.0)
    assert parse_rates("3/15") == Rates(3.0, 15.0)
    with pytest.raises(ConfigError, match=r"^--price-per-mtok '-0.1': give USD per million"):
        parse_rates("-0.1")


def test_the_provider_is_read_from_the_model_name() -> None:
    for name in ("claude-sonnet-4-5", "Claude-Opus-4", "anthropic/claude-3-haiku"):
        assert provider_of(name) == "anthropic", name
    for name in ("gpt-4o", "o1-mini", "o3", "o4-mini", "codex-mini-latest", "chatgpt-4o-latest"):
        assert provider_of(name) == "openai", name
    for name in ("gemini-2.5-pro", "my-gpt", "llama-o3", "", None):
        assert provider_of(name) is None, name


def test_a_prices_file_entry_prices_its_model_and_its_dated_ids(tmp_path: Path) -> None:
    """The longest matching name wins; a dated id (``name-…``) matches its name."""
    path = tmp_path / "p.json"
    path.write_text(
        '{"m": {"input": 1, "output": 2}, '
        '"m-large": {"input": 4, "output": 8, "cache_read": 0.4, "cache_write": 5}}'
    )
    pricer = Pricer.from_options(None, str(path))
    assert pricer.rates_source("m-large-2025") == (Rates(4.0, 8.0, 0.4, 5.0), f"{path}: m-large")
    assert pricer.rates_source("m") == (Rates(1.0, 2.0), f"{path}: m")
    assert pricer.rates_source("m-2025") == (Rates(1.0, 2.0), f"{path}: m")
    assert pricer.rates_source("mx") == (None, "")
    assert pricer.rates_source(None) == (None, "")
    assert pricer.quote(None, CallTokens(1_000, 0, 0, 0)) is None


def test_an_override_prices_every_call_even_without_a_model() -> None:
    quote = Pricer.from_options(2).quote(None, CallTokens(1_000_000, 0, 0, 0))
    assert quote is not None and (quote.usd, quote.source) == (2.0, "--price-per-mtok 2")


def test_a_prices_file_that_is_not_an_object_or_not_readable(tmp_path: Path) -> None:
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]")
    with pytest.raises(ConfigError, match="a prices file is a JSON object"):
        read_prices_file(str(listed))
    with pytest.raises(ConfigError, match="cannot read prices file"):
        read_prices_file(str(tmp_path / "missing.json"))


def test_a_run_is_priced_only_with_cost() -> None:
    assert pricer_for(False, None, "3") is None
    pricer = pricer_for(True, None, "3")
    assert pricer is not None and pricer.override == Rates(3.0, 3.0)


def test_a_runs_record_rounds_dollars_to_the_micro_dollar() -> None:
    """$1.4 per million tokens, one token each: 0.0000014 is recorded as 0.000001."""
    pricer = Pricer.from_options("1.4/0/0/1.4")
    run = RunCost()
    run.add(pricer, SONNET, CallTokens(1, 0, 1, 0), broken=1, at=1)  # written, then warm: read
    run.add(pricer, SONNET, CallTokens(1, 0, 0, 0), summarizer=True)
    as_json = run.to_json()
    assert (as_json["usd"], as_json["summarizer_usd"], as_json["cache_break_usd"]) == (
        0.000003,  # 2.8e-6
        0.000001,
        0.000001,
    )


# ---- the model's error on the original run ---------------------------------------------


def test_the_model_error_is_signed_and_relative_to_the_recording() -> None:
    """Recorded: 1,000 prompt, 500 read, 500 written, 10 out = (150 + 1,875 + 150) µ$
    = $0.002175. Modeled: 1,100 prompt, 400 read, 600 written (100 fresh) = (120 + 2,250
    + 300 + 150) µ$ = $0.00282: +29.66%. Fresh has no recorded base: None."""
    recorded, modeled = RunCost(), RunCost()
    recorded.add(RATES, SONNET, CallTokens(1_000, 500, 500, 10), at=1)
    modeled.add(RATES, SONNET, CallTokens(1_100, 400, 600, 10), at=1, modeled=True)
    assert model_error(recorded, modeled, recorded) == {
        "cache_recorded": True,
        "usd": 0.2966,
        "usd_breaks_carried": 0.0,
        "prompt": 0.1,
        "cache_read": -0.2,
        "cache_write": 0.2,
        "cache_write_1h": None,  # no 1-hour writes recorded: no base
        "fresh": None,
    }


def test_a_recording_without_cache_figures_leaves_the_split_unchecked() -> None:
    recorded, modeled = RunCost(), RunCost()
    recorded.add(RATES, SONNET, CallTokens(1_000, 0, 0, 10), at=1)
    modeled.add(Pricer(), "no-such-model", CallTokens(1_000, 0, 0, 10), at=1, modeled=True)
    error = model_error(recorded, modeled, modeled)
    assert error["cache_recorded"] is False
    assert (error["usd"], error["usd_breaks_carried"]) == (None, None)
    assert (error["prompt"], error["fresh"], error["cache_read"]) == (0.0, 0.0, None)


def test_the_reconstruction_carries_the_recorded_breaks_only_when_asked() -> None:
    """The second call recorded a read of 1,500 of the previous 3,000 (a break: more
    than 1,024 below): rebuilt from the prompts alone it reads all 3,000; with the
    breaks carried, 1,500."""
    messages: list[Message] = [
        UserMessage.text("a"),
        _recorded(3_000, 0),
        UserMessage.text("b"),
        _recorded(3_500, 1_500),
    ]
    conv = Conversation("c", "c.jsonl", "test", messages)
    sizes = calibrate(conv)
    plain = reconstructed_run(conv, sizes, RATES)
    carried = reconstructed_run(conv, sizes, RATES, carry_breaks=True)
    assert [c.tokens for c in plain.calls] == [
        CallTokens(3_000, 0, 3_000, 10),
        CallTokens(3_500, 3_000, 500, 10),
    ]
    assert [c.tokens for c in carried.calls] == [
        CallTokens(3_000, 0, 3_000, 10),
        CallTokens(3_500, 1_500, 2_000, 10),
    ]
    assert all(c.modeled for c in plain.calls) and [c.at for c in plain.calls] == [1, 3]


# ---- calibrating sizes against the recording -------------------------------------------


def _digits(n: int, usage: int | None = None) -> Message:
    """A message of ``n`` estimated tokens (8 for the message, 1 per digit); with
    ``usage``, a recorded call whose prompt was that many tokens."""
    if usage is None:
        return UserMessage.text("1" * (n - 8))
    return AssistantMessage((TextBlock("2" * (n - 8)),), Usage(usage, 5), SONNET)


def test_calibration_spreads_the_prompt_growth_and_finds_the_hidden_prefix() -> None:
    """Estimates 100, 50 (a call: 1,100 prompt), 200, 50 (a call: 1,500). The growth
    between the calls, 400 real tokens over 250 estimated, gives the ratio 1.6: the
    messages between are 80 and 320, the others 1.6 × their estimate; the first prompt
    less its message (160) is the hidden prefix: 940."""
    messages = [_digits(100), _digits(50, 1_100), _digits(200), _digits(50, 1_500)]
    sizes = calibrate(Conversation("c", "c.jsonl", "test", messages))
    assert [sizes.of(m) for m in messages] == pytest.approx([160, 80, 320, 80])
    assert (sizes.hidden, sizes.ratio, sizes.calibrated) == (940, 1.6, True)
    assert sizes.prompt(messages[:1]) == 1_100 and sizes.prompt(messages[:3]) == 1_500
    # text the replay writes is its plain estimate, not 1.6 x (one size per text)
    assert sizes.of_text("12345") == 5


def test_calibration_sizes_a_restarted_prompt_from_its_first_call() -> None:
    """After a compaction the original agent recorded at message 4, the prompt starts
    anew. Each restart bounds the hidden prefix by its first prompt less its messages (at
    the ratio 1.6): 1,100 - 160 = 940 at the start, 1,000 - 160 = 840 after the
    compaction; the prefix every prompt carries is the smaller, 840. Each restart's
    messages then fill the rest of their first prompt: message 0 is 1,100 - 840 = 260,
    message 4 is 1,000 - 840 = 160. The stretch across the restart is not a growth."""
    messages = [
        _digits(100),
        _digits(50, 1_100),
        _digits(200),
        _digits(50, 1_500),
        _digits(100),
        _digits(50, 1_000),
    ]
    conv = Conversation("c", "c.jsonl", "test", messages, [Compaction(4, "test")])
    sizes = calibrate(conv)
    assert sizes.ratio == 1.6
    assert sizes.hidden == 840
    assert [sizes.of(m) for m in messages] == pytest.approx([260, 80, 320, 80, 160, 80])
    assert sizes.prompt(messages[:1]) == 1_100 and sizes.prompt(messages[4:5]) == 1_000


def test_calibration_ignores_a_prompt_that_shrank_and_needs_a_recorded_call() -> None:
    """Calls of 1,500 then 1,100 tokens with no recorded compaction: no growth to learn
    from, the ratio stays 1; without any usage the sizes are the plain estimates."""
    shrank = [_digits(100), _digits(50, 1_500), _digits(200), _digits(50, 1_100)]
    sizes = calibrate(Conversation("c", "c.jsonl", "test", shrank))
    assert (sizes.ratio, sizes.hidden) == (1.0, 1_400)
    assert [sizes.of(m) for m in shrank] == [100, 50, 200, 50]
    plain = [_digits(100), _digits(50)]
    unrecorded = calibrate(Conversation("c", "c.jsonl", "test", plain))
    assert (unrecorded.hidden, unrecorded.ratio, unrecorded.calibrated) == (0, 1.0, False)
    assert [unrecorded.of(m) for m in plain] == [100, 50]


def test_a_call_right_at_a_restart_is_rebuilt_from_that_restart() -> None:
    """The log opens with a call (message 0) and the agent compacted right before the
    call at 2: each is rebuilt on the prompt from its own restart, with nothing before."""
    messages = [_digits(50, 1_000), _digits(100), _digits(50, 1_000)]
    conv = Conversation("c", "c.jsonl", "test", messages, [Compaction(2, "test")])
    run = reconstructed_run(conv, calibrate(conv), RATES)
    assert [(c.at, c.tokens.prompt) for c in run.calls] == [(0, 1_000), (2, 1_000)]


def test_a_recording_with_cache_reads_alone_is_checked() -> None:
    """OpenAI's logs record reads and no writes: the split can be checked."""
    recorded = RunCost()
    recorded.add(RATES, "gpt-4o", CallTokens(2_000, 1_024, 0, 10), at=1)
    assert model_error(recorded, recorded, recorded)["cache_recorded"] is True


def test_a_call_recording_no_prompt_is_not_calibrated_on() -> None:
    """The call at 1 recorded 0 input tokens: only the call at 3 (1,500) counts, with
    nothing to grow from: ratio 1, the hidden prefix 1,500 - 350."""
    messages = [_digits(100), _digits(50, 0), _digits(200), _digits(50, 1_500)]
    sizes = calibrate(Conversation("c", "c.jsonl", "test", messages))
    assert (sizes.ratio, sizes.hidden) == (1.0, 1_150)


def test_a_restart_at_a_call_splits_the_growth_only_after_that_call() -> None:
    """A compaction recorded right before the call at 1: that call's prompt is the hidden
    prefix alone (1,100) and the growth to the call at 3 still counts (ratio 1.6). One
    right before the call at 3 cuts the growth: ratio 1, the hidden 1,100 - 100."""
    messages = [_digits(100), _digits(50, 1_100), _digits(200), _digits(50, 1_500)]
    at_first = calibrate(Conversation("c", "c.jsonl", "test", messages, [Compaction(1, "t")]))
    assert (at_first.ratio, at_first.hidden) == (1.6, 1_100)
    at_second = calibrate(Conversation("c", "c.jsonl", "test", messages, [Compaction(3, "t")]))
    assert (at_second.ratio, at_second.hidden) == (1.0, 1_000)
    assert [at_second.of(m) for m in messages] == [100, 50, 200, 50]


def test_a_first_prompt_smaller_than_its_messages_has_no_hidden_prefix() -> None:
    messages = [_digits(100), _digits(50, 60)]
    assert calibrate(Conversation("c", "c.jsonl", "test", messages)).hidden == 0


def test_each_restart_is_sized_from_its_own_first_call_unless_another_restart_intervenes() -> None:
    """Estimates 100, 50 (call: 1,100), 200, 50 (call: 1,500) | 100, 50 (call: 1,000) |
    100 | 100, 50 (call: 1,000) | with restarts at 4, 6, 7 and 9 (after the last call).
    Ratio 1.6. The hidden prefix is the smallest bound a restart's first call gives:
    1,100 - 160 = 940 (start), 1,000 - 160 = 840 (restart 4, call at 5; restart 7, call at
    8): 840. Message 0 is 1,100 - 840 = 260; restart 4: message 4 is 1,000 - 840 = 160.
    Restart 6 is followed by restart 7 before any call: left at 1.6 × 100. Restart 7:
    message 7 is 160. Restart 9 has no call: nothing to size."""
    messages = [
        _digits(100),
        _digits(50, 1_100),
        _digits(200),
        _digits(50, 1_500),
        _digits(100),
        _digits(50, 1_000),
        _digits(100),
        _digits(100),
        _digits(50, 1_000),
    ]
    restarts = [Compaction(r, "t") for r in (4, 6, 7, 9)]
    sizes = calibrate(Conversation("c", "c.jsonl", "test", messages, restarts))
    assert (sizes.ratio, sizes.hidden) == (1.6, 840)
    assert [sizes.of(m) for m in messages] == pytest.approx(
        [260, 80, 320, 80, 160, 80, 160, 160, 80]
    )


def test_the_same_model_change_is_against_the_original_with_its_breaks_carried() -> None:
    """Estimates 100, 50 (call: 3,000), 200, 50 (call: 3,500 reading 1,500: a recorded
    break). Calibrated: ratio 2 (500 real over 250), sizes 200, 100, 400, 100, hidden
    2,800. A policy whose views leave out the newest message models both calls:
    [] = 2,800 written; [0, 1] = 3,100, reading at most the recorded 1,500, writing 1,600.
    The original rebuilt with its break: 3,000 written; 3,500 = 1,500 read + 2,000
    written. In µ$ at 3/15/0.3/3.75: (10,650 - 11,400) + (6,600 - 8,100) = -2,250."""
    messages: list[Message] = [
        _digits(100),
        AssistantMessage((TextBlock("2" * 42),), Usage(3_000, 10, 0, 0), SONNET),
        _digits(200),
        AssistantMessage((TextBlock("2" * 42),), Usage(3_500, 10, 1_500, 0), SONNET),
    ]
    conv = Conversation("c", "c.jsonl", "test", messages)
    meter = CostMeter(conv, _Engine(_Shortened(messages)), RATES)  # type: ignore[arg-type]
    meter.appended(0, 0, 4)
    assert [c.tokens for c in meter.run.calls] == [
        CallTokens(2_800, 0, 2_800, 10),
        CallTokens(3_100, 1_500, 1_600, 10),
    ]
    assert meter.record()["delta_usd_same_model"] == -0.00225


def test_an_uncompacted_run_counts_a_call_at_message_zero() -> None:
    conv = Conversation("c", "c.jsonl", "test", [_recorded(3_000, 0), UserMessage.text("a")])
    run = uncompacted_run(conv, RATES)
    # as recorded: 3,000 prompt tokens, no cache figures in the log
    assert [(c.at, c.tokens) for c in run.calls] == [(0, CallTokens(3_000, 0, 0, 10))]


def test_a_call_recording_a_one_token_prompt_is_calibrated_on() -> None:
    """Recorded prompts of 1 then 1,500 tokens: the growth 1,499 over 250 estimated."""
    messages = [_digits(100), _digits(50, 1), _digits(200), _digits(50, 1_500)]
    sizes = calibrate(Conversation("c", "c.jsonl", "test", messages))
    assert (sizes.ratio, sizes.hidden) == (1_499 / 250, 0)


def test_a_prompt_that_did_not_grow_sizes_the_messages_between_as_nothing() -> None:
    """Two calls of 1,100 tokens: the 250 estimated tokens between them added no real
    tokens (ratio 0), so the first prompt is all hidden prefix."""
    messages = [_digits(100), _digits(50, 1_100), _digits(200), _digits(50, 1_100)]
    sizes = calibrate(Conversation("c", "c.jsonl", "test", messages))
    assert (sizes.ratio, sizes.hidden) == (0.0, 1_100)


def test_the_restart_the_first_call_follows_is_sized_by_the_hidden_prefix() -> None:
    """A restart at 1, the first call at 2: that prompt (1,100) is the hidden prefix and
    message 1. Growth 401 over 250: ratio 1.604, message 1 is 160.4 and the hidden
    prefix round(1,100 - 160.4) = 940; message 1 keeps its 160.4."""
    messages = [
        _digits(100),
        _digits(100),
        _digits(50, 1_100),
        _digits(200),
        _digits(50, 1_501),
    ]
    sizes = calibrate(Conversation("c", "c.jsonl", "test", messages, [Compaction(1, "t")]))
    assert (sizes.ratio, sizes.hidden) == (1.604, 940)
    assert sizes.of(messages[1]) == pytest.approx(160.4)


def test_list_rates_keeps_a_price_of_zero() -> None:
    """genai-prices has no token price for whisper-1 (audio is priced by the minute):
    its list rates are 0, not a default."""
    found = Pricer().list_rates("whisper-1")
    assert found is not None and found[0] == Rates(0.0, 0.0, None, None)


def test_a_restart_right_at_a_call_sizes_nothing_before_it() -> None:
    """Estimates 100, 50 (call: 1,100), 200, 50 (call: 1,500) | 50 (call: 1,000 right at
    the restart), 100, 50 (call: 1,200). Growth 400 + 200 over 250 + 150: ratio 1.5;
    the stretches scale to 1.6 (messages 1, 2) and 4/3 (messages 4, 5); hidden
    1,100 - 150 = 950. The restart's first call has no message before it: nothing is
    rescaled from it (not even from the later call at 6)."""
    messages = [
        _digits(100),
        _digits(50, 1_100),
        _digits(200),
        _digits(50, 1_500),
        _digits(50, 1_000),
        _digits(100),
        _digits(50, 1_200),
    ]
    sizes = calibrate(Conversation("c", "c.jsonl", "test", messages, [Compaction(4, "t")]))
    assert (sizes.ratio, sizes.hidden) == (1.5, 950)
    expected = [150, 80, 320, 75, 200 / 3, 400 / 3, 75]
    assert [sizes.of(m) for m in messages] == pytest.approx(expected)


def test_a_restart_followed_by_another_before_its_call_is_not_sized() -> None:
    """Restarts at 4 and 6, the call at 6: restart 4 has none of its own (left at
    1.6 × the estimate), restart 6 nothing before its call."""
    messages = [
        _digits(100),
        _digits(50, 1_100),
        _digits(200),
        _digits(50, 1_500),
        _digits(100),
        _digits(100),
        _digits(50, 1_000),
    ]
    restarts = [Compaction(4, "t"), Compaction(6, "t")]
    sizes = calibrate(Conversation("c", "c.jsonl", "test", messages, restarts))
    assert [sizes.of(m) for m in messages] == pytest.approx([160, 80, 320, 80, 160, 160, 80])


def test_a_restarted_prompt_no_larger_than_the_hidden_prefix_is_not_rescaled() -> None:
    """After the restart at 4 the call at 5 sent 940 tokens. Read as evidence, that
    bounds the hidden prefix to 940 - 160 = 780 (message 0 then 1,100 - 780 = 320).
    Not read (``unseen``: tsum fidelity predicting that very prompt), the prefix is the
    start's 940 and the call holds the prefix alone: message 4 keeps 1.6 × 100 rather
    than becoming 0."""
    messages = [
        _digits(100),
        _digits(50, 1_100),
        _digits(200),
        _digits(50, 1_500),
        _digits(100),
        _digits(50, 940),
    ]
    conv = Conversation("c", "c.jsonl", "test", messages, [Compaction(4, "t")])
    seen = calibrate(conv)
    assert seen.hidden == 780 and seen.of(messages[0]) == pytest.approx(320)
    sizes = calibrate(conv, frozenset({4}))
    assert sizes.hidden == 940 and sizes.of(messages[4]) == pytest.approx(160)
