"""``tsum compare`` end to end on a sample: the header says what the figures stand on."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from transcript_tools.cli.main import cli

SAMPLE = str(Path(__file__).parents[2] / "samples" / "long_session.jsonl")
PRESETS = Path(__file__).parents[2] / "transcript_tools" / "engine" / "presets"


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["compare", SAMPLE, *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_header_names_window_summarizer_and_intervals() -> None:
    code, out, err = _run(
        "--policy", "seed,codex,aider", "--max-context-tokens", "4000", "--width", "90", "--silent"
    )
    assert code == 0
    assert "window: every policy at --max-context-tokens 4000: 4k (given) x1" in out
    assert "an extractive baseline that copies sentences of the conversation, not a model" in out
    assert "2000 resamples, seed 20260" in out
    table = out.split("\n\n")[1].splitlines()
    assert table[0].split()[0] == "policy" and len(table) == 4
    assert all(len(line) <= 90 for line in table)
    # aider summarizes at half the turns or more on this sample: marked, warned once
    assert any(line.startswith("aider [") and "D" in line.split()[1] for line in table)
    assert err.count("degenerate runs:") == 1 and "aider 1" in err


def test_columns_and_baseline_are_checked() -> None:
    code, _, err = _run("--policy", "seed,codex", "--columns", "policy,nope")
    assert code == 2 and "nope: not a column" in err
    code, _, err = _run("--policy", "seed,codex", "--baseline", "cline")
    assert code != 0 and "not one of --policy" in err
    code, _, err = _run("--policy", "seed", "--max-context-tokens", "4000,8000")
    assert code == 2 and "one window" in err


def test_chosen_columns_and_a_policy_baseline() -> None:
    code, out, _ = _run(
        "--policy",
        "seed,codex",
        "--baseline",
        "seed",
        "--max-context-tokens",
        "4000",
        "--columns",
        "policy,drecall",
        "--silent",
    )
    assert code == 0
    table = out.split("\n\n")[1].splitlines()
    assert table[0].split() == ["policy", "Δ", "recall"]
    seed_row = next(line for line in table if line.startswith("seed"))
    assert "+0 [+0, +0] n=1" in seed_row  # the baseline against itself, on the one conversation


def test_budget_windows_print_the_curves() -> None:
    code, out, _ = _run(
        "--policy",
        "seed,codex",
        "--max-context-tokens",
        "4000",
        "--budget-windows",
        "3000,16000",
        "--silent",
    )
    assert code == 0
    assert "every policy also run at windows 3k, 16k" in out
    curve_rows = out.split("at every window\n")[1].splitlines()
    assert [line.split()[0] for line in curve_rows[1:3]] == ["seed", "codex"]
    code, _, err = _run("--policy", "seed", "--budget-windows", "3000")
    assert code == 2 and "two windows or more" in err


def test_view_recall_is_a_column_asked_for() -> None:
    args = ("--policy", "seed,codex", "--max-context-tokens", "4000", "--width", "200", "--silent")
    code, out, _ = _run(*args, "--columns", "policy,recall,vrecall")
    assert code == 0
    table = out.split("\n\n")[1].splitlines()
    assert table[0].split() == ["policy", "recall", "view", "recall"]
    assert "view recall: every artifact probe of the history up to each action" in out
    assert "  view recall: artifact probes of the history up to each action" in out  # legend
    codex = next(line for line in table if line.startswith("codex"))
    assert codex.count(" n=") == 2  # both recalls measured, each with its interval
    # not asked for: neither computed nor shown, whatever the width
    code, out, _ = _run(*args)
    assert code == 0 and "view recall" not in out


def test_fallback_window_compares_windowless_logs_at_one_window() -> None:
    policies = ("--policy", "seed,claude-code,gemini-cli", "--width", "200", "--silent")
    # the sample names no window: the presets would run it at 200k, 1048k and the default
    code, _, err = _run(*policies)
    assert code != 0
    assert "left out: 1 conversation(s) whose log names no window" in err
    # the way in it names is the one that keeps every other log at its own window
    assert "; --fallback-window N runs them at one (every other log at its own)" in err
    code, fallback, _ = _run(*policies, "--fallback-window", "8000")
    assert code == 0
    assert "a log naming none at --fallback-window 8000: 8k (fallback) x1" in fallback
    # the same figures as every policy run at that one window
    code, fixed, _ = _run(*policies, "--max-context-tokens", "8000")
    assert code == 0
    window_line = [i for i, line in enumerate(fixed.splitlines()) if line.startswith("window:")]
    assert len(window_line) == 1
    drop = window_line[0]
    assert fallback.splitlines()[:drop] + fallback.splitlines()[drop + 1 :] == (
        fixed.splitlines()[:drop] + fixed.splitlines()[drop + 1 :]
    )


def test_fallback_window_needs_auto() -> None:
    code, _, err = _run(
        "--policy", "seed", "--max-context-tokens", "4000", "--fallback-window", "8000"
    )
    assert code == 2 and "only with --max-context-tokens auto" in err


def test_an_unreadable_input_is_an_error_not_an_empty_comparison(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.jsonl")
    result = CliRunner().invoke(
        cli,
        ["compare", SAMPLE, missing, "--policy", "seed,codex", "--max-context-tokens", "4000"],
        catch_exceptions=False,
    )
    # the sample is compared; the missing file fails the run and is named, once
    assert result.exit_code == 3
    assert result.stdout.startswith("baseline: ") and "\ncodex" in result.stdout
    assert f"{missing}: no such file" in result.stderr
    assert "1 input error(s), left out of the comparison" in result.stderr
    assert "no conversation to compare" not in result.stderr


def test_an_empty_directory_says_nothing_was_found(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["compare", str(tmp_path), "--policy", "seed,codex"], catch_exceptions=False
    )
    # no line above says why: the error itself does, as sweep's and replay's do
    assert result.exit_code == 3
    assert result.stdout == ""
    assert "no conversation to compare found in the given paths" in result.stderr
    assert "the lines above say why" not in result.stderr


def test_recall_of_a_policy_that_never_summarizes_is_explained() -> None:
    code, out, _ = _run(
        "--policy",
        "observation-masking,codex",
        "--max-context-tokens",
        "4000",
        "--columns",
        "policy,recall",
        "--silent",
    )
    assert code == 0
    # observation masking never summarizes: its recall is that of the tool results it cleared
    masking = next(line for line in out.splitlines() if line.startswith("observation-masking"))
    assert "n=1" in masking
    legend = next(line for line in out.splitlines() if line.startswith("  recall: "))
    assert "where it summarized" not in legend and "it never did" not in legend
    assert "cleared tool results" in legend and "nothing to probe" in legend


def test_a_bad_budget_window_is_a_usage_error_before_anything_runs(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.jsonl")
    result = CliRunner().invoke(
        cli,
        ["compare", missing, "--policy", "seed,codex", "--budget-windows", "0,16000"],
        catch_exceptions=False,
    )
    # checked with the options: the input is not read (no 'no such file'), the error
    # names the option given, not the setting it would have become
    assert result.exit_code == 2
    assert "'--budget-windows': 0: a window is a number of tokens" in result.stderr
    assert "no such file" not in result.stderr and "max_context_tokens" not in result.stderr


def test_an_unpriced_baseline_is_not_said_to_be_priced() -> None:
    code, out, _ = _run("--policy", "seed,codex", "--max-context-tokens", "4000", "--no-cost")
    assert code == 0
    assert out.startswith("baseline: the original run (as recorded, unpriced); 1 conversation(s)")
    assert "priced by the cost model" not in out and "baseline bill:" not in out


def test_a_money_column_with_no_cost_is_a_usage_error() -> None:
    # it would be '-' or 'unpriced' on every row: the options contradict each other
    code, _, err = _run("--policy", "seed,codex", "--no-cost", "--columns", "policy,dusd,recall")
    assert code == 2
    assert "dusd: money column(s), and --no-cost prices nothing" in err
    code, _, _ = _run("--policy", "seed,codex", "--no-cost", "--columns", "policy,recall")
    assert code == 0


def test_a_policy_that_never_acts_keeps_the_original_retained_tokens_exactly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The original a policy's retained tokens are paired with is measured as the policy
    measures its own view (its engine and the log's size model, nothing acting): at a
    window no view reaches, codex and claude-code change nothing, so they read 0; the
    seed's row too, measured as theirs (next test)."""
    from transcript_tools.compare import collect

    runs: list[tuple[str, collect.ArmRun]] = []
    real = collect.arm_run

    def kept(cfg: Any, outcome: Any, profile: Any) -> collect.ArmRun:
        run = real(cfg, outcome, profile)
        runs.append((cfg.policy.name if cfg.policy else "seed", run))
        return run

    monkeypatch.setattr(collect, "arm_run", kept)
    code, out, _ = _run(
        "--policy", "seed,codex,claude-code", "--max-context-tokens", "100000000", "--silent"
    )
    assert code == 0 and sorted(name for name, _ in runs) == ["claude-code", "codex", "seed"]
    for name, run in runs:
        assert run.fires == 0, name
        assert run.retained == run.original_retained, name
    codex = next(line for line in out.splitlines() if line.startswith("codex "))
    assert "(+0 [+0, +0]%)" in codex


def test_the_seeds_row_is_measured_in_the_size_model_of_every_other_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The seed's own path sizes its view by estimates (its replay and sweep outputs stay
    so); in a comparison its row is measured as every policy's, in the log's billed sizes
    (engine/sized_view.py), or its retained tokens would stand on another scale: on this
    sample, which records usage, the seed's estimate of the original run read 3% above
    the billed figure every other row's original reads, and at 4,000 tokens its view
    read 1.5k (-48%) in estimates, 1.9k (-31%) billed; --drift's view tokens its first
    summary freed and kept, 56 and 1,176 in estimates, are -46 and 967 billed."""
    from transcript_tools.compare import collect

    runs: dict[tuple[str, int], collect.ArmRun] = {}
    real = collect.arm_run

    def kept(cfg: Any, outcome: Any, profile: Any) -> collect.ArmRun:
        run = real(cfg, outcome, profile)
        runs[cfg.policy.name, cfg.max_context_tokens] = run
        return run

    monkeypatch.setattr(collect, "arm_run", kept)
    for window in ("100000000", "4000"):
        code, out, _ = _run(
            "--policy", "seed,codex,aider", "--max-context-tokens", window, "--silent",
            "--columns", "policy,retained", "--drift",
        )  # fmt: skip
        assert code == 0
    never = {name: run for (name, window), run in runs.items() if window == 100000000}
    assert never["seed"].fires == 0 and never["seed"].retained == never["seed"].original_retained
    # one original run, one size model: the seed's (turns) is aider's, and codex's per turn
    originals = {name: round(run.original_retained, 6) for name, run in never.items()}
    assert originals["seed"] == originals["aider"] == originals["codex"], originals
    assert runs["seed", 4000].original_retained == never["seed"].original_retained
    seed = next(line for line in out.splitlines() if line.startswith("seed"))
    assert "1.9k (-31 [-31, -31]%)" in seed, seed
    first = next(line for line in out.splitlines() if line.split()[:2] == ["seed", "1"])
    assert first.split()[-2:] == ["-46", "967"], first


def test_retained_is_per_turn_for_a_policy_checking_after_each_call(tmp_path: Path) -> None:
    """codex checks after each model call; the same policy checking after each turn, at a
    window neither reaches, holds the same views: one unit (the turn) reads one figure.
    Per call, codex's mean was 2,691 on this sample against 2,763 per turn."""
    codex = (PRESETS / "codex.toml").read_text(encoding="utf-8")
    per_turn = re.sub(r'(?m)^unit = "call".*$', 'unit = "turn"', codex)
    per_turn = re.sub(r"(?m)^name = .*$", 'name = "codex-turn"', per_turn)
    assert per_turn.count('unit = "turn"') == 1
    policy = tmp_path / "codex-turn.toml"
    policy.write_text(per_turn, encoding="utf-8")
    code, out, _ = _run(
        "--policy", f"seed,codex,{policy}", "--max-context-tokens", "100000000",
        "--columns", "policy,retained", "--silent",
    )  # fmt: skip
    assert code == 0
    rows = {line.split()[0]: line.split(None, 1)[1] for line in out.split("\n\n")[1].splitlines()}
    assert rows["codex"] == rows["codex-turn"] == "2.8k (+0 [+0, +0]%)"
