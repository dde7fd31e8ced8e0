"""A unit reads of the view only what it needs, once.

The seed's summary message is made once per summary (its readers compare it by identity,
not its long text); a plan makes the view only for the summarizer input that is given
it; a ``conversation`` trigger (Aider's) adds what a unit appends to the figure it kept,
summing the whole view only after a summary or replacement changed it.
"""

from __future__ import annotations

import pytest

from tests.support.spies import spy
from transcript_tools.engine.config import ReplaySettings, SummaryConfig
from transcript_tools.engine.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from transcript_tools.engine.policy_engine import with_policy
from transcript_tools.engine.policy_slot import PolicySlot
from transcript_tools.engine.policy_toml import preset
from transcript_tools.engine.session import SessionEngine
from transcript_tools.engine.sized_view import SizedView
from transcript_tools.engine.sizes import ESTIMATES
from transcript_tools.engine.slot import ContextSlot
from transcript_tools.engine.tokens import conversation_tokens


def _turn(n: int) -> list[Message]:
    """A question, a call that runs a tool, its result and the answer."""
    run = AssistantMessage((ToolUseBlock(f"c{n}", "Read", {"n": n}),), Usage(100 * n, 5), "m")
    answer = AssistantMessage((TextBlock(f"reply {n} " * 20),), Usage(100 * n + 50, 9), "m")
    result = ToolResultMessage(f"c{n}", f"output {n} " * 30)
    return [UserMessage.text(f"question {n} " * 10), run, result, answer]


def test_the_seeds_summary_message_is_made_once_per_summary() -> None:
    """The same message while the summary and marker stand, a new one for a new summary or
    marker, and the view's sizes follow it (fails when every ask makes a new message)."""
    slot = ContextSlot()
    slot.focused.keep_recent_turns = 1
    slot.append_messages([SystemMessage("sys"), *_turn(1), *_turn(2)])
    sized = SizedView(slot, ESTIMATES)
    slot.set_summary("short")
    first = slot.summary_message()
    assert first is slot.summary_message() and slot.load_messages()[-1] is first
    before, sized_before = slot.view_size()[1], sized.view_size()[1]
    slot.set_summary("a much longer summary " * 40)
    second = slot.summary_message()
    assert second is not first and second is not None and second.text.startswith(slot.marker)
    assert slot.view_size()[1] > before and sized.view_size()[1] > sized_before
    assert sized.view_size() == slot.view_size()  # both in estimates: the same figure
    slot.marker = "[other]"
    assert slot.summary_message() is not second
    assert slot.load_messages()[-1].text.startswith("[other] a much")  # type: ignore[union-attr]


def _slot(name: str, window: int = 10**6) -> PolicySlot:
    slot = PolicySlot(preset(name), window)
    slot.append_messages([SystemMessage("sys")])
    for n in range(1, 16):
        slot.append_messages(_turn(n))
    return slot


@pytest.mark.parametrize(("name", "shown"), [("aider", False), ("claude-code", True)])
def test_a_plan_makes_the_view_only_for_the_input_given_it(
    monkeypatch: pytest.MonkeyPatch, name: str, shown: bool
) -> None:
    """Aider's summarizer is given what it drops, Claude Code's its view (fails when the
    plan makes the view whatever the summarizer is given)."""
    slot = _slot(name, window=2_000)  # a window the history outgrew: a summary drops some
    view = slot.load_messages()
    made = spy(monkeypatch, PolicySlot, "load_messages")
    plan = slot.plan()
    assert len(made) == (1 if shown else 0)
    assert (list(plan.summarizer_input) == view) is shown
    assert plan.summarizer_input


def test_a_conversation_trigger_adds_each_unit_to_the_figure_it_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Aider's measure over a run of units makes the view once, and again only after a
    summary; each unit's figure is the view's summed afresh (fails when every unit makes
    and sums the whole view)."""
    settings = with_policy(ReplaySettings(summary=SummaryConfig()), preset("aider"))
    engine = SessionEngine("s", settings)
    made = spy(monkeypatch, PolicySlot, "load_messages")
    for n in range(1, 9):
        engine.submit_turn(_turn(n))
        fresh = conversation_tokens(PolicySlot.load_messages(engine.slot))
        assert engine.decisions[-1]["watermark"] == fresh
    assert len(made) == 1 + 8  # the first unit's measure, and the fresh sums above
    slot = engine.slot
    assert isinstance(slot, PolicySlot)
    slot.set_summary("what was done " * 30)
    assert slot.conversation_size() == conversation_tokens(slot.load_messages())
    slot.append_messages(_turn(9))
    assert slot.conversation_size() == conversation_tokens(slot.load_messages())


def test_a_replacement_makes_the_conversation_figure_afresh() -> None:
    """A pre-pass that clears old tool outputs changes the view: the figure kept before it
    no longer holds (fails when a kept figure outlives a replacement)."""
    slot = _slot("observation-masking")
    before = slot.conversation_size()
    assert before == conversation_tokens(slot.load_messages())
    assert slot.prepass(10**6) is not None and slot.replaced
    after = slot.conversation_size()
    assert after < before and after == conversation_tokens(slot.load_messages())
