"""What a session's reader dropped is said by every command that reads the session.

``tsum replay`` and ``tsum inspect`` printed a session's own warnings (a Claude Code
rewind: "the user went back to an earlier message; N messages of the abandoned branch
dropped"), but ``tsum format``, ``tsum prompt`` and ``tsum fidelity`` read the same
session and printed nothing: on the shared corpus's ``-experiments-ideas/03eb5929…``,
whose line 38 rewinds to line 18's parent, six messages left the history unsaid.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tests.support.corpus import FIXTURES
from transcript_tools.cli.main import cli

# a Claude Code log whose line 29 goes back to an earlier message (2 messages dropped)
REWOUND = FIXTURES / "edge_cases_claude_code.jsonl"
SESSION = "22222222-aaaa-4bbb-8ccc-000000000002"
SAID = (
    f"warning: {REWOUND}: session {SESSION}: line 29: the user went back to an earlier "
    "message; 2 messages of the abandoned branch dropped"
)


@pytest.mark.parametrize("command", ["replay", "inspect", "format", "prompt", "fidelity"])
def test_every_command_says_what_the_reader_dropped(command: str) -> None:
    args = [command, str(REWOUND)]
    if command in ("replay", "inspect"):
        args += ["--warnings", "all"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert SAID in result.stderr.splitlines()
    assert SAID not in result.stdout  # format and prompt: their text alone on stdout


def test_format_says_it_only_for_the_session_shown() -> None:
    result = CliRunner().invoke(cli, ["format", str(REWOUND), "--session", "nope"])
    assert result.exit_code == 2
    assert "abandoned branch" not in result.stderr
