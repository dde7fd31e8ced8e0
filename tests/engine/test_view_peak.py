"""A view is measured when a model is called with it: a message after the
last model call (a final observation after the agent submitted) never counts toward a
peak -- sweep's peak columns, inspect's estimated largest context."""

from __future__ import annotations

from transcript_tools.engine.config import Checkpoint, SlotMode
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
from transcript_tools.engine.rules import last_call_end
from transcript_tools.inspection import inspect_conversation
from transcript_tools.sweep.config import SweepConfig
from transcript_tools.sweep.simulate import evaluate_fast, profile_conversation

HUGE = "observation line\n" * 20_000  # far above any view before it


def submitted(usage: bool) -> Conversation:
    messages: list[Message] = [SystemMessage("sys"), UserMessage.text("fix the bug")]
    for n in range(3):
        messages.append(
            AssistantMessage(
                (TextBlock(f"step {n}"), ToolUseBlock(f"c{n}", "sh", {})),
                Usage(1000 * (n + 1), 50) if usage else None,
            )
        )
        messages.append(ToolResultMessage(f"c{n}", HUGE if n == 2 else "ok"))
    return Conversation("s", "mem.jsonl", "native", messages)


def test_last_call_end() -> None:
    conv = submitted(True)
    assert last_call_end(conv.messages) == len(conv.messages) - 1
    assert last_call_end([UserMessage.text("hi")]) == 1  # no call at all: measured whole


def test_sweep_peak_ignores_what_follows_the_last_call() -> None:
    for usage in (True, False):
        conv = submitted(usage)
        for checkpoint in Checkpoint:
            profile = profile_conversation(conv, checkpoint=checkpoint)
            assert max(profile.view) > 20_000  # the final view holds the huge observation
            assert profile.view_peak < 5_000, (usage, checkpoint)
            for mode in SlotMode:
                cfg = SweepConfig(0.75, 32000, 3, mode, checkpoint=checkpoint)
                assert evaluate_fast(profile, cfg).peak_with == profile.view_peak
            # firing (ratio 0.001 of 32k, debounce 0): the peak with summaries too
            cfg = SweepConfig(0.001, 32000, 0, checkpoint=checkpoint)
            fast = evaluate_fast(profile, cfg, keep_curve=True)
            assert fast.fires and max(fast.curve or [0]) > 20_000
            assert fast.peak_with < 5_000 + profile.summary_cost


def test_inspect_estimated_largest_context_stops_at_the_last_call() -> None:
    info = inspect_conversation(submitted(False))
    assert info.largest_context_kind == "estimated"
    assert info.largest_context < 5_000
    assert info.estimated_tokens > 20_000  # the message is still counted, just not as a view
