"""Presets that follow the runtime release and model; the window auto resolves."""

from __future__ import annotations

import pytest

from transcript_tools.engine.policy_lines import threshold_tokens
from transcript_tools.engine.policy_toml import preset
from transcript_tools.engine.runtime_policy import follow_runtime, parse_version
from transcript_tools.engine.windows import documented_window, resolve_window


@pytest.mark.parametrize(
    ("version", "reserve"),
    [
        # 1.0.x logs of the shared corpus fire between 154,424 and 155,202 (a 45K buffer);
        # /context printed 45.0k in 2.0.x (anthropics/claude-code#10266, #11781) and 33k
        # in 2.1.x (anthropics/claude-code#23409)
        ("1.0.56", 45_000),
        ("2.0.26", 45_000),
        ("2.0.77", 45_000),
        ("2.1.0", 33_000),
        ("2.1.112", 33_000),
        (None, 33_000),  # unknown release: the preset as it is
    ],
)
def test_claude_code_buffer_by_release(version: str | None, reserve: int) -> None:
    policy = follow_runtime(preset("claude-code"), version, "claude-sonnet-4-5-20250929")
    assert policy.trigger.reserve_tokens == reserve
    assert threshold_tokens(policy.trigger, 200_000) == 200_000 - reserve


@pytest.mark.parametrize("version", ["2.0.76", "2.1.3"])
def test_claude_opus_4_5_reserves_its_output(version: str) -> None:
    # /context printed "Autocompact buffer: 77.0k tokens (38.5%)" for
    # claude-opus-4-5-20251101 (anthropics/claude-code#17660): 64,000 + 13,000; the line
    # 200,000 - 77,000 = 123,000 is where six 2.0.76 compactions came (docs/fidelity.md)
    policy = follow_runtime(preset("claude-code"), version, "claude-opus-4-5-20251101")
    assert threshold_tokens(policy.trigger, 200_000) == 123_000
    other = follow_runtime(preset("claude-code"), version, "claude-opus-4-1-20250805")
    assert other.trigger.reserve_tokens == (45_000 if version == "2.0.76" else 33_000)


def test_claude_code_one_million_model_and_only_unmodified_presets_follow() -> None:
    policy = follow_runtime(preset("claude-code"), "2.1.112", "claude-sonnet-4-5[1m]")
    assert (policy.trigger.window, policy.trigger.reserve_tokens) == (1_000_000, 33_000)
    from dataclasses import replace

    changed = replace(preset("claude-code"), description="mine")
    assert follow_runtime(changed, "2.0.26", None) is changed
    assert follow_runtime(preset("codex"), "0.104.0", "gpt-5.3-codex") == preset("codex")


def test_a_release_of_another_runtime_is_not_followed() -> None:
    # a Codex log's cli_version 0.104 is no Claude Code release: before, --policy
    # claude-code on it took the 1.0.x/2.0.x 45K buffer (0.104 < 2.1), and --policy
    # gemini-cli on a Codex 0.17 log Gemini CLI's 0.7 ratio (0.17 < 0.18)
    claude = preset("claude-code")
    assert follow_runtime(claude, "0.104.0-alpha.1", "gpt-5.3-codex", log_format="codex") == claude
    own = follow_runtime(claude, "2.0.26", None, log_format="claude-code")
    assert own.trigger.reserve_tokens == 45_000
    gemini = preset("gemini-cli")
    assert follow_runtime(gemini, "0.17.0", None, log_format="codex") == gemini
    assert follow_runtime(gemini, "0.17.0", None, log_format="gemini-cli").trigger.ratio == 0.7


@pytest.mark.parametrize(
    ("version", "ratio"),
    [("0.9.0", 0.7), ("0.17.1", 0.7), ("0.18.0", 0.5), ("0.49.0-preview.0", 0.5)],
)
def test_gemini_cli_ratio_by_release(version: str, ratio: float) -> None:
    # 0.7 (google-gemini/gemini-cli#5721), 0.5 from google-gemini/gemini-cli#13517
    assert follow_runtime(preset("gemini-cli"), version, "gemini-2.5-pro").trigger.ratio == ratio


def test_version_parse() -> None:
    assert parse_version("0.104.0-alpha.1") == (0, 104, 0)
    assert parse_version("2.1.112") == (2, 1, 112)
    assert parse_version("unknown") is None
    assert parse_version(None) is None


def test_window_order_log_model_policy_default() -> None:
    assert resolve_window(258_400, "gpt-5.3-codex", 200_000, 32_000) == (258_400, "log")
    assert resolve_window(None, "claude-opus-4-1-20250805", 0, 32_000) == (200_000, "model")
    assert resolve_window(None, "gemini-2.5-pro", 0, 32_000) == (1_048_576, "model")
    assert resolve_window(None, "my-local-llama", 200_000, 32_000) == (200_000, "policy")
    assert resolve_window(None, None, 0, 32_000) == (32_000, "default")
    assert documented_window("openrouter/anthropic/claude-sonnet-4") == 200_000  # last segment
    assert documented_window("my-local-llama") is None
    assert documented_window("anthropic/claude-sonnet-4") == 200_000
    assert documented_window("gpt-5.3-codex") == 272_000
