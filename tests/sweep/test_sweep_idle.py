"""A policy row proved never to act is measured from the original run without its engine
(sweep/idle.py): its outcome must be the engine's, field by field, for every preset."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.corpus import CORPUS, FIXTURES, needs_corpus
from transcript_tools.engine.config import Measure, ReplaySettings, SummaryConfig
from transcript_tools.engine.policy import PrePass
from transcript_tools.engine.policy_engine import with_policy
from transcript_tools.engine.policy_toml import preset, preset_names
from transcript_tools.reporter import QUIET
from transcript_tools.sweep import engine_path
from transcript_tools.sweep.config import AUTO
from transcript_tools.sweep.driver import Sweep, sweep_grid
from transcript_tools.sweep.idle import never_acts

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def _outcomes(
    paths: list[Path], monkeypatch: pytest.MonkeyPatch, idle: bool, windows: list[int | str]
) -> list[Any]:
    """Every (configuration, conversation) outcome of every preset at ``windows``; with
    ``idle`` False the shortcut is off (every policy row drives its engine)."""
    taken: list[int] = []
    shortcut = engine_path.idle_run

    def counted(*args: Any) -> Any:
        found = shortcut(*args) if idle else None
        taken.append(found is not None)
        return found

    monkeypatch.setattr(engine_path, "idle_run", counted)
    configs = sweep_grid([preset(name) for name in preset_names()], windows, fallback_window=8_000)
    seen: list[Any] = []
    sweep = Sweep(configs, reporter=QUIET, on_outcome=lambda *row: seen.append(row[:3]))
    sweep.run([str(p) for p in paths])
    return [seen, sum(taken), len(taken)]


def _same_as_the_engine(
    paths: list[Path], monkeypatch: pytest.MonkeyPatch, windows: list[int | str]
) -> None:
    fast, skipped, asked = _outcomes(paths, monkeypatch, True, windows)
    slow, none_skipped, _ = _outcomes(paths, monkeypatch, False, windows)
    assert none_skipped == 0
    # the shortcut is taken, and not everywhere (some rows act: the comparison bites)
    assert 0 < skipped < asked, (skipped, asked)
    assert len(fast) == len(slow)
    for (i, cfg, got), (j, cfg_slow, want) in zip(fast, slow, strict=True):
        assert (i, cfg) == (j, cfg_slow)
        assert got == want, (cfg.label, got, want)


def test_an_idle_policy_row_is_its_engine_run_on_the_samples_and_fixtures(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _same_as_the_engine([SAMPLES, FIXTURES], monkeypatch, [4_000, 32_000, AUTO])


@needs_corpus
def test_an_idle_policy_row_is_its_engine_run_on_the_real_corpus(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # every folder but ShareGPT's (a thousand short chats of one format): the logs with
    # recorded usage and windows, each format's size model and units
    folders = sorted(d for d in CORPUS.iterdir() if d.is_dir() and d.name != "sharegpt")
    assert len(folders) >= 5
    _same_as_the_engine(folders, monkeypatch, [AUTO])  # each log's own window


def _settings(name: str, **prepass: Any) -> ReplaySettings:
    settings = ReplaySettings(summary=SummaryConfig(max_context_tokens=100_000))
    policy = preset(name)
    if prepass:
        from dataclasses import replace

        policy = replace(policy, prepass=replace(policy.prepass, **prepass))
    return with_policy(settings, policy)


def test_never_acts_is_proved_only_below_every_line() -> None:
    # claude-code fires at window - 33k: 67,000 of 100,000
    cc = _settings("claude-code")
    assert cc.measure is Measure.CURRENT
    assert never_acts(cc, [10, 66_999], 0)
    assert not never_acts(cc, [10, 67_000], 0)
    assert not never_acts(cc, [], 0)  # nothing to prove it on
    # a pre-pass that looks at every view clears nothing while the outputs are protected
    prune = _settings("opencode-prune")  # protects the newest 40k of tool output
    assert never_acts(prune, [90_000], 39_999)
    assert not never_acts(prune, [90_000], 40_000)
    # a pre-pass with a trigger never looks below it, whatever the outputs
    late = _settings("opencode-prune", trigger_tokens=50_000)
    assert never_acts(late, [49_999], 10**9)
    assert not never_acts(late, [50_000], 10**9)
    assert never_acts(_settings("claude-code", kind="none"), [10], 10**9)
    assert PrePass().kind == "none"


@pytest.mark.parametrize("name", ["seed", "aider", "openhands"])
def test_triggers_not_on_the_view_are_never_proved_idle(name: str) -> None:
    # the seed's slot, the conversation measure (aider), every N units or messages
    settings = _settings(name)
    assert not never_acts(settings, [1], 0)
