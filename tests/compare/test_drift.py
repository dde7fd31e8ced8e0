"""Recall and tokens by the k-th compaction (``compare --drift``), pooled by hand."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from transcript_tools.cli.main import cli
from transcript_tools.compare.collect import ArmRun
from transcript_tools.compare.drift import policy_rounds, render_drift

SAMPLE = str(Path(__file__).parents[2] / "samples" / "long_session.jsonl")


def _run(*summaries: tuple[int, int, int, int]) -> ArmRun:
    return ArmRun(
        4000,
        None,
        10,
        len(summaries),
        1.0,
        2.0,
        None,
        None,
        None,
        False,
        False,
        by_summary=summaries,
    )


def test_rounds_pool_the_kth_summary_of_each_conversation() -> None:
    a = _run((3, 4, 100, 500), (1, 4, 50, 600), (0, 2, -10, 700), (2, 2, 20, 650))
    b = _run((1, 4, 300, 400))
    c = _run()  # never summarized: in no round
    rounds = policy_rounds("p", [a, b, c], cap=3)
    assert [r.label for r in rounds] == ["1", "2", "3+"]
    first, second, later = rounds
    # round 1: a's (3 of 4) and b's (1 of 4): 4 of 8; freed (100 + 300) / 2; kept (500 + 400) / 2
    assert (first.conversations, first.summaries) == (2, 2)
    assert first.recall is not None and first.recall.estimate == 0.5
    assert (first.freed, first.kept) == (200.0, 450.0)
    # round 2: a's alone, 1 of 4
    assert second.recall is not None and second.recall.estimate == 0.25
    assert (second.conversations, second.freed, second.kept) == (1, 50.0, 600.0)
    # rounds 3 and 4 pooled: (0 + 2) of (2 + 2); freed (-10 + 20) / 2: a view may grow
    assert (later.conversations, later.summaries) == (1, 2)
    assert later.recall is not None and later.recall.estimate == 0.5
    assert (later.freed, later.kept) == (5.0, 675.0)
    # one conversation: every resample is the same, the interval is the point
    assert (later.recall.low, later.recall.high) == (0.5, 0.5)
    # round 1 over two conversations: a resample is a+a (3/4), b+b (1/4) or a+b (1/2), each
    # end with probability 1/4 > 2.5%: the interval is [25%, 75%]
    text = render_drift(rounds)
    assert text.splitlines()[3].split() == ["p", "1", "2", "2", "50", "[25,", "75]", "200", "450"]


def test_drift_is_opt_in() -> None:
    args = ["compare", SAMPLE, "--policy", "seed,codex", "--max-context-tokens", "4000", "--silent"]
    plain = CliRunner().invoke(cli, args, catch_exceptions=False)
    drift = CliRunner().invoke(cli, [*args, "--drift"], catch_exceptions=False)
    assert plain.exit_code == drift.exit_code == 0
    assert "recall by the k-th compaction" not in plain.stdout
    assert drift.stdout.startswith(plain.stdout)  # the default output, then the drift table
    table = drift.stdout[len(plain.stdout) :].splitlines()
    assert table[0] == "" and table[1].startswith("recall by the k-th compaction")
    # codex summarizes once on this sample at 4k: one round, over the one conversation
    assert [line.split()[:4] for line in table if line.startswith("codex")] == [
        ["codex", "1", "1", "1"]
    ]
