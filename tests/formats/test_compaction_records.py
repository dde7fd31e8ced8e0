"""What the readers record about each compaction: trigger, sizes, version, model, kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.compaction_logs import claude_code_log, codex_log
from tests.support.corpus import CORPUS, needs_corpus, read
from transcript_tools.engine.messages import Compaction


def only(path: Path) -> Compaction:
    (conv,) = read(path)
    (comp,) = conv.compactions
    return comp


def test_claude_code_boundary_records_trigger_sizes_version_and_model(tmp_path: Path) -> None:
    meta = {"trigger": "auto", "preTokens": 167766, "postTokens": 6977}
    log = claude_code_log(
        tmp_path / "s.jsonl", [100_000, 167_000, 9_000], after=2, version="2.1.112", boundary=meta
    )
    comp = only(log)
    assert (comp.source, comp.trigger, comp.pre_tokens, comp.post_tokens) == (
        "claude-code:compact_boundary",
        "auto",
        167766,
        6977,
    )
    assert (comp.version, comp.model) == ("2.1.112", "claude-sonnet-4-5-20250929")
    # first message after it: prompt, 2 calls with their results = index 5 (the summary)
    assert comp.message_index == 5


def test_claude_code_manual_boundary(tmp_path: Path) -> None:
    meta = {"trigger": "manual", "preTokens": 50_000}
    log = claude_code_log(tmp_path / "s.jsonl", [40_000, 50_000, 8_000], after=2, boundary=meta)
    assert (only(log).trigger, only(log).post_tokens) == ("manual", None)


@pytest.mark.parametrize(
    ("command", "trigger"), [(None, "auto"), ("before", "manual"), ("after", "manual")]
)
def test_claude_code_summary_only_trigger_from_a_compact_echo(
    tmp_path: Path, command: str | None, trigger: str
) -> None:
    # 1.0.x writes no compact_boundary; 1.0.70 logs the /compact echo after the summary
    log = claude_code_log(
        tmp_path / "s.jsonl", [150_000, 154_000, 20_000], after=2, version="1.0.70", command=command
    )
    comp = only(log)
    assert (comp.source, comp.trigger, comp.version, comp.pre_tokens) == (
        "claude-code:isCompactSummary",
        trigger,
        "1.0.70",
        None,
    )


def test_codex_compacted_mid_turn_keeps_its_replacement_history_count(tmp_path: Path) -> None:
    log = codex_log(tmp_path / "r.jsonl", [100_000, 230_000, 30_000], after=2, kept=3)
    comp = only(log)
    assert (comp.source, comp.trigger, comp.kept_messages) == ("codex:compacted", "auto", 3)
    assert (comp.version, comp.model, comp.pre_tokens) == (
        "0.104.0-alpha.1",
        "gpt-5.3-codex",
        230_020,
    )


@needs_corpus
def test_real_logs_record_version_model_and_trigger() -> None:
    (conv,) = read(next(CORPUS.glob("codex/*/rollout-*019c8a59*.jsonl")))
    (comp,) = conv.compactions
    assert (comp.trigger, comp.version, comp.model, comp.kept_messages) == (
        "auto",
        "0.104.0-alpha.1",
        "gpt-5.3-codex",
        21,  # user message items of its replacement_history (counted by hand: 21 of 40)
    )
    (conv,) = read(next(CORPUS.glob("claude-code/*/f89f86a1-*.jsonl")))
    (comp,) = conv.compactions
    assert (comp.trigger, comp.version) == ("manual", "1.0.70")  # /compact logged after it
