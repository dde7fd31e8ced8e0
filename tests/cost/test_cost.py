"""The cost model (transcript_tools/cost, docs/cost.md): hand-computed cache reads and
writes across one compaction for each summary placement, the prices, the calibration,
and ``replay --cost``."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from transcript_tools.cli.main import cli
from transcript_tools.cost.cache_rules import ANTHROPIC, NO_CACHE, OPENAI
from transcript_tools.cost.meter import cost_line
from transcript_tools.cost.model import RunCost, modeled_call
from transcript_tools.cost.original import reconstructed_run, recorded_breaks, recorded_run
from transcript_tools.cost.prices import Pricer, Rates, parse_rates
from transcript_tools.cost.sizes import Sizes, calibrate
from transcript_tools.cost.tokens import CallTokens
from transcript_tools.engine.messages import (
    AssistantMessage,
    Conversation,
    SystemMessage,
    TextBlock,
    Usage,
    UserMessage,
)
from transcript_tools.errors import ConfigError

SAMPLES = Path(__file__).resolve().parents[2] / "samples"

# Sizes by hand: hidden prefix (tools, agent system prompt) 2,000 tokens, then
S = SystemMessage("system prompt")  # 1,000
U1, A1, U2 = UserMessage.text("u1"), AssistantMessage.text("a1"), UserMessage.text("u2")
A2, U3, A3, U4 = (
    AssistantMessage.text("a2"),
    UserMessage.text("u3"),
    AssistantMessage.text("a3"),
    UserMessage.text("u4"),
)
SIZES = {S: 1000, U1: 500, A1: 300, U2: 400, A2: 200, U3: 100, A3: 50, U4: 60}
SUMMARY_TEXT = "the summary"
SUMMARY_TOKENS = 150


class HandSizes(Sizes):
    """``Sizes`` with the sizes above; a summary message (rebuilt per view) is 150."""

    def of(self, message: object) -> float:
        for known, size in SIZES.items():
            if message is known:
                return size
        return SUMMARY_TOKENS


def sizes() -> Sizes:
    return HandSizes({}, 2000, 1.0, True)


def summary_system() -> SystemMessage:
    return SystemMessage(f"[上下文摘要] {SUMMARY_TEXT}")  # a new object every view


def summary_user() -> UserMessage:
    return UserMessage.text(SUMMARY_TEXT)


def calls(views: list[list[object]], new: list[int | None]) -> list[tuple[CallTokens, int]]:
    out, previous = [], None
    for view, new_tokens in zip(views, new, strict=True):
        out.append(
            modeled_call(previous, view, sizes(), ANTHROPIC, output=10, new_tokens=new_tokens)  # type: ignore[arg-type]
        )
        previous = view
    return out


BEFORE = [[S, U1], [S, U1, A1, U2]]


def test_before_any_compaction_each_call_reads_the_previous_prompt() -> None:
    (first, _), (second, _) = calls(BEFORE, [None, 700])
    assert first == CallTokens(3500, 0, 3500, 10)  # nothing cached yet: all written
    assert second == CallTokens(4200, 3500, 700, 10)  # 2000+1000+500 read, A1+U2 written


def test_seed_placement_summary_at_the_end_rewrites_it_every_call() -> None:
    # the compaction replaces U1, A1 by the summary, as a system message at the END
    after = [[S, U2, A2, U3, summary_system()], [S, U2, A2, U3, A3, U4, summary_system()]]
    results = calls([*BEFORE, *after], [None, 700, 300, 110])
    (third, broken3), (fourth, broken4) = results[2:]
    # only hidden + S is still a prefix: 3000 read; U2 A2 U3 + summary written
    assert third == CallTokens(3850, 3000, 850, 10)
    assert broken3 == 850 - 300  # U2 and the summary, re-sent because of the compaction
    # the next call's new messages go BEFORE the summary: the summary is written again
    assert fourth == CallTokens(3960, 3700, 260, 10)
    assert broken4 == SUMMARY_TOKENS


def test_user_placement_summary_after_the_system_prompt_stays_cached() -> None:
    after = [[S, summary_user(), U2, A2, U3], [S, summary_user(), U2, A2, U3, A3, U4]]
    results = calls([*BEFORE, *after], [None, 700, 300, 110])
    (third, broken3), (fourth, broken4) = results[2:]
    assert third == CallTokens(3850, 3000, 850, 10)
    assert broken3 == 550
    # an equal (rebuilt) summary message in the same place is a cache hit
    assert fourth == CallTokens(3960, 3850, 110, 10)
    assert broken4 == 0


def test_openai_rules_read_in_128_token_steps_and_write_nothing() -> None:
    view = [S, U2, A2, U3, A3, U4, summary_system()]
    previous = [S, U2, A2, U3, summary_system()]
    tokens, _ = modeled_call(previous, view, sizes(), OPENAI, output=10)  # type: ignore[arg-type]
    assert tokens == CallTokens(3960, 3584, 0, 10)  # 3700 shared -> 28 x 128
    assert tokens.fresh == 376
    assert OPENAI.split(1000, 1000) == (0, 0, 1000)  # under 1,024 tokens: never cached
    assert ANTHROPIC.split(5000, 4000, gap_seconds=301) == (0, 5000, 0)  # past 5 minutes
    assert NO_CACHE.split(5000, 4000) == (0, 0, 5000)


def test_a_recorded_break_caps_what_any_policy_reads() -> None:
    tokens, broken = modeled_call(
        BEFORE[0],
        BEFORE[1],
        sizes(),
        ANTHROPIC,
        output=0,
        survived=2000,
        new_tokens=700,  # type: ignore[arg-type]
    )
    assert tokens == CallTokens(4200, 2000, 2200, 0)
    assert broken == 0  # the original's own miss, not a compaction's
    # the whole previous prompt is a prefix: the cache holds all of it, as recorded
    whole, _ = modeled_call(
        BEFORE[0], BEFORE[1], sizes(), ANTHROPIC, output=0, previous_prompt=3400
    )  # type: ignore[arg-type]
    assert whole == CallTokens(4200, 3400, 800, 0)


def test_prices_come_from_genai_prices_with_their_source_and_date() -> None:
    pricer = Pricer()
    tokens = CallTokens(prompt=1_000_000, cache_read=600_000, cache_write=300_000, output=0)
    # per call, below the long-prompt tier: 100k fresh x $1 + 600k x $0.1 + 300k x $1.25
    quote = pricer.quote("claude-haiku-4-5-20251001", CallTokens(100_000, 60_000, 30_000, 0))
    assert quote is not None and quote.usd == pytest.approx(0.01 + 0.006 + 0.0375)
    assert "genai-prices" in quote.source and "as of 2026-11-01" in quote.source
    assert pricer.quote("some-local-model", tokens) is None
    rates = pricer.list_rates("gpt-4o")
    assert rates is not None and rates[0].input == 2.5 and rates[0].output == 10
    older = Pricer(price_date=datetime.date(2025, 1, 1)).quote("gpt-4o", tokens)
    assert older is not None and "as of 2025-01-01" in older.source


def test_overrides_and_a_prices_file(tmp_path: Path) -> None:
    tokens = CallTokens(prompt=1_000_000, cache_read=500_000, cache_write=0, output=1_000_000)
    flat = Pricer.from_options("3/15")
    quote = flat.quote("claude-sonnet-4-5", tokens)
    assert quote is not None and quote.usd == 18.0  # no cache rate given: cached as input
    assert quote.source == "--price-per-mtok 3/15"
    assert parse_rates("3/15/0.3/3.75") == Rates(3, 15, 0.3, 3.75)
    for bad in ("", "x", "1/2/3", "-1", "nan"):
        with pytest.raises(ConfigError):
            parse_rates(bad)
    table = tmp_path / "prices.json"
    table.write_bytes(orjson.dumps({"my-model": {"input": 1, "output": 2, "cache_read": 0.1}}))
    priced = Pricer.from_options(None, str(table)).quote("my-model-v2", tokens)
    assert priced is not None and priced.usd == pytest.approx(0.5 + 0.05 + 2)
    assert priced.source.endswith("prices.json: my-model")
    table.write_bytes(b'{"my-model": {"input": "cheap"}}')
    with pytest.raises(ConfigError, match="prices.json"):
        Pricer.from_options(None, str(table))


def _conversation() -> Conversation:
    """Two recorded calls: 30,000 then 30,400 prompt tokens, the second reading 30,000."""
    model = "claude-sonnet-4-5"
    messages = [
        UserMessage.text("fix the bug " * 20),
        AssistantMessage((TextBlock("looking"),), Usage(30_000, 50, 0, 30_000), model),
        UserMessage.text("and the test " * 20),
        AssistantMessage((TextBlock("done"),), Usage(30_400, 20, 30_000, 400), model),
    ]
    return Conversation("c", "c.jsonl", "claude-code", messages)


def test_calibration_sizes_the_prompt_growth_and_the_hidden_prefix() -> None:
    conv = _conversation()
    sizes = calibrate(conv)
    assert sizes.prompt(conv.messages[:1]) == 30_000  # the first prompt, hidden prefix included
    assert sizes.prompt(conv.messages[:3]) == 30_400  # the growth between the two calls
    pricer = Pricer()
    recorded, rebuilt = recorded_run(conv, pricer), reconstructed_run(conv, sizes, pricer)
    assert recorded.tokens() == CallTokens(60_400, 30_000, 30_400, 70)
    assert rebuilt.tokens() == recorded.tokens()  # the model reproduces the recording
    assert recorded_breaks(conv) == {1: 0}  # the first call found nothing cached


def test_summarizer_calls_and_unpriced_models_are_counted() -> None:
    run = RunCost()
    run.add(Pricer(), "claude-sonnet-4-5", CallTokens(1000, 0, 0, 100), summarizer=True)
    run.add(Pricer(), "no-such-model", CallTokens(1000, 0, 0, 100))
    assert run.usd is None and run.summarizer_usd == pytest.approx((3000 + 1500) / 1e6)
    assert run.to_json()["summarizer_calls"] == 1


def test_an_unpriced_call_makes_its_kinds_sum_no_figure() -> None:
    """An unpriced call added $0 to the summarizer's and the cache breaks' sums, so the
    report read "summarizer $0.0000, cache breaks $0.0000" for a run no price list knows
    (the aider log of the shared corpus, 2 summaries); those sums are now null."""
    run = RunCost()
    run.add(Pricer(), "no-such-model", CallTokens(1000, 0, 0, 100), summarizer=True)
    run.add(Pricer(), "no-such-model", CallTokens(1000, 0, 0, 100))
    as_json = run.to_json()
    assert (as_json["summarizer_usd"], as_json["cache_break_usd"]) == (None, None)
    mixed = RunCost()  # a priced summarizer beside an unpriced agent call keeps its figure
    mixed.add(Pricer(), "claude-sonnet-4-5", CallTokens(1000, 0, 0, 100), summarizer=True)
    mixed.add(Pricer(), "no-such-model", CallTokens(1000, 0, 0, 100))
    assert mixed.to_json()["summarizer_usd"] == pytest.approx((3000 + 1500) / 1e6)
    assert mixed.to_json()["cache_break_usd"] is None
    record: Any = {"policy": as_json, "original": as_json, "delta_usd": None}
    line = cost_line(record)
    assert "summarizer unpriced, cache breaks unpriced" in line


def run_cli(*args: str) -> object:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_replay_cost_writes_costs_jsonl_only_when_asked(tmp_path: Path) -> None:
    sample = str(SAMPLES / "long_session.jsonl")
    plain = run_cli("replay", sample, "--out", str(tmp_path / "plain"))
    assert plain.exit_code == 0  # type: ignore[attr-defined]
    assert not (tmp_path / "plain" / "costs.jsonl").exists()
    priced = run_cli(
        "replay", sample, "--out", str(tmp_path / "cost"), "--cost", "--price-per-mtok", "3/15"
    )
    assert priced.exit_code == 0  # type: ignore[attr-defined]
    (record,) = [
        orjson.loads(x) for x in (tmp_path / "cost" / "costs.jsonl").read_bytes().splitlines()
    ]
    assert record["session"] == "long_session"
    policy, original = record["policy"], record["original"]
    assert policy["summarizer_calls"] == 5 and policy["summarizer_usd"] > 0
    assert policy["tokens"]["prompt"] < original["tokens"]["prompt"]  # compaction shrank prompts
    assert record["delta_usd"] == pytest.approx(policy["usd"] - original["usd"], abs=1e-5)
    for name in ("decisions.jsonl", "summaries.jsonl", "slots.jsonl", "prompts.jsonl"):
        assert (tmp_path / "cost" / name).read_bytes() == (tmp_path / "plain" / name).read_bytes()
    report = run_cli("replay", sample, "--cost", "--price-per-mtok", "3/15")
    assert "cost $" in report.stdout and "[--price-per-mtok 3/15]" in report.stdout  # type: ignore[attr-defined]


def test_a_dry_run_says_what_its_price_is() -> None:
    """The seed's dry run writes no summary, so --cost priced its whole-history views: the
    original run, Δ 0, beside a report of checkpoints that would fire; a note says so."""
    sample = str(SAMPLES / "long_session.jsonl")
    dry = CliRunner().invoke(
        cli, ["replay", sample, "--cost", "--dry-run", "--price-per-mtok", "3/15"]
    )
    assert dry.exit_code == 0
    assert "--cost with --dry-run prices the views of a run without summary calls" in dry.stderr
    priced = CliRunner().invoke(cli, ["replay", sample, "--cost", "--price-per-mtok", "3/15"])
    assert priced.exit_code == 0 and "--dry-run" not in priced.stderr


def test_sweep_cost_columns_only_when_asked_and_the_same_over_processes() -> None:
    plain = run_cli("sweep", str(SAMPLES), "--json")
    assert "cost_" not in plain.stdout  # type: ignore[attr-defined]
    args = ("sweep", str(SAMPLES), "--json", "--cost", "--price-per-mtok", "3")
    serial = orjson.loads(run_cli(*args).stdout)  # type: ignore[attr-defined]
    spread = orjson.loads(run_cli(*args, "--workers", "2").stdout)  # type: ignore[attr-defined]
    assert serial == spread
    (row,) = [r for r in serial["configs"] if r["config"] == 1]
    assert row["cost_priced_conversations"] == 3 and row["cost_usd"] > 0
    assert 0 < row["cost_summarizer_share"] < 1
    assert row["cost_change_vs_original"] < 0  # the sample's compaction saves input
    assert row["cost_priced_by"] == ["--price-per-mtok 3.0"]
    table = run_cli("sweep", str(SAMPLES), "--cost", "--price-per-mtok", "3").stdout  # type: ignore[attr-defined]
    assert "$/conv" in table and "Prices: --price-per-mtok 3.0." in table


def test_eval_cost_adds_recall_per_1000_retained_tokens() -> None:
    plain = run_cli("eval", str(SAMPLES), "--json")
    assert "retained" not in plain.stdout  # type: ignore[attr-defined]
    doc = orjson.loads(run_cli("eval", str(SAMPLES), "--json", "--cost").stdout)  # type: ignore[attr-defined]
    (variant,) = [v for v in doc["variants"].values() if v["checkpoints"] == 5]
    # 5 checkpoints of long_session: kept probes / mean next view, per 1,000 tokens
    assert 0 < variant["recall_per_1k_retained_tokens"] < 1000
    assert variant["next_view_tokens_mean"] > 0
    kept = variant["recall_per_1k_retained_tokens"] * variant["next_view_tokens_mean"] * 5 / 1000
    assert kept == pytest.approx(round(kept), abs=0.01)  # a whole number of probes


def test_check_fails_on_a_cost_increase_beyond_the_limit(tmp_path: Path) -> None:
    sample, baseline = str(SAMPLES / "long_session.jsonl"), str(tmp_path / "base")
    gate = ("--max-cost-increase", "0.05")
    bless = run_cli(
        "check", sample, "--baseline", baseline, "--update", *gate, "--price-per-mtok", "3/15"
    )
    assert bless.exit_code == 0 and (tmp_path / "base" / "costs.jsonl").is_file()  # type: ignore[attr-defined]
    same = run_cli("check", sample, "--baseline", baseline, *gate, "--price-per-mtok", "3/15")
    assert same.exit_code == 0 and "cost: $" in same.stderr  # type: ignore[attr-defined]
    dearer = run_cli("check", sample, "--baseline", baseline, *gate, "--price-per-mtok", "6/30")
    assert dearer.exit_code == 1, dearer.stderr  # type: ignore[attr-defined]
    assert "+100.0%" in dearer.stderr and "FAILED, most of it in long_session" in dearer.stderr  # type: ignore[attr-defined]
    ungated = run_cli("check", sample, "--baseline", baseline, "--price-per-mtok", "6/30")
    assert ungated.exit_code == 0 and "cost:" not in ungated.stderr  # type: ignore[attr-defined]


FORMATS = Path(__file__).resolve().parents[1] / "fixtures" / "formats"


def test_the_task_outcome_is_reported_beside_the_cost(tmp_path: Path) -> None:
    from transcript_tools import api

    tau2 = FORMATS / "representative_tau2_bench.json"
    outcomes = [c.outcome for c in api.read_corpus(tau2)]
    assert outcomes and all(o is not None and "reward" in o for o in outcomes)
    out = tmp_path / "o"
    result = run_cli("replay", str(tau2), "--cost", "--out", str(out))
    assert result.exit_code == 0  # type: ignore[attr-defined]
    records = [orjson.loads(x) for x in (out / "costs.jsonl").read_bytes().splitlines()]
    assert [r["outcome"] for r in records] == outcomes
    doc = orjson.loads(run_cli("sweep", str(tau2), "--cost", "--json").stdout)  # type: ignore[attr-defined]
    row = doc["configs"][0]["cost_with_outcome"]
    solved = sum(o["reward"] >= 1 for o in outcomes if o)
    assert row["conversations"] == len(outcomes) and row["solved"] == solved


def test_the_change_held_by_compactions_a_policy_never_makes_is_named(tmp_path: Path) -> None:
    """A pre-pass-only policy never summarizes: in a log the agent compacted, its prompts
    keep growing where the original's shrank, so that conversation's part of Δ$ orig is
    given apart from the rest (the two add up to the whole change)."""
    eager = tmp_path / "eager.toml"  # clear-tool-uses, acting on a small fixture too
    eager.write_text(
        'extends = "clear-tool-uses"\nname = "eager-clear"\n'
        "[prepass]\ntrigger_tokens = 1\nkeep_newest = 0\n",
        encoding="utf-8",
    )
    compacted = str(FORMATS / "representative_codex.jsonl")  # codex:compacted, usage recorded
    plain = str(FORMATS / "representative_claude_code.jsonl")  # no compaction recorded
    args = ["sweep", compacted, plain, "--cost"]
    data = orjson.loads(run_cli(*args, "--policy", str(eager), "--json").stdout)  # type: ignore[attr-defined]
    (row,) = data["configs"]
    missed = row["cost_missed_compaction"]
    assert missed["conversations"] == 1 and missed["delta_usd"] > 0  # the Codex log
    whole = row["cost_change_vs_original"] * row["cost_original_usd"]
    assert missed["delta_usd"] + missed["delta_usd_elsewhere"] == pytest.approx(whole, abs=2e-4)
    table = run_cli(*args, "--policy", str(eager)).stdout  # type: ignore[attr-defined]
    assert "#1 eager-clear: 1 conversation(s) the agent compacted" in table
    assert f"hold {missed['delta_usd']:+,.2f} USD" in table
    # the seed's default never fires on these small logs: its views are the recorded
    # history, priced as recorded, so the compaction it skips holds no change
    seed = orjson.loads(run_cli(*args, "--json").stdout)  # type: ignore[attr-defined]
    (row,) = seed["configs"]
    assert row["summary_calls"] == 0
    assert row["cost_missed_compaction"] == {
        "conversations": 1,
        "delta_usd": 0.0,
        "delta_usd_elsewhere": 0.0,
    }
    assert "the agent compacted" not in run_cli(*args).stdout  # type: ignore[attr-defined]
