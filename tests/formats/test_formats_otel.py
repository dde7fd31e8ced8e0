"""OpenTelemetry (OTLP JSON): GenAI semconv spans, Claude Code and Gemini CLI log events,
and their compactions; calls and tokens counted from the raw export, against inspect."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from tests.support.corpus import FIXTURES, read
from tests.support.detection import detect_format
from transcript_tools.cli.inspect_cmd import inspect_command
from transcript_tools.engine.messages import ToolResultMessage
from transcript_tools.formats.source import Source

GENAI = FIXTURES / "representative_otel_genai.json"
CLAUDE = FIXTURES / "edge_cases_otel_claude_code_logs.jsonl"
GEMINI = FIXTURES / "edge_cases_otel_gemini_cli.json"


def inspect_json(path: Path) -> dict[str, Any]:
    result = CliRunner().invoke(inspect_command, ["--json", "--workers", "1", str(path)])
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.stdout)
    return dict(row)


def exports(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    return (
        [json.loads(text)] if path.suffix == ".json" else [json.loads(x) for x in text.splitlines()]
    )


def flat(attributes: list[dict[str, Any]]) -> dict[str, Any]:
    out = {}
    for a in attributes:
        ((kind, raw),) = a["value"].items()
        out[a["key"]] = int(raw) if kind == "intValue" else raw
    return out


def logs(path: Path) -> list[dict[str, Any]]:
    return [
        flat(r["attributes"])
        for e in exports(path)
        for res in e["resourceLogs"]
        for scope in res["scopeLogs"]
        for r in scope["logRecords"]
    ]


def test_genai_spans_against_the_raw_export() -> None:
    spans = [
        flat(s["attributes"])
        for res in exports(GENAI)[0]["resourceSpans"]
        for scope in res["scopeSpans"]
        for s in scope["spans"]
    ]
    chats = [s for s in spans if s["gen_ai.operation.name"] == "chat"]
    row = inspect_json(GENAI)
    tokens = sum(s["gen_ai.usage.input_tokens"] + s["gen_ai.usage.output_tokens"] for s in chats)
    assert (row["calls"], row["recorded_tokens"]) == (len(chats), tokens) == (3, 415)
    # by hand: "Weather in Paris?" and "And tomorrow?" (the summary before it is not new
    # input: an assistant message follows it); one get_weather call, answered once
    assert (row["turns"], row["tool_calls"], row["messages"]["tool"]) == (2, 1, 1)
    assert [c["source"] for c in row["compactions"]] == ["otel:gen_ai.conversation.compacted"]
    assert row["session_id"] == "conv_7Hq2" and row["warnings"] == []
    [conv] = read(GENAI)
    [result] = [m for m in conv.messages if isinstance(m, ToolResultMessage)]
    assert (result.tool_call_id, result.content) == ("call_1", "rainy, 57°F")


def test_claude_code_events_against_the_raw_export() -> None:
    events = logs(CLAUDE)
    requests = [e for e in events if e["event.name"] == "api_request"]
    main = [e for e in requests if e["query_source"] != "compact"]
    tokens = sum(
        e["input_tokens"] + e["cache_read_tokens"] + e["cache_creation_tokens"] + e["output_tokens"]
        for e in main
    )
    row = inspect_json(CLAUDE)
    prompts = sum(1 for e in events if e["event.name"] == "user_prompt")
    assert (row["turns"], row["calls"], row["recorded_tokens"]) == (prompts, len(main), tokens)
    assert (prompts, len(main), tokens) == (2, 3, 11535)  # 5210 + 5385 + 940, by hand
    [comp] = row["compactions"]
    assert (comp["source"], comp["pre_tokens"]) == ("otel:claude_code.compaction", 5385)
    assert row["warnings"] == [
        "1 signal(s) that are not messages left out (claude_code.api_error ×1)",
        "1 summarizer request(s) of Claude Code's compaction (query_source: compact) left out:"
        " part of the recorded compaction",
    ]


def test_gemini_cli_events_against_the_raw_export() -> None:
    events = logs(GEMINI)
    responses = [e for e in events if e["event.name"] == "gemini_cli.api_response"]
    tokens = sum(
        e["input_token_count"]
        + e["tool_token_count"]
        + e["output_token_count"]
        + e["thoughts_token_count"]
        for e in responses
    )
    row = inspect_json(GEMINI)
    assert (row["calls"], row["recorded_tokens"]) == (len(responses), tokens) == (3, 17980)
    assert (row["turns"], row["tool_calls"]) == (2, 1)
    [comp] = row["compactions"]
    assert (comp["source"], comp["pre_tokens"]) == ("otel:gemini_cli.chat_compression", 8340)


def test_calls_logged_beside_their_spans_count_once(tmp_path: Path) -> None:
    doc = exports(GENAI)[0]
    doc["resourceLogs"] = exports(GEMINI)[0]["resourceLogs"]  # other sessions: read apart
    path = tmp_path / "both.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert detect_format(Source(str(path))) == "otel"
    sessions = {c.session_id: c for c in read(path)}
    assert set(sessions) == {"conv_7Hq2", "gem-1"}
    # one session holding both a chat span and an api_response event: the span is the call
    attrs = doc["resourceLogs"][0]["scopeLogs"][0]["logRecords"][2]["attributes"]
    attrs.append({"key": "gen_ai.conversation.id", "value": {"stringValue": "conv_7Hq2"}})
    path.write_text(json.dumps(doc), encoding="utf-8")
    merged = {c.session_id: c for c in read(path)}["conv_7Hq2"]
    assert sum(1 for m in merged.messages if m.role == "assistant") == 3


def test_a_span_with_usage_and_no_operation_name_is_a_call(tmp_path: Path) -> None:
    """Older instrumentations name no operation (``gen_ai.system``, a ``chat`` span name)."""
    usage = [("gen_ai.usage.input_tokens", "10"), ("gen_ai.usage.output_tokens", "5")]
    span = {
        "traceId": "t1",
        "spanId": "s1",
        "name": "chat openai",
        "startTimeUnixNano": "1700000000000000000",
        "attributes": [{"key": k, "value": {"intValue": v}} for k, v in usage],
    }
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}))
    row = inspect_json(path)
    assert (row["session_id"], row["calls"], row["recorded_tokens"]) == ("t1", 1, 15)


def test_forced_on_another_format_is_one_error_naming_the_line() -> None:
    path = FIXTURES / "representative_pi.jsonl"
    result = CliRunner().invoke(inspect_command, ["--format", "otel", str(path)])
    assert result.exit_code != 0
    assert f"{path}:1: not an OTLP export" in result.stderr
