"""A grid whose every row has a policy profiles its conversations without the seed's
series (``simulate.unit_profile``): what its rows read of a profile must be the full
profile's, and the full profile is still made wherever a seed row or a chart reads it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.corpus import CORPUS, FIXTURES, needs_corpus
from transcript_tools.engine.config import Checkpoint
from transcript_tools.engine.policy_toml import preset
from transcript_tools.engine.rules import split_units
from transcript_tools.formats.corpus import CorpusReader
from transcript_tools.reporter import QUIET
from transcript_tools.sweep import driver
from transcript_tools.sweep.driver import Sweep, sweep_grid
from transcript_tools.sweep.idle import unit_profile
from transcript_tools.sweep.simulate import profile_conversation

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
# what a policy row reads of its profile (engine_path, idle, stats, compare.collect)
READ = (
    "index",
    "session_id",
    "path",
    "turns",
    "history_end",
    "starts",
    "compaction_turns",
    "measured_end",
    "keep_recent_turns",
)


def _same_fields(folder: Path) -> int:
    compared = 0
    for index, conv in enumerate(CorpusReader().conversations([str(folder)])):
        for checkpoint in Checkpoint:
            split = split_units(conv.messages, checkpoint)
            full = profile_conversation(
                conv, index=index, turns=split, checkpoint=checkpoint, keep_recent_turns=2
            )
            lite = unit_profile(conv, split, index=index, keep_recent_turns=2)
            for name in READ:
                assert getattr(lite, name) == getattr(full, name), (conv.path, checkpoint, name)
            compared += 1
    return compared


def test_a_unit_profile_is_the_full_profile_where_a_policy_row_reads_it() -> None:
    assert _same_fields(SAMPLES) + _same_fields(FIXTURES) > 20


@needs_corpus
def test_a_unit_profile_is_the_full_profile_on_the_real_corpus() -> None:
    # the logs with recorded compactions and usage (ShareGPT's thousand chats left out)
    folders = [d for d in CORPUS.iterdir() if d.is_dir() and d.name != "sharegpt"]
    assert sum(_same_fields(folder) for folder in folders) > 40


def _profiles(monkeypatch: pytest.MonkeyPatch, policies: list[Any], sample: int) -> list[str]:
    """Which profile each conversation got in a sweep of ``policies`` (None: the seed's grid)."""
    made: list[str] = []
    lite, full = driver.unit_profile, driver.profile_conversation
    monkeypatch.setattr(
        driver, "unit_profile", lambda *a, **k: made.append("unit") or lite(*a, **k)
    )
    monkeypatch.setattr(
        driver, "profile_conversation", lambda *a, **k: made.append("full") or full(*a, **k)
    )
    configs = sweep_grid(policies, [8_000])
    Sweep(configs, reporter=QUIET, sample_size=sample).run([str(SAMPLES)])
    return made


def test_the_unit_profile_only_where_no_row_or_chart_reads_the_seeds_series(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    policies = [preset("seed"), preset("codex"), preset("aider")]
    assert set(_profiles(monkeypatch, policies, 0)) == {"unit"}
    assert set(_profiles(monkeypatch, policies, 3)) == {"full"}  # a report charts them
    assert set(_profiles(monkeypatch, [], 0)) == {"full"}  # the seed's own grid
