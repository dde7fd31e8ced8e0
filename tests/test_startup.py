"""Start-up imports only what runs (issue 11 §4): subcommand modules load when invoked.

Timings live in benchmarks/run.py (ratio to ``python -c "import click"``); here, which
modules a start-up imports, which is deterministic.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from transcript_tools.cli.main import COMMANDS, _load, cli

HEAVY = (
    "asyncio",
    "sqlite3",
    "jinja2",
    "orjson",
    "transcript_tools.replay",
    "transcript_tools.formats",
    "transcript_tools.session",
    "transcript_tools.diff",
    "transcript_tools.sweep",
    "transcript_tools.providers.registry",
    "transcript_tools.cli.diff_cmd",
    "transcript_tools.cli.sweep_cmd",
)


def imported_by(*argv: str) -> set[str]:
    code = f"import sys; sys.argv = ['tsum', *{list(argv)!r}]; from transcript_tools.cli import main; main()"
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return {
        line.rsplit("|", 1)[-1].strip()
        for line in result.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["replay", "--help"]])
def test_start_up_imports_no_subcommand_machinery(argv: list[str]) -> None:
    modules = imported_by(*argv)
    assert "click" in modules  # the measurement works
    loaded = sorted(
        m for m in modules for heavy in HEAVY if m == heavy or m.startswith(heavy + ".")
    )
    assert loaded == []


def test_every_listed_command_loads_and_matches_its_listing() -> None:
    top = CliRunner().invoke(cli, ["--help"]).stdout
    for name in COMMANDS:
        command = _load(name)
        assert name in top
        assert CliRunner().invoke(cli, [name, "--help"]).exit_code == 0, name
        assert command.name is not None


def test_help_texts_written_without_imports_agree_with_the_library() -> None:
    from transcript_tools.formats import reader_names
    from transcript_tools.providers.registry import DEFAULT_MODELS, PROVIDER_NAMES

    text = CliRunner().invoke(cli, ["replay", "--help"]).stdout
    assert f"[{'|'.join(PROVIDER_NAMES)}]" in text
    model_help = next(p.help for p in _load("replay").params if p.name == "model")
    for provider, model in DEFAULT_MODELS.items():
        assert f"{provider} {model}" in (model_help or ""), provider
    bad = CliRunner().invoke(cli, ["replay", "x.jsonl", "--format", "nope"])
    assert bad.exit_code == 2 and all(name in bad.stderr for name in reader_names())
