"""Overflow is not a price (docs/cost.md, "Overflow"): a modeled call whose prompt is over
the model's window is a view no runtime could have sent — counted, priced apart and
named, never silently part of a total."""

from __future__ import annotations

from transcript_tools.cost.meter import uncompacted_run
from transcript_tools.cost.prices import Pricer
from transcript_tools.engine.messages import AssistantMessage, Conversation, TextBlock, UserMessage
from transcript_tools.sweep.cost_table import cost_notes


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


def test_a_modeled_call_over_the_window_is_counted_and_priced_apart() -> None:
    pricer = Pricer.from_options("1")  # $1 per million tokens of every kind
    run = uncompacted_run(_conversation(200), pricer).to_json()
    # call 1: 110 in + 110 out; call 2: 330 in (over the 200-token window) + 110 out
    assert run["usd"] == 660e-6
    assert run["overflow_calls"] == 1
    assert run["overflow_usd"] == 440e-6 and run["overflow_max_prompt"] == 330
    roomy = uncompacted_run(_conversation(None), pricer).to_json()  # gpt-4o: 128k
    assert roomy["overflow_calls"] == 0 and roomy["overflow_usd"] == 0


def test_the_sweep_names_it_per_policy() -> None:
    row = {"config": 2, "policy": "clear-tool-uses", "cost_overflow_calls": 129}
    row["cost_overflow_usd"] = 12.5
    assert cost_notes([row]) == (
        "\n#2 clear-tool-uses: 129 modeled call(s) over their model's window are 12.50 USD "
        "of its $ total: views no runtime could have sent, priced at the base rates."
    )
    assert cost_notes([{**row, "cost_overflow_calls": 0}]) == ""
