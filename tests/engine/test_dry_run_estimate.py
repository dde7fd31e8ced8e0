"""A dry run under ``--measure current`` estimates what its summaries would do.

A dry run writes no summary, so under the current measure the view never shrinks and
the watermark never drops: left alone it promised a summary every ``debounce_turns``
turns that the replay never makes. From the first would-be summary on, the dry run's
watermark is the sweep's estimate (``rules.estimated_summary_view`` over the focused
window, the summary assumed ``SUMMARY_MAX_TOKENS`` long); the records, the text report
and the end-of-run line say so, and the fixed-cadence warning is not raised by a
schedule only the missing summaries made.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.sweep_specs import build, config_spec, conversation_spec
from transcript_tools.cli.main import cli
from transcript_tools.engine.config import (
    Checkpoint,
    Measure,
    ReplaySettings,
    SlotMode,
    SummaryConfig,
)
from transcript_tools.engine.rules import FIRED, skip_reason, split_units
from transcript_tools.engine.seed_defaults import SUMMARY_MAX_TOKENS
from transcript_tools.engine.session import ESTIMATED, SessionEngine
from transcript_tools.sweep.config import SweepConfig
from transcript_tools.sweep.simulate import profile_conversation


def long_conversation(path: Path, turns: int = 20) -> Path:
    """Turns of ~4,000 estimated tokens and no recorded usage: the whole history passes
    the default threshold (24,000) at turn 6, three turns plus a summary never do."""
    rows: list[dict[str, str]] = []
    for t in range(turns):
        words = " ".join(f"detail{t}x{i} value{i}" for i in range(300))
        rows.append({"role": "user", "content": f"Request {t}: look at module m{t}. {words}"})
        notes = " ".join(f"note{t}y{i}" for i in range(200))
        rows.append({"role": "assistant", "content": f"Done with m{t}. {notes}"})
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


def run(*args: str) -> object:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def fired(out: Path) -> list[int]:
    lines = (out / "decisions.jsonl").read_text().splitlines()
    return [d["turn"] for d in map(json.loads, lines) if d["decision"] in FIRED]


@pytest.mark.parametrize("checkpoint", ["turn", "call"])
def test_dry_run_fires_as_the_sweep_and_the_replay(tmp_path: Path, checkpoint: str) -> None:
    conv = long_conversation(tmp_path / "conv.jsonl")
    opts = ["--measure", "current", "--checkpoint", checkpoint]
    dry = run("replay", str(conv), *opts, "--dry-run", "--out", str(tmp_path / "dry"))
    assert dry.exit_code == 0, dry.stderr
    full = run("replay", str(conv), *opts, "--out", str(tmp_path / "full"), "--silent")
    assert full.exit_code == 0, full.stderr
    sweep = run("sweep", str(conv), *opts, "--json")
    assert sweep.exit_code == 0, sweep.stderr
    [config] = json.loads(sweep.stdout)["configs"]
    # without the estimate the dry run fired at 6, 9, 12, 15, 18 (one summary per debounce)
    assert fired(tmp_path / "dry") == fired(tmp_path / "full") == [6, 12, 18]
    assert config["summary_calls"] == 3
    assert (
        "3 summaries would fire (dry run; after the first, the schedule rests on an estimate"
        in dry.stderr
    )
    assert "fired every" not in dry.stderr  # no cadence: the summaries' effect is estimated


def test_dry_run_says_where_the_schedule_rests_on_the_estimate(tmp_path: Path) -> None:
    conv = long_conversation(tmp_path / "conv.jsonl")
    out = tmp_path / "dry"
    assert run("replay", str(conv), "--measure", "current", "--dry-run", "--out", str(out))
    decisions = [json.loads(line) for line in (out / "decisions.jsonl").read_text().splitlines()]
    # up to the first would-be summary the watermark is measured; after it, estimated
    assert all(ESTIMATED not in d for d in decisions[:7])
    for d in decisions[7:]:
        assert d[ESTIMATED] == SUMMARY_MAX_TOKENS
        assert d["watermark"] < d["watermark_without_summaries"]
    report = run("replay", str(conv), "--measure", "current", "--dry-run")
    assert "estimated from turn 7 on: each would-be summary assumed 1,024 tokens" in report.stdout
    # the cumulative measure never depends on summaries: nothing estimated, nothing said
    cumulative = run("replay", str(conv), "--dry-run", "--out", str(tmp_path / "cum"))
    assert "estimate" not in cumulative.stderr
    assert ESTIMATED not in (tmp_path / "cum" / "decisions.jsonl").read_text()


def test_full_mode_dry_run_is_not_estimated(tmp_path: Path) -> None:
    """Full mode: summaries never change the view, so the measured schedule is the replay's."""
    conv = long_conversation(tmp_path / "conv.jsonl")
    opts = ["--measure", "current", "--mode", "full"]
    assert run("replay", str(conv), *opts, "--dry-run", "--out", str(tmp_path / "dry"))
    assert run("replay", str(conv), *opts, "--out", str(tmp_path / "full"), "--silent")
    assert fired(tmp_path / "dry") == fired(tmp_path / "full") == [6, 9, 12, 15, 18]
    assert ESTIMATED not in (tmp_path / "dry" / "decisions.jsonl").read_text()


@settings(max_examples=80, deadline=None)
@given(conversation_spec, config_spec, st.sampled_from(list(Checkpoint)), st.integers(1, 4))
def test_dry_run_watermark_is_the_sweeps_estimate(
    spec: tuple, cfg: SweepConfig, checkpoint: Checkpoint, keep: int
) -> None:
    """Random conversations: the dry run's watermark after a would-be summary is the
    sweep's ``ConversationSeries.focused_size`` for the same configuration -- one estimate, and the
    schedule the checkpoint makes on it."""
    cfg = replace(cfg, checkpoint=checkpoint, measure=Measure.CURRENT, mode=SlotMode.FOCUSED)
    conv = build(spec)
    base = SummaryConfig()
    profile = profile_conversation(conv, keep_recent_turns=keep, checkpoint=checkpoint)
    settings_ = ReplaySettings(
        summary=cfg.summary_config(base),
        measure=Measure.CURRENT,
        dry_run=True,
        keep_recent_turns=keep,
        checkpoint=checkpoint,
    )
    engine = SessionEngine(conv.session_id, settings_)
    for _, messages in split_units(conv.messages, checkpoint):
        assert engine.submit_turn(messages) is None
    covered = None
    last = 0
    for turn, record in enumerate(engine.decisions):
        expected = profile.view[turn] if covered is None else profile.focused_size(turn, covered)
        assert record["watermark"] == expected
        assert (ESTIMATED in record) == (covered is not None)
        skip = skip_reason(
            turn, last, expected, cfg.threshold, cfg.debounce_turns, profile.history_end[turn] == 0
        )
        assert (record["decision"] in FIRED) == (skip is None)
        if skip is None:
            covered = last = turn
