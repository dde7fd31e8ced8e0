"""check's gates fail closed and speak (docs/cost.md, "Outputs"): a failing cost gate
shows its line under --silent, a baseline without costs is a one-line error, and
--markdown carries the recall and cost gates' verdicts on stdout."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
from click.testing import CliRunner

from transcript_tools.cli.main import cli
from transcript_tools.cost.gate import compare_costs

SAMPLE = str(Path(__file__).resolve().parents[2] / "samples" / "long_session.jsonl")
GATE = ("--max-cost-increase", "0.05")


def run_cli(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _bless(tmp_path: Path, *extra: str) -> str:
    baseline = str(tmp_path / "base")
    done = run_cli("check", SAMPLE, "--baseline", baseline, "--update", *extra)
    assert done.exit_code == 0, done.stderr
    return baseline


def test_silent_still_shows_a_failing_cost_gate(tmp_path: Path) -> None:
    baseline = _bless(tmp_path, *GATE, "--price-per-mtok", "3/15")
    dearer = ("--price-per-mtok", "6/30")
    quiet = run_cli("check", SAMPLE, "--baseline", baseline, *GATE, *dearer, "--silent")
    assert quiet.exit_code == 1
    (line,) = [x for x in quiet.stderr.splitlines() if x.startswith("tsum: cost:")]
    assert "+100.0%" in line and "FAILED" in line
    same = run_cli(
        "check", SAMPLE, "--baseline", baseline, *GATE, "--price-per-mtok", "3/15", "--silent"
    )
    assert same.exit_code == 0 and same.stderr == ""  # a passing gate stays silent


def test_a_baseline_without_costs_is_a_one_line_error(tmp_path: Path) -> None:
    baseline = _bless(tmp_path)  # blessed without --max-cost-increase: no costs.jsonl
    result = run_cli("check", SAMPLE, "--baseline", baseline, *GATE, "--price-per-mtok", "3/15")
    assert result.exit_code == 3  # could not compare, never a pass
    (line,) = result.stderr.splitlines()
    assert line.startswith("tsum: error: --max-cost-increase: ")
    assert "has no costs.jsonl to compare the cost with; bless one with: tsum check" in line
    assert "--update" in line and "--max-cost-increase 0.05" in line
    # the gate itself fails closed where a library caller gives it nothing to compare
    assert compare_costs(None, {}, 0.05).failed
    assert compare_costs({}, {}, 0.05).failed


def test_markdown_carries_both_gates_verdicts(tmp_path: Path) -> None:
    baseline = _bless(tmp_path, *GATE, "--price-per-mtok", "3/15")
    dearer = ("--price-per-mtok", "6/30")
    result = run_cli("check", SAMPLE, "--baseline", baseline, *GATE, *dearer, "--markdown")
    assert result.exit_code == 1
    out = result.stdout
    assert out.startswith("### tsum: no differences")
    gates = out[out.index("#### Gates") :].splitlines()
    assert any(x.startswith("- eval: artifact recall") and x.endswith(": ok") for x in gates), gates
    assert any(x.startswith("- **failed**: cost: $") and "+100.0%" in x for x in gates), gates
    plain = run_cli("check", SAMPLE, "--baseline", baseline, *GATE, "--price-per-mtok", "3/15")
    assert "#### Gates" not in plain.stdout  # text output: the verdicts stay on stderr


def test_a_failing_gate_on_identical_outputs_still_prints_the_diff(tmp_path: Path) -> None:
    """Only the gate failed (the prices rose, the outputs did not change): stdout still
    carries the diff in the format asked for, so a --json consumer gets a JSON object."""
    baseline = _bless(tmp_path, *GATE, "--price-per-mtok", "3/15")
    dearer = (*GATE, "--price-per-mtok", "6/30")
    as_json = run_cli("check", SAMPLE, "--baseline", baseline, *dearer, "--json")
    assert as_json.exit_code == 1
    assert orjson.loads(as_json.stdout)["identical"] is True
    text = run_cli("check", SAMPLE, "--baseline", baseline, *dearer)
    assert text.exit_code == 1 and "no differences: 1 session(s)" in text.stdout
    assert "FAILED" in text.stderr


def test_json_carries_the_gates_beside_the_diff(tmp_path: Path) -> None:
    """--json: the gates the text output shows on stderr, as the key ``gates`` (which ran,
    their thresholds, the figures, pass or fail); the diff's own keys are unchanged."""
    baseline = _bless(tmp_path, *GATE, "--price-per-mtok", "3/15")
    dearer = (*GATE, "--price-per-mtok", "6/30")
    result = run_cli("check", SAMPLE, "--baseline", baseline, *dearer, "--json")
    assert result.exit_code == 1
    data = orjson.loads(result.stdout)
    recall, cost = data.pop("gates")
    assert data == orjson.loads(run_cli("diff", baseline, baseline, "--json").stdout) | {
        "old_label": baseline,
        "new_label": "this run",
    }
    assert recall["name"] == "recall" and recall["evaluated"] and not recall["failed"]
    assert recall["threshold"] == {"max_drop": 0.05} and recall["baseline"] == recall["run"]
    assert recall["lines"][0].startswith("eval: artifact recall") and recall["run"] > 0
    assert cost["name"] == "cost" and cost["evaluated"] and cost["failed"]
    assert cost["threshold"] == {"max_increase": 0.05}
    assert round(cost["run"] / cost["baseline"], 6) == 2.0  # twice the prices
    assert cost["lines"] == [
        x.removeprefix("tsum: ") for x in result.stderr.splitlines() if x.startswith("tsum: cost:")
    ]
    # without --max-cost-increase the cost gate is listed, not evaluated, with no threshold
    plain = orjson.loads(run_cli("check", SAMPLE, "--baseline", baseline, "--json").stdout)
    assert plain["gates"][1] == {
        "name": "cost",
        "evaluated": False,
        "threshold": None,
        "baseline": None,
        "run": None,
        "failed": False,
        "lines": [],
    }


def test_the_gate_line_says_its_total_is_more_than_the_end_of_run_cost(tmp_path: Path) -> None:
    """The end-of-run line prices this run's summary calls; the gate totals the policy's
    whole run (costs.jsonl: the agent's calls and the summary calls). Its line says so
    and names the summary calls' part, the end-of-run line's figure, so the two agree."""
    baseline = _bless(tmp_path, *GATE, "--price-per-mtok", "3/15")
    result = run_cli("check", SAMPLE, "--baseline", baseline, *GATE, "--price-per-mtok", "3/15")
    assert result.exit_code == 0, result.stderr
    end = re.search(r"; cost \$([0-9.]+) \(with --batch", result.stderr)
    gate = re.search(
        r"^tsum: cost: \$([0-9.]+) -> \$([0-9.]+) over 1 session\(s\) \([^)]*\), "
        r"the agent's calls and \$([0-9.]+) -> \$([0-9.]+) of summary calls \[",
        result.stderr,
        re.MULTILINE,
    )
    assert end and gate, result.stderr
    assert gate[4] == gate[3] == end[1] and float(gate[2]) > float(end[1]) > 0
