"""auto's fallback window: a log naming no window runs at --fallback-window under every
policy (tsum compare), and a log that names one keeps its own."""

from __future__ import annotations

from transcript_tools.engine.config import AUTO
from transcript_tools.engine.messages import AssistantMessage, Conversation, UserMessage
from transcript_tools.engine.policy_toml import preset
from transcript_tools.sweep.config import FALLBACK, sweep_grid


def _conversation(model: str | None) -> Conversation:
    reply = AssistantMessage.text("done")
    if model is not None:
        reply = AssistantMessage(reply.blocks, reply.usage, model)
    return Conversation("c", "mem", "native", [UserMessage.text("hello"), reply])


def test_a_log_naming_no_window_runs_every_policy_at_the_fallback() -> None:
    # claude-code's own window is 200,000 and gemini-cli's 1,048,576: without a fallback
    # the two would run this log at different windows
    policies = [preset("claude-code"), preset("gemini-cli")]
    windowless = _conversation(None)
    own = [cfg.for_conversation(windowless) for cfg in sweep_grid(policies, [AUTO])]
    assert [c.max_context_tokens for c in own] == [200_000, 1_048_576]
    grid = sweep_grid(policies, [AUTO], fallback_window=8_000)
    fell_back = [cfg.for_conversation(windowless) for cfg in grid]
    assert [(c.max_context_tokens, c.window_from) for c in fell_back] == [(8_000, FALLBACK)] * 2


def test_a_log_whose_model_is_known_keeps_its_models_window() -> None:
    grid = sweep_grid([preset("claude-code"), preset("gemini-cli")], [AUTO], fallback_window=8_000)
    known = _conversation("gpt-4o-2024-08-06")  # gpt-4o: 128,000 (engine/windows.py)
    assert [
        (c.max_context_tokens, c.window_from) for c in (g.for_conversation(known) for g in grid)
    ] == [(128_000, "model")] * 2


def test_the_seeds_row_falls_back_too_and_a_fixed_window_ignores_the_fallback() -> None:
    seed = preset("seed")
    [auto] = sweep_grid([seed], [AUTO], fallback_window=8_000)
    assert auto.for_conversation(_conversation(None)).max_context_tokens == 8_000
    [fixed] = sweep_grid([seed], [4_000], fallback_window=8_000)
    assert fixed.fallback_window == 0 and fixed.for_conversation(_conversation(None)) is fixed
