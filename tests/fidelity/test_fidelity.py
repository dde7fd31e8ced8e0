"""tsum fidelity: recorded compactions against the replay of the runtime's preset."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tests.support.compaction_logs import claude_code_log, codex_log
from transcript_tools.cli.main import cli
from transcript_tools.engine.policy_toml import preset
from transcript_tools.fidelity import fidelity_paths
from transcript_tools.fidelity.records import NEVER, SAME, WITHIN_ONE


def test_claude_code_preset_fires_at_the_call_that_crosses_its_line(tmp_path: Path) -> None:
    # claude-code's line on a 200k window: 200,000 - 33,000 = 167,000. The measure after
    # call n is its prompt + output (50) + the tool result after it; call 3 (167,200 +
    # 50 + its result) is the first at or over the line, and the runtime compacted after
    # call 3: the same call.
    meta = {"trigger": "auto", "preTokens": 167_250, "postTokens": 7_000}
    log = claude_code_log(
        tmp_path / "s.jsonl",
        [100_000, 150_000, 167_200, 12_000],
        after=3,
        boundary=meta,
        version="2.1.112",
    )
    (row,) = fidelity_paths([str(log)]).rows
    assert (row.policy, row.window, row.window_from) == ("claude-code", 200_000, "policy")
    assert (row.recorded_call, row.predicted_call, row.outcome) == (3, 3, SAME)
    assert (row.recorded_tokens_before, row.recorded_tokens_after, row.recorded_post_tokens) == (
        167_250,
        12_000,
        7_000,
    )
    assert row.summary_from == "log"


def test_a_line_never_reached_is_never_and_one_call_off_is_within_one(tmp_path: Path) -> None:
    # 2.0.x compacted near 156.5k: under claude-code's 167k line, so it never fires
    meta = {"trigger": "auto", "preTokens": 156_513}
    never = claude_code_log(tmp_path / "a.jsonl", [100_000, 156_400, 9_000], after=2, boundary=meta)
    # the runtime compacted after call 2 while the line is first crossed after call 3
    late = claude_code_log(
        tmp_path / "b.jsonl", [160_000, 166_000, 168_000, 9_000], after=2, boundary=meta
    )
    rows = fidelity_paths([str(never), str(late)]).rows
    assert [(r.predicted_call, r.outcome) for r in rows] == [(None, NEVER), (None, NEVER)]
    late2 = claude_code_log(
        tmp_path / "c.jsonl", [160_000, 168_000, 169_000, 9_000], after=3, boundary=meta
    )
    (row,) = fidelity_paths([str(late2)]).rows
    assert (row.recorded_call, row.predicted_call, row.outcome) == (3, 2, WITHIN_ONE)


def test_codex_rows_compare_kept_person_messages(tmp_path: Path) -> None:
    # codex: 90% of the 258,400 window the log records = 232,560; call 2 (232,600 + 20
    # output + its result) crosses it; replacement_history kept 1 user message, the
    # preset keeps the one person message (20k budget)
    log = codex_log(tmp_path / "r.jsonl", [100_000, 232_600, 30_000], after=2, kept=1)
    (row,) = fidelity_paths([str(log)]).rows
    assert (row.window, row.window_from) == (258_400, "log")
    assert (row.predicted_call, row.recorded_call) == (2, 2)
    assert (row.recorded_kept_messages, row.predicted_kept_messages) == (1, 1)
    assert row.summary_from == "assumed"  # the compacted item's message is empty
    assert row.recorded_tokens_after == 30_000


def test_policy_option_replaces_the_runtime_preset(tmp_path: Path) -> None:
    meta = {"trigger": "auto", "preTokens": 150_050}
    log = claude_code_log(tmp_path / "s.jsonl", [100_000, 150_000, 9_000], after=2, boundary=meta)
    (row,) = fidelity_paths([str(log)], policy=preset("codex")).rows
    # codex at 90% of its own (unset) window: the seed's 32,000 default, said as such
    assert (row.policy, row.window, row.window_from, row.predicted_call) == (
        "codex",
        32_000,
        "default",
        1,
    )


def test_cli_json_keys_and_min_agreement_gate(tmp_path: Path) -> None:
    meta = {"trigger": "auto", "preTokens": 156_513}
    log = claude_code_log(tmp_path / "a.jsonl", [100_000, 156_400, 9_000], after=2, boundary=meta)
    runner = CliRunner()
    done = runner.invoke(cli, ["fidelity", str(log), "--json"])
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    (row,) = data["compactions"]
    for key in (
        "runtime",
        "version",
        "model",
        "trigger",
        "recorded_call",
        "predicted_call",
        "recorded_tokens_before",
        "recorded_tokens_after",
        "predicted_tokens_after",
        "recorded_kept_messages",
        "predicted_kept_messages",
        "window",
        "window_from",
    ):
        assert key in row
    assert data["summary"][-1]["agreement"] == 0.0
    gated = runner.invoke(cli, ["fidelity", str(log), "--min-agreement", "0.9"])
    assert gated.exit_code == 1
    assert "under --min-agreement 90%" in gated.stderr
    text = runner.invoke(cli, ["fidelity", str(log)])
    assert "never" in text.stdout and "200,000 (policy)" in text.stdout
