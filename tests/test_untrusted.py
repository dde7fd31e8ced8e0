"""A pull request's settings and policy files are untrusted (transcript_tools/untrusted.py):
their ``base_url`` never takes the CI's key elsewhere (a fake server on 127.0.0.1 counts
what reaches it), their prompt and template paths stay inside the project, and each
refusal is one line naming the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.support.fake_llm_server import FakeLLMServer
from transcript_tools.cli.main import cli

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "long_session.jsonl"
SUMMARIES = 5  # what long_session.jsonl makes under the default settings
SECRET = "sk-ci-secret-0123456789"


@pytest.fixture
def project(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A checkout as CI sees it: the current directory, the network on (127.0.0.1 only)."""
    monkeypatch.delenv("TSUM_OFFLINE", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, [*args], catch_exceptions=False)


def one_line(result: Result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


def test_a_settings_files_endpoint_never_gets_the_key(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeLLMServer() as server:
        (project / "tsum.toml").write_text(
            f'provider = "openai"\nmodel = "m"\nbase_url = "{server.openai_base_url}"\n'
        )
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        refused = run("check", "--baseline", "b", str(SAMPLE), "--update")
        assert refused.exit_code == 2
        line = one_line(refused)
        assert line.startswith("tsum: error: tsum.toml:3: base_url: ") and "OPENAI_API_KEY" in line
        assert SECRET not in refused.output + refused.stderr
        assert server.count == 0 and not (project / "b").exists()

        # the same endpoint from the command line or the environment is the runner's choice
        flag = run("replay", str(SAMPLE), "--base-url", server.openai_base_url, "--no-cache")
        assert flag.exit_code == 0 and server.count == SUMMARIES
        monkeypatch.setenv("TSUM_BASE_URL", server.openai_base_url)
        assert run("replay", str(SAMPLE), "--no-cache").exit_code == 0
        assert server.count == 2 * SUMMARIES

        # no key in the environment (a local server): the file may name it; no key is sent
        monkeypatch.delenv("TSUM_BASE_URL")
        monkeypatch.delenv("OPENAI_API_KEY")
        assert run("replay", str(SAMPLE), "--no-cache").exit_code == 0
        assert server.count == 3 * SUMMARIES
        sent = [r.headers.get("authorization", "") for r in server.requests]
        assert sum(SECRET in header for header in sent) == 2 * SUMMARIES


@pytest.mark.parametrize("outside", ["/proc/self/environ", "../secret.j2", "link.j2"])
def test_a_settings_files_prompt_stays_inside_the_project(project: Path, outside: str) -> None:
    (project.parent / "secret.j2").write_text("SECRET {{ messages }}", encoding="utf-8")
    (project / "link.j2").symlink_to(project.parent / "secret.j2")
    (project / "tsum.toml").write_text(f'prompt = "{outside}"\n')
    result = run("replay", str(SAMPLE))
    assert result.exit_code == 2
    assert one_line(result).startswith(f"tsum: error: tsum.toml:1: prompt: '{outside}' is outside")
    assert "SECRET" not in result.output

    (project / "prompts").mkdir()
    (project / "prompts" / "p.j2").write_text("Mine: {{ messages }}", encoding="utf-8")
    (project / "tsum.toml").write_text('prompt = "prompts/p.j2"\n')
    assert run("prompt", str(SAMPLE)).output.startswith("Mine: ")
    # the command line is trusted: --prompt names any file
    assert run("prompt", str(SAMPLE), "--prompt", "../secret.j2").output.startswith("SECRET ")


def test_a_policy_files_template_stays_inside_the_project(project: Path) -> None:
    (project / "p.toml").write_text('extends = "seed"\n[summary]\ntemplate = "/etc/passwd"\n')
    result = run("replay", str(SAMPLE), "--policy", "p.toml")
    assert result.exit_code == 2
    # --policy is checked as click checks an option: its usage lines, then one error line
    refusal = result.stderr.strip().splitlines()[-1]
    assert refusal.startswith(
        "Error: Invalid value for '--policy' (env var: 'TSUM_POLICY'): p.toml:3: summary.template: "
    )
    assert "'/etc/passwd' is outside the project directory" in refusal
    assert "root:" not in result.output

    (project / "pyproject.toml").write_text(
        '[tool.tsum.policy]\n[tool.tsum.policy.summary]\ntemplate = "../../x.j2"\n'
    )
    result = run("replay", str(SAMPLE), "--policy", "pyproject.toml")
    assert result.exit_code == 2
    assert (
        "pyproject.toml:3: tool.tsum.policy.summary.template: '../../x.j2' is outside"
        in (result.stderr.strip().splitlines()[-1])
    )
