"""A summary record's status has one home (engine/records.py): what the engine writes is
what every reader asks about, in memory and read back from summaries.jsonl."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from transcript_tools.cli.main import cli
from transcript_tools.engine.records import (
    DecisionRecord,
    SnapshotRecord,
    SummaryRecord,
    SummaryStatus,
    summary_failed,
    summary_ok,
)

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


# Runs that between them write every optional field: a policy with a pre-pass, a policy
# that summarizes, per-call checkpoints with the log's window, a dry run that estimates.
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "formats"
RUNS = (
    [],
    ["--policy", "observation-masking", "--max-context-tokens", "8000"],
    ["--policy", "codex", "--max-context-tokens", "8000"],
    ["--checkpoint", "call", "--max-context-tokens", "auto", "--ratio", "0.05"],
    ["--measure", "current", "--dry-run", "--max-context-tokens", "4000", "--ratio", "0.5"],
)
TYPES = {
    "decisions.jsonl": DecisionRecord,
    "summaries.jsonl": SummaryRecord,
    "slots.jsonl": SnapshotRecord,
}


def test_every_key_the_engine_writes_is_declared_in_its_record_type(tmp_path: Path) -> None:
    """engine/records.py lists each record's keys once, for mypy to check every reader
    against: a key written without being declared there fails here."""
    inputs = [str(SAMPLE.parent), *map(str, sorted(FIXTURES.glob("*.json*")))]
    seen: dict[str, set[str]] = {name: set() for name in TYPES}
    for number, extra in enumerate(RUNS):
        out = tmp_path / f"out{number}"
        args = ["replay", *inputs, *extra, "--out", str(out), "--silent", "--skip-bad-lines"]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, (extra, result.output)
        for name in TYPES:
            for line in (out / name).read_text(encoding="utf-8").splitlines():
                seen[name] |= set(json.loads(line))
    for name, record_type in TYPES.items():
        declared = record_type.__required_keys__ | record_type.__optional_keys__
        assert seen[name] <= declared, (name, sorted(seen[name] - declared))
    # the runs reached the optional fields (the check above is not vacuous)
    assert {"policy", "cleared", "call", "max_context_tokens_from", "recorded_compaction"} | {
        "summary_tokens_assumed",
        "watermark_without_summaries",
    } <= seen["decisions.jsonl"]
    assert {"violations", "dropped", "view_tokens_after", "call"} <= seen["summaries.jsonl"]
    assert {"slot", "view_tokens_estimated", "call"} <= seen["slots.jsonl"]
