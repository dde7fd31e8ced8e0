"""A policy's trigger forms, pinned against one-point edits (docs/testing.md): a reserve
ratio of the whole window refused with its value, a reserve or a whole-conversation
measure keeping a policy off the seed's path, and a preset following the log's runtime
release under ``--max-context-tokens auto``. Expected values come from the presets and
the sources engine/runtime_policy.py cites (Claude Code's 45K buffer before 2.1).
"""

from __future__ import annotations

import pytest

from transcript_tools.engine.config import ReplaySettings, SummaryConfig
from transcript_tools.engine.drive import session_window
from transcript_tools.engine.messages import AssistantMessage, Conversation, TextBlock, UserMessage
from transcript_tools.engine.policy import Policy, Trigger
from transcript_tools.engine.policy_engine import seed_shaped
from transcript_tools.engine.policy_toml import preset
from transcript_tools.errors import ConfigError


def test_a_reserve_ratio_of_the_whole_window_is_refused_naming_its_value() -> None:
    """``reserve_ratio == 1`` (fails on ``== 2``: 1 is let through) and the value the
    message gives (fails on ``2.0``)."""
    with pytest.raises(ConfigError) as refused:
        Trigger(reserve_ratio=1.0)
    assert str(refused.value) == (
        "trigger.reserve_ratio: must be below 1 (it reserves the window), got 1.0"
    )
    assert Trigger(reserve_ratio=0.99).reserve_ratio == 0.99


def test_a_ratio_policy_with_a_reserve_or_measuring_the_conversation_is_not_seed_shaped() -> None:
    """The seed has no reserve and measures its view: each of a reserve in tokens, a
    reserve ratio and the whole-conversation measure alone takes a policy off the seed's
    path (fails on ``and``: only all three together would)."""
    assert seed_shaped(Policy()) is True
    assert seed_shaped(Policy(trigger=Trigger(reserve_tokens=1_000))) is False
    assert seed_shaped(Policy(trigger=Trigger(reserve_ratio=0.1))) is False
    assert seed_shaped(Policy(trigger=Trigger(measure="conversation"))) is False


def _claude_code_log(release: str) -> Conversation:
    messages = [
        UserMessage.text("hello"),
        AssistantMessage((TextBlock("hi"),), None, "claude-sonnet-4-5"),
    ]
    return Conversation("s", "s.jsonl", "claude-code", messages, runtime_version=release)


def test_auto_window_runs_the_preset_of_the_release_that_wrote_the_log() -> None:
    """``claude-code`` reserves 33,000 tokens (2.1 on); a 2.0.10 log was written by a
    release that reserved 45,000: the settings ``--max-context-tokens auto`` gives run
    the 45,000 (fails on ``followed == policy``: the preset's 33,000 stays)."""
    policy = preset("claude-code")
    assert policy.trigger.reserve_tokens == 33_000
    given = ReplaySettings(summary=SummaryConfig(), auto_window=True, policy=policy)
    settings, fields = session_window(_claude_code_log("2.0.10"), given)
    assert settings.policy is not None
    assert settings.policy.trigger.reserve_tokens == 45_000
    assert fields is not None
    same, _ = session_window(_claude_code_log("2.1.3"), given)
    assert same.policy == policy
