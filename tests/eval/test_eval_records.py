"""eval/records.py and cost/records.py list the keys of checkpoints.jsonl and costs.jsonl
once, for mypy to check every reader against: a key written without being declared
there fails here (as tests/engine/test_records.py does for the replay's records)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from transcript_tools.cli.main import cli
from transcript_tools.cost.records import CostRecord, RunCostJson, TokensJson
from transcript_tools.eval.records import ProbeRow, ScoreRecord

ROOT = Path(__file__).resolve().parents[2]
INPUTS = [
    str(ROOT / "samples"),
    *map(str, sorted((ROOT / "tests/fixtures/formats").glob("*.json*"))),
]


def declared(record_type: Any) -> set[str]:
    return set(record_type.__required_keys__ | record_type.__optional_keys__)


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def run(*args: str) -> None:
    result = CliRunner().invoke(cli, [*args, "--skip-bad-lines"])
    assert result.exit_code == 0, (args, result.output)


def test_every_key_eval_writes_is_declared(tmp_path: Path) -> None:
    seed, policy = tmp_path / "seed", tmp_path / "policy"
    run("eval", *INPUTS, "--cost", "--out", str(seed), "--json")
    run(
        "eval", *INPUTS, "--policy", "observation-masking", "--policy", "codex",
        "--max-context-tokens", "8000", "--out", str(policy), "--json",
    )  # fmt: skip
    # under --policy the summaries the agent recorded are scored as checkpoints too
    by_policy = lines(policy / "checkpoints.jsonl")
    actions = [r for r in by_policy if r["kind"] == "policy-action"]
    checkpoints = lines(seed / "checkpoints.jsonl") + [r for r in by_policy if r not in actions]
    assert checkpoints and actions
    assert {r["action"] for r in actions} == {"prepass", "summary"}  # both kinds reached
    seen = set().union(*checkpoints, *actions)
    assert seen <= declared(ScoreRecord), seen - declared(ScoreRecord)
    assert "recall_per_1k_retained_tokens" in seen  # --cost reached
    assert {"freed_tokens", "summary", "violations"} <= seen
    rows = set().union(*(p for r in checkpoints + actions for p in r["probes"]))
    assert rows and rows <= declared(ProbeRow), rows - declared(ProbeRow)
    assert {"in_kept", "shown", "carried", "ceiling"} <= rows  # both ways of scoring reached


def test_every_key_the_cost_record_has_is_declared(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run("replay", *INPUTS, "--cost", "--dry-run", "--out", str(out), "--silent")
    records = lines(out / "costs.jsonl")
    assert records
    seen = set().union(*records)
    assert seen <= declared(CostRecord), seen - declared(CostRecord)
    assert {"session", "policy", "original", "delta_usd", "model_error"} <= seen
    for record in records:
        for run_cost in (record["policy"], record["original"]):
            assert set(run_cost) == declared(RunCostJson)  # all required: all written
            assert set(run_cost["tokens"]) == declared(TokensJson)
