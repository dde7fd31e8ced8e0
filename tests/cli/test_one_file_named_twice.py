"""A file named twice on the command line is read once, and the second naming is a warning.

``tsum sweep dup dup/long_session.jsonl`` (a folder and a file in it), the same file under
two spellings (``./a.jsonl a.jsonl``) or through a symlink read the file twice: sweep
counted 2 conversations, compare paired the same conversation twice (its bootstrap
standing on a duplicated sample), eval scored it twice, replay wrote it twice
(``long_session.jsonl`` and ``long_session#2.jsonl``). The inputs are now a set of files,
the first naming keeping its place (``formats.inputs.FirstNamed``), as psf/black treats
its sources.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.support.scale_corpus import same_files
from transcript_tools.cli.main import cli
from transcript_tools.parallel import pool

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "long_session.jsonl"
FILE = "dup/long_session.jsonl"

# each way to name one file twice: the arguments, and the warning of the second naming
NAMINGS = {
    "folder and file": (
        ["dup", FILE],
        f"warning: {FILE}: given twice (also found in dup): read once",
    ),
    "file and folder": (
        [FILE, "dup"],
        f"warning: {FILE}: given twice (also given as {FILE}): read once",
    ),
    "two spellings": (
        [f"./{FILE}", FILE],
        f"warning: {FILE}: given twice (also given as ./{FILE}): read once",
    ),
    "a symlink": (
        [FILE, "link.jsonl"],
        f"warning: link.jsonl: given twice (also given as {FILE}): read once",
    ),
}

# each corpus command: what it needs besides its paths, and the line that counts 1 session
COMMANDS = {
    "replay": ([], "tsum: 1 file(s), 1 session(s),"),
    "inspect": ([], "1 sessions in 1 files"),
    "sweep": ([], "1 conversation(s), 18 turn(s), 1 configuration(s);"),
    "eval": ([], "tsum: 1 file(s), 1 session(s),"),
    "compare": (["--policy", "seed,codex"], "1 conversation(s), each paired across policies"),
    "fidelity": ([], "0 recorded compactions in 1 sessions, 1 files"),
    "check": (["--baseline", "base"], "no differences: 1 session(s), 5 summary firing(s)"),
}


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``dup/long_session.jsonl`` and ``link.jsonl`` (a symlink to it) in the cwd."""
    (tmp_path / "dup").mkdir()
    shutil.copy(SAMPLE, tmp_path / FILE)
    monkeypatch.chdir(tmp_path)
    try:
        os.symlink(FILE, "link.jsonl")
    except OSError:  # no symlinks here (Windows without the privilege)
        pytest.skip("symlinks not available")
    return tmp_path


def _run(*args: str) -> Result:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    return result


@pytest.mark.parametrize("naming", sorted(NAMINGS))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_corpus_command_reads_the_file_once_and_says_so(
    folder: Path, command: str, naming: str
) -> None:
    paths, said = NAMINGS[naming]
    options, counted = COMMANDS[command]
    if command == "check":
        _run("replay", FILE, "--out", "base", "--silent")
    result = _run(command, *paths, *options)
    assert counted in result.output  # stdout or stderr, as each command prints it
    assert result.stderr.count(said) == 1


def test_replay_writes_the_file_once(folder: Path) -> None:
    _run("replay", "dup", FILE, "link.jsonl", "--out", "out", "--silent")
    assert sorted(p.name for p in (folder / "out" / "compressed").iterdir()) == [
        "long_session.jsonl"
    ]


def test_silent_says_nothing(folder: Path) -> None:
    assert "given twice" not in _run("sweep", "dup", FILE, "--silent").stderr


@pytest.mark.parametrize(
    "command", [["sweep"], ["replay", "--dry-run", "--out", "out-{workers}"]], ids=str
)
def test_a_pool_reads_it_once_and_says_it_where_one_process_does(
    folder: Path, command: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two other files, so that a pool starts: the plan keeps the second naming, marked,
    and its worker says the warning in input order; outputs equal one process's."""
    for name in ("a.jsonl", "b.jsonl"):
        shutil.copy(SAMPLE, folder / "dup" / name)
    parts: list[object] = []
    original = pool.ordered_parts

    def counting(*args: object, **kwargs: object) -> object:
        for part in original(*args, **kwargs):  # type: ignore[arg-type]
            parts.append(part)
            yield part

    for module in ("sweep.parallel", "replay.parallel"):
        monkeypatch.setattr(f"transcript_tools.{module}.ordered_parts", counting)
    paths = ["dup/a.jsonl", "dup", "link.jsonl"]
    runs = {}
    for workers in (1, 2):
        args = [arg.format(workers=workers) for arg in command]
        runs[workers] = _run(*args, *paths, "--workers", str(workers), "--warnings", "all")
    assert parts  # the pool ran
    one, two = runs[1], runs[2]
    assert two.stdout == one.stdout
    said = [line for line in two.stderr.splitlines() if "given twice" in line]
    assert said == [
        "warning: dup/a.jsonl: given twice (also given as dup/a.jsonl): read once",
        f"warning: link.jsonl: given twice (also found in dup as {FILE}): read once",
    ]
    assert said == [line for line in one.stderr.splitlines() if "given twice" in line]
    if command[0] == "sweep":
        assert "3 conversation(s)" in two.stdout
    else:
        assert "tsum: 3 file(s), 3 session(s)," in two.stderr
        same_files(folder / "out-1", folder / "out-2")


def test_the_warning_docs_formats_md_shows_is_what_tsum_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "formats.md").read_text("utf-8")
    command = re.search(r"The stderr of `tsum (sweep [^`]*)` starts with", page)
    shown = re.search(r"^warning: logs/a\.jsonl: given twice .*$", page, re.M)
    assert command is not None and shown is not None
    (tmp_path / "logs").mkdir()
    shutil.copy(SAMPLE, tmp_path / "logs" / "a.jsonl")
    monkeypatch.chdir(tmp_path)
    assert _run(*command.group(1).split()).stderr.splitlines()[0] == shown.group(0)
