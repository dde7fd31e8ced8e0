"""Every line of costs.jsonl has the same keys, those CostRecord declares (null where a
session has no figure: no recorded call to bill or check, no task outcome), so a script
reads any line alike: a log without usage, one with a whole bill, a tau-bench outcome."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from transcript_tools.cli.main import cli
from transcript_tools.cost.records import CostRecord

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "formats"


def test_every_cost_record_has_every_declared_key(tmp_path: Path) -> None:
    inputs = [
        str(ROOT / "samples"),  # no recorded usage in two of its three logs
        str(FIXTURES / "edge_cases_tau_bench.json"),
        str(FIXTURES / "edge_cases_claude_code_compact_summary.jsonl"),
    ]
    out = tmp_path / "out"
    args = ["replay", *inputs, "--cost", "--out", str(out), "--silent"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    lines = (out / "costs.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    declared = CostRecord.__required_keys__ | CostRecord.__optional_keys__
    assert len(records) >= 4
    assert all(set(r) == declared for r in records), [sorted(declared - set(r)) for r in records]
    # both sides reached: a session with nothing to bill, one billed and checked
    assert any(r["billed"] is None and r["model_error"] is None for r in records)
    assert any(r["billed"] is not None and r["model_error"] is not None for r in records)
    assert any(r["outcome"] is not None for r in records)
