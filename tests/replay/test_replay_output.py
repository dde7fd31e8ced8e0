"""replay_output.load_output: a replay's --out directory read back (what diff compares)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from transcript_tools.cli.main import cli
from transcript_tools.errors import InputError
from transcript_tools.replay.read_output import DIFFABLE_FILES, DiffInputError, load_output

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("replay") / "out"
    result = CliRunner().invoke(
        cli, ["replay", str(SAMPLES / "long_session.jsonl"), "--out", str(out), "--silent"]
    )
    assert result.exit_code == 0, result.output
    return out


def copy(replayed: Path, tmp_path: Path) -> Path:
    target = tmp_path / "out"
    shutil.copytree(replayed, target)
    return target


def test_loads_sessions_digests_and_prompts(replayed: Path) -> None:
    output = load_output(replayed)
    assert set(DIFFABLE_FILES) <= set(output.digests)
    [records] = output.sessions.values()
    assert records.decisions and records.summaries
    turn, summary = next(iter(records.summaries.items()))
    assert summary["turn"] == turn
    prompt = output.prompt(summary["prompt_sha256"])
    assert len(prompt) == summary["prompt_chars"]


def test_not_an_output_directory(tmp_path: Path) -> None:
    with pytest.raises(DiffInputError, match="no such directory"):
        load_output(tmp_path / "missing")
    with pytest.raises(DiffInputError, match="no run.json"):
        load_output(tmp_path)


def test_a_corrupt_line_is_named(replayed: Path, tmp_path: Path) -> None:
    out = copy(replayed, tmp_path)
    with open(out / "decisions.jsonl", "ab") as handle:
        handle.write(b'{"session": "x", "turn": 0')
    with pytest.raises(InputError) as caught:
        load_output(out)
    assert "decisions.jsonl" in caught.value.location_text()
    assert "truncated last line" in str(caught.value)


def test_a_summary_without_its_prompt_is_corrupt(replayed: Path, tmp_path: Path) -> None:
    out = copy(replayed, tmp_path)
    (out / "prompts.jsonl").write_bytes(b"")
    with pytest.raises(DiffInputError, match="is not in prompts.jsonl"):
        load_output(out)


def test_zero_sessions_is_never_a_pass(replayed: Path, tmp_path: Path) -> None:
    out = copy(replayed, tmp_path)
    for name in ("decisions.jsonl", "summaries.jsonl", "prompts.jsonl", "slots.jsonl"):
        (out / name).write_bytes(b"")
    with pytest.raises(DiffInputError, match="zero sessions"):
        load_output(out)


def test_an_unknown_output_format_is_refused(replayed: Path, tmp_path: Path) -> None:
    out = copy(replayed, tmp_path)
    (out / "run.json").write_text('{"output_format": 99}')
    with pytest.raises(DiffInputError, match="output_format 99"):
        load_output(out)
