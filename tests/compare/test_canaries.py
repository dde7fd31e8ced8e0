"""``tsum compare --canaries``: pooled survival, the cliff, opt-in."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from transcript_tools.cli.main import cli
from transcript_tools.compare.canaries import CanaryResult, cliff, render_canaries
from transcript_tools.eval.canaries import STALE, Survival

SAMPLE = str(Path(__file__).parents[2] / "samples" / "long_session.jsonl")


def test_pooling_and_the_cliff_by_hand() -> None:
    result = CanaryResult(["p"], 1)
    one, two = Survival(), Survival()
    for k, alive in ((1, True), (2, True), (3, False)):
        one.count("goal", k, alive)
    for k, alive in ((1, True), (2, False), (3, False)):
        two.count("goal", k, alive)
    two.count(STALE, 2, True)
    result.add("p", one)
    result.add("p", two)
    table = result.pooled["p"]
    # round 1: 2 of 2; round 2: 1 of 2 (not under half); round 3: 0 of 2
    assert table[("goal", "1")] == [2, 2] and table[("goal", "2")] == [1, 2]
    assert table[("goal", "3")] == [0, 2]
    assert cliff(table, "goal", ["1", "2", "3"]) == "3"
    text = render_canaries(result).splitlines()
    assert text[2].split() == ["policy", "type", "k=1", "k=2", "k=3", "cliff"]
    assert text[3].split() == ["p", "goal", "100%", "(2)", "50%", "(2)", "0%", "(2)", "3"]
    assert text[4].split() == ["p", "stale", "-", "100%", "(1)", "-", "-"]  # no cliff


def test_canaries_are_opt_in() -> None:
    args = ["compare", SAMPLE, "--policy", "seed,codex", "--max-context-tokens", "4000", "--silent"]
    plain = CliRunner().invoke(cli, args, catch_exceptions=False)
    planted = CliRunner().invoke(cli, [*args, "--canaries"], catch_exceptions=False)
    assert plain.exit_code == planted.exit_code == 0
    assert "planted canaries" not in plain.stdout
    assert planted.stdout.startswith(plain.stdout)
    rest = planted.stdout[len(plain.stdout) :]
    assert "planted canaries: 6 typed facts in a copy of each of 1 conversation(s)" in rest
    # the seed summarizes five times on this sample at 4k: its rows name the types
    seed_rows = [line.split()[1] for line in rest.splitlines() if line.startswith("seed ")]
    assert "goal" in seed_rows and "safety" in seed_rows
