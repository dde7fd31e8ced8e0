"""docs/policies.md's policy-file mistakes, and docs/formats.md's bad line, are what tsum prints.

The page shows ``fast-codex.toml`` and three mistakes in it with their one-line errors; the
bad-input section shows the error of an invalid JSON line. A user meets these first.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from transcript_tools.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]

# each shown error, and the edit of the page's fast-codex.toml that makes it
MISTAKES = {
    "trigger.ratio": ("ratio = 0.8", "ratio = 1.5"),
    "keep.tokns": ("tokens = 8000", "tokns = 8000"),
    "runtime": (
        'description = "Codex, compacting earlier and keeping fewer user messages"',
        'runtime = "codex"',
    ),
}


def page(name: str) -> str:
    return (ROOT / "docs" / name).read_text(encoding="utf-8")


def policy_file() -> str:
    """The page's ``fast-codex.toml`` block, as written there."""
    return page("policies.md").split("```toml\n# fast-codex.toml\n", 1)[1].split("```", 1)[0]


def shown_errors() -> dict[str, str]:
    """key -> the error the page shows (up to its first elision)."""
    found = re.findall(r"`(fast-codex\.toml:\d+: ([a-z._]+): [^`]+)`", page("policies.md"))
    return {key: text.split("…", 1)[0] for text, key in found}


@pytest.mark.parametrize("key", sorted(MISTAKES))
def test_a_mistake_in_the_policy_file_is_the_error_shown(
    key: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old, new = MISTAKES[key]
    text = "# fast-codex.toml\n" + policy_file()
    assert old in text
    (tmp_path / "fast-codex.toml").write_text(text.replace(old, new), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["policies", "show", "fast-codex.toml"])
    assert result.exit_code == 2
    assert result.stderr.startswith("tsum: error: " + shown_errors()[key])


def test_the_policy_file_as_written_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "fast-codex.toml").write_text(policy_file(), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["policies", "show", "fast-codex.toml"])
    assert result.exit_code == 0, result.stderr
    assert 'name = "fast-codex"\n' in result.stdout


def test_the_bad_line_shown_is_the_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shown = re.search(r"^tsum: error: samples/broken\.jsonl:17: .*$", page("formats.md"), re.M)
    assert shown is not None
    (tmp_path / "samples").mkdir()
    good = (ROOT / "samples" / "long_session.jsonl").read_text(encoding="utf-8").splitlines()
    lines = [*good[:16], "{ oops"]
    (tmp_path / "samples" / "broken.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["replay", "samples/broken.jsonl"])
    assert result.exit_code == 3
    assert result.stderr.splitlines()[0] == shown.group(0)
