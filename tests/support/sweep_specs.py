"""Random conversations and sweep configurations (hypothesis strategies), shared by the
property tests that prove the sweep's fast path equal to the engine
(tests/sweep/test_sweep.py, test_sweep_property.py, tests/engine/test_dry_run_estimate.py)."""

from __future__ import annotations

from hypothesis import strategies as st

from transcript_tools.engine.config import Measure, SlotMode
from transcript_tools.engine.messages import (
    AssistantMessage,
    Conversation,
    Message,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from transcript_tools.sweep.config import SweepConfig

# one call: (recorded usage or None, tool call?, text size)
call = st.tuples(
    st.one_of(st.none(), st.tuples(st.integers(0, 6000), st.integers(0, 800))),
    st.booleans(),
    st.integers(0, 300),
)
turn_spec = st.lists(call, min_size=0, max_size=3)
conversation_spec = st.tuples(st.booleans(), st.lists(turn_spec, min_size=0, max_size=30))


def build(spec: tuple[bool, list[list[tuple]]], all_recorded: bool = False) -> Conversation:
    system, turns = spec
    messages: list[Message] = [SystemMessage("You are terse. " * 5)] if system else []
    n = 0
    for i, calls in enumerate(turns):
        messages.append(UserMessage.text(f"question {i} " + "words " * (i % 7)))
        for usage, tool, size in calls:
            n += 1
            recorded = (
                Usage(*usage)
                if usage is not None
                else (Usage(100 * n, 10) if all_recorded else None)
            )
            blocks = (TextBlock("x " * size),) + (
                (ToolUseBlock(f"c{n}", "grep", {"q": n}),) if tool else ()
            )
            messages.append(AssistantMessage(blocks, recorded))
            if tool:
                messages.append(ToolResultMessage(f"c{n}", "result line\n" * (size // 10)))
    return Conversation("s", "mem.jsonl", "native", messages)


config_spec = st.builds(
    SweepConfig,
    st.sampled_from([0.05, 0.3, 0.5, 0.75, 0.9, 1.0]),
    st.sampled_from([1, 500, 4000, 32000]),
    st.integers(0, 6),
    st.sampled_from(list(SlotMode)),
    st.sampled_from(list(Measure)),
)


def long_recorded(turns: int = 12, step: int = 3000) -> Conversation:
    messages: list[Message] = [SystemMessage("sys")]
    for i in range(turns):
        messages += [
            UserMessage.text(f"do step {i} " + "please " * 50),
            AssistantMessage.text("done " * 200, Usage(step * (i + 1), 200)),
        ]
    return Conversation("long", "mem.jsonl", "native", messages)
