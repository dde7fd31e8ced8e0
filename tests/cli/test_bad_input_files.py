"""Bad input files among good ones: one line naming the file, exit 3, the other files run."""

from __future__ import annotations

import builtins
import errno
import os
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from transcript_tools.cli.main import cli

SAMPLES = Path(__file__).resolve().parents[2] / "samples"

# Every command that reads a corpus, with what shows that the good file was still read.
READERS = {
    "replay": ([], "1 session(s)"),
    "inspect": ([], "1 sessions in 2 files, 1 failed"),
    "fidelity": ([], "in 1 sessions, 2 files, 1 failed"),
    "sweep": ([], "1 conversation(s)"),
    "eval": ([], "1 session(s)"),
    "compare": (
        ["--policy", "seed,codex", "--fallback-window", "30000"],
        "1 conversation(s), each paired",
    ),
}


def lock(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``path`` (a log: a copy of a sample, else a folder) a file of mode 000 (tests may
    run as root, whom no mode stops: the denial is planted in ``open``)."""
    if not path.is_dir():
        shutil.copy(SAMPLES / "long_session.jsonl", path)
    deny_open(path, monkeypatch)


def deny_open(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening ``path`` fails as a file of mode 000 does (planted in ``open``)."""
    real_open = builtins.open

    def denying_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(file) == str(path):
            raise PermissionError(errno.EACCES, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", denying_open)


@pytest.mark.parametrize("command", list(READERS))
def test_an_unreadable_file_is_one_error_and_the_rest_runs(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = tmp_path / "good.jsonl"
    shutil.copy(SAMPLES / "long_session.jsonl", good)
    locked = tmp_path / "locked.jsonl"
    lock(locked, monkeypatch)
    extra, read_good = READERS[command]
    result = CliRunner().invoke(cli, [command, str(locked), str(good), *extra])
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.exit_code == 3, result.output
    assert f"{locked}: cannot read (Permission denied)" in result.stderr
    assert "an output could not be written" not in result.stderr
    assert read_good in result.output


@pytest.mark.parametrize("command", ["format", "prompt"])
def test_an_unreadable_file_of_one_file_commands(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    locked = tmp_path / "locked.jsonl"
    lock(locked, monkeypatch)
    result = CliRunner().invoke(cli, [command, str(locked)])
    assert result.exit_code == 3
    assert result.stderr == f"tsum: error: {locked}: cannot read (Permission denied)\n"
    assert result.stdout == ""


@pytest.mark.parametrize("command", list(READERS))
def test_a_directory_without_logs_says_so(command: str, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a log\n", encoding="utf-8")
    extra, _ = READERS[command]
    result = CliRunner().invoke(cli, [command, str(tmp_path), *extra])
    assert result.exit_code == 3
    errors = [line for line in result.stderr.splitlines() if line.startswith("tsum: error: ")]
    assert len(errors) == 1, result.stderr  # exit 3 says why, with nothing above to point at
    assert "found" in errors[0] and "above" not in errors[0]


@pytest.mark.parametrize("command", ["replay", "inspect", "sweep"])
def test_an_unreadable_folder_in_a_corpus_is_an_error_not_left_out(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "locked").mkdir()
    shutil.copy(SAMPLES / "long_session.jsonl", tmp_path / "good.jsonl")
    shutil.copy(SAMPLES / "long_session.jsonl", tmp_path / "locked" / "hidden.jsonl")
    locked = str(tmp_path / "locked")
    real_scandir = os.scandir

    def denying_scandir(path: Any = ".") -> Any:  # a folder of mode 000, as for `lock`
        if os.fspath(path) == locked:
            raise PermissionError(errno.EACCES, "Permission denied", locked)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", denying_scandir)
    lock(tmp_path / "locked", monkeypatch)
    result = CliRunner().invoke(cli, [command, str(tmp_path)])
    assert result.exit_code == 3, result.output
    assert f"error: {locked}: cannot read (Permission denied)" in result.stderr
    assert READERS[command][1] in result.output  # the good file was read


def test_an_unknown_provider_in_a_settings_file_names_the_file(tmp_path: Path) -> None:
    settings = tmp_path / "tsum.toml"
    settings.write_text('provider = "antropic"\n', encoding="utf-8")
    log = str(SAMPLES / "long_session.jsonl")
    result = CliRunner().invoke(cli, ["replay", log, "--config", str(settings)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"tsum: error: {settings}:1: unknown provider 'antropic' (")
    assert result.stderr.count("\n") == 1


def test_an_unreadable_file_of_an_output_directory_is_a_read_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = str(SAMPLES / "long_session.jsonl")
    for name in ("old", "new"):
        assert (
            CliRunner().invoke(cli, ["replay", log, "--out", str(tmp_path / name)]).exit_code == 0
        )
    locked = tmp_path / "new" / "decisions.jsonl"
    deny_open(locked, monkeypatch)
    result = CliRunner().invoke(cli, ["diff", str(tmp_path / "old"), str(tmp_path / "new")])
    assert result.exit_code == 3
    assert result.stderr == f"tsum: error: {locked}: cannot read (Permission denied)\n"


@pytest.mark.parametrize("command", list(READERS))
def test_an_empty_path_is_an_error_never_the_current_folder(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "cwd").mkdir()
    shutil.copy(SAMPLES / "long_session.jsonl", tmp_path / "cwd" / "zqx_cwd_log.jsonl")
    shutil.copy(SAMPLES / "long_session.jsonl", tmp_path / "good.jsonl")
    monkeypatch.chdir(tmp_path / "cwd")  # `tsum replay "$UNSET" good.jsonl` run here
    extra, read_good = READERS[command]
    result = CliRunner().invoke(cli, [command, "", str(tmp_path / "good.jsonl"), *extra])
    assert result.exit_code == 3, result.output
    assert 'error: "": an empty path, not a file or directory (an unset variable?)' in result.stderr
    assert read_good in result.output and "zqx_cwd_log" not in result.output


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["diff", "", "{out}"], "'OLD_DIR'"),
        (["diff", "{out}", ""], "'NEW_DIR'"),
        (["check", "--baseline", "", "{log}"], "'--baseline'"),
        (["check", "--baseline", "", "{log}", "--update"], "'--baseline'"),
        (["replay", "{log}", "--out", ""], "'--out'"),
        (["eval", "{log}", "--out", ""], "'--out'"),
    ],
)
def test_an_empty_folder_path_is_a_usage_error_never_the_current_folder(
    args: list[str], named: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")  # `tsum diff "$UNSET" out` run here
    log = str(SAMPLES / "long_session.jsonl")
    result = CliRunner().invoke(cli, [a.format(out=tmp_path, log=log) for a in args])
    assert result.exit_code == 2, result.output
    assert f"Invalid value for {named}" in result.stderr
    assert '"": an empty path, not a file or directory (an unset variable?)' in result.stderr
    assert list((tmp_path / "cwd").iterdir()) == []  # nothing written where it was run


FILE_COUNTS = {  # where each command gives the number of files it read
    "replay": "2 file(s), 1 session(s)",
    "inspect": "1 sessions in 2 files",
    "fidelity": "in 1 sessions, 2 files",
    "sweep": "2 file(s), 1 conversation(s)",
    "eval": "2 file(s), 1 session(s)",
}


@pytest.mark.parametrize("command", list(FILE_COUNTS))
def test_a_skipped_binary_file_counts_as_a_file_in_every_command(
    command: str, tmp_path: Path
) -> None:
    # one count rule: a file the walk found and skipped ("binary data") is still a file read
    shutil.copy(SAMPLES / "long_session.jsonl", tmp_path / "good.jsonl")
    (tmp_path / "bin.jsonl").write_bytes(bytes(range(256)) * 4)
    result = CliRunner().invoke(cli, [command, str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "bin.jsonl: binary data, not a transcript (skipped)" in result.stderr
    assert FILE_COUNTS[command] in result.stderr


@pytest.mark.parametrize("command", ["fidelity", "sweep", "eval"])
def test_json_carries_the_files_that_failed(command: str, tmp_path: Path) -> None:
    # one shape for errors in every --json that is one object: files, and errors by file:line
    shutil.copy(SAMPLES / "long_session.jsonl", tmp_path / "good.jsonl")
    (tmp_path / "bad.jsonl").write_text('{"role": "user", "content": "x"}\nnot json\n')
    result = CliRunner().invoke(cli, [command, str(tmp_path), "--json"])
    assert result.exit_code == 3, result.output
    data = orjson.loads(result.stdout)
    assert data["files"] == 2
    (error,) = data["errors"]
    assert error.startswith(f"{tmp_path / 'bad.jsonl'}:2: invalid JSON")


@pytest.mark.parametrize("command", [*READERS, "check"])
def test_a_bad_line_is_an_error_line_as_every_other_tsum_error(
    command: str, tmp_path: Path
) -> None:
    """A file with a bad JSONL line: its error is printed as every error of tsum is,
    ``tsum: error: FILE:LINE: ...`` (errors.error_line), not as a bare ``error: ...``."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text((SAMPLES / "long_session.jsonl").read_text() + "{not json\n")
    lines = len(bad.read_text().splitlines())
    extra, _ = READERS.get(command, (["--baseline", str(tmp_path / "base")], ""))
    if command == "check":
        good = str(SAMPLES / "chinese_migration.jsonl")
        assert CliRunner().invoke(cli, [command, good, *extra, "--update"]).exit_code == 0
    result = CliRunner().invoke(cli, [command, str(bad), *extra])
    assert result.exit_code == 3, result.output
    errors = [line for line in result.stderr.splitlines() if "error: " in line]
    assert errors and all(line.startswith("tsum: error: ") for line in errors), result.stderr
    assert errors[0].startswith(f"tsum: error: {bad}:{lines}: invalid JSON")
