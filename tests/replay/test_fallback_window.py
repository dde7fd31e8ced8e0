"""``--max-context-tokens auto`` says when its fallback window is below what the log read.

On the shared corpus's mini-swe-agent DeepSeek runs (``deepseek-chat``, no window in the
log, none in tsum's table) auto fell back to the default 32,000 — "(from default)" — while
the log's own calls read up to 85,156 tokens: ``--checkpoint call --measure current``
then fired at call 61 of ``pylint-dev__astroid-1333``, a schedule the model's window
never made, with no word that the window could not be the model's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from transcript_tools.cli.main import cli


def _log(path: Path, model: str, prompts: list[int]) -> Path:
    lines: list[dict[str, object]] = [{"role": "system", "content": "You fix bugs."}]
    for turn, prompt in enumerate(prompts):
        lines.append({"role": "user", "content": f"step {turn}: run the tests"})
        lines.append(
            {
                "role": "assistant",
                "model": model,
                "content": f"Ran them; step {turn} passes.",
                "usage": {"prompt_tokens": prompt, "completion_tokens": 40},
            }
        )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _replay(log: Path, *extra: str) -> str:
    result = CliRunner().invoke(cli, ["replay", str(log), "--dry-run", "--warnings", "all", *extra])
    assert result.exit_code == 0, result.output
    return result.stderr


def test_a_fallback_window_under_the_logs_prompts_is_said(tmp_path: Path) -> None:
    log = _log(tmp_path / "run.jsonl", "deepseek-chat", [20_000, 50_000, 85_156])
    said = _replay(log, "--max-context-tokens", "auto")
    assert (
        f"warning: {log}: session run: --max-context-tokens auto: no window in the log and no "
        "documented window for deepseek-chat, so the default window of 32,000 was used, but "
        "the log's calls read up to 85,156 tokens: the model's window is larger (give it with "
        "--max-context-tokens N)"
    ) in said.splitlines()


@pytest.mark.parametrize(
    ("model", "prompts", "extra"),
    [
        ("gpt-4o", [20_000, 50_000, 85_156], ["--max-context-tokens", "auto"]),  # documented
        ("deepseek-chat", [10_000, 20_000, 31_000], ["--max-context-tokens", "auto"]),  # fits
        ("deepseek-chat", [20_000, 50_000, 85_156], []),  # a window given: the tip's business
    ],
)
def test_nothing_is_said_where_the_window_is_known_or_fits(
    tmp_path: Path, model: str, prompts: list[int], extra: list[str]
) -> None:
    said = _replay(_log(tmp_path / "run.jsonl", model, prompts), *extra)
    assert "--max-context-tokens auto:" not in said
