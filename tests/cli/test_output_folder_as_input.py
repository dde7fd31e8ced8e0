"""A folder ``tsum replay --out`` wrote, named as an input, is never left out unsaid.

A walk skips tsum's own output folders (marked ``.tsum-output``), so that a corpus
holding one does not read it back. Named itself (``tsum replay corpus/ --out out/``, then
``tsum inspect out/``), it was skipped the same way: "0 sessions in 0 files" and "no
sessions found", with no word of why, though ``out/compressed/`` held every replayed
session. Now it is an error naming the folder and where its sessions are.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from transcript_tools.cli.main import cli

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "long_session.jsonl"


@pytest.fixture
def out(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    shutil.copy(SAMPLE, corpus)
    folder = corpus / "out"  # inside the corpus: a walk of the corpus must skip it
    result = CliRunner().invoke(cli, ["replay", str(corpus), "--out", str(folder)])
    assert result.exit_code == 0, result.output
    return folder


@pytest.mark.parametrize("command", ["inspect", "replay", "fidelity", "format"])
def test_a_named_output_folder_is_an_error_that_says_what_it_is(out: Path, command: str) -> None:
    result = CliRunner().invoke(cli, [command, str(out)])
    assert result.exit_code == 3
    said = (
        f"{out}: tsum's own output folder (.tsum-output), never read as input; "
        f"its replayed sessions are in {out / 'compressed'}"
    )
    assert said in result.stderr
    assert "Traceback" not in result.output


def test_its_sessions_are_read_where_the_error_points(out: Path) -> None:
    result = CliRunner().invoke(cli, ["inspect", str(out / "compressed")])
    assert result.exit_code == 0, result.output
    assert result.stderr.rstrip().endswith("1 sessions in 1 files")


def test_a_walk_still_skips_it_unsaid(out: Path) -> None:
    result = CliRunner().invoke(cli, ["inspect", str(out.parent)])
    assert result.exit_code == 0, result.output
    assert result.stderr.rstrip().endswith("1 sessions in 1 files")
    assert "output folder" not in result.stderr
