"""docs/cost.md's "Overflow" table: its "after" columns are what the sweep it names prints
on the shared corpus (codex's row once kept a conversation left out that the view measure
of aab8b56 no longer counts as over the window)."""

from __future__ import annotations

import orjson
from click.testing import CliRunner

from tests.cost.test_cost_error_table import ROOT
from tests.support.corpus import CORPUS, needs_corpus
from transcript_tools.cli.main import cli


@needs_corpus
def test_the_overflow_tables_after_columns_are_the_sweep_s() -> None:
    # `tsum sweep ../shared/corpus/real/claude-code ../shared/corpus/real/codex --policy
    # seed,clear-tool-uses,codex --cost --max-context-tokens auto`, as --json
    args = [
        str(CORPUS / "claude-code"),
        str(CORPUS / "codex"),
        "--policy",
        "seed,clear-tool-uses,codex",
    ]
    result = CliRunner().invoke(
        cli, ["sweep", *args, "--cost", "--max-context-tokens", "auto", "--json"]
    )
    assert result.exit_code == 0, result.stderr
    rows = orjson.loads(result.stdout)["configs"]
    docs = (ROOT / "docs" / "cost.md").read_text(encoding="utf-8")
    table = docs.split("| policy | before: $ total | Δ$ orig | after: $ total |", 1)[1]
    table = table.split("\n\n", 1)[0]
    for row in rows:
        change = f"{row['cost_change_vs_original'] * 100:+.1f}%".replace("-", "−")
        after = f"| ${row['cost_usd']:.2f} | {change} |"
        line = next(line for line in table.splitlines() if line.startswith(f"| {row['policy']} |"))
        assert after in line, (line, after)
        left_out = row["cost_overflow_conversations"]
        assert ("| none |" in line) == (left_out == 0), line
        assert left_out == 0 or f"| {left_out} conversation" in line, line
