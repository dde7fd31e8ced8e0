"""The sweep's per-grid shortcuts give what the work they skip would give: each is
compared with the uncached path it stands in for (docs/performance.md, "The policy grid")."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_tools.engine.config import Checkpoint, ReplaySettings, SummaryConfig, TurnPath
from transcript_tools.engine.drive import drive_conversation
from transcript_tools.engine.messages import (
    AssistantMessage,
    Conversation,
    Message,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    UserMessage,
)
from transcript_tools.engine.policy_engine import with_policy
from transcript_tools.engine.policy_toml import preset, preset_names
from transcript_tools.engine.prompt import load_template
from transcript_tools.engine.requests import SummaryOutcome, SummaryRequest
from transcript_tools.engine.rules import split_units
from transcript_tools.engine.session import SessionEngine
from transcript_tools.engine.tokens import estimate_text_tokens
from transcript_tools.reporter import QUIET
from transcript_tools.sweep import simulate
from transcript_tools.sweep.config import SweepConfig
from transcript_tools.sweep.driver import Sweep, _offline_executor, sweep_grid
from transcript_tools.sweep.engine_path import engine_for, prompt_tokens
from transcript_tools.sweep.simulate import formatted_prefix, profile_conversation

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def _uncached_engine(
    conv: Conversation, cfg: SweepConfig, base: SummaryConfig, keep: int, path: TurnPath
) -> SessionEngine:
    """The engine as built before the settings were made once per configuration."""
    template = load_template(None)
    built = ReplaySettings(
        summary=cfg.summary_config(base),
        mode=cfg.mode,
        keep_recent_turns=keep,
        path=path,
        measure=cfg.measure,
        template_name=template.name,
        checkpoint=cfg.checkpoint,
    )
    built = with_policy(built, cfg.policy)
    return SessionEngine(
        conv.session_id, built, template=template if built.policy is None else None
    )


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(preset_names()),
    st.lists(st.integers(1000, 400_000), min_size=1, max_size=3),
    st.integers(1, 5),
    st.sampled_from(list(TurnPath)),
)
def test_engine_settings_made_once_equal_those_made_per_conversation(
    name: str, windows: list[int], keep: int, path: TurnPath
) -> None:
    """Every configuration at every window, asked in any order and more than once: the
    engine's settings, policy and template are those built afresh."""
    conv = Conversation("s", "s.jsonl", "test", [UserMessage.text("hi")])
    base = SummaryConfig()
    policy = preset(name)
    for window in [*windows, *reversed(windows)]:
        cfg = SweepConfig(
            policy.trigger.ratio,
            window,
            policy.trigger.debounce,
            measure=policy.trigger.measure.engine,
            checkpoint=policy.trigger.unit,
            policy=policy,
        )
        cfg = replace(cfg, policy=policy if name != "seed" else None)
        engine = engine_for(conv, cfg, base, load_template(None), keep, "offline", path)
        fresh = _uncached_engine(conv, cfg, base, keep, path)
        assert engine.settings == fresh.settings
        assert engine.policy == fresh.policy
        assert engine.template == fresh.template
        assert engine._line == fresh._line


texts = st.sampled_from(["word ", "数据 ", "x=1; ", "\n\n", "Path/to/file.py:12 ", "é "])
turn_specs = st.lists(
    st.tuples(st.lists(texts, min_size=1, max_size=4), st.integers(1, 80), st.booleans()),
    min_size=1,
    max_size=25,
)


def _conversation(turns: list[tuple[list[str], int, bool]]) -> Conversation:
    messages: list[Message] = [SystemMessage("You are terse.")]
    for n, (parts, repeat, tool) in enumerate(turns):
        text = "".join(parts) * repeat
        messages.append(UserMessage.text(f"task {n}: {text[:200]}"))
        if tool:
            messages.append(
                AssistantMessage((TextBlock("look"), ToolUseBlock(f"c{n}", "grep", {"q": n})))
            )
            messages.append(ToolResultMessage(f"c{n}", text))
        messages.append(AssistantMessage.text(f"done {n} " + text[:300]))
    return Conversation("s", "s.jsonl", "test", messages)


def small_window_config(name: str) -> SweepConfig:
    """A sweep configuration of preset ``name`` (the seed's: no policy) at a window small
    enough for several summaries a conversation."""
    policy = preset(name)
    return SweepConfig(
        policy.trigger.ratio,
        1500,
        0,
        measure=policy.trigger.measure.engine,
        checkpoint=policy.trigger.unit,
        policy=policy if name != "seed" else None,
    )


@settings(max_examples=40, deadline=None)
@given(turn_specs, st.sampled_from(["seed", "aider", "langchain", "codex", "opencode"]))
def test_a_prompts_tokens_read_from_the_offline_usage_are_its_estimate(
    turns: list[tuple[list[str], int, bool]], name: str
) -> None:
    """The sweep reads a summary prompt's tokens from the offline provider's usage: the
    same figure as estimating the prompt again."""
    conv = _conversation(turns)
    cfg = small_window_config(name)
    template = load_template(None)
    engine = engine_for(conv, cfg, SummaryConfig(), template, 3, "offline")
    executor = _offline_executor()

    async def execute(request: SummaryRequest, _left: int) -> SummaryOutcome:
        return await executor.execute(request)

    asyncio.run(drive_conversation(conv, engine, execute))
    for summary in engine.summaries:
        assert summary["provider"] == "offline"
        prompt = engine.prompts[summary["prompt_sha256"]]
        assert prompt_tokens(summary, prompt) == estimate_text_tokens(prompt)
    # another provider's usage (a cached response) is not read: the prompt is estimated
    for summary in engine.summaries:
        other = {**summary, "provider": "anthropic", "usage": {"input_tokens": -1}}
        prompt = engine.prompts[summary["prompt_sha256"]]
        assert prompt_tokens(other, prompt) == estimate_text_tokens(prompt)  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None)
@given(turn_specs, st.sampled_from([0, 7, 2000]))
def test_a_profile_with_the_turns_formatted_history_is_the_profile_afresh(
    turns: list[tuple[list[str], int, bool]], cut: int
) -> None:
    """The sweep's profile of calls reads the formatted history of its profile of turns:
    the same series as formatting the history again."""
    conv = _conversation(turns)
    base = SummaryConfig(max_tool_result_chars=cut)
    by_turn = profile_conversation(conv, base=base, checkpoint=Checkpoint.TURN)
    for checkpoint in Checkpoint:
        split = split_units(conv.messages, checkpoint)
        shared = profile_conversation(
            conv, base=base, turns=split, checkpoint=checkpoint, formatted=by_turn.formatted
        )
        fresh = profile_conversation(conv, base=base, turns=split, checkpoint=checkpoint)
        assert shared == fresh
        assert shared.formatted == formatted_prefix(conv, base)


def test_the_sweep_formats_each_history_once_in_a_grid_of_both_units(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A grid of turn and call units profiles each conversation in both, and formats
    its history once."""
    made: list[str] = []

    def counted(conv: Conversation, base: SummaryConfig) -> tuple[list[int], list[int]]:
        made.append(conv.session_id)
        return formatted_prefix(conv, base)

    monkeypatch.setattr(simulate, "formatted_prefix", counted)
    # the seed's own grid in both units (a grid of policies alone reads no formatted
    # history: simulate.unit_profile)
    configs = sweep_grid((), checkpoints=[Checkpoint.TURN, Checkpoint.CALL])
    assert {cfg.checkpoint for cfg in configs} == set(Checkpoint)
    result = Sweep(configs, reporter=QUIET).run([str(SAMPLES)])
    assert result.conversations > 0 and len(made) == result.conversations
