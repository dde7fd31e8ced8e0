"""The GitHub Action (action.yml): its check step, run as the runner would run it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ACTION = (ROOT / "action.yml").read_text(encoding="utf-8")


def step(name: str) -> str:
    """The YAML text of the step called ``name``."""
    return ACTION.split(f"- name: {name}\n", 1)[1].split("\n    - ", 1)[0]


def run_script(text: str) -> str:
    """A step's ``run: |`` block, dedented."""
    lines = text.split("run: |\n", 1)[1].splitlines()
    return "\n".join(line[8:] for line in lines) + "\n"


def test_a_composite_action_installing_its_own_commit() -> None:
    assert "\n  using: composite\n" in ACTION
    for name in ("paths", "baseline", "args", "comment", "fail-on-differences", "github-token"):
        assert f"\n  {name}:\n" in ACTION, name
    assert 'pip install --quiet "$GITHUB_ACTION_PATH"' in step(
        "Install tsum (this action's commit)"
    )
    comment = step("Comment the diff on the pull request")
    assert "github.event_name == 'pull_request'" in comment
    assert re.search(r'gh pr comment "\$NUMBER" .*--edit-last --body-file "\$body"', comment)
    gate = step("Gate on the exit code")
    assert "steps.check.outputs.exit-code != '0'" in gate


def _runner(
    tmp_path: Path, paths: str, args: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, str], str]:
    outputs, summary = tmp_path / "output", tmp_path / "summary"
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_OUTPUT": str(outputs),
        "GITHUB_STEP_SUMMARY": str(summary),
        "CHECK_PATHS": paths,
        "TSUM_BASELINE": "baseline",
        "CHECK_ARGS": args,
        "TSUM_OFFLINE": "1",
    }
    done = subprocess.run(
        ["bash", "-e", "-c", run_script(step("tsum check"))],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    values = dict(line.split("=", 1) for line in outputs.read_text().splitlines())
    return done, values, summary.read_text()


def test_the_check_step_writes_the_markdown_and_the_exit_code(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "samples", tmp_path / "samples")
    bless = subprocess.run(
        [str(Path(sys.executable).parent / "tsum"), "check", "samples", "--baseline",
         "baseline", "--update", "--silent"],
        cwd=tmp_path, capture_output=True, text=True,
        env={**os.environ, "TSUM_OFFLINE": "1"},
    )  # fmt: skip
    assert bless.returncode == 0, bless.stderr
    done, outputs, summary = _runner(tmp_path, "samples", "--silent")
    assert done.returncode == 0, done.stderr  # the step itself never fails: the gate does
    assert outputs["exit-code"] == "0"
    markdown = Path(outputs["markdown"]).read_text()
    head, gates = markdown.split("\n#### Gates\n")  # the gates' verdicts reach the PR too
    assert head == "### tsum: no differences (3 sessions, 5 summary firings)\n"
    assert gates.strip().startswith("- eval: artifact recall") and gates.strip().endswith(": ok")
    assert summary.startswith("## tsum check: exit 0\n")
    # another window: other decisions, exit 1, the diff in the Markdown
    done, outputs, _ = _runner(tmp_path, "samples", "--silent --max-context-tokens 8000")
    assert done.returncode == 0 and outputs["exit-code"] == "1"
    assert Path(outputs["markdown"]).read_text().startswith("### tsum: ")


def test_a_check_that_could_not_run_says_why_in_the_summary_and_the_comment(
    tmp_path: Path,
) -> None:
    """Exit 2 or 3 leaves no diff: the Markdown (job summary, pull-request comment) said only
    "exit 3"; it now carries tsum's error, as examples/github-workflow.yml's summary does."""
    shutil.copytree(ROOT / "samples", tmp_path / "samples")
    done, outputs, summary = _runner(tmp_path, "samples", "--silent")  # no baseline yet
    assert done.returncode == 0 and outputs["exit-code"] == "3"
    error = "tsum: error: baseline: baseline: no such directory"
    assert error in done.stderr  # the log keeps it too
    markdown = Path(outputs["markdown"]).read_text()
    assert markdown.startswith("```\n" + error) and markdown.endswith("```\n")
    assert summary == "## tsum check: exit 3\n" + markdown
