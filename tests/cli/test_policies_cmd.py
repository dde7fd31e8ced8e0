"""``tsum policies list|show`` and the ``--policy FILE|NAME`` option helper."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from transcript_tools.cli.main import cli
from transcript_tools.cli.policies_cmd import policy_option
from transcript_tools.engine.policy_toml import parse_policy, preset, preset_names, trigger_summary


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_list_names_every_preset_with_its_description_and_trigger() -> None:
    result = run("policies", "list")
    assert result.exit_code == 0 and result.stderr == ""
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert [row[0] for row in rows] == preset_names()
    for name, description, trigger in rows:
        assert description == preset(name).description
        assert trigger == trigger_summary(preset(name))
    assert rows[0][2] == "summarize (cumulative >= window x 0.75, debounce 3), per turn"


def test_list_json_is_one_object_per_preset() -> None:
    lines = run("policies", "list", "--json").stdout.splitlines()
    assert [json.loads(line)["name"] for line in lines] == preset_names()


@pytest.mark.parametrize("name", ["seed", "codex", "observation-masking"])
def test_show_prints_the_full_toml(name: str) -> None:
    result = run("policies", "show", name)
    assert result.exit_code == 0
    assert parse_policy(result.stdout, "stdout") == preset(name)
    assert "[summarizer_input]" in result.stdout and "max_tool_result_chars = " in result.stdout


def test_show_resolves_a_file_and_its_extends(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text('extends = "cline"\n[keep]\ntokens = 9000\n')
    shown = parse_policy(run("policies", "show", str(path)).stdout, "stdout")
    assert shown.name == "mine" and shown.keep.tokens == 9000
    assert shown.trigger == preset("cline").trigger


def test_show_errors_are_one_line_with_usage_exit_code(tmp_path: Path) -> None:
    result = run("policies", "show", "nope")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith("tsum: error: policy 'nope': not a preset (seed, ")
    assert result.stderr.count("\n") == 1
    bad = tmp_path / "bad.toml"
    bad.write_text("[trigger]\nratio = 2\n")
    result = run("policies", "show", str(bad))
    assert result.exit_code == 2
    assert result.stderr == f"tsum: error: {bad}:2: trigger.ratio: must be in (0, 1], got 2.0\n"


@click.command()
@policy_option
def _probe(policy: Any) -> None:
    click.echo("none" if policy is None else policy.name)


def test_policy_option_converts_names_and_files_and_rejects_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = CliRunner()
    assert runner.invoke(_probe, []).stdout == "none\n"
    assert runner.invoke(_probe, ["--policy", "gemini-cli"]).stdout == "gemini-cli\n"
    path = tmp_path / "fast.toml"
    path.write_text('extends = "codex"\n')
    assert runner.invoke(_probe, ["--policy", str(path)]).stdout == "fast\n"
    monkeypatch.setenv("TSUM_POLICY", "aider")
    assert runner.invoke(_probe, []).stdout == "aider\n"
    missing = tmp_path / "missing.toml"
    missing.write_text('[summary]\ntemplate = "no-such.j2"\n')
    result = runner.invoke(_probe, ["--policy", str(missing)])
    assert result.exit_code == 2
    assert f"{missing}: summary.template: prompt 'no-such.j2': not a built-in name" in result.stderr
    bad = runner.invoke(_probe, ["--policy", "nope"])
    assert bad.exit_code == 2
    assert (
        "Invalid value for '--policy' (env var: 'TSUM_POLICY'): policy 'nope': not a preset"
        in bad.stderr
    )
