"""A small mixed corpus for the parallel / Ray tests, and how to compare two runs."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from click.testing import CliRunner, Result

from transcript_tools.cli.main import cli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "formats"
ELAPSED = re.compile(r" in \d+\.\d+s")  # the end-of-run line's timing


def build_corpus(root: Path) -> Path:
    """Every format fixture (good, edge, malformed), a session id repeated in two files
    (the corpus-wide unique names), and a file that is not a transcript (a warning)."""
    corpus = root / "corpus"
    shutil.copytree(FIXTURES, corpus)
    for folder in ("a", "b"):
        (corpus / folder).mkdir()
        shutil.copy(FIXTURES / "representative_codex.jsonl", corpus / folder / "same.jsonl")
        shutil.copy(FIXTURES / "representative_sharegpt.jsonl", corpus / folder / "chat.jsonl")
    (corpus / "b" / "notes.json").write_text('{"hello": "not a transcript"}\n')
    return corpus


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def same_run(one: Result, other: Result) -> None:
    """Same exit code, same stdout, same stderr (timings aside)."""
    assert other.exit_code == one.exit_code, other.stderr
    assert other.stdout == one.stdout
    assert ELAPSED.sub("", other.stderr) == ELAPSED.sub("", one.stderr)


def same_files(one: Path, other: Path) -> None:
    names = sorted(p.name for p in one.iterdir() if p.name != "manifest.json")
    assert names == sorted(p.name for p in other.iterdir() if p.name != "manifest.json")
    for name in names:
        if (one / name).is_file():
            assert (other / name).read_bytes() == (one / name).read_bytes(), name
