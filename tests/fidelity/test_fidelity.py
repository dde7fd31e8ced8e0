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
    # the model's documented window (engine/windows.py); 2.1.x keeps the 33,000 buffer
    assert (row.policy, row.window, row.window_from) == ("claude-code", 200_000, "model")
    assert row.threshold == 167_000
    assert (row.recorded_call, row.predicted_call, row.outcome) == (3, 3, SAME)
    assert (row.recorded_tokens_before, row.recorded_tokens_after, row.recorded_post_tokens) == (
        167_250,
        12_000,
        7_000,
    )
    assert row.summary_from == "log"


def test_the_preset_follows_the_release_that_wrote_the_log(tmp_path: Path) -> None:
    # 2.0.x's 45,000 buffer: a 155,000 line. The measure after call n is its prompt +
    # output (50) + its tool result sized from the log's growth (3,000 tokens between
    # the calls for about 460 estimated: a few thousand). Followed, the preset fires
    # after call 2 (153,050 + the result); as it is (33,000 for every release: 167,000)
    # it never fires; a 2.1.x log keeps 167,000.
    meta = {"trigger": "auto", "preTokens": 155_800}
    log = claude_code_log(tmp_path / "a.jsonl", [150_000, 153_000, 9_000], after=2, boundary=meta)
    (followed,) = fidelity_paths([str(log)]).rows
    assert (followed.threshold, followed.predicted_call, followed.outcome) == (155_000, 2, SAME)
    (as_is,) = fidelity_paths([str(log)], follow=False).rows
    assert (as_is.threshold, as_is.predicted_call, as_is.outcome) == (167_000, None, NEVER)
    newer = claude_code_log(
        tmp_path / "b.jsonl", [150_000, 153_000, 9_000], after=2, boundary=meta, version="2.1.3"
    )
    (row,) = fidelity_paths([str(newer)]).rows
    assert (row.threshold, row.outcome) == (167_000, NEVER)


def test_one_call_early_is_within_one(tmp_path: Path) -> None:
    # 2.1.x line 167,000: crossed after call 2 (168,000), the runtime compacted after 3
    meta = {"trigger": "auto", "preTokens": 169_050}
    log = claude_code_log(
        tmp_path / "c.jsonl",
        [160_000, 168_000, 169_000, 9_000],
        after=3,
        boundary=meta,
        version="2.1.112",
    )
    (row,) = fidelity_paths([str(log)]).rows
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
    log = claude_code_log(tmp_path / "s.jsonl", [149_000, 150_000, 9_000], after=2, boundary=meta)
    (row,) = fidelity_paths([str(log)], policy=preset("codex")).rows
    # codex at 90% of the Claude model's documented 200,000: 180,000, never reached
    assert (row.policy, row.window, row.window_from) == ("codex", 200_000, "model")
    assert (row.threshold, row.outcome) == (180_000, NEVER)


def test_cli_json_keys_and_min_agreement_gate(tmp_path: Path) -> None:
    meta = {"trigger": "auto", "preTokens": 155_800}
    log = claude_code_log(tmp_path / "a.jsonl", [150_000, 153_000, 9_000], after=2, boundary=meta)
    runner = CliRunner()
    followed = runner.invoke(cli, ["fidelity", str(log), "--min-agreement", "1"])
    assert followed.exit_code == 0, followed.output
    done = runner.invoke(cli, ["fidelity", str(log), "--json", "--as-is"])
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
    gated = runner.invoke(cli, ["fidelity", str(log), "--as-is", "--min-agreement", "0.9"])
    assert gated.exit_code == 1
    assert "under --min-agreement 90%" in gated.stderr
    text = runner.invoke(cli, ["fidelity", str(log), "--as-is"])
    assert "never" in text.stdout and "200,000 (model)" in text.stdout


def test_min_agreement_with_nothing_measured_says_so() -> None:
    # a log with no recorded compaction: no agreement at all, not an agreement of "-"
    log = Path(__file__).resolve().parents[2] / "samples" / "long_session.jsonl"
    gated = CliRunner().invoke(cli, ["fidelity", str(log), "--min-agreement", "0.9"])
    assert gated.exit_code == 1  # the gate fails closed: nothing measured does not pass
    assert gated.stderr.splitlines()[-1] == (
        "tsum: no agreement measured (no automatic compaction with a known runtime version"
        " in these logs), so --min-agreement 90% is not met"
    )
    assert "agreement - is under" not in gated.stderr


def test_cli_no_sessions_exits_3_saying_why(tmp_path: Path) -> None:
    # an empty folder: exit 3, as replay and eval, with the line that says why
    done = CliRunner().invoke(cli, ["fidelity", str(tmp_path)])
    assert done.exit_code == 3
    assert "tsum: error: no sessions found in the given paths" in done.stderr


def test_the_rebuilt_view_is_the_runtimes_whatever_the_policy(tmp_path: Path) -> None:
    # the runtime's own view after its compaction holds the files Claude Code re-injects
    # (its Read calls' file_path): a property of the log's runtime, not of the policy
    # replayed beside it; --policy codex and --as-is used to drop them from it
    meta = {"trigger": "auto", "preTokens": 155_800}
    log = claude_code_log(tmp_path / "a.jsonl", [150_000, 153_000, 9_000], after=2, boundary=meta)
    log.write_text(log.read_text().replace('"file":', '"file_path":'))
    (own,) = fidelity_paths([str(log)]).rows
    (codex,) = fidelity_paths([str(log)], policy=preset("codex")).rows
    (as_is,) = fidelity_paths([str(log)], follow=False).rows
    unread = claude_code_log(
        tmp_path / "b.jsonl", [150_000, 153_000, 9_000], after=2, boundary=meta
    )
    (plain,) = fidelity_paths([str(unread)]).rows  # no file_path: nothing re-injected
    assert own.rebuilt_tokens_after is not None and plain.rebuilt_tokens_after is not None
    assert own.rebuilt_tokens_after > plain.rebuilt_tokens_after  # the files are in it
    assert codex.rebuilt_tokens_after == as_is.rebuilt_tokens_after == own.rebuilt_tokens_after


def test_a_policy_that_never_summarizes_keeps_no_count_of_kept_messages(tmp_path: Path) -> None:
    # observation-masking only clears tool results: it has no view after a compaction,
    # so neither a size nor a count of kept person messages (it read 0: none kept)
    log = codex_log(tmp_path / "r.jsonl", [100_000, 232_600, 30_000], after=2, kept=1)
    (row,) = fidelity_paths([str(log)], policy=preset("observation-masking")).rows
    assert (row.predicted_tokens_after, row.recorded_kept_messages) == (None, 1)
    assert row.predicted_kept_messages is None
    text = CliRunner().invoke(cli, ["fidelity", str(log), "--policy", "observation-masking"])
    assert " 1/- " in text.stdout and " 1/0 " not in text.stdout


def test_a_compaction_before_any_call_reads_unobserved_not_never(tmp_path: Path) -> None:
    # a continued session opens with the runtime's summary: no call before it, so the
    # table's pred call is "-" (unobserved, as its summary counts it), not "never" (a miss)
    log = claude_code_log(tmp_path / "s.jsonl", [150_000, 9_000, 9_500], after=1)
    lines = log.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if "isCompactSummary" in line)
    log.write_text("\n".join(lines[start:]) + "\n")
    (row,) = fidelity_paths([str(log)]).rows
    assert (row.recorded_call, row.predicted_call, row.outcome) == (0, None, "unobserved")
    text = CliRunner().invoke(cli, ["fidelity", str(log)]).stdout
    first = text.splitlines()[1].split()
    assert first[first.index("0") + 1] == "-" and "never" not in first


def test_a_pi_log_is_replayed_with_the_pi_preset() -> None:
    # the pi preset came after fidelity's runtime table: a pi log with a compaction was
    # skipped with "no preset for pi logs (use --policy)" though its runtime has one
    fixture = Path(__file__).resolve().parents[1] / "fixtures/formats/representative_pi.jsonl"
    result = fidelity_paths([str(fixture)])
    assert [row.policy for row in result.rows] == ["pi"] and not result.skipped_formats


def test_a_claude_code_policy_on_a_codex_log_follows_no_claude_code_release(
    tmp_path: Path,
) -> None:
    # the Codex cli_version 0.104 picked Claude Code's pre-2.1 45K buffer (213,400 of
    # the log's 258,400); it is no Claude Code release: the preset's own 33K (225,400)
    log = codex_log(tmp_path / "r.jsonl", [100_000, 232_600, 30_000], after=2, kept=1)
    (row,) = fidelity_paths([str(log)], policy=preset("claude-code")).rows
    assert (row.window, row.threshold) == (258_400, 225_400)


def test_a_log_without_a_runtime_preset_rebuilds_without_re_injected_files(
    tmp_path: Path,
) -> None:
    # the re-injected files are the log's runtime's: where it has no preset (own=None,
    # a managed-agents log under --policy claude-code) none are added to the rebuilt
    # view, whatever the replayed policy re-injects itself
    from transcript_tools.fidelity.replay import compaction_rows
    from transcript_tools.formats.corpus import CorpusReader

    meta = {"trigger": "auto", "preTokens": 155_800}
    log = claude_code_log(tmp_path / "a.jsonl", [150_000, 153_000, 9_000], after=2, boundary=meta)
    log.write_text(log.read_text().replace('"file":', '"file_path":'))
    (conv,) = CorpusReader(None).conversations([str(log)])
    claude = preset("claude-code")
    (own,) = compaction_rows(conv, claude, own=claude)
    (none,) = compaction_rows(conv, claude, own=None)
    assert own.rebuilt_tokens_after is not None and none.rebuilt_tokens_after is not None
    assert none.rebuilt_tokens_after < own.rebuilt_tokens_after
    assert none.predicted_tokens_after == own.predicted_tokens_after  # the policy's own view


def test_every_json_key_is_in_the_docs(tmp_path: Path) -> None:
    # path, session_id, size_error, summary_from, and the summary's compactions,
    # agreement and median_size_error were printed by --json and named nowhere
    docs = (Path(__file__).resolve().parents[2] / "docs" / "fidelity.md").read_text()
    meta = {"trigger": "auto", "preTokens": 155_800}
    log = claude_code_log(tmp_path / "a.jsonl", [150_000, 153_000, 9_000], after=2, boundary=meta)
    data = json.loads(CliRunner().invoke(cli, ["fidelity", str(log), "--json"]).stdout)
    keys = {*data, *data["compactions"][0], *data["summary"][0]}
    assert sorted(k for k in keys if f"`{k}`" not in docs) == []


def test_the_count_line_names_the_sessions_skipped_for_want_of_a_preset() -> None:
    # an inspect-ai log's compaction: no preset replays it, and the count line read
    # "0 recorded compactions in 1 sessions" as if the log recorded none
    fixture = Path(__file__).resolve().parents[1] / "fixtures/formats"
    done = CliRunner().invoke(
        cli, ["fidelity", str(fixture / "edge_cases_inspect_compaction.json")]
    )
    assert done.exit_code == 0
    assert "1 session(s) with compactions skipped (inspect-ai 1: no preset)" in done.stderr


def test_the_policy_env_var_is_named_where_it_is_read(tmp_path: Path) -> None:
    # TSUM_POLICY replaced every runtime's preset in fidelity (and set replay's and
    # check's policy) while no --help named it: a variable set for replay in CI moved
    # fidelity's rows without a word
    runner = CliRunner()
    for command in ("fidelity", "replay", "check"):
        assert "TSUM_POLICY" in runner.invoke(cli, [command, "--help"]).stdout, command
    meta = {"trigger": "auto", "preTokens": 155_800}
    log = claude_code_log(tmp_path / "a.jsonl", [150_000, 153_000, 9_000], after=2, boundary=meta)
    done = runner.invoke(cli, ["fidelity", str(log), "--json"], env={"TSUM_POLICY": "codex"})
    assert json.loads(done.stdout)["compactions"][0]["policy"] == "codex"


def test_a_file_forced_into_a_format_it_is_not_in_is_no_session(tmp_path: Path) -> None:
    """--format codex on a folder holding a manifest.json: the manifest reads as no message,
    which is said (as replay says it), and is no session in the count line."""
    codex_log(tmp_path / "r.jsonl", [200_000, 240_000, 9_000], after=2)
    (tmp_path / "manifest.json").write_text('{"manifest_version": 1}\n')
    done = CliRunner().invoke(cli, ["fidelity", str(tmp_path), "--format", "codex"])
    assert done.exit_code == 0, done.output
    manifest = str(tmp_path / "manifest.json")
    assert f"warning: {manifest}: session manifest: no messages read as codex" in done.stderr
    assert "1 recorded compactions in 1 sessions, 2 files" in done.stderr
