"""Every key `tsum sweep --json` prints is explained in docs/sweep.md's `--json`
section: the document's, each configuration's, and those of its nested objects whose
keys are names (not data such as turn numbers or windows)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from tests.support.corpus import FIXTURES
from tests.support.docs import doc_text, undocumented
from transcript_tools.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
INPUTS = [
    str(ROOT / "samples"),
    str(FIXTURES / "edge_cases_codex_0_55_tokens_before_and_after.jsonl"),
    str(FIXTURES / "edge_cases_claude_code_compact_summary.jsonl"),
    str(FIXTURES / "edge_cases_tau_bench.json"),
]
RUNS = (
    [],
    ["--measure", "current", "--max-context-tokens", "4000", "--price-per-mtok", "3"],
    ["--checkpoint", "call", "--max-context-tokens", "4000"],
    ["--policy", "seed,claude-code,observation-masking", "--cost", "--max-context-tokens", "auto"],
)
# nested objects keyed by data: a turn, a delta, a window, a target API
DATA_KEYED = {"first_trigger_turns", "compaction_deltas", "max_context_tokens_used", "violations"}


def _keys(doc: dict[str, Any]) -> set[str]:
    keys = set(doc)
    for config in doc["configs"]:
        keys |= set(config)
        for name, value in config.items():
            if isinstance(value, dict) and name not in DATA_KEYED:
                keys |= set(value)
    return keys


def test_every_sweep_json_key_is_explained_in_docs_sweep() -> None:
    seen: set[str] = set()
    for extra in RUNS:
        args = ["sweep", *INPUTS, "--json", "--silent", *extra]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, (extra, result.output, result.stderr)
        seen |= _keys(json.loads(result.stdout))
    # the runs reached the optional keys (the check below is not vacuous)
    assert {"checkpoint", "policy", "compaction_agreement", "within_one", "cost_usd"} <= seen
    assert {"max_context_tokens_default", "delta_usd_elsewhere", "summarizer_cost"} <= seen
    missing = undocumented(seen, doc_text("sweep.md", "`--json`"))
    assert not missing, missing
