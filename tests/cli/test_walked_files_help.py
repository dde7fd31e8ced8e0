"""``inspect`` and ``fidelity`` --help name every kind of file a directory walk reads.

Their help said "a directory (searched for *.jsonl, *.json, *.traj)", while the walk
(formats/inputs.py) also reads Aider's logs and OpenCode's database — on the shared
corpus, ``tsum inspect ../shared/corpus/real/`` read 16 sessions from
``aider/friendly_names.aider.llm.history`` — and leaves out ``*.meta.json``.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from transcript_tools.cli.main import cli
from transcript_tools.formats.inputs import SKIPPED_SUFFIXES, TRANSCRIPT_NAMES, TRANSCRIPT_SUFFIXES


@pytest.mark.parametrize("command", ["inspect", "fidelity"])
def test_the_help_names_what_a_walk_reads_and_leaves_out(command: str) -> None:
    result = CliRunner().invoke(cli, [command, "--help"], terminal_width=78)
    assert result.exit_code == 0
    text = " ".join(result.output.split())  # unwrapped
    for suffix in (*TRANSCRIPT_SUFFIXES, *SKIPPED_SUFFIXES):
        assert f"*{suffix}" in text, suffix
    for name in TRANSCRIPT_NAMES:
        assert name in text, name
