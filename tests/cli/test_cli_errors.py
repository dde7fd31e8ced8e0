"""An exception tsum did not expect: its own exit code and one line saying it is a bug
(docs/cli.md), never exit 1, which a CI gate reads as "differences found"; the exit-code
table has one home (errors.ExitCode + EXIT_CODE_MEANINGS), shown by --help and docs/cli.md."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import transcript_tools.cli.inspect_cmd as inspect_cmd
import transcript_tools.engine.prompt as prompt_module
from transcript_tools.cli.main import EXIT_CODES_HELP, cli
from transcript_tools.errors import EXIT_CODE_MEANINGS, ExitCode, InputError

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"


class Planted(RuntimeError):
    """The bug a test plants in a command."""


def explode(*args: Any, **kwargs: Any) -> Any:
    raise Planted("planted failure\nsecond line of the message")


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


# A top-level command and one of a group's (the group is a plain click.Group under tsum's).
PLANTS = {
    "inspect": (inspect_cmd, "inspect_paths", ["inspect", str(SAMPLES)]),
    "prompts list": (prompt_module, "builtin_template_names", ["prompts", "list"]),
}


@pytest.mark.parametrize("where", list(PLANTS))
def test_an_unexpected_exception_is_an_internal_error(
    where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    module, attribute, args = PLANTS[where]
    monkeypatch.setattr(module, attribute, explode)
    result = run(*args)
    assert result.exit_code == ExitCode.INTERNAL == 4
    assert result.stdout == ""
    name = f"{__name__}.Planted"
    assert result.stderr == (
        f"tsum: internal error (a bug in tsum, exit 4): {name}: planted failure second line"
        " of the message; run it again as `tsum --debug ...` (the same arguments) to see"
        " the traceback\n"
    )


@pytest.mark.parametrize("where", list(PLANTS))
def test_debug_shows_the_traceback_and_keeps_the_code(
    where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    module, attribute, args = PLANTS[where]
    monkeypatch.setattr(module, attribute, explode)
    result = run("--debug", *args)
    assert result.exit_code == ExitCode.INTERNAL
    assert result.stderr.startswith("Traceback (most recent call last):\n")
    assert "in explode\n    raise Planted(" in result.stderr
    assert result.stderr.splitlines()[-1].startswith("tsum: internal error (a bug in tsum")


def test_a_builtin_exception_is_named_without_its_module(monkeypatch: pytest.MonkeyPatch) -> None:
    def divide(*args: Any, **kwargs: Any) -> Any:
        return 1 // 0

    monkeypatch.setattr(inspect_cmd, "inspect_paths", divide)
    result = run("inspect", str(SAMPLES))
    assert result.exit_code == 4
    assert result.stderr.startswith(
        "tsum: internal error (a bug in tsum, exit 4): ZeroDivisionError: "
    )
    assert result.stderr.count("\n") == 1


def test_expected_errors_keep_their_code_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def bad_input(*args: Any, **kwargs: Any) -> Any:
        raise InputError("a.jsonl", 3, "invalid JSON")

    monkeypatch.setattr(inspect_cmd, "inspect_paths", bad_input)
    plain = run("inspect", str(SAMPLES))
    assert (plain.exit_code, plain.stderr) == (3, "tsum: error: a.jsonl:3: invalid JSON\n")
    debug = run("--debug", "inspect", str(SAMPLES))
    assert debug.exit_code == 3  # --debug shows the traceback, the code keeps its meaning
    assert debug.stderr.startswith("Traceback (most recent call last):\n")
    assert debug.stderr.endswith("tsum: error: a.jsonl:3: invalid JSON\n")


def test_usage_errors_stay_clicks() -> None:
    result = run("inspect", "--no-such-option")
    assert result.exit_code == ExitCode.USAGE
    assert "internal error" not in result.stderr
    assert "No such option" in result.stderr


SAMPLE = str(SAMPLES / "long_session.jsonl")


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["replay", SAMPLE, "--dry-run", "--batch"], ("--dry-run", "--batch")),
        (
            ["replay", SAMPLE, "--dry-run", "--silent", "--warnings", "all"],
            ("--silent", "--warnings"),
        ),
        (["replay", SAMPLE, "--warnings", "summary", "--silent"], ("--silent", "--warnings")),
        (["sweep", SAMPLE, "--silent", "--warnings", "all"], ("--silent", "--warnings")),
        (["eval", SAMPLE, "--silent", "--warnings", "all"], ("--silent", "--warnings")),
    ],
)
def test_two_flags_where_one_would_be_dropped_are_a_usage_error(
    args: list[str], named: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TSUM_HOME", str(tmp_path))
    result = run(*args)
    assert result.exit_code == ExitCode.USAGE, result.output
    message = result.stderr.splitlines()[-1]
    assert message.startswith("Error: ") and message.endswith("drop one of the two")
    assert all(flag in message for flag in named)
    assert result.stdout == ""  # refused before any work


def test_the_flags_alone_still_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TSUM_HOME", str(tmp_path))
    assert run("replay", SAMPLE, "--dry-run", "--silent").exit_code == 0
    assert run("replay", SAMPLE, "--dry-run", "--warnings", "all").exit_code == 0
    monkeypatch.setenv("TSUM_BATCH", "1")  # a CI's environment, not this command's flag
    assert run("replay", SAMPLE, "--dry-run").exit_code == 0


def test_the_exit_code_table_lists_every_code_once() -> None:
    assert list(EXIT_CODE_MEANINGS) == sorted(ExitCode)
    help_text = run("--help").stdout
    codes = [int(m.group(1)) for m in re.finditer(r"^ {2}(\d+) +\S", EXIT_CODES_HELP, re.M)]
    assert codes == [int(c) for c in ExitCode]
    for line in EXIT_CODES_HELP.splitlines()[1:]:
        assert line in help_text
    assert "\n  4    internal error: a bug in tsum (" in EXIT_CODES_HELP


def test_the_reference_table_is_the_same_table() -> None:
    reference = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    section = reference.split("\n## Exit codes\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\d+) \| (.+) \|$", section, re.M)
    assert [(int(code), text.replace("\\|", "|")) for code, text in rows] == [
        (int(code), meaning) for code, meaning in EXIT_CODE_MEANINGS.items()
    ]
