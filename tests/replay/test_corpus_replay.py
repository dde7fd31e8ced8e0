"""Every file of the real corpus replays end to end with the default configuration."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.corpus import CORPUS
from transcript_tools.cli.main import cli

NOT_TRANSCRIPTS = {"PROVENANCE.md", "FORMATS.md", "UPSTREAM_README.md", "manifest.json"}

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the real corpus is not at {CORPUS}")


def transcript_files() -> list[Path]:
    return sorted(
        p
        for p in CORPUS.rglob("*")
        if p.is_file() and p.name not in NOT_TRANSCRIPTS and not p.name.endswith(".meta.json")
    )


def test_whole_corpus_replays_with_defaults(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(
        cli, ["replay", str(CORPUS), "--out", str(out), "--silent"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["errors"] == [] and manifest["failed_files"] == 0
    files = transcript_files()
    assert manifest["files"] == len(files) + 1  # + the codex manifest.json, skipped with a warning
    summaries = [json.loads(line) for line in (out / "summaries.jsonl").read_text().splitlines()]
    assert summaries and all(s["status"] == "ok" for s in summaries)
    assert manifest["summaries_ok"] == len(summaries)
    # every summary's prompt is recorded, and every session left a compressed transcript
    prompts = {
        json.loads(line)["sha256"] for line in (out / "prompts.jsonl").read_text().splitlines()
    }
    assert {s["prompt_sha256"] for s in summaries} <= prompts
    assert len(list((out / "compressed").glob("*.jsonl"))) == manifest["sessions"]


@pytest.mark.parametrize(
    "path", transcript_files() if CORPUS.is_dir() else [], ids=lambda p: p.name
)
def test_each_file_replays_on_its_own(path: Path) -> None:
    result = CliRunner().invoke(cli, ["replay", str(path), "--dry-run"], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    assert not [line for line in result.stderr.splitlines() if line.startswith("tsum: error:")]
    assert ", 0 error(s)" in result.stderr
    assert result.stdout.count("\n== ") + result.stdout.startswith("== ") >= 1
