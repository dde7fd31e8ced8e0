"""The seed as the engine runs it: one ``Policy`` (``policy_engine.seed_policy``), the
preset ``seed`` with the SummaryConfig's and the run's values, in the seed's own slot."""

from __future__ import annotations

from dataclasses import replace

from transcript_tools.engine.config import (
    Checkpoint,
    Measure,
    ReplaySettings,
    SlotMode,
    SummaryConfig,
)
from transcript_tools.engine.policy_engine import seed_policy, seed_shaped
from transcript_tools.engine.policy_slot import PolicySlot
from transcript_tools.engine.policy_toml import preset
from transcript_tools.engine.session import SessionEngine
from transcript_tools.engine.slot import ContextSlot


def test_at_the_defaults_the_seeds_policy_is_the_preset_seed() -> None:
    """Fails when a default of the seed's policy drifts from engine/presets/seed.toml."""
    assert seed_policy(SummaryConfig(), ReplaySettings()) == replace(preset("seed"), description="")


def test_each_setting_lands_in_its_part_of_the_seeds_policy() -> None:
    """Fails when a SummaryConfig or run value is dropped or put in the wrong part."""
    cfg = SummaryConfig(
        trigger_token_ratio=0.5,
        debounce_turns=1,
        max_tool_result_chars=7,
        max_transcript_chars=9,
        summary_marker="M",
    )
    settings = ReplaySettings(
        summary=cfg,
        keep_recent_turns=2,
        measure=Measure.CURRENT,
        checkpoint=Checkpoint.CALL,
        template_name="en",
    )
    policy = seed_policy(cfg, settings)
    trigger, given = policy.trigger, policy.summarizer_input
    assert (trigger.ratio, trigger.debounce, trigger.measure, trigger.unit) == (
        0.5,
        1,
        "current",
        "call",
    )
    assert (given.max_tool_result_chars, given.max_transcript_chars) == (7, 9)
    assert (policy.keep.turns, policy.placement.marker, policy.summary.template) == (2, "M", "en")
    assert seed_shaped(policy)  # the seed's settings vary nothing a policy would not


def test_without_a_summary_config_the_seeds_policy_keeps_the_runs_turns() -> None:
    """N2: no SummaryConfig, no checkpoint; the view still keeps the run's turns."""
    settings = ReplaySettings(summary=None, keep_recent_turns=5)
    policy = seed_policy(None, settings)
    assert policy.keep.turns == 5 and policy.trigger == preset("seed").trigger


def test_the_engine_runs_the_seed_in_the_seeds_slot_and_a_policy_in_its_own() -> None:
    """Fails when the one place that picks the slot picks the other one."""
    cfg = SummaryConfig(summary_marker="M")
    seed = SessionEngine("s", ReplaySettings(summary=cfg, mode=SlotMode.FULL, keep_recent_turns=4))
    assert type(seed.slot) is ContextSlot and seed.policy == seed_policy(cfg, seed.settings)
    assert seed.slot.mode is SlotMode.FULL and seed.slot.focused.keep_recent_turns == 4
    assert seed.slot.marker == "M"
    codex = preset("codex")
    run = SessionEngine("s", ReplaySettings(summary=cfg, policy=codex))
    assert type(run.slot) is PolicySlot and run.policy is codex
    assert run.slot.record_fields() == {"policy": "codex"} and seed.slot.record_fields() == {}
