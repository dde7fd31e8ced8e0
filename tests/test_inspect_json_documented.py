"""Every key of a session object `tsum inspect --json` prints is explained in
docs/formats.md, nested ones too (messages by role, the estimate's error, the largest
context, a recorded compaction, the context by kind); `commands` is keyed by data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from tests.support.corpus import FIXTURES
from tests.support.docs import doc_text, undocumented
from transcript_tools.cli.main import cli

ROOT = Path(__file__).resolve().parents[1]
INPUTS = [
    str(ROOT / "samples"),
    str(FIXTURES / "edge_cases_claude_code_compact_summary.jsonl"),
    str(FIXTURES / "edge_cases_codex_0_55_tokens_before_and_after.jsonl"),
]
NESTED = ("messages", "estimate_error", "largest_context", "context_by_kind")


def _keys(session: dict[str, Any]) -> set[str]:
    keys = set(session)
    for name in NESTED:
        keys |= set(session[name] or {})
    for compaction in session["compactions"]:
        keys |= set(compaction)
    return keys


def test_every_inspect_json_key_is_explained_in_docs_formats() -> None:
    result = CliRunner().invoke(cli, ["inspect", *INPUTS, "--json"])
    assert result.exit_code == 0, result.output
    sessions = json.loads(result.stdout)
    seen = set().union(*map(_keys, sessions))
    assert {"message_index", "p90", "person text"} <= seen  # every nested kind reached
    missing = undocumented(seen, doc_text("formats.md"))
    assert not missing, missing
