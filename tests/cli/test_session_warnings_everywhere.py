"""What a session's reader dropped is said by every command that reads the session.

``tsum replay`` and ``tsum inspect`` printed a session's own warnings (a Claude Code
rewind: "the user went back to an earlier message; N messages of the abandoned branch
dropped"), but ``tsum format``, ``tsum prompt`` and ``tsum fidelity`` read the same
session and printed nothing: on the shared corpus's ``-experiments-ideas/03eb5929…``,
whose line 38 rewinds to line 18's parent, six messages left the history unsaid. So did
``tsum sweep``, ``tsum eval`` and ``tsum compare``, with or without workers; ``tsum
check`` says it through its replay.
"""

from __future__ import annotations

import shutil
from pathlib import Path

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
# the corpus commands and what each needs besides its paths
CORPUS_COMMANDS = {
    "replay": [],
    "inspect": [],
    "sweep": [],
    "eval": [],
    "compare": ["--policy", "seed,codex"],
}


def _invoke(args: list[str], exit_code: int = 0) -> str:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == exit_code, result.output
    return result.stderr


@pytest.mark.parametrize("command", ["format", "prompt", "fidelity"])
def test_every_command_says_what_the_reader_dropped(command: str) -> None:
    result = CliRunner().invoke(cli, [command, str(REWOUND)])
    assert result.exit_code == 0, result.output
    assert SAID in result.stderr.splitlines()
    assert SAID not in result.stdout  # format and prompt: their text alone on stdout


@pytest.mark.parametrize("command", sorted(CORPUS_COMMANDS))
def test_every_corpus_command_says_it_once_through_its_warnings(command: str) -> None:
    args = [command, str(REWOUND), *CORPUS_COMMANDS[command]]
    every = _invoke([*args, "--warnings", "all"]).splitlines()
    assert every.count(SAID) == 1
    assert f"     1x {SAID}" in _invoke(args).splitlines()  # the end-of-run summary
    if command != "inspect":  # inspect has no --silent
        assert "abandoned branch" not in _invoke([*args, "--silent"])


def test_check_says_it_through_its_replay(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline"
    _invoke(["replay", str(REWOUND), "--out", str(baseline), "--silent"])
    lines = _invoke(["check", str(REWOUND), "--baseline", str(baseline)]).splitlines()
    assert f"     1x {SAID}" in lines


def test_compare_says_each_warning_once_over_its_second_runs() -> None:
    """--budget-windows sweeps the files again: its warnings were said by the first run."""
    args = ["compare", str(REWOUND), "--policy", "seed,codex", "--warnings", "all"]
    lines = _invoke([*args, "--budget-windows", "8000,16000"]).splitlines()
    warnings = [line for line in lines if line.startswith("warning: ")]
    assert SAID in warnings
    assert len(warnings) == len(set(warnings))
    assert warnings == [line for line in _invoke(args).splitlines() if line in warnings]


@pytest.mark.parametrize("command", ["sweep", "replay"])
def test_workers_bring_them_back_in_input_order(command: str, tmp_path: Path) -> None:
    """Two files over two workers: each file's warnings in input order, as in one process."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in ("a.jsonl", "b.jsonl", "c.jsonl"):  # b: another session id, the same log
        text = REWOUND.read_text(encoding="utf-8")
        if name == "b.jsonl":
            text = text.replace(SESSION, SESSION[:-1] + "3")
        (corpus / name).write_text(text, encoding="utf-8")
    shutil.copy(FIXTURES / "edge_cases_claude_code_ide_context.jsonl", corpus / "d.jsonl")
    args = [command, str(corpus), "--warnings", "all"]
    if command == "replay":
        args += ["--dry-run", "--out", str(tmp_path / "out")]
    one = _invoke([*args, "--workers", "1"])
    two = _invoke([*args, "--workers", "2"])
    said = [line for line in one.splitlines() if "abandoned branch" in line]
    assert [line.split(":")[1].strip() for line in said] == [
        str(corpus / f) for f in ("a.jsonl", "b.jsonl", "c.jsonl")
    ]
    assert [line for line in two.splitlines() if line.startswith("warning: ")] == [
        line for line in one.splitlines() if line.startswith("warning: ")
    ]


def test_format_says_it_only_for_the_session_shown() -> None:
    result = CliRunner().invoke(cli, ["format", str(REWOUND), "--session", "nope"])
    assert result.exit_code == 2
    assert "abandoned branch" not in result.stderr
