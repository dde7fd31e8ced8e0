"""docs/cli.md is every command's --help as it is today (transcript_tools/cli/docs.py renders it)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from transcript_tools.cli.docs import REGENERATE, command_contexts, render
from transcript_tools.cli.main import COMMANDS, cli

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "cli.md"


def test_docs_cli_md_is_current() -> None:
    current = REFERENCE.read_text(encoding="utf-8")
    assert current == render(), f"docs/cli.md is out of date with --help: run `{REGENERATE}`"


def test_the_reference_covers_every_command_and_subcommand() -> None:
    paths = [context.command_path for context in command_contexts()]
    assert paths[0] == "tsum"
    top = [path.split(" ")[1] for path in paths[1:] if path.count(" ") == 1]
    assert top == list(COMMANDS) and len(COMMANDS) >= 12  # the real list, not the lazy group's
    assert {"tsum prompts list", "tsum cache stats", "tsum batch cancel"} <= set(paths)
    text = render()
    for path in paths:
        assert f"\n## {path}\n" in text, path


def test_each_section_is_what_help_prints() -> None:
    # The rendered help is the command's own --help on an 80-column terminal.
    text = render()
    for context in command_contexts():
        args = [*context.command_path.split(" ")[1:], "--help"]
        result = CliRunner().invoke(cli, args, prog_name="tsum", terminal_width=78)
        assert result.exit_code == 0, (args, result.output)
        assert "Usage: tsum" in result.output, args
        assert f"```text\n{result.output.rstrip(chr(10))}\n```" in text, args
