"""The current measure and the log's sizes are worked out once, not once per reader.

Per unit the trigger, the overflow mark and a sweep's curve each read the current
measure (``TurnAccounting.current_context_tokens``): it is computed once per slot state
(``Slot.changes``) and anchor, and read again after; a policy slot sizes each message
once, when it is appended; a size model rounds its billed sizes once.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.spies import spy
from transcript_tools.engine.config import ReplaySettings, SummaryConfig
from transcript_tools.engine.messages import (
    AssistantMessage,
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
from transcript_tools.engine.sizes import SizeModel


def _turn(n: int, usage: Usage | None) -> list[Any]:
    """A question, a call that runs a tool, its result and the answer."""
    run = AssistantMessage((ToolUseBlock(f"c{n}", "Read", {"n": n}),), usage=usage, model="m")
    answer = AssistantMessage((TextBlock(f"reply {n} " * 20),), usage=usage, model="m")
    result = ToolResultMessage(f"c{n}", f"output {n} " * 30)
    return [UserMessage.text(f"question {n} " * 10), run, result, answer]


def _engine(sizes: SizeModel | None = None) -> SessionEngine:
    settings = with_policy(ReplaySettings(summary=SummaryConfig()), preset("codex"))
    return SessionEngine("s", settings, sizes=sizes)


def test_the_current_measure_is_computed_once_per_slot_state(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A unit reads the measure three times (trigger, overflow mark, a caller's curve):
    one view sizing; an append (a new state, a new anchor) sizes it again, and the kept
    figure is the one measured afresh (fails when every read sizes the view)."""
    engine = _engine()
    sized = spy(monkeypatch, PolicySlot, "view_size")
    engine.submit_turn(_turn(1, Usage(500, 40)))
    assert len(sized) == 1  # the trigger's read; the overflow mark read it again
    first = engine.accounting.current_context_tokens()
    assert len(sized) == 1 and first == engine.decisions[-1]["watermark"]
    engine.submit_turn(_turn(2, Usage(900, 50)))
    assert len(sized) == 2
    kept = engine.accounting.current_context_tokens()
    assert kept != first
    engine.accounting._measured.clear()  # afresh: the same figure
    assert engine.accounting.current_context_tokens() == kept
    assert len(sized) == 3


def test_a_policy_slot_sizes_each_message_once_and_a_model_rounds_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each appended message is sized once, whatever reads its size after (the view,
    the pre-pass's sums of tool outputs, the measure); a billed size is rounded as ``of``
    always answered it (fails when a tool result is sized again for the output sums, or
    the rounding changes)."""
    turns = [_turn(n, Usage(100 * n, 10)) for n in range(1, 4)]
    billed = {id(m): 10.5 + n for n, t in enumerate(turns) for m in t}
    model = SizeModel(billed)
    assert [model.of(m) for t in turns for m in t] == [round(v) for v in billed.values()]
    engine = _engine(model)
    sized = spy(monkeypatch, SizeModel, "of")
    for turn in turns:
        engine.submit_turn(turn)
        engine.accounting.current_context_tokens()
        engine.slot.view_size(1)
    assert len(sized) == sum(len(t) for t in turns)
