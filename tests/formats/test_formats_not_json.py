"""A text file that is not JSON (Markdown notes, a README, a chat saved as text) is not
a transcript tsum can read: said once, never one "invalid JSON" per line."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.detection import detect_format
from transcript_tools.cli.main import cli
from transcript_tools.errors import UnknownFormatError
from transcript_tools.formats import read_conversations
from transcript_tools.formats.source import Source

PROSE = (
    "# Release notes\n\nWhat changed in 1.4:\n\n- faster start\n- {braces} inside prose\n"
    + "".join(f"line {n} of prose\n" for n in range(60))
)


def test_a_markdown_file_is_not_a_transcript(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text(PROSE)
    assert detect_format(Source(str(path))) is None
    warnings: list[str] = []
    with pytest.raises(UnknownFormatError, match="not a transcript tsum can read: a text file"):
        list(read_conversations(Source(str(path), skip_bad_lines=True, warn=warnings.append)))
    assert warnings == []  # not one per line


def test_once_in_a_directory_and_once_alone(tmp_path: Path) -> None:
    (tmp_path / "notes.jsonl").write_text(PROSE)
    result = CliRunner().invoke(cli, ["inspect", str(tmp_path), "--skip-bad-lines"])
    assert result.stderr.count("notes.jsonl") == 1
    assert f"warning: {tmp_path / 'notes.jsonl'}: not a transcript tsum can read (skipped)" in (
        result.stderr
    )
    alone = CliRunner().invoke(cli, ["inspect", str(tmp_path / "notes.jsonl")])
    assert alone.exit_code == 3 and "invalid JSON" not in alone.stderr


def test_a_jsonl_log_with_a_broken_first_line_is_still_json(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text('garbage\n{"role": "user", "content": "hi"}\n')
    result = CliRunner().invoke(cli, ["inspect", str(path)])
    assert "log.jsonl:1: invalid JSON" in result.stderr
