"""Rules the seed states that a mutation of the source must not survive.

Each test names the mutation it catches; each was checked by applying the mutation.
"""

from __future__ import annotations

import asyncio

from tests.support.fakes import FakeProvider, drive, turn
from transcript_tools.engine.config import ReplaySettings, SlotMode, SummaryConfig
from transcript_tools.engine.messages import SystemMessage, Usage, UserMessage
from transcript_tools.engine.session import SessionEngine
from transcript_tools.providers.executor import SummaryExecutor


def engine(mode: SlotMode = SlotMode.FOCUSED, **cfg: object) -> SessionEngine:
    return SessionEngine("s1", ReplaySettings(summary=SummaryConfig(**cfg), mode=mode))


def test_empty_history_guard_is_reached_and_makes_no_call() -> None:
    """Mutation: delete the empty-history guard (generate_summary's ``if messages.is_empty()``).

    The seed's test 11 never gets past the threshold with an empty history (its
    watermark is 0), so it cannot see the guard. Here the watermark is over the line
    and the debounce allows a summary (a driver restored the session's cost), and the
    history is empty: the checkpoint must fire into the guard, not into a call.
    """
    e, p = engine(max_context_tokens=100, trigger_token_ratio=0.5, debounce_turns=0), FakeProvider()
    e.accounting.cost_so_far = Usage(80, 20)  # restored state: 100 >= 50
    request = e.submit_turn([])
    assert request is None
    assert [d["decision"] for d in e.decisions] == ["skipped_empty"]
    assert p.prompts == [] and e.summaries == [] and e.last_summary_turn == 0


def test_threshold_is_inclusive() -> None:
    """Mutation: ``>=`` -> ``>`` in the threshold comparison (the seed: tokens >= max * ratio)."""
    e, p = engine(max_context_tokens=20, trigger_token_ratio=0.5, debounce_turns=0), FakeProvider()
    drive(e, [turn("exactly at the line", usage=Usage(6, 4))], p)  # 10 == 20 * 0.5
    assert e.decisions[0]["watermark"] == e.decisions[0]["threshold"] == 10
    assert e.decisions[0]["decision"] == "summarized"
    # one token below stays below
    e2, p2 = (
        engine(max_context_tokens=20, trigger_token_ratio=0.5, debounce_turns=0),
        FakeProvider(),
    )
    drive(e2, [turn("just under", usage=Usage(6, 3))], p2)
    assert e2.decisions[0]["decision"] == "below_threshold" and p2.prompts == []


def test_request_carries_summary_model() -> None:
    """Mutation: ``None`` instead of ``summary_model`` in the request (F1: a cheaper model)."""
    e = engine(
        max_context_tokens=20, trigger_token_ratio=0.5, debounce_turns=0, summary_model="cheap-1"
    )
    request = e.submit_turn(turn("over the line", usage=Usage(10, 5)))
    assert request is not None and request.model == "cheap-1"
    # and the model reaches the provider and the record
    seen: list[str | None] = []
    provider = FakeProvider()
    original = provider.complete

    async def complete(prompt: str, model: str | None, max_tokens: int):  # type: ignore[no-untyped-def]
        seen.append(model)
        return await original(prompt, model, max_tokens)

    provider.complete = complete  # type: ignore[method-assign]
    outcome = asyncio.run(SummaryExecutor(provider, cache=None).execute(request))
    e.complete_summary(outcome)
    assert seen == ["cheap-1"] and e.summaries[0]["model"] == "cheap-1"


def test_focused_view_keeps_the_system_messages() -> None:
    """Mutation: the focused view drops the system messages (docs/spec.md, "The focused
    view": system messages +
    the recent turns + the summary)."""
    e, p = engine(max_context_tokens=20, trigger_token_ratio=0.5), FakeProvider(["S"])
    system = SystemMessage("you are a careful agent")
    turns = [[system, *turn("msg 0")], *[turn(f"msg {i}") for i in range(1, 8)]]
    drive(e, turns, p)
    assert e.slot.summary_override is not None
    view = e.load_messages()
    assert view[0] == system and view.count(system) == 1
    assert view[-1].text.startswith("[上下文摘要]")
    assert UserMessage.text("msg 0") not in view  # the old turn itself is gone
    assert e.slot.view_size()[0] == len(view)  # the size the watermark uses agrees


def test_summary_usage_never_enters_cost_so_far() -> None:
    """Mutation: add the summary call's own usage to ``cost_so_far`` (the seed: never)."""
    e = engine(max_context_tokens=20, trigger_token_ratio=0.5, debounce_turns=1)
    provider = FakeProvider(default="a summary long enough to have real usage " * 4)
    turns = [turn(f"msg {i}", usage=Usage(10, 5)) for i in range(6)]
    drive(e, turns, provider)
    summarized = [s for s in e.summaries if s["status"] == "ok"]
    assert len(summarized) >= 3
    assert all(
        s["usage"]["input_tokens"] > 0 and s["usage"]["output_tokens"] > 0 for s in summarized
    )
    assert [d["cost_so_far"] for d in e.decisions] == [15 * (i + 1) for i in range(6)]
    assert e.accounting.cost_so_far.total_tokens == 90
