"""``tsum sweep`` shows artifact recall where summary text exists (engine path)."""

from __future__ import annotations

from pathlib import Path

import orjson
from click.testing import CliRunner

from transcript_tools.cli.main import cli

SAMPLES = str(Path(__file__).resolve().parents[1] / "samples")


def test_sweep_reports_recall_where_summaries_were_written() -> None:
    args = ["sweep", SAMPLES, "--max-context-tokens", "2000", "--mode", "focused,full"]
    args += ["--measure", "current", "--json"]  # summary text matters: the engine runs
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    rows = {row["mode"]: row for row in orjson.loads(result.stdout)["configs"]}
    focused = rows["focused"]  # the current measure in Focused mode: the engine ran, offline
    assert focused["summary_calls"] > 0 and focused["artifact_probes"] > 0
    assert 0 < focused["artifact_recall"] < 1
    assert rows["full"]["artifact_recall"] is None  # full mode: a summary replaces nothing
    table = CliRunner().invoke(cli, args[:-1], catch_exceptions=False).stdout
    assert "recall" in table and f"{focused['artifact_recall']:.0%}" in table
