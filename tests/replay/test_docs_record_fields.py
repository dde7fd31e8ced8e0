"""docs/replay.md describes each file `tsum replay --out` writes as written: every key
of each record kind (engine/records.py declares them; tests/engine/test_records.py
pins that nothing undeclared is written), of a policy's slot and of manifest.json is
named in that file's row of the table, so a script author finds every key there."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from transcript_tools.cli.main import cli
from transcript_tools.engine.records import DecisionRecord, SnapshotRecord, SummaryRecord

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"


def _row(name: str) -> str:
    """The table row of docs/replay.md that describes ``name``."""
    text = (ROOT / "docs" / "replay.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith(f"| `{name}` |")]
    assert len(rows) == 1, name
    return rows[0]


def _missing(row: str, keys: set[str]) -> list[str]:
    return sorted(k for k in keys if not re.search(rf"(?<![\w-]){re.escape(k)}(?![\w-])", row))


def test_every_declared_record_key_is_in_its_row() -> None:
    for name, record in (
        ("decisions.jsonl", DecisionRecord),
        ("summaries.jsonl", SummaryRecord),
        ("slots.jsonl", SnapshotRecord),
    ):
        keys = set(record.__required_keys__ | record.__optional_keys__)
        assert not _missing(_row(name), keys), (name, _missing(_row(name), keys))


def _replay(out: Path, *extra: str) -> None:
    args = ["replay", str(SAMPLES), "--out", str(out), "--silent", *extra]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output


def test_nested_and_manifest_keys_as_written_are_in_their_rows(tmp_path: Path) -> None:
    _replay(tmp_path / "seed")
    for policy in ("aider", "observation-masking"):  # a policy's slot; a pre-pass that clears
        _replay(tmp_path / policy, "--policy", policy, "--max-context-tokens", "8000")
    slot_keys: set[str] = set()
    cleared_keys: set[str] = set()
    for run in ("seed", "aider", "observation-masking"):
        for line in (tmp_path / run / "slots.jsonl").read_text(encoding="utf-8").splitlines():
            slot_keys |= set(json.loads(line)["slot"])
        for line in (tmp_path / run / "decisions.jsonl").read_text(encoding="utf-8").splitlines():
            cleared_keys |= set(json.loads(line).get("cleared", {}))
    assert {"mode", "placement", "kept_messages"} <= slot_keys  # both kinds of slot seen
    assert "freed_tokens" in cleared_keys  # the pre-pass acted
    assert not _missing(_row("slots.jsonl"), slot_keys)
    assert not _missing(_row("decisions.jsonl"), cleared_keys)
    manifest = json.loads((tmp_path / "seed" / "manifest.json").read_text(encoding="utf-8"))
    keys = set(manifest) | set(manifest["executor"])
    assert not _missing(_row("manifest.json"), keys), _missing(_row("manifest.json"), keys)


def test_run_json_keys_are_in_its_row(tmp_path: Path) -> None:
    _replay(tmp_path / "seed")
    call = ("--checkpoint", "call", "--max-context-tokens", "auto", "--policy", "claude-code")
    _replay(tmp_path / "call", *call)  # (temperature: a live provider's only)
    keys: set[str] = set()
    for run in ("seed", "call"):
        info = json.loads((tmp_path / run / "run.json").read_text(encoding="utf-8"))
        keys |= set(info) | set(info["summary_config"]) | set(info["template"])
    assert {"checkpoint", "max_context_tokens_auto", "policy"} <= keys
    assert not _missing(_row("run.json"), keys), _missing(_row("run.json"), keys)
