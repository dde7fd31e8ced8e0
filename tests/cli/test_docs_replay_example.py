"""docs/replay.md's worked example is what `tsum replay samples/long_session.jsonl` prints."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from transcript_tools.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
COMMAND = "$ tsum replay samples/long_session.jsonl\n"


def shown(text: str) -> str:
    """As the page shows it: no trailing blanks, any run's elapsed time."""
    text = "\n".join(line.rstrip() for line in text.splitlines())
    return re.sub(r" in \d+\.\d\ds$", " in N s", text, flags=re.MULTILINE)


def test_the_worked_example_is_the_output(monkeypatch: pytest.MonkeyPatch) -> None:
    page = (ROOT / "docs" / "replay.md").read_text(encoding="utf-8")
    example = page.split(COMMAND, 1)[1].split("```", 1)[0]
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(cli, ["replay", "samples/long_session.jsonl"])
    assert result.exit_code == 0
    assert shown(example) == shown(result.stdout + result.stderr)  # stderr's lines come last
