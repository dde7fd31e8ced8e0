"""Every key `tsum cache stats --json` prints is explained in docs/providers.md."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tests.support.docs import doc_text, undocumented
from transcript_tools.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]


def test_every_cache_stats_json_key_is_explained_in_docs_providers(tmp_path: Path) -> None:
    cache = str(tmp_path / "cache.sqlite3")
    sample = str(ROOT / "samples" / "long_session.jsonl")
    filled = CliRunner().invoke(cli, ["replay", sample, "--cache", cache, "--silent"])
    assert filled.exit_code == 0, filled.output
    result = CliRunner().invoke(cli, ["cache", "stats", "--json", "--cache", cache])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["by_model"], doc  # a row per model reached
    seen = set(doc).union(*map(set, doc["by_model"]))
    missing = undocumented(seen, doc_text("providers.md"))
    assert not missing, missing
