"""The rules by which a preset follows the runtime release that wrote the log, pinned
against one-point edits (a single-point mutation run, docs/testing.md, found them
unpinned): the release at a table row's own since-version, Claude Code's re-injected
files, and a log that names no model. Expected values come from the sources
``engine/runtime_policy.py`` cites (33K buffer from 2.1, 0.5 ratio from Gemini CLI 0.18,
up to 5 files of up to 5,000 tokens).
"""

from __future__ import annotations

from transcript_tools.engine.messages import AssistantMessage, ToolResultMessage, ToolUseBlock
from transcript_tools.engine.policy_toml import preset
from transcript_tools.engine.reinjection import reinjected_tokens
from transcript_tools.engine.runtime_policy import follow_runtime, reinjection
from transcript_tools.engine.sizes import SizeModel


def test_a_release_exactly_at_a_rows_since_version_takes_that_rows_value() -> None:
    """``version >= since``: "2.1" is (2, 1), the 33K row's own since-version (fails on
    ``>``: it would fall to the 45K row); likewise Gemini CLI "0.18" takes 0.5."""
    claude = follow_runtime(preset("claude-code"), "2.1", "claude-sonnet-4-5")
    assert claude.trigger.reserve_tokens == 33_000
    assert follow_runtime(preset("gemini-cli"), "0.18", "gemini-2.5-pro").trigger.ratio == 0.5


def test_a_claude_code_log_naming_no_model_keeps_the_200k_window() -> None:
    """The 1M window is taken only when a model is named and ends in "[1m]" (fails on
    ``model or ...``: None has no ``strip``)."""
    policy = follow_runtime(preset("claude-code"), "2.1.0", None)
    assert policy.trigger.window == preset("claude-code").trigger.window
    assert policy.trigger.reserve_tokens == 33_000


def _reads(sizes: list[int]) -> tuple[list[AssistantMessage | ToolResultMessage], SizeModel]:
    """One Read call and its result per size, each of a distinct file, with the result's
    billed size recorded in the size model."""
    messages: list[AssistantMessage | ToolResultMessage] = []
    by_id: dict[int, float] = {}
    for n, size in enumerate(sizes):
        call = ToolUseBlock(f"c{n}", "Read", {"file_path": f"/src/f{n}.py"})
        result = ToolResultMessage(f"c{n}", "x")
        messages += [AssistantMessage((call,)), result]
        by_id[id(result)] = size
    return messages, SizeModel(by_id=by_id)


def test_claude_code_reinjects_the_five_latest_files_each_capped_at_5000_tokens() -> None:
    """Six files read of 6,000 tokens each: the latest five, each counted as 5,000:
    25,000 (fails with 6 files: 30,000, or a cap of 5,001: 25,005)."""
    rule = reinjection(preset("claude-code"))
    assert rule is not None
    messages, sizes = _reads([6_000] * 6)
    assert reinjected_tokens(messages, sizes, rule) == 25_000
    # below the cap a file counts at its size: the latest five of 100..600 are 200..600
    messages, sizes = _reads([100, 200, 300, 400, 500, 600])
    assert reinjected_tokens(messages, sizes, rule) == 2_000
