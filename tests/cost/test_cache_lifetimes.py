"""1-hour cache writes are billed at their own rate (docs/cost.md, "Cache lifetimes"):
read from Claude Code's ``usage.cache_creation``, priced in the recorded calls and in the
modeled ones. Prices by hand from Anthropic's list for Haiku 4.5: input $1, 5-minute
write $1.25, 1-hour write $2, read $0.10, output $5 per million tokens."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from transcript_tools import api
from transcript_tools.cost.model import RunCost
from transcript_tools.cost.original import one_hour_shares, reconstructed_run, recorded_run
from transcript_tools.cost.prices import Pricer, Rates
from transcript_tools.cost.sizes import calibrate
from transcript_tools.cost.tokens import CallTokens
from transcript_tools.formats.anthropic_api import usage_from_anthropic

HAIKU = "claude-haiku-4-5"


def _usage(fresh: int, read: int, five: int, hour: int, output: int) -> dict[str, object]:
    return {
        "input_tokens": fresh,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": five + hour,
        "cache_creation": {"ephemeral_5m_input_tokens": five, "ephemeral_1h_input_tokens": hour},
        "output_tokens": output,
    }


def test_the_reader_keeps_the_one_hour_writes() -> None:
    usage = usage_from_anthropic(_usage(100, 3000, 1000, 4000, 200))
    assert usage is not None
    assert (usage.input_tokens, usage.cache_creation_tokens) == (8100, 5000)
    assert usage.cache_write_1h_tokens == 4000
    older = usage_from_anthropic({"input_tokens": 5, "cache_creation_input_tokens": 7})
    assert older is not None and older.cache_write_1h_tokens == 0  # no split: all 5-minute
    heard: list[str] = []
    odd = usage_from_anthropic({"input_tokens": 5, "cache_creation": "x"}, heard.append)
    assert odd is not None and odd.cache_write_1h_tokens == 0
    assert heard == ["usage.cache_creation is not an object (str); ignored"]


def test_a_recorded_call_prices_each_lifetime_at_its_rate() -> None:
    usage = usage_from_anthropic(_usage(100, 3000, 1000, 4000, 200))
    assert usage is not None
    tokens = CallTokens.recorded(usage)
    assert tokens == CallTokens(8100, 3000, 5000, 200, 4000)
    quote = Pricer().quote(HAIKU, tokens)
    # 100 x 1 + 3000 x 0.1 + 1000 x 1.25 + 4000 x 2 + 200 x 5 = 10,650 per million
    assert quote is not None and quote.usd == pytest.approx(0.01065)
    # an override with cache rates: the 1-hour write is 2x its input
    flat = Pricer(override=Rates(1, 5, 0.1, 1.25), override_spec="1/5/0.1/1.25")
    assert flat.quote(HAIKU, tokens).usd == pytest.approx(0.01065)  # type: ignore[union-attr]
    given = Pricer(override=Rates(1, 5, 0.1, 1.25, 3), override_spec="x")
    assert given.quote(HAIKU, tokens).usd == pytest.approx(0.01465)  # type: ignore[union-attr]


def _claude_code_log(tmp_path: Path) -> Path:
    """Two calls, each writing its new part with a 1-hour lifetime (three quarters of it)."""

    def line(kind: str, uuid: str, parent: str | None, message: dict[str, object]) -> bytes:
        return orjson.dumps(
            {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s", "message": message}
        )

    def answer(text: str, usage: dict[str, object], mid: str) -> dict[str, object]:
        content = [{"type": "text", "text": text}]
        return {"id": mid, "role": "assistant", "model": HAIKU, "content": content, "usage": usage}

    lines = [
        line("user", "u1", None, {"role": "user", "content": "fix the bug " * 40}),
        line("assistant", "a1", "u1", answer("looking", _usage(0, 0, 1200, 3600, 50), "m1")),
        line("user", "u2", "a1", {"role": "user", "content": "and the test " * 40}),
        line("assistant", "a2", "u2", answer("done", _usage(0, 4800, 100, 300, 20), "m2")),
    ]
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def test_modeled_calls_write_at_the_lifetime_the_original_call_used(tmp_path: Path) -> None:
    (conv,) = api.read_corpus([str(_claude_code_log(tmp_path))])
    assert one_hour_shares(conv) == {1: 0.75, 3: 0.75}
    pricer = Pricer()
    recorded = recorded_run(conv, pricer)
    rebuilt = reconstructed_run(conv, calibrate(conv), pricer)
    # the model reproduces both calls, lifetimes included
    assert rebuilt.tokens() == recorded.tokens() == CallTokens(10000, 4800, 5200, 70, 3900)
    # call 1: 1200 x 1.25 + 3600 x 2 + 50 x 5; call 2: 4800 x 0.1 + 100 x 1.25 + 300 x 2
    # + 20 x 5 -> 8,950 + 1,305 per million
    assert recorded.usd == pytest.approx(0.010255)
    assert rebuilt.usd == pytest.approx(0.010255)


def test_a_warm_cache_keeps_the_mix_of_lifetimes() -> None:
    run = RunCost()
    # 4,000 written (3,000 of them for an hour), 2,000 of them only because the cache broke
    run.add(Pricer(), HAIKU, CallTokens(4000, 0, 4000, 0, 3000), broken=2000)
    # warm: 2,000 read, 2,000 written of which 1,500 for an hour
    # cold 1000 x 1.25 + 3000 x 2 = 7,250; warm 2000 x 0.1 + 500 x 1.25 + 1500 x 2 = 3,825
    assert run.break_usd == pytest.approx((7250 - 3825) / 1e6)
