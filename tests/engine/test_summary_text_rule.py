"""One answer to "does the checkpoint's next step depend on what a summary says?".

``engine.rules.depends_on_summary_text`` replaces the sweep's ``needs_engine`` and the
batch driver's ``schedule_is_text_independent``, which disagreed: the sweep ran the engine
for estimated usage under the cumulative measure, a case ``--batch`` plans ahead. The
engine sides with ``--batch``: an estimated call is counted on the whole history before
it, never on tsum's view, so summaries of any length give the same schedule.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

import transcript_tools as tt
from tests.support.fakes import FakeProvider, drive
from transcript_tools.engine.config import Measure, ReplaySettings, SlotMode, SummaryConfig
from transcript_tools.engine.prompt import load_template, template_from_config
from transcript_tools.engine.rules import depends_on_summary_text, split_turns
from transcript_tools.engine.session import SessionEngine
from transcript_tools.reporter import QUIET
from transcript_tools.sweep import driver as sweep_driver
from transcript_tools.sweep.driver import Sweep, sweep_grid

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "chinese_migration.jsonl"
WINDOW = SummaryConfig(max_context_tokens=4000)
VIEW_WITH_SUMMARIES = {
    "peak_with",
    "peaks_with_sum",
    "view_with_sum",
    "prompt_tokens",
    "recall_hits",
    "recall_total",
    "recall_conversations",
}


def schedule(
    summary: str, measure: Measure, mode: SlotMode = SlotMode.FOCUSED, window: int = 4000
) -> list[tuple]:
    """Each turn's (decision, cost_so_far, watermark), summaries written as ``summary``."""
    (conv,) = list(tt.read_corpus(str(SAMPLE)))
    settings = ReplaySettings(
        summary=SummaryConfig(max_context_tokens=window, trigger_token_ratio=0.5, debounce_turns=1),
        mode=mode,
        measure=measure,
    )
    engine = SessionEngine(conv.session_id, settings)
    drive(engine, [m for _, m in split_turns(conv.messages)], FakeProvider(default=summary))
    assert any(d["tokens"] == "estimated" for d in engine.decisions)  # no usage recorded
    return [(d["decision"], d["cost_so_far"], d["watermark"]) for d in engine.decisions]


def test_estimated_usage_under_the_cumulative_measure_ignores_summary_text() -> None:
    short = schedule("ok", Measure.CUMULATIVE)
    long = schedule("a much longer summary " * 80, Measure.CUMULATIVE)
    assert sum(d == "summarized" for d, _, _ in short) >= 2  # the checkpoint fired
    assert short == long


def test_the_current_measure_in_focused_mode_follows_summary_text() -> None:
    # the rule's True side is real: the view holds the summary, so its length shows
    short = schedule("ok", Measure.CURRENT, window=800)
    long = schedule("a much longer summary " * 80, Measure.CURRENT, window=800)
    assert sum(d == "summarized" for d, _, _ in short) >= 2
    assert [w for _, _, w in short] != [w for _, _, w in long]
    # ... and in Full mode it does not: summaries never enter the view
    full = schedule("ok", Measure.CURRENT, SlotMode.FULL, window=800)
    assert sum(d == "summarized" for d, _, _ in full) >= 2
    assert full == schedule("a much longer summary " * 80, Measure.CURRENT, SlotMode.FULL, 800)


@pytest.mark.parametrize(
    ("mode", "measure", "template", "expected"),
    [
        (SlotMode.FOCUSED, Measure.CUMULATIVE, "zh", False),
        (SlotMode.FULL, Measure.CUMULATIVE, "zh", False),
        (SlotMode.FULL, Measure.CURRENT, "zh", False),
        (SlotMode.FOCUSED, Measure.CURRENT, "zh", True),
        (SlotMode.FOCUSED, Measure.CUMULATIVE, "en", True),  # {{ previous_summary }}
        (SlotMode.FULL, Measure.CUMULATIVE, None, True),  # template not known yet
    ],
)
def test_the_rule(mode: SlotMode, measure: Measure, template: str | None, expected: bool) -> None:
    loaded = None if template is None else load_template(template)
    assert depends_on_summary_text(mode, measure, loaded) is expected


def _sweep(monkeypatch: pytest.MonkeyPatch, *, force_engine: bool) -> tuple[int, int, list]:
    if force_engine:
        monkeypatch.setattr(sweep_driver, "depends_on_summary_text", lambda *a: True)
    sweep = Sweep(
        sweep_grid((), [4000], ratios=[0.5, 0.75], debounces=[3], base=WINDOW),
        base=WINDOW,
        template=template_from_config(WINDOW.summary_prompt),
        reporter=QUIET,
    )
    result = sweep.run([str(SAMPLE)])
    # The schedule's figures. Not the view with summaries (peak_with, view_with_sum):
    # the token series assume a summary of the configured size, the engine measures the
    # offline summarizer's, for recorded usage and estimated alike; not prompt_tokens (one
    # estimate of the whole prompt against a sum of per-message estimates); not recall,
    # which only an engine run measures.
    figures = [
        {f.name: getattr(s, f.name) for f in fields(s) if f.name not in VIEW_WITH_SUMMARIES}
        for s in result.stats
    ]
    return result.fast_runs, result.engine_runs, figures


def test_the_sweep_computes_the_case_batch_plans_ahead_and_gets_the_engines_figures(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`tsum sweep samples/chinese_migration.jsonl --max-context-tokens 4000 --ratio
    0.5,0.75` ran the engine twice; the token series give the same schedule."""
    fast_runs, engine_runs, fast = _sweep(monkeypatch, force_engine=False)
    assert (fast_runs, engine_runs) == (2, 0)
    fast_runs, engine_runs, engine = _sweep(monkeypatch, force_engine=True)
    assert (fast_runs, engine_runs) == (0, 2)
    assert all(stats["calls"] for stats in fast)  # both configurations fired
    assert fast == engine
