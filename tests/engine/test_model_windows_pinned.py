"""The documented context window of each model family the window table holds, pinned row by
row (a single-point mutation run, docs/testing.md, found rows no test read).

Each expected value is the one the table's cited source documents: Anthropic's models
overview (200K for every current Claude model), openai/codex ``openai_model_info.rs``
(CONTEXT_WINDOW_272K for the GPT-5 family), OpenAI's model pages (gpt-4.1: 1,047,576;
gpt-4o: 128,000; o3 / o4-mini: 200,000) and Gemini CLI's ``tokenLimits.ts`` (1,048,576).
"""

from __future__ import annotations

import pytest

from transcript_tools.engine.windows import documented_window


@pytest.mark.parametrize(
    ("model", "window"),
    [
        ("claude-sonnet-4-5", 200_000),
        ("gpt-5", 272_000),
        ("codex-mini-latest", 272_000),
        ("gpt-4.1-mini", 1_047_576),
        ("gpt-4o-2024-08-06", 128_000),
        ("o3", 200_000),
        ("o4-mini", 200_000),
        ("gemini-2.5-flash", 1_048_576),
        ("claude-opus-4-6[1m]", 1_000_000),
        ("  Claude-Sonnet-4-5  ", 200_000),  # read stripped and lower-cased
    ],
)
def test_each_model_family_has_its_documented_window(model: str, window: int) -> None:
    assert documented_window(model) == window


def test_a_model_id_the_table_does_not_hold_has_no_documented_window() -> None:
    assert documented_window("") is None
    assert documented_window(None) is None
    assert documented_window("mistral-large") is None
