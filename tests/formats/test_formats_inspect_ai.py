"""inspect_ai eval logs (`.eval` archives, `.json` logs): samples, per-call usage from
the model events, compaction events; counts from the raw samples and by hand."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from tests.support.corpus import FIXTURES, read
from tests.support.detection import detect_format
from transcript_tools.cli.main import cli
from transcript_tools.engine.messages import ToolResultMessage
from transcript_tools.formats.source import Source

ARCHIVE = FIXTURES / "representative_inspect.eval"
LOG = FIXTURES / "edge_cases_inspect_compaction.json"


def inspect_json(path: Path) -> dict[str, dict[str, Any]]:
    result = CliRunner().invoke(cli, ["inspect", "--json", "--workers", "1", str(path)])
    assert result.exit_code == 0, result.output
    return {row["session_id"]: row for row in json.loads(result.stdout)}


def raw_counts(sample: dict[str, Any]) -> tuple[int, int, int]:
    """(turns, calls, tokens) from a raw sample: user and assistant messages, and the usage
    of the model events whose output is one of its messages (prompt = input + cache)."""
    ids = {m["id"] for m in sample["messages"] if m["role"] == "assistant"}
    tokens = 0
    for event in sample["events"]:
        if event["event"] == "model" and event["output"]["choices"][0]["message"]["id"] in ids:
            u = event["output"]["usage"]
            cached = u.get("input_tokens_cache_read", 0) + u.get("input_tokens_cache_write", 0)
            inclusive = cached and u["total_tokens"] == u["input_tokens"] + u["output_tokens"]
            tokens += u["input_tokens"] + (0 if inclusive else cached) + u["output_tokens"]
    roles = [m["role"] for m in sample["messages"]]
    return roles.count("user"), roles.count("assistant"), tokens


def test_eval_archive_against_the_raw_samples() -> None:
    assert detect_format(Source(str(ARCHIVE))) == "inspect-ai"
    rows = inspect_json(ARCHIVE)
    with zipfile.ZipFile(io.BytesIO(ARCHIVE.read_bytes())) as archive:
        samples = [
            json.loads(archive.read(n))
            for n in sorted(archive.namelist())
            if n.startswith("samples/")
        ]
    for sample in samples:
        row = rows[f"{sample['id']}/epoch-{sample['epoch']}"]
        assert (row["turns"], row["calls"], row["recorded_tokens"]) == raw_counts(sample)
    # by hand: task-1 (1000+800+50) + (20+1800+60+30) = 3760, its model_usage total too;
    # task-2 is an inclusive count (input 500 holds the 300 cached): 500 + 20
    assert (
        rows["task-1/epoch-1"]["recorded_tokens"]
        == 3760
        == samples[0]["model_usage"]["anthropic/claude-sonnet-4-5"]["total_tokens"]
    )
    assert rows["task-2/epoch-1"]["recorded_tokens"] == 520
    assert rows["task-1/epoch-1"]["warnings"] == [
        "1 model call(s) whose message is not in the sample's messages (scorers, summarizers,"
        " messages compacted away): their usage is not read"
    ]


def test_json_log_compaction_attachments_and_tool_errors() -> None:
    [row] = inspect_json(LOG).values()
    sample = json.loads(LOG.read_text(encoding="utf-8"))["samples"][0]
    assert (row["turns"], row["calls"], row["recorded_tokens"]) == raw_counts(sample)
    assert (row["turns"], row["calls"], row["recorded_tokens"]) == (2, 3, 260)  # 110+115+35
    [comp] = row["compactions"]
    # placed just before the call after it (n-a2, the fourth message)
    assert (comp["source"], comp["pre_tokens"], comp["message_index"]) == (
        "inspect-ai:compaction",
        5000,
        3,
    )
    [conv] = read(LOG)
    results = [m for m in conv.messages if isinstance(m, ToolResultMessage)]
    assert results[0].content.startswith("def a():")  # attachment://3f1a9c resolved
    assert (results[1].is_error, results[1].content) == (True, "read-only file system")


def test_a_zip_that_is_not_an_eval_log_is_still_named(tmp_path: Path) -> None:
    path = tmp_path / "photos.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("a.txt", "hello")
    assert detect_format(Source(str(path))) is None


def test_forced_on_another_format_or_without_samples(tmp_path: Path) -> None:
    path = FIXTURES / "representative_pi.jsonl"
    result = CliRunner().invoke(cli, ["inspect", "--format", "inspect-ai", str(path)])
    assert f"{path}:1: not an inspect_ai eval log (no 'eval')" in result.stderr
    header_only = json.loads(LOG.read_text(encoding="utf-8"))
    del header_only["samples"]
    log = tmp_path / "header.json"
    log.write_text(json.dumps(header_only), encoding="utf-8")
    warned: list[str] = []
    assert read(log, warn=warned.append) == []
    assert warned == [
        f"warning: {log}: an inspect_ai log without samples (logged with samples off?)"
    ]
