"""``tsum inspect --json`` carries every warning the text run prints: a session's own, and
what reading its file printed (``file:line: …``), Aider's session-naming ones too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.corpus import FIXTURES
from transcript_tools.cli.main import cli

FILES = sorted(p for p in FIXTURES.iterdir() if p.is_file() and p.suffix != ".sql")


def _printed(path: Path) -> list[str]:
    """The warnings of the text run (each one, not the summary), as --json words them."""
    result = CliRunner().invoke(
        cli, ["inspect", str(path), "--skip-bad-lines", "--warnings", "all"]
    )
    out = []
    for line in result.stderr.splitlines():
        if not line.startswith("warning: "):
            continue
        text = line.removeprefix("warning: ")
        session = text.split(": session ", 1)
        if session[0] == str(path) and len(session) == 2:  # a session's own: "path: session id: w"
            text = session[1].split(": ", 1)[1]
        out.append(text)
    return out


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_json_carries_every_warning_the_text_run_prints(path: Path) -> None:
    result = CliRunner().invoke(cli, ["inspect", str(path), "--skip-bad-lines", "--json"])
    if not result.stdout.strip():
        pytest.skip("the file cannot be read at all (an error, no session)")
    carried = [w for info in json.loads(result.stdout) for w in info["warnings"]]
    assert sorted(carried) == sorted(_printed(path))


def test_an_aider_warning_after_the_last_session_joins_it(tmp_path: Path) -> None:
    path = tmp_path / "x.aider.chat.history.md"
    path.write_text(
        "\n# aider chat started at 2026-01-05 10:00:00\n\n#### list the files\n\n"
        "Here they are.\n\n> Tokens: 1.2k sent, 20 received.\n\n"
        "# aider chat started at 2026-01-05 11:00:00\n\n> /exit\n"
    )
    result = CliRunner().invoke(cli, ["inspect", str(path), "--json"])
    (info,) = json.loads(result.stdout)
    assert any("session(s) with no message to the model skipped" in w for w in info["warnings"])
