"""The token estimator: calibrated on recorded prompt tokens (docs/estimates.md)."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.corpus import CORPUS as REAL
from transcript_tools.engine.messages import AssistantMessage, ToolUseBlock, UserMessage
from transcript_tools.engine.tokens import estimate_message_tokens, estimate_text_tokens
from transcript_tools.formats import read_conversations
from transcript_tools.formats.source import Source

MINI_SWE = REAL / "chat-completions" / "mini-swe-agent-deepseek"
MINI_SWE_FILES = sorted(MINI_SWE.rglob("*.traj.json")) if MINI_SWE.is_dir() else []


def prompt_errors(path: Path) -> list[float]:
    """|estimate - recorded| / recorded for every call with usage: the estimate of ALL messages before it."""
    errors = []
    for conv in read_conversations(Source(str(path), warn=lambda m: None)):
        before = 0
        for message in conv.messages:
            if (
                isinstance(message, AssistantMessage)
                and message.usage is not None
                and message.usage.input_tokens
            ):
                recorded = message.usage.input_tokens
                errors.append(abs(before - recorded) / recorded)
            before += estimate_message_tokens(message)
    return errors


@pytest.mark.skipif(
    not MINI_SWE_FILES,
    reason=f"mini-swe-agent runs not found under {MINI_SWE} (shared/ beside the repo)",
)
@pytest.mark.parametrize("path", MINI_SWE_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_median_error_on_mini_swe_agent_runs(path: Path) -> None:
    """The whole prompt is in these transcripts (except the bash tool's schema): within 15%."""
    errors = prompt_errors(path)
    if not errors:
        pytest.skip(
            f"{path.name}: no call with recorded usage (the run timed out before its first call)"
        )
    assert statistics.median(errors) <= 0.15, (
        f"{path.name}: median error {statistics.median(errors):.3f}"
    )


def test_empty_and_tiny() -> None:
    assert estimate_text_tokens("") == 0
    assert estimate_text_tokens("a") == 1
    assert estimate_text_tokens(" ") == 1


def test_english_prose_is_about_four_characters_per_token() -> None:
    prose = (
        "The build failed on the integration step because the cache key changed. Please check "
        "the migration script and rerun the nightly job with verbose logs enabled. "
    ) * 20
    ratio = len(prose) / estimate_text_tokens(prose)
    assert 3.6 <= ratio <= 4.8


def test_code_and_numbers_cost_more_than_prose() -> None:
    code = "for (i = 0; i < n; ++i) { a[i] = b[i] * 2; }\n" * 20
    listing = "-rw-r--r-- 1 root root 1239 May  6  2025 AUTHORS.md\n" * 20
    assert len(code) / estimate_text_tokens(code) < 3.5
    assert len(listing) / estimate_text_tokens(listing) < 3.0


def test_chinese_is_about_one_token_per_character() -> None:
    """ShareGPT-zh records no usage: published ratios span 0.6 (DeepSeek) to ~1.2 (cl100k) per character."""
    zh = (
        "我们决定把重试次数保持在三次，并把超时改为三十秒。请检查迁移脚本，然后重新运行夜间任务。"
        * 10
    )
    per_char = estimate_text_tokens(zh) / len(zh)
    assert 0.7 <= per_char <= 0.9
    mixed = "请运行 pytest -q 然后检查 tests/test_tokens.py 的输出。"
    assert estimate_text_tokens(mixed) > estimate_text_tokens("请运行然后检查的输出。")


def test_tool_calls_count_their_json_arguments() -> None:
    small = AssistantMessage((ToolUseBlock("c1", "bash", {"command": "ls"}),))
    large = AssistantMessage((ToolUseBlock("c1", "bash", {"command": "ls " + "-la " * 100}),))
    assert estimate_message_tokens(large) - estimate_message_tokens(small) >= 100
    odd = AssistantMessage(
        (ToolUseBlock("c1", "bash", {1: object()}),)
    )  # not JSON: falls back to repr
    assert estimate_message_tokens(odd) > 0
    assert estimate_message_tokens(UserMessage.text("hi")) > estimate_text_tokens("hi")


@settings(max_examples=200, deadline=None)
@given(st.text(), st.text())
def test_additive_up_to_rounding(a: str, b: str) -> None:
    """Linear in the characters: a history's estimate is the sum of its parts (prefix sums stay exact)."""
    whole = estimate_text_tokens(a + b)
    parts = estimate_text_tokens(a) + estimate_text_tokens(b)
    assert parts - 1 <= whole <= parts
