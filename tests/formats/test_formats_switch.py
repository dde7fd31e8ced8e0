"""A file whose records switch format part way: one warning, at the line."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.corpus import FIXTURES, read
from transcript_tools.formats import read_conversations
from transcript_tools.formats.source import Source

MIXED = FIXTURES / "edge_cases_claude_code_then_codex.jsonl"


def test_claude_code_then_codex_says_once_where_the_format_changes() -> None:
    warnings: list[str] = []
    (conv,) = read(MIXED, warn=warnings.append)
    assert conv.format == "claude-code"
    assert warnings == [
        f"warning: {MIXED}:14: the file changes format here, from claude-code to codex: read"
        " as claude-code, so its 26 codex records are skipped"
    ]
    # the Claude Code part is read as before: one prompt, its four calls
    assert [type(m).__name__ for m in conv.messages].count("AssistantMessage") == 4


def test_codex_then_claude_code_too(tmp_path: Path) -> None:
    codex = (FIXTURES / "representative_codex.jsonl").read_text().splitlines()
    claude = MIXED.read_text().splitlines()[:3]
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(codex + claude) + "\n")
    warnings: list[str] = []
    (conv,) = read(path, warn=warnings.append)
    assert conv.format == "codex"
    line = len(codex) + 1
    assert warnings == [
        f"warning: {path}:{line}: the file changes format here, from codex to claude-code: read"
        " as codex, so its 3 claude-code records are skipped"
    ]


def test_an_unknown_entry_type_is_still_its_own_warning(tmp_path: Path) -> None:
    lines = MIXED.read_text().splitlines()[:13]
    extra = json.dumps({"type": "hologram", "sessionId": "s", "uuid": "h1"})
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join([*lines, extra]) + "\n")
    warnings: list[str] = []
    read(path, warn=warnings.append)
    assert warnings == [f"warning: {path}:14: 1 entry of unknown type 'hologram' skipped"]


def test_a_file_forced_into_the_wrong_format_does_not_change_format() -> None:
    warnings: list[str] = []
    source = Source(str(FIXTURES / "representative_claude_code.jsonl"), warn=warnings.append)
    list(read_conversations(source, "codex"))
    assert not any("changes format" in w for w in warnings)
    assert any("of unknown type 'user' skipped" in w for w in warnings)
