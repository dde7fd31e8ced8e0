"""``tsum sweep --policy``: a policy grid runs the engine, names its policies, and its
seed row (forced through the engine to check its views) has the fast path's schedule,
its views measured as every policy row's (the log's billed sizes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from transcript_tools.cli.main import cli
from transcript_tools.engine.policy_toml import preset, preset_names
from transcript_tools.reporter import QUIET
from transcript_tools.sweep.driver import Sweep, sweep_grid

SAMPLES = str(Path(__file__).resolve().parents[2] / "samples")
# The schedule (the fast path assumes every summary --summary-tokens long; the engine has
# the offline summarizer's real text). The views differ: the fast path's are the seed's own,
# in estimates; a policy row's, the seed's too, in the log's billed sizes.
SHARED = [
    "summary_calls",
    "summarizing_conversations",
    "first_trigger_turns",
    "compaction_deltas",
]


def _rows(configs: list) -> list[dict]:  # type: ignore[type-arg]
    result = Sweep(configs, reporter=QUIET).run([SAMPLES])
    return [s.to_json() for s in result.stats]


def test_the_seed_row_of_a_policy_grid_is_the_fast_paths_row() -> None:
    # The fast path applies to the seed's policy only (every other preset measures the
    # view, whose size depends on the summary): through the engine it must agree.
    for window in (3_000, 8_000):
        fast = _rows(sweep_grid((), [window], ratios=[0.5, 0.75], debounces=[1, 3]))
        engine = _rows(sweep_grid([preset("seed")], [window], ratios=[0.5, 0.75], debounces=[1, 3]))
        assert len(fast) == len(engine) == 4
        for a, b in zip(fast, engine, strict=True):
            assert b["policy"] == "seed"
            assert {k: a[k] for k in SHARED} == {k: b[k] for k in SHARED}
        assert any(row["summary_calls"] for row in fast)  # the comparison bites


def test_the_seed_row_measures_the_original_run_as_every_policy_row() -> None:
    # one original run, one size model: the seed's row (checking after each turn) reads
    # aider's (the same unit); the seed's own grid reads it in estimates (4,375 at its
    # peak on these samples, against 6,506 billed)
    fast, seed, aider = _rows(sweep_grid(())) + _rows(sweep_grid([preset("seed"), preset("aider")]))
    key = "view_peak_without_summaries"
    assert seed[key] == aider[key] != fast[key]
    assert seed["view_mean_without_summaries"] == aider["view_mean_without_summaries"]


def test_every_preset_runs_on_the_engine_and_names_itself() -> None:
    policies = [preset(name) for name in preset_names()]
    result = Sweep(sweep_grid(policies, [8_000]), reporter=QUIET).run([SAMPLES])
    assert result.fast_runs == 0
    assert result.engine_runs == len(policies) * result.conversations
    rows = [s.to_json() for s in result.stats]
    assert [row["policy"] for row in rows] == list(preset_names())
    by_name = {row["policy"]: row for row in rows}
    # the seed's summary as a system message at the end breaks Anthropic's, Gemini's and
    # the strict alternation's rules, never OpenAI's (engine/validity.py)
    seed = by_name["seed"]["violations"]
    assert seed["anthropic"] == seed["gemini"] == by_name["seed"]["views_checked"] > 0
    assert "openai" not in seed
    assert by_name["observation-masking"]["tool_results_cleared"] > 0
    assert by_name["clear-tool-uses"]["summary_calls"] == 0


def test_sweep_cli_policy_rows_and_seed_alone_is_the_plain_grid() -> None:
    runner = CliRunner()
    plain = runner.invoke(cli, ["sweep", SAMPLES, "--json"])
    seed = runner.invoke(cli, ["sweep", SAMPLES, "--json", "--policy", "seed"])
    assert plain.exit_code == seed.exit_code == 0
    assert plain.stdout == seed.stdout
    both = runner.invoke(cli, ["sweep", SAMPLES, "--json", "--policy", "seed,codex"])
    assert both.exit_code == 0, both.output
    rows = json.loads(both.stdout)["configs"]
    names = sorted(row["policy"] for row in rows)
    assert names == ["codex", "seed"]
    bad = runner.invoke(cli, ["sweep", SAMPLES, "--policy", "nope"])
    assert bad.exit_code == 2 and "nope" in bad.output and "Traceback" not in bad.output


def test_a_policy_rows_recall_is_evals_for_that_policy() -> None:
    """One scorer for both (eval/policy_probes.ActionHooks): the sweep's recall of a policy
    row is eval --policy's artifact recall in the next view, on the same logs."""
    runner = CliRunner()
    window = ["--max-context-tokens", "4000"]
    sweep = runner.invoke(
        cli, ["sweep", SAMPLES, "--json", "--policy", "codex,observation-masking", *window]
    )
    assert sweep.exit_code == 0, sweep.output
    rows = {row["policy"]: row for row in json.loads(sweep.stdout)["configs"]}
    args = ["eval", SAMPLES, "--json", "--silent", "--policy", "codex"]
    evaluated = runner.invoke(cli, [*args, "--policy", "observation-masking", *window])
    assert evaluated.exit_code == 0, evaluated.output
    policies = json.loads(evaluated.stdout)["policies"]
    for name in ("codex", "observation-masking"):
        recall = policies[name]["recall"]["view"]["artifact"]
        assert recall is not None and rows[name]["artifact_probes"] > 0
        assert rows[name]["artifact_recall"] == round(recall, 4)


def test_a_grid_row_is_the_row_of_its_configuration_swept_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The grid's configurations share each conversation's work (sweep/engine_path.py
    SharedWork: the size model, the probes and their texts; the views' checks): a row of
    the grid is the row its configuration gets alone, where nothing is shared. The size
    model is built once per conversation, not once per configuration."""
    from transcript_tools.sweep import engine_path

    built: list[str] = []
    original = engine_path.log_sizes

    def counting(conv):  # type: ignore[no-untyped-def]
        built.append(conv.session_id)
        return original(conv)

    monkeypatch.setattr(engine_path, "log_sizes", counting)
    policies = [preset(name) for name in ("seed", "aider", "langchain", "observation-masking")]
    grid = sweep_grid(policies, [8_000])
    together = _rows(grid)
    assert len(built) == len(set(built)) > 0  # once per conversation for the whole grid
    alone = [_rows([cfg])[0] for cfg in grid]
    assert together == alone
    assert sum(row["summary_calls"] for row in together) > 0  # the comparison bites
    assert any(row["artifact_probes"] for row in together)


def test_the_unit_legend_line_comes_with_the_unit_column_only() -> None:
    runner = CliRunner()
    # seed and aider both check after each turn: no unit column, so no line explaining it
    turns = runner.invoke(cli, ["sweep", SAMPLES, "--policy", "seed,aider", "--silent"])
    assert turns.exit_code == 0, turns.output
    assert " unit " not in turns.stdout.splitlines()[0]
    assert "unit call (--checkpoint call)" not in turns.stdout
    # codex checks after each model call: the column and its line
    calls = runner.invoke(cli, ["sweep", SAMPLES, "--policy", "seed,codex", "--silent"])
    assert calls.exit_code == 0, calls.output
    assert " unit " in calls.stdout.splitlines()[0]
    assert "unit call (--checkpoint call)" in calls.stdout


def test_the_policy_columns_are_explained_in_the_legend_and_the_report(tmp_path: Path) -> None:
    report = tmp_path / "sweep.html"
    args = ["sweep", SAMPLES, "--policy", "seed,codex", "--silent", "--report", str(report)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    header = result.stdout.splitlines()[0]
    page = report.read_text(encoding="utf-8")
    for term in ("policy", "cleared", "invalid views a/o/g/s", "agree =/±1/never"):
        assert term in header
        assert f"{term}: " in result.stdout.split("\n\n")[1]  # the legend under the table
        assert f"<dt>{term}</dt>" in page
    assert "strictly alternating roles" in result.stdout
    # clearing tool results is scored too: a row without summaries can have a recall
    assert "a policy that never summarizes has one too" in result.stdout
    assert "<dt>recall of a policy row</dt>" in page


def test_two_different_policies_of_one_name_are_refused(tmp_path: Path) -> None:
    changed = tmp_path / "codex.toml"  # named after the preset it changes
    changed.write_text('extends = "codex"\n[trigger]\nratio = 0.5\n', encoding="utf-8")
    runner = CliRunner()
    result = runner.invoke(cli, ["sweep", SAMPLES, "--policy", f"codex,{changed}", "--silent"])
    # two rows named codex, with different figures, would be told apart by nothing
    assert result.exit_code == 2
    assert "two different policies are named 'codex'" in result.stderr
    same = runner.invoke(cli, ["sweep", SAMPLES, "--policy", "codex,codex", "--json"])
    assert same.exit_code == 0  # the same policy twice is one row, as before
    assert [row["policy"] for row in json.loads(same.stdout)["configs"]] == ["codex"]


def test_an_auto_window_cell_is_explained_only_where_one_is_shown() -> None:
    runner = CliRunner()
    auto = runner.invoke(cli, ["sweep", SAMPLES, "--max-context-tokens", "auto", "--silent"])
    assert auto.exit_code == 0, auto.output
    assert "auto=32k (default)" in auto.stdout.splitlines()[2]  # the samples name none
    assert "auto (mixed): at several" in auto.stdout.split("\n\n")[1]
    assert "else the default (default)" in auto.stdout
    fixed = runner.invoke(cli, ["sweep", SAMPLES, "--max-context-tokens", "32000", "--silent"])
    assert fixed.exit_code == 0 and "max_ctx auto=W" not in fixed.stdout


def test_a_policy_that_never_acts_reads_its_original_views() -> None:
    """A policy row's view without summaries is the original measured as the policy
    measures its own (its slot and the log's size model, nothing acting): at a window
    neither reaches, codex (after each call) and claude-code change nothing, so peak and
    mean read the same with and without."""
    args = ["sweep", SAMPLES, "--json", "--policy", "codex,claude-code"]
    result = CliRunner().invoke(cli, [*args, "--max-context-tokens", "100000000"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["configs"]
    assert len(rows) == 2
    for row in rows:
        assert row["summary_calls"] == 0 and row["tool_results_cleared"] == 0
        for figure in ("view_peak", "view_peak_mean", "view_mean"):
            assert row[f"{figure}_without_summaries"] == row[f"{figure}_with_summaries"], (
                row["policy"],
                figure,
            )
        assert row["overflow_turns_without_summaries"] == row["overflow_turns"]
