"""Every key of `tsum eval --json` (and eval.json) is explained in docs/eval.md: the
document's, a variant's figures, a policy's, and their nested objects keyed by name
(those keyed by data — labels, probe kinds, positions, target APIs, rules — are not)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from tests.support.docs import doc_text, undocumented
from transcript_tools.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
INPUTS = [
    str(ROOT / "samples"),
    str(ROOT / "tests" / "fixtures" / "formats" / "edge_cases_claude_code_compact_summary.jsonl"),
]
RUNS = (
    ["--prompt", "zh", "--prompt", "en", "--cost", "--person-fates"],
    ["--policy", "claude-code", "--max-context-tokens", "4000"],
)


def _figures(row: dict[str, Any]) -> set[str]:
    keys = set(row)
    for name in ("recall", "recall_where_shorter", "recall_where_shown", "recall_by_action"):
        keys |= set(row.get(name, {}))  # the variants: summary, truncation, none, view, ...
    for name in ("summary_cost", "carried"):
        keys |= set(row.get(name, {}))
    for position in row.get("by_position", {}).values():
        keys |= set(position)
    for api in row.get("violations", {}).values():
        keys |= set(api)
    return keys


def _keys(doc: dict[str, Any]) -> set[str]:
    keys = set(doc) | set(doc.get("recorded_person_fates") or {})
    for row in [*doc["variants"].values(), *doc.get("policies", {}).values()]:
        keys |= _figures(row)
    return keys


def test_every_eval_json_key_is_explained_in_docs_eval() -> None:
    seen: set[str] = set()
    for extra in RUNS:
        result = CliRunner().invoke(cli, ["eval", *INPUTS, "--json", "--silent", *extra])
        assert result.exit_code == 0, (extra, result.output)
        seen |= _keys(json.loads(result.stdout))
    # the runs reached the optional keys (the check below is not vacuous)
    assert {"policies", "recorded_person_fates", "recall_per_1k_retained_tokens"} <= seen
    assert {"looked_for", "uncompacted_violations", "rules", "ceiling", "totals"} <= seen
    missing = undocumented(seen, doc_text("eval.md"))
    assert not missing, missing
