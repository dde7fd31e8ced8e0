"""`tsum inspect`, `tsum replay` and `tsum replay --dry-run` on every fixture of the formats
added in the second round (Gemini CLI, Aider, tau-bench); the real files are covered by
test_corpus_replay.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.corpus import CORPUS, FIXTURES, needs_corpus
from transcript_tools.cli.main import cli

NEW_FIXTURES = {
    "representative_gemini.jsonl": ("gemini-cli", 1),
    "edge_cases_gemini.jsonl": ("gemini-cli", 1),
    "edge_cases_gemini_session.json": ("gemini-cli", 1),
    "representative_aider_chat.aider.chat.history.md": ("aider-chat", 2),
    "edge_cases_aider_chat.md": ("aider-chat", 1),
    "representative_aider.aider.llm.history": ("aider-llm", 3),
    "edge_cases_aider_llm.log": ("aider-llm", 1),
    "representative_tau2_bench.json": ("tau-bench", 2),
    "edge_cases_tau_bench.json": ("tau-bench", 2),
}


@pytest.mark.parametrize("name", sorted(NEW_FIXTURES))
def test_inspect(name: str) -> None:
    fmt, sessions = NEW_FIXTURES[name]
    result = CliRunner().invoke(cli, ["inspect", "--json", str(FIXTURES / name)])
    assert result.exit_code == 0, result.stderr
    infos = json.loads(result.stdout)
    assert len(infos) == sessions and {i["format"] for i in infos} == {fmt}
    assert f"{sessions} sessions in 1 files" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("name", sorted(NEW_FIXTURES))
def test_replay_and_dry_run(name: str, tmp_path: Path) -> None:
    _, sessions = NEW_FIXTURES[name]
    path = str(FIXTURES / name)
    dry = CliRunner().invoke(cli, ["replay", path, "--dry-run"])
    assert dry.exit_code == 0, dry.stderr
    assert f"{sessions} session(s)" in dry.stderr and ", 0 error(s)" in dry.stderr
    out = tmp_path / "out"
    # a low threshold so the checkpoint fires and the offline summarizer runs
    full = CliRunner().invoke(
        cli, ["replay", path, "--out", str(out), "--max-context-tokens", "200", "--debounce", "1"]
    )
    assert full.exit_code == 0, full.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["sessions"] == sessions and manifest["errors"] == []
    assert len(list((out / "compressed").glob("*.jsonl"))) == sessions


@needs_corpus
@pytest.mark.parametrize(
    "path,fmt,sessions",
    [
        ("aider/friendly_names.aider.llm.history", "aider-llm", 16),
        ("tau2-bench/telecom_gpt-4o_user-sim_gpt-4o.json", "tau-bench", 20),
    ],
)
def test_inspect_real_files(path: str, fmt: str, sessions: int) -> None:
    result = CliRunner().invoke(cli, ["inspect", "--json", str(CORPUS / path)])
    assert result.exit_code == 0, result.stderr
    infos = json.loads(result.stdout)
    assert len(infos) == sessions and {i["format"] for i in infos} == {fmt}
