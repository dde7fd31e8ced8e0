"""The sweep's fast path and the engine report the same figures.

Random conversations x configurations x both built-in templates x both measures x
both modes. Where the sweep takes the fast path (``rules.depends_on_summary_text`` is False), every
figure the fast path reports must equal what the real engine, with summaries applied,
reports: firing turns, prompt characters, the per-turn view (its peak, sum and
overflow count) and the fixed-cadence flag. Where it does not, the sweep runs the
engine itself, so there is nothing to compare -- but the dry-run schedule must still
agree (``test_sweep.test_fast_schedule_equals_engine_dry_run``).

The fast path assumes a summary of ``summary_tokens`` estimated tokens; the fake
summarizer writes one summary text and the profile is told its size, so the view
sizes are comparable exactly.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.sweep_specs import build, config_spec, conversation_spec
from transcript_tools.engine.config import Checkpoint, SummaryConfig
from transcript_tools.engine.prompt import load_template
from transcript_tools.engine.requests import SummaryOutcome, SummaryRequest, SummaryResponse
from transcript_tools.engine.rules import depends_on_summary_text, split_turns, split_units
from transcript_tools.engine.tokens import estimate_text_tokens
from transcript_tools.sweep.config import SweepConfig
from transcript_tools.sweep.engine_path import evaluate_engine
from transcript_tools.sweep.simulate import evaluate_fast, profile_conversation

SUMMARY = "Goal: ship the parser. Done: tests pass. Next: review. " * 3
KEEP_RECENT_TURNS = 3


class FixedSummary:
    """An executor whose every summary is ``SUMMARY``."""

    async def execute(self, request: SummaryRequest, *, priority: int = 0) -> SummaryOutcome:
        return SummaryOutcome(SummaryResponse(SUMMARY, "fixed"))


def summary_tokens(base: SummaryConfig) -> int:
    # what the engine's summary message costs beyond its overhead and the marker
    marker = base.summary_marker
    return estimate_text_tokens(f"{marker} {SUMMARY}") - estimate_text_tokens(marker)


@settings(max_examples=150, deadline=None)
@given(
    conversation_spec,
    st.booleans(),
    config_spec,
    st.sampled_from(["zh", "en"]),
    st.integers(1, 4),
    st.sampled_from(list(Checkpoint)),
)
def test_fast_path_figures_equal_the_engine(
    spec: tuple,
    all_recorded: bool,
    cfg: SweepConfig,
    template_name: str,
    keep: int,
    checkpoint: Checkpoint,
) -> None:
    """Also per model call (``--checkpoint call``): the units are calls on both paths."""
    conv = build(spec, all_recorded=all_recorded)
    cfg = replace(cfg, checkpoint=checkpoint)
    base = SummaryConfig()
    template = load_template(template_name)
    profile = profile_conversation(
        conv,
        base=base,
        template=template,
        keep_recent_turns=keep,
        summary_tokens=summary_tokens(base),
        checkpoint=checkpoint,
    )
    if depends_on_summary_text(cfg.mode, cfg.measure, template):
        return  # the sweep runs the engine itself
    fast = evaluate_fast(profile, cfg, keep_curve=True)
    engine = asyncio.run(
        evaluate_engine(
            conv,
            split_units(conv.messages, checkpoint),
            profile,
            cfg,
            base=base,
            template=template,
            keep_recent_turns=keep,
            executor=FixedSummary(),
            provider_name="fixed",
        )
    )
    assert fast.fires == engine.fires
    assert fast.prompt_chars == engine.prompt_chars
    assert fast.curve == engine.curve
    assert fast.peak_with == engine.peak_with
    assert fast.sum_with == engine.sum_with
    assert fast.overflow == engine.overflow
    assert fast.fixed_cadence == engine.fixed_cadence
    # tokens: the fast path sums per-message estimates (each rounded up), the engine
    # estimates the whole prompt once; equal up to one token per message
    assert abs(fast.prompt_tokens - engine.prompt_tokens) <= len(conv.messages) * len(fast.fires)


def test_fast_path_is_taken_for_zh_and_not_for_a_prompt_showing_the_previous_summary() -> None:
    cfg = SweepConfig(0.5, 100, 1)
    assert not depends_on_summary_text(cfg.mode, cfg.measure, load_template("zh"))
    assert depends_on_summary_text(
        cfg.mode, cfg.measure, load_template("en")
    )  # {{ previous_summary }}


def test_en_prompt_characters_equal_the_engine() -> None:
    """A drift found once: the fast path rendered --prompt en without the previous
    summary. The sweep now runs the engine for it; the figures are the engine's."""
    from tests.support.sweep_specs import long_recorded
    from transcript_tools.sweep.driver import Sweep

    conv = long_recorded()
    template = load_template("en")
    cfg = SweepConfig(0.5, 20000, 2)
    profile = profile_conversation(conv, template=template)
    assert depends_on_summary_text(cfg.mode, cfg.measure, template)
    engine = asyncio.run(
        evaluate_engine(
            conv,
            split_turns(conv.messages),
            profile,
            cfg,
            base=SummaryConfig(),
            template=template,
            keep_recent_turns=3,
            executor=FixedSummary(),
            provider_name="fixed",
        )
    )
    fast = evaluate_fast(profile, cfg)
    assert fast.fires == engine.fires
    # without the previous summary the fast path would be short by its length each time
    assert engine.prompt_chars - fast.prompt_chars >= len(SUMMARY) * (len(engine.fires) - 1)
    assert Sweep([cfg], template=template)  # the driver takes the same template


def test_focused_view_keeps_every_turn_after_the_summary() -> None:
    """Debounce longer than keep_recent_turns: no turn falls between the summary and the
    window (docs/spec.md, "The focused view"), on the fast path and in the engine alike."""
    from tests.support.sweep_specs import long_recorded

    conv = long_recorded(turns=14)
    base = SummaryConfig()
    template = load_template("zh")
    cfg = SweepConfig(0.5, 20000, 5)
    profile = profile_conversation(
        conv, base=base, template=template, keep_recent_turns=1, summary_tokens=summary_tokens(base)
    )
    assert not depends_on_summary_text(cfg.mode, cfg.measure, template)
    fast = evaluate_fast(profile, cfg, keep_curve=True)
    engine = asyncio.run(
        evaluate_engine(
            conv,
            split_turns(conv.messages),
            profile,
            cfg,
            base=base,
            template=template,
            keep_recent_turns=1,
            executor=FixedSummary(),
            provider_name="fixed",
        )
    )
    assert fast.fires == engine.fires == [5, 10]
    assert fast.curve == engine.curve
    assert fast.curve is not None
    # after the summary at turn 5 the view grows turn by turn until the next summary
    assert fast.curve[6] < fast.curve[7] < fast.curve[8] < fast.curve[9]
