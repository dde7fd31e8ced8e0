"""Every key `tsum diff --json` prints is explained in docs/ci.md: the document's, its
counts and tokens, and each differing session's with its schedule, summary and decision
changes (a script reads them by name; docs/ci.md is where `check --json` sends it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from tests.support.docs import doc_text, undocumented
from transcript_tools.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"


def _replay(out: Path, *args: str) -> Path:
    result = CliRunner().invoke(cli, ["replay", *args, "--out", str(out), "--silent"])
    assert result.exit_code == 0, result.output
    return out


def _keys(doc: dict[str, Any]) -> set[str]:
    keys = set(doc) | set(doc["counts"]) | set(doc["tokens"])
    for delta in doc["tokens"].values():
        keys |= set(delta)
    for change in [*doc["settings"], *([doc["template"]] if doc["template"] else [])]:
        keys |= set(change)
    for session in doc["sessions"]:
        keys |= set(session)
        for name in ("schedule", "summaries", "decisions"):
            for change in session[name]:
                keys |= set(change)
        for change in session["summaries"]:
            keys |= set(change["old"]) | set(change["new"])
    return keys


def test_every_diff_json_key_is_explained_in_docs_ci(tmp_path: Path) -> None:
    base = _replay(tmp_path / "base", str(SAMPLES))
    others = [
        _replay(tmp_path / "prompt", str(SAMPLES), "--prompt", "en"),  # texts and prompts
        _replay(tmp_path / "window", str(SAMPLES), "--max-context-tokens", "20000"),
        _replay(tmp_path / "ratio", str(SAMPLES), "--ratio", "0.6"),  # schedule moves
        _replay(tmp_path / "one", str(SAMPLES / "long_session.jsonl")),  # sessions removed
    ]
    seen: set[str] = set()
    for other in others:
        result = CliRunner().invoke(cli, ["diff", str(base), str(other), "--json"])
        assert result.exit_code == 1, result.output
        seen |= _keys(json.loads(result.stdout))
    # the diffs reached every kind of change (the check below is not vacuous)
    assert {"prompt_diff", "text_diff", "kind", "old_turn", "key", "prompt_sha256"} <= seen
    assert {"sessions_removed", "turn", "unit", "token_turns"} <= seen
    missing = undocumented(seen, doc_text("ci.md"))
    assert not missing, missing
