"""Golden snapshots of what users diff: the `--out` records, the replay report, diff
Markdown and the sweep table, on samples/ with the offline provider.

A change of shape (a field renamed, added or dropped; a column moved) is then a reviewed
diff of tests/replay/__snapshots__/test_output_snapshots/, not a surprise for CI users who
compare outputs across versions. Update with `pytest --snapshot-update` and review.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from transcript_tools.cli.main import cli

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
RECORDS = ("decisions.jsonl", "summaries.jsonl", "slots.jsonl")


def tsum(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output  # 1: diff found differences
    return result.stdout


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("snap") / "out"
    tsum("replay", str(SAMPLES), "--out", str(out), "--silent")
    return out


@pytest.mark.parametrize("record", RECORDS)
def test_out_records(replayed: Path, record: str, text_snapshot) -> None:
    text = (replayed / record).read_text(encoding="utf-8")
    assert text.count("\n") >= 3  # every sample session wrote records
    assert text == text_snapshot


def test_replay_text_report(text_snapshot) -> None:
    report = tsum("replay", str(SAMPLES / "long_session.jsonl"), "--silent")
    assert "summarized" in report
    assert report.replace(str(SAMPLES), "samples") == text_snapshot  # wherever the clone is


def test_diff_markdown(replayed: Path, tmp_path: Path, text_snapshot) -> None:
    other = tmp_path / "en"
    tsum("replay", str(SAMPLES), "--out", str(other), "--prompt", "en", "--silent")
    markdown = tsum("diff", str(replayed), str(other), "--markdown", "--silent")
    assert markdown.startswith("#") or "|" in markdown
    # the directories' own paths vary run to run
    markdown = markdown.replace(str(replayed), "BASE").replace(str(other), "OTHER")
    assert markdown == text_snapshot


def test_sweep_table(text_snapshot) -> None:
    table = tsum(
        "sweep",
        str(SAMPLES),
        "--ratio",
        "0.5,0.75",
        "--max-context-tokens",
        "8000,32000",
        "--silent",
    )
    assert "recall" in table
    assert table == text_snapshot
