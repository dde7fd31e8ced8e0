"""A summary record's status has one home (engine/records.py): what the engine writes is
what every reader asks about, in memory and read back from summaries.jsonl."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from transcript_tools.cli.main import cli
from transcript_tools.engine.records import SummaryStatus, summary_failed, summary_ok

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "long_session.jsonl"


def test_the_status_the_engine_writes_reads_back_the_same(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["replay", str(SAMPLE), "--out", str(out), "--silent"])
    assert result.exit_code == 0, result.output
    lines = (out / "summaries.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert records and all(r["status"] == "ok" for r in records)  # the JSON is the plain string
    assert all(summary_ok(r) and not summary_failed(r) for r in records)
    assert summary_failed({"status": SummaryStatus.FAILED}) and not summary_ok({})
    assert not summary_failed({})  # a record without a status is neither
