"""Degenerate replays are said, not passed over (docs/replay.md, "Degenerate replays")."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
from click.testing import CliRunner

from transcript_tools.cli.main import cli
from transcript_tools.replay.degenerate import fires_almost_always

SAMPLE = str(Path(__file__).parents[2] / "samples" / "long_session.jsonl")


def _replay(tmp_path: Path, *args: str) -> tuple[str, list[dict[str, object]]]:
    out = tmp_path / "out"
    result = CliRunner().invoke(
        cli, ["replay", SAMPLE, "--dry-run", "--out", str(out), "--warnings", "all", *args]
    )
    assert result.exit_code == 0, result.output
    lines = (out / "decisions.jsonl").read_bytes().splitlines()
    return result.output, [orjson.loads(line) for line in lines]


def test_a_view_left_over_the_window_is_an_overflow(tmp_path: Path) -> None:
    output, records = _replay(tmp_path, "--policy", "cline", "--max-context-tokens", "2000")
    over = [r for r in records if "overflow" in r]
    assert over and all(isinstance(r["overflow"], int) and r["overflow"] > 0 for r in over)
    warned = re.search(r"(\d+) call\(s\) left the view over the 2,000-token window", output)
    assert warned is not None and int(warned.group(1)) == len(over)
    assert output.count("left the view over") == 1  # once per session, with its count


def test_a_view_that_fits_is_no_overflow(tmp_path: Path) -> None:
    output, records = _replay(tmp_path, "--policy", "cline", "--max-context-tokens", "200000")
    assert not any("overflow" in r for r in records) and "left the view over" not in output


def test_the_seed_is_not_marked(tmp_path: Path) -> None:
    output, records = _replay(tmp_path, "--max-context-tokens", "2000")
    assert not any("overflow" in r for r in records) and "left the view over" not in output


def test_almost_every_unit_from_the_first_firing() -> None:
    f, b = "would_summarize", "below_threshold"
    assert fires_almost_always([b, b, f, f, f, f, b]) == (4, 5)  # 80%: almost every
    assert fires_almost_always([b, b, f, f, f, f, f]) == (5, 5)
    assert fires_almost_always([b, f, f, f, f, b, f, f, f, f]) == (8, 9)
    assert fires_almost_always([b, f, b, f, b, f]) is None  # 3 of 5: 60%
    assert fires_almost_always([f, f]) is None  # two firings are not a pattern
    assert fires_almost_always([b, b, b]) is None


CODEX = str(Path(__file__).parents[1] / "fixtures" / "formats" / "representative_codex.jsonl")


def test_a_view_the_log_itself_sent_is_no_overflow(tmp_path: Path) -> None:
    # a policy that fires only once the view is the whole window: where it never fires,
    # every view is the log's own, whose recorded prompts all fit the window
    policy = tmp_path / "full.toml"
    policy.write_text('extends = "codex"\nname = "full"\n[trigger]\nratio = 1.0\n', "utf-8")

    def decisions(window: int) -> list[dict[str, object]]:
        out = tmp_path / f"out-{window}"
        args = ["replay", CODEX, "--dry-run", "--policy", str(policy), "--out", str(out)]
        result = CliRunner().invoke(cli, [*args, "--max-context-tokens", str(window)])
        assert result.exit_code == 0, result.output
        lines = (out / "decisions.jsonl").read_bytes().splitlines()
        return [orjson.loads(line) for line in lines]

    largest = max(int(str(r["watermark"])) for r in decisions(10_000_000))
    records = decisions(largest + 1)
    assert all(r["decision"] == "below_threshold" for r in records)  # never acted
    # measured as the trigger measures (the recorded prompt): the hidden prefix plus every
    # message at its billed size overstated it, and marked 2 of these views over
    assert not any("overflow" in r for r in records)
