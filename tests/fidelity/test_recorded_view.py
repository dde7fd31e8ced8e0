"""The view the original run continued from after a recorded compaction: what the runtime
kept (Claude Code ``compactMetadata.preservedMessages``, its summary), the fate of each
earlier person message, and the next prompt that view makes under the size model
(docs/fidelity.md, "Per compaction"; docs/eval.md, "The person's messages")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from tests.support.compaction_logs import claude_code_log
from transcript_tools.cli.main import cli
from transcript_tools.cost.original import kept_across
from transcript_tools.engine.messages import AssistantMessage, UserMessage
from transcript_tools.engine.person_fates import person_fates
from transcript_tools.fidelity import fidelity_paths
from transcript_tools.formats import read_conversations
from transcript_tools.formats.source import Source

SUMMARY = "b" * 400  # 102 tokens by engine/tokens.py's estimate (+ 8 for the message)
LONG = "start of a long request " * 5 + "the middle part " * 20 + "and how it ends " * 5


def test_a_message_the_summary_quotes_is_kept_and_one_it_cuts_is_partly() -> None:
    before = [
        UserMessage.text("rename the flag to --dry-run"),
        AssistantMessage.text("done"),
        UserMessage.text(LONG),
        UserMessage.text("and add a test for it"),
    ]
    summary = (
        "All user messages: 1. rename the flag to --dry-run 2. "
        + LONG[:50]
        + " [...] "
        + LONG[-50:]
    )
    # quoted whole: kept; its first and last 40 characters quoted: partly; the test: dropped
    fates = person_fates(before, [], [], summary)
    assert fates == {"kept": 1, "partly": 1, "dropped": 1, "resupplied": 0}
    # without the summary (Codex's encrypted one) only the kept messages count
    assert person_fates(before, [], [])["dropped"] == 3


def _line(n: int, kind: str, parent: int | None, **fields: Any) -> str:
    entry = {"type": kind, "uuid": f"u{n}", "parentUuid": None if parent is None else f"u{parent}"}
    return json.dumps({**entry, "sessionId": "s1", "version": "2.1.112", **fields})


def _call(n: int, prompt: int) -> str:
    usage = {"input_tokens": prompt, "output_tokens": 20, "cache_read_input_tokens": 0}
    message = {
        "id": f"m{n}",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [{"type": "text", "text": f"answer {n}"}],
        "usage": usage,
    }
    return _line(n, "assistant", n - 1, message=message)


def _person(n: int, text: str) -> str:
    return _line(n, "user", n - 1 if n else None, message={"role": "user", "content": text})


def preserved_log(path: Path, meta: dict[str, Any]) -> Path:
    """Two calls (prompts 1,000 and 1,500), a compaction whose ``compactMetadata`` is
    ``meta``, its summary, a call of 2,000, then the person writes a dropped request again."""
    lines = [
        _person(0, "first request to keep"),
        _call(1, 1000),
        _person(2, "second request dropped"),
        _call(3, 1500),
        _line(4, "system", 3, subtype="compact_boundary", compactMetadata=meta),
        _line(5, "user", 4, isCompactSummary=True, message={"role": "user", "content": SUMMARY}),
        _call(6, 2000),
        _person(7, "as before: second request dropped"),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


PRESERVED = {
    "trigger": "auto",
    "preTokens": 1520,
    "preservedMessages": {"anchorUuid": "u1", "uuids": ["u0", "u1"], "allUuids": ["u0", "u1"]},
}


def test_claude_code_names_the_messages_it_preserved(tmp_path: Path) -> None:
    log = preserved_log(tmp_path / "p.jsonl", PRESERVED)
    ((conv),) = read_conversations(Source(str(log)))
    (comp,) = conv.compactions
    assert comp.kept_texts == ("first request to keep",)  # u1 is the model's, not the person's
    full = preserved_log(tmp_path / "f.jsonl", {"trigger": "auto", "preTokens": 1520})
    ((conv),) = read_conversations(Source(str(full)))
    assert conv.compactions[0].kept_texts == ()  # a full compaction keeps only its summary
    older = claude_code_log(tmp_path / "o.jsonl", [150_000, 9_000], after=1)  # 1.0.x: no boundary
    ((conv),) = read_conversations(Source(str(older)))
    assert conv.compactions[0].kept_texts == ()


def test_the_rebuilt_view_and_the_fates_of_a_claude_code_compaction(tmp_path: Path) -> None:
    log = preserved_log(tmp_path / "p.jsonl", PRESERVED)
    (row,) = fidelity_paths([str(log)]).rows
    # the hidden prefix is the first prompt less the first message (1,000 - its size x);
    # the view kept that message (x) and the summary (8 + 102): 1,000 - x + x + 110
    assert row.rebuilt_tokens_after == 1110
    assert row.recorded_tokens_after == 2000 and row.rebuilt_error == -0.445
    # kept: the preserved request; dropped: the second, which the person wrote again
    assert row.recorded_person_fates == {"kept": 1, "partly": 0, "dropped": 1, "resupplied": 1}


def test_eval_scores_the_recorded_compaction_only_when_asked(tmp_path: Path) -> None:
    log = str(preserved_log(tmp_path / "p.jsonl", PRESERVED))
    runner = CliRunner()
    asked = runner.invoke(cli, ["eval", log, "--json", "--person-fates", "--silent"])
    assert asked.exit_code == 0, asked.output
    fates = json.loads(asked.stdout)["recorded_person_fates"]
    assert fates["totals"] == {
        "recorded:claude-code": {
            "compactions": 1,
            "kept": 1,
            "partly": 0,
            "dropped": 1,
            "resupplied": 1,
        }
    }
    assert fates["compactions"][0]["summary_readable"] is True
    plain = runner.invoke(cli, ["eval", log, "--json", "--silent"])
    assert "recorded_person_fates" not in json.loads(plain.stdout)
    text = runner.invoke(cli, ["eval", log, "--person-fates", "--silent"]).stdout
    assert (
        "recorded:claude-code: 1 compaction(s): 1 kept, 0 partly, 1 dropped, 1 resupplied" in text
    )


def test_the_cost_model_rebuilds_the_original_view_with_what_was_kept(tmp_path: Path) -> None:
    log = preserved_log(tmp_path / "p.jsonl", PRESERVED)
    ((conv),) = read_conversations(Source(str(log)))
    (comp,) = conv.compactions
    first = conv.messages[0]
    # the original run's prompts after the compaction: the preserved request, then the
    # summary and what follows it (cost/original.py reconstructed_run)
    assert kept_across(conv) == {comp.message_index: [first]}
    full = preserved_log(tmp_path / "f.jsonl", {"trigger": "auto", "preTokens": 1520})
    ((conv),) = read_conversations(Source(str(full)))
    assert kept_across(conv) == {}


def test_the_table_takes_relative_and_absolute_paths_together(
    tmp_path: Path, monkeypatch: Any
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    preserved_log(tmp_path / "a" / "p.jsonl", PRESERVED)
    other = preserved_log(tmp_path / "b" / "q.jsonl", PRESERVED)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["fidelity", "a", str(other)])
    assert result.exit_code == 0, result.output
    assert "a/p.jsonl" in result.stdout and "b/q.jsonl" in result.stdout
