"""Overflow is not a price (docs/cost.md, "Overflow"): a run whose view went over the
window — a modeled call over the model's window, or a checkpoint the policy left over its
window — is a run no agent could have made: counted, said, and left out of every total
(cost/overflow.py ``run_price``, the one rule every workflow asks)."""

from __future__ import annotations

from transcript_tools.compare.collect import arm_run
from transcript_tools.cost.gate import compare_costs
from transcript_tools.cost.meter import CostMeter, _Uncompacted, _WholeHistory, uncompacted_run
from transcript_tools.cost.model import RunCost
from transcript_tools.cost.overflow import run_price
from transcript_tools.cost.prices import Pricer
from transcript_tools.cost.records import CostRecord
from transcript_tools.cost.tokens import CallTokens
from transcript_tools.engine.messages import AssistantMessage, Conversation, TextBlock, UserMessage
from transcript_tools.engine.overflow import checkpoints_over
from transcript_tools.engine.records import DecisionRecord
from transcript_tools.sweep.config import ConfigOutcome, SweepConfig
from transcript_tools.sweep.cost_table import cost_notes
from transcript_tools.sweep.simulate import ConversationSeries
from transcript_tools.sweep.stats import ConfigStats

PRICER = Pricer.from_options("1")  # $1 per million tokens of every kind


def _conversation(window: int | None) -> Conversation:
    """Two calls without recorded usage (so both are modeled), 110 tokens a message by
    engine/tokens.py's estimate of 400 characters."""
    messages = [
        UserMessage.text("a" * 400),
        AssistantMessage((TextBlock("b" * 400),), None, "gpt-4o"),
        UserMessage.text("c" * 400),
        AssistantMessage((TextBlock("d" * 400),), None, "gpt-4o"),
    ]
    return Conversation("c", "c.jsonl", "openai", messages, context_window=window)


def test_a_modeled_call_over_the_window_makes_the_run_an_overflow() -> None:
    run = uncompacted_run(_conversation(200), PRICER)
    # call 1: 110 in + 110 out; call 2: 330 in (over the 200-token window) + 110 out
    assert run.usd == 660e-6  # what the calls would cost: never a total's figure
    assert run.to_json()["overflow_calls"] == 1 and run.to_json()["overflow_max_prompt"] == 330
    assert "overflow_usd" not in run.to_json()
    price = run_price(run)
    assert price.overflow is True and price.usd is None
    roomy = uncompacted_run(_conversation(None), PRICER)  # gpt-4o: 128k
    assert run_price(roomy).usd == 660e-6 and run_price(roomy).overflow is False


def test_a_checkpoint_left_over_the_window_makes_the_run_an_overflow() -> None:
    roomy = uncompacted_run(_conversation(None), PRICER)
    decisions: list[DecisionRecord] = [{"decision": "skipped"}, {"decision": "x", "overflow": 7}]
    assert checkpoints_over(decisions) == 1
    assert run_price(roomy, checkpoints_over(decisions)).usd is None
    assert run_price(None, 1).overflow is True
    assert run_price(None).overflow is False and run_price(None).usd is None  # unpriced


def test_the_replay_record_says_overflow_and_prices_nothing() -> None:
    conv = _conversation(200)
    meter = CostMeter(conv, _Uncompacted(_WholeHistory(conv.messages)), PRICER)
    meter.appended(0, 0, len(conv.messages))
    record = meter.record()
    assert record["overflow"] is True and record["policy"]["usd"] is None
    assert record["delta_usd"] is None
    roomy = _conversation(None)
    fine = CostMeter(roomy, _Uncompacted(_WholeHistory(roomy.messages)), PRICER)
    fine.appended(0, 0, len(roomy.messages))
    assert fine.record()["overflow"] is False and fine.record()["policy"]["usd"] == 660e-6
    assert fine.record(views_over=2)["policy"]["usd"] is None


def _run(micro: int, *, over: bool = False) -> RunCost:
    out = RunCost()
    out.add(PRICER, "m", CallTokens(micro, 0, 0, 0), modeled=True, over_window=over)
    return out


def test_the_sweep_leaves_an_overflowed_run_out_of_its_totals() -> None:
    stats = ConfigStats(None, cost_on=True)  # type: ignore[arg-type]
    stats._add_cost(ConfigOutcome(1, [], cost=_run(3000)), missed=False)
    stats._add_cost(ConfigOutcome(1, [], cost=_run(5000, over=True)), missed=False)
    stats._add_cost(ConfigOutcome(1, [], cost=_run(7000), views_over=2), missed=False)
    figures = stats.cost_json()
    # only the first run is priced: $0.003 of 3,000 tokens at $1/Mtok
    assert figures["cost_usd"] == 0.003 and figures["cost_priced_conversations"] == 1
    assert figures["cost_overflow_conversations"] == 2 and figures["cost_overflow_calls"] == 1
    row = {"config": 2, "policy": "codex", **figures}
    assert cost_notes([row]) == (
        "\n#2 codex: 2 conversation(s) overflowed (a view over the window, 1 modeled call(s) "
        "over their model's window): no agent could have made those runs, so they are left "
        "out of its $ columns."
    )
    assert cost_notes([{**row, "cost_overflow_conversations": 0}]) == ""


def test_the_bill_note_is_every_conversations_bill_and_names_the_smaller_ones() -> None:
    # the note took the first row's bill for every row: sorted first, clear-tool-uses
    # (its overflowed conversation left out: 183.52) while the seed's Δ$ orig is a share
    # of 194.76 (tsum sweep real/claude-code real/codex --policy seed,clear-tool-uses,codex
    # --cost --max-context-tokens auto)
    def row(config: int, policy: str, bill: float) -> dict[str, object]:
        return {
            "config": config,
            "policy": policy,
            "cost_billed_usd": bill,
            "cost_replayed_share": 0.649,
        }

    note = cost_notes([row(2, "clear-tool-uses", 183.52), row(1, "seed", 194.76)])
    assert note.startswith(
        "\nthe original runs were billed 194.76 USD (without the conversations they left "
        "out: #2 clear-tool-uses 183.52 USD); the calls replayed cover 64.9% of it"
    )
    same = cost_notes([row(1, "seed", 194.76), row(2, "codex", 194.76)])
    assert same.startswith("\nthe original runs were billed 194.76 USD; the calls")


def test_compare_pairs_no_overflowed_run() -> None:
    cfg = SweepConfig(0.75, 1000, 1)
    profile = ConversationSeries(0, "c", "c.jsonl", 1, [10], [10], [2], True, [])
    profile._view_prefix = [0, 10]
    over = arm_run(cfg, ConfigOutcome(1, [], cost=_run(3000), views_over=1), profile)
    assert over.usd is None and over.overflow is True
    fine = arm_run(cfg, ConfigOutcome(1, [], cost=_run(3000)), profile)
    assert fine.usd == 0.003 and fine.overflow is False


def _records(**usd: tuple[float, bool]) -> dict[str, CostRecord]:
    return {
        name: {"session": name, "policy": {"usd": value, "priced_by": []}, "overflow": over}  # type: ignore[misc]
        for name, (value, over) in usd.items()
    }


def test_the_cost_gate_leaves_overflows_out_and_fails_on_a_new_one() -> None:
    old = _records(a=(1.0, False), b=(1.0, False), c=(1.0, True))
    same = compare_costs(old, _records(a=(1.0, False), b=(1.0, False), c=(None, True)), 0.1)
    assert same.failed is False
    assert same.lines == [
        "cost: $2.0000 -> $2.0000 over 2 session(s) (+0.0%; limit +10.0%), the agent's calls and the summary calls [no price]; 1 session(s) overflowed, not priced"
    ]
    new = compare_costs(old, _records(a=(1.0, False), b=(None, True), c=(None, True)), 0.1)
    assert new.failed is True
    assert new.lines[0].endswith(
        "; 2 session(s) overflowed, not priced; FAILED, overflows the baseline did not: b"
    )


def test_compare_prices_a_run_as_its_baseline_the_model_priced_original() -> None:
    """A call the run left as recorded is priced from its usage by the meter, the original
    by the model: a run that never acts reads the original's bill exactly (no model error
    in its change), and a changed call's change is against the model's price."""
    cfg = SweepConfig(0.75, 1000, 1)
    profile = ConversationSeries(0, "c", "c.jsonl", 2, [10, 20], [10, 20], [2, 4], True, [])
    profile._view_prefix = [0, 10, 30]
    rebuilt = RunCost()
    rebuilt.add(PRICER, "m", CallTokens(1000, 0, 0, 0), at=1, modeled=True)
    rebuilt.add(PRICER, "m", CallTokens(2000, 0, 0, 0), at=3, modeled=True)
    recorded = RunCost()  # as recorded: 1,100 and 2,300 tokens, the model's error
    recorded.add(PRICER, "m", CallTokens(1100, 0, 0, 0), at=1)
    recorded.add(PRICER, "m", CallTokens(2300, 0, 0, 0), at=3)
    idle = arm_run(cfg, ConfigOutcome(2, [], cost=recorded, rebuilt_cost=rebuilt), profile)
    assert idle.usd == idle.original_usd == 0.003
    acted = RunCost()  # the second call compacted (modeled at 500), plus the summarizer
    acted.add(PRICER, "m", CallTokens(1100, 0, 0, 0), at=1)
    acted.add(PRICER, "m", CallTokens(500, 0, 0, 0), at=3, modeled=True)
    acted.add(PRICER, "m", CallTokens(100, 0, 0, 0), summarizer=True)
    run = arm_run(cfg, ConfigOutcome(2, [1], cost=acted, rebuilt_cost=rebuilt), profile)
    assert run.original_usd == 0.003 and round(run.usd or 0, 9) == 0.0016
