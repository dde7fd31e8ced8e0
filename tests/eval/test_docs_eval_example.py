"""docs/eval.md's first worked example is what `tsum eval samples/ --prompt zh --prompt en`
prints, and the offline figures its prose sets beside the tiny model's are that run's."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tests.cli.test_docs_replay_example import ROOT, shown
from transcript_tools.cli.main import cli

COMMAND = "$ tsum eval samples/ --prompt zh --prompt en\n"


def test_the_first_worked_example_is_the_output(monkeypatch: pytest.MonkeyPatch) -> None:
    page = (ROOT / "docs" / "eval.md").read_text(encoding="utf-8")
    example = page.split(COMMAND, 1)[1].split("```", 1)[0]
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(cli, ["eval", "samples/", "--prompt", "zh", "--prompt", "en"])
    assert result.exit_code == 0
    assert shown(example) == shown(result.stdout + result.stderr)  # stderr's lines come last


def test_the_offline_figures_beside_the_tiny_model_are_the_run_s(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ "With the same settings the offline summarizer scores 50.0% artifact / 40.0%
    request recall, against a truncation floor of 31.2%" (the SmolLM2 run's settings,
    the offline provider)."""
    page = (ROOT / "docs" / "eval.md").read_text(encoding="utf-8")
    monkeypatch.chdir(ROOT)
    args = ["eval", "samples/", "--prompt", "zh", "--prompt", "en", "--debounce", "9"]
    result = CliRunner().invoke(cli, [*args, "--max-transcript-chars", "3000"])
    assert result.exit_code == 0
    rows = {line.split("  ")[0]: line.split() for line in result.stdout.splitlines()}
    artifact, request = rows["artifact (16)"], rows["request (5)"]
    claim = (
        f"offline summarizer scores {artifact[2]} artifact / {request[2]} request\n"
        f"recall (`zh=en`: one text), against a truncation floor of {artifact[3]}"
    )
    assert claim in page
