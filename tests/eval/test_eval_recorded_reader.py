"""tsum eval scores a runtime's recorded summary from what the format reader gave
(``Compaction.summary``), never by re-opening the file: so from stdin and from bytes a
distributed reader fetched (``formats.source.PREFETCHED_BYTES``, a Ray URL) as from a local path."""

from __future__ import annotations

import io
import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from transcript_tools.cli.main import cli
from transcript_tools.eval.checkpoints import recorded_checkpoints
from transcript_tools.formats import source
from transcript_tools.formats.corpus import CorpusReader

CODEX = Path(__file__).resolve().parents[1] / "fixtures" / "formats" / "representative_codex.jsonl"


def recorded_summary() -> str:
    for line in CODEX.read_text().splitlines():
        obj = json.loads(line)
        if obj.get("type") == "compacted":
            return str(obj["payload"]["message"])
    raise AssertionError("the fixture has a compacted item")


def test_the_codex_reader_keeps_the_compacted_text() -> None:
    (conv,) = CorpusReader().conversations([str(CODEX)])
    (comp,) = conv.compactions
    assert comp.source == "codex:compacted" and comp.summary == recorded_summary()


@pytest.mark.parametrize("where", ["path", "stdin", "fetched"])
def test_recorded_codex_summary_from_any_input(where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    data = CODEX.read_bytes()
    name = {"path": str(CODEX), "stdin": "-", "fetched": "s3://bucket/rollout.jsonl"}[where]
    if where == "fetched":
        monkeypatch.setitem(source.PREFETCHED_BYTES, name, data)
    if where == "stdin":
        monkeypatch.setattr("sys.stdin", SimpleNamespace(buffer=io.BytesIO(data)))
    (conv,) = CorpusReader(fmt="codex").conversations([name])
    checkpoints, notes = recorded_checkpoints(conv, lambda index: 0)
    assert notes == []
    assert [(c.label, c.summary) for c in checkpoints] == [("recorded:codex", recorded_summary())]


def test_eval_from_stdin_scores_the_recorded_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TSUM_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TSUM_OFFLINE", "1")
    result = CliRunner().invoke(cli, ["eval", "-", "--json", "--silent"], input=CODEX.read_bytes())
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["variants"]["recorded:codex"]["checkpoints"] == 1
    assert doc["notes"] == []
