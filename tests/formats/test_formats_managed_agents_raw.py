"""Managed-agent session events as a widely published exporter writes them: each API
event wrapped as ``{"role", "kind", "time", "raw": {<the event>}}``."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.corpus import FIXTURES, read
from tests.support.detection import detect_format
from transcript_tools.engine.messages import AssistantMessage
from transcript_tools.formats.source import Source

RAW = FIXTURES / "edge_cases_managed_agents_raw.jsonl"
PLAIN = FIXTURES / "representative_managed_agents.jsonl"


def test_the_event_inside_raw_is_read() -> None:
    rows = [json.loads(line) for line in RAW.read_text().splitlines()]
    assert all(set(r) == {"role", "kind", "time", "raw"} for r in rows)
    assert detect_format(Source(str(RAW))) == "managed-agents"
    warnings: list[str] = []
    (conv,) = read(RAW, warn=warnings.append)
    calls = [m for m in conv.messages if isinstance(m, AssistantMessage)]
    ends = [r["raw"]["model_usage"] for r in rows if r["kind"] == "span.model_request_end"]
    assert len(calls) == len(ends) == 5
    assert sum(m.usage.total_tokens for m in calls if m.usage) == sum(
        u["input_tokens"]
        + u["cache_creation_input_tokens"]
        + u["cache_read_input_tokens"]
        + u["output_tokens"]
        for u in ends
    )
    assert warnings == []
    (plain,) = read(PLAIN)
    assert conv.messages == plain.messages  # the same events, read alike


def test_the_last_session_usage_is_checked_against_the_calls(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in RAW.read_text().splitlines()]
    usage = next(r for r in rows if r["kind"] == "session.usage")["raw"]["usage"]
    # the exporter's last usage record taken before the last request (40 + 50 + 3540 in,
    # 12 out) was counted
    usage["input_tokens"] -= 40
    usage["cache_creation_input_tokens"] -= 50
    usage["cache_read_input_tokens"] -= 3540
    usage["output_tokens"] -= 12
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    warnings: list[str] = []
    read(path, warn=warnings.append)
    line = 1 + next(i for i, r in enumerate(rows) if r["kind"] == "session.usage")
    assert warnings == [
        f"warning: {path}:{line}: session.usage says 14850 input / 200 output tokens, the"
        " calls' usage sums to 18480 / 212"
    ]
