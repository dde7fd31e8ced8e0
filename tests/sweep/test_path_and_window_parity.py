"""``--path stream`` and ``--max-context-tokens auto`` give the same answers in ``tsum sweep``
and ``tsum eval`` as in ``tsum replay``.

All three run one conversation through ``engine.drive.drive_conversation`` and take the
window of ``--max-context-tokens auto`` from ``engine.drive.recorded_window``. The Codex
fixture records a 258,400-token window: under ``auto`` it never fires where the fixed
32,000 fires at turn 1, so a command that ignored ``auto`` would disagree with replay.
Both turn paths give one schedule by design (``engine/session.py``: ``finalize_turn``
corrects the index for the check and the assignment); that the stream path ran is shown
by counting ``finalize_turn`` calls.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from transcript_tools.cli.main import cli
from transcript_tools.engine.session import SessionEngine

ROOT = Path(__file__).resolve().parents[2]
CODEX = str(ROOT / "tests" / "fixtures" / "formats" / "representative_codex.jsonl")
LONG = str(ROOT / "samples" / "long_session.jsonl")
FIRED = ("summarized", "failed")


@pytest.fixture
def stream_units(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts ``finalize_turn`` calls in this process (the stream path's second half)."""
    calls = [0]
    finalize = SessionEngine.finalize_turn

    def counted(self: SessionEngine) -> Any:
        calls[0] += 1
        return finalize(self)

    monkeypatch.setattr(SessionEngine, "finalize_turn", counted)
    return calls


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TSUM_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TSUM_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)  # no tsum.toml of the checkout


def invoke(*args: str) -> Any:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output + result.stderr
    return result


def replay_fires(tmp_path: Path, path: str, options: list[str]) -> list[int]:
    """The turns at which replay's checkpoint fired."""
    out = tmp_path / ("replay-" + "-".join(options).replace("/", "_"))
    invoke("replay", path, "--out", str(out), "--silent", *options)
    records = [json.loads(line) for line in (out / "decisions.jsonl").read_text().splitlines()]
    return [d["turn"] for d in records if d["decision"] in FIRED]


WINDOWS = ["auto", "32000"]
# the sweep's fast path, then its engine path; ratios at which the fixture's windows differ
MEASURES = {"cumulative": "0.3", "current": "0.05"}


@pytest.mark.parametrize("measure", MEASURES)
def test_the_fixture_tells_auto_from_a_fixed_window(tmp_path: Path, measure: str) -> None:
    base = ["--debounce", "1", "--ratio", MEASURES[measure], "--measure", measure]
    auto = replay_fires(tmp_path, CODEX, [*base, "--max-context-tokens", "auto"])
    fixed = replay_fires(tmp_path, CODEX, [*base, "--max-context-tokens", "32000"])
    assert fixed == [1] and auto == []


@pytest.mark.parametrize("measure", MEASURES)
@pytest.mark.parametrize("source", [CODEX, LONG], ids=["codex", "long_session"])
def test_sweep_answers_as_replay(
    tmp_path: Path, stream_units: list[int], source: str, measure: str
) -> None:
    ratio = MEASURES[measure]
    base = ["--debounce", "1", "--ratio", ratio, "--measure", measure, "--path", "stream"]
    for window in WINDOWS:
        fires = replay_fires(tmp_path, source, [*base, "--max-context-tokens", window])
        stream_units[0] = 0
        result = invoke("sweep", source, *base, "--max-context-tokens", window, "--json")
        row = json.loads(result.stdout)["configs"][0]
        assert row["max_context_tokens"] == (window if window == "auto" else int(window))
        assert row["summary_calls"] == len(fires), (window, fires)
        assert row["first_trigger_turns"] == ({str(fires[0]): 1} if fires else {})
        if measure == "current" and fires:  # the engine path ran, on the stream path
            assert stream_units[0] > 0


def test_sweep_auto_needs_no_engine_run(tmp_path: Path) -> None:
    """The fast path honours auto (a per-conversation integer) and the stream path (the
    same schedule): ``depends_on_summary_text`` stays the one rule of which path runs."""
    result = invoke(
        "sweep",
        CODEX,
        LONG,
        "--max-context-tokens",
        "auto,32000",
        "--path",
        "stream",
        "--ratio",
        "0.3",
        "--debounce",
        "1",
        "--json",
    )
    doc = json.loads(result.stdout)
    assert doc["engine_runs"] == 0 and doc["fast_runs"] == 4
    auto, fixed = doc["configs"]
    assert auto["max_context_tokens"] == "auto" and auto["threshold"] is None
    assert auto["summary_calls"] < fixed["summary_calls"]
    # auto names the windows it found: the Codex log's own; the sample names no model
    # the table knows, so the configured default, said as such
    assert auto["max_context_tokens_used"] == {"258400 (log)": 1, "32000 (default)": 1}
    assert "max_context_tokens_used" not in fixed
    table = invoke("sweep", CODEX, "--max-context-tokens", "auto", "--ratio", "0.3").stdout
    assert "auto=258k (log)" in table


@pytest.mark.parametrize("source", [CODEX, LONG], ids=["codex", "long_session"])
def test_eval_answers_as_replay(tmp_path: Path, stream_units: list[int], source: str) -> None:
    # one kept turn: every summary after turn 0 replaces something (eval scores only those)
    base = ["--debounce", "1", "--ratio", "0.3", "--path", "stream", "--keep-recent-turns", "1"]
    for window in WINDOWS:
        fires = replay_fires(tmp_path, source, [*base, "--max-context-tokens", window])
        out = tmp_path / f"eval-{window}"
        stream_units[0] = 0
        invoke("eval", source, *base, "--max-context-tokens", window, "--out", str(out), "--silent")
        lines = (out / "checkpoints.jsonl").read_text().splitlines()
        records = [json.loads(line) for line in lines]
        turns = [r["turn"] for r in records if r["kind"] == "tsum"]
        assert turns == fires, window
        assert stream_units[0] > 0  # eval's engine went through finalize_turn


def test_auto_falls_back_as_replay_does_under_a_settings_file(tmp_path: Path) -> None:
    """A settings file's window is overridden by ``auto`` on the command line, in the sweep
    as in replay: where the log records none, both fall back to the default."""
    (tmp_path / "tsum.toml").write_text("max_context_tokens = 2000\n")
    base = ["--debounce", "1", "--ratio", "0.3"]
    fires = replay_fires(tmp_path, LONG, [*base, "--max-context-tokens", "auto"])
    assert fires != replay_fires(tmp_path, LONG, base)  # the file's 2000 would fire more
    result = invoke("sweep", LONG, *base, "--max-context-tokens", "auto", "--json")
    row = json.loads(result.stdout)["configs"][0]
    assert row["summary_calls"] == len(fires)
