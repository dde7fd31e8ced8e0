"""The hidden prefix of a log that starts by continuing an earlier session
(docs/fidelity.md, "Sizes"): not the first prompt whole."""

from __future__ import annotations

from transcript_tools.cost.sizes import calibrate
from transcript_tools.engine.messages import (
    INJECTED,
    AssistantMessage,
    Compaction,
    Conversation,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from transcript_tools.engine.policy_toml import preset
from transcript_tools.engine.reinjection import Reinjection, reinjected_tokens
from transcript_tools.engine.runtime_policy import CLAUDE_CODE_REINJECTION, reinjection
from transcript_tools.engine.sizes import SizeModel


def _continued() -> Conversation:
    """A log whose first prompt (40,000, nothing read from the cache) holds an earlier
    session; after its own compaction the first call reads 18,000 from the cache."""
    summary = UserMessage((TextBlock("earlier work " * 50),), origin=INJECTED)
    messages = [
        summary,
        AssistantMessage((TextBlock("ok"),), Usage(40_000, 10, 0, 40_000)),
        UserMessage.text("next step " * 30),
        AssistantMessage((TextBlock("done"),), Usage(41_000, 10, 40_000, 1_000)),
        UserMessage((TextBlock("summary " * 100),), origin=INJECTED),
        AssistantMessage((TextBlock("go on"),), Usage(25_000, 10, 18_000, 7_000)),
    ]
    conv = Conversation("c", "c.jsonl", "claude-code", messages)
    conv.compactions = [Compaction(4, "claude-code:isCompactSummary")]
    return conv


def test_the_prefix_is_the_smallest_bound_the_restarts_give() -> None:
    conv = _continued()
    sizes = calibrate(conv)
    assert sizes.hidden == 18_000  # the cache read after the compaction, not 40,000 less a summary
    # the first prompt is still reproduced: its messages carry what the prefix does not
    assert sizes.prompt(conv.messages[:1]) == 40_000
    assert sizes.prompt(conv.messages[4:5]) == 25_000


def test_an_unseen_restart_is_no_evidence() -> None:
    conv = _continued()
    sizes = calibrate(conv, frozenset({4}))
    head = 40_000 - sizes.of(conv.messages[0])
    assert sizes.hidden == round(head) and sizes.hidden > 35_000


def test_a_fresh_log_keeps_its_first_prompt_as_the_prefix() -> None:
    conv = _continued()
    conv.compactions = []
    assert calibrate(conv).hidden == round(40_000 - calibrate(conv).of(conv.messages[0]))


def _read(call: str, path: str) -> AssistantMessage:
    return AssistantMessage((ToolUseBlock(call, "Read", {"file_path": path}),))


def test_the_most_recently_read_files_are_reinjected_each_up_to_its_cap() -> None:
    results = [ToolResultMessage(c, "text") for c in ("1", "2", "3", "4")]
    messages = [
        _read("1", "a.py"),
        results[0],
        _read("2", "b.py"),
        results[1],
        _read("3", "c.py"),
        results[2],
        _read("4", "a.py"),  # read again: now the most recent
        results[3],
    ]
    sizes = SizeModel({id(r): s for r, s in zip(results, (100, 7_000, 40, 300), strict=True)})
    rule = Reinjection(files=2, file_tokens=5_000, tool="Read", path="file_path")
    assert reinjected_tokens(messages, sizes, rule) == 40 + 300  # c.py, then a.py's latest read
    three = Reinjection(files=3, file_tokens=5_000, tool="Read", path="file_path")
    assert reinjected_tokens(messages, sizes, three) == 5_000 + 40 + 300  # b.py capped
    assert reinjected_tokens(messages[:1], sizes, rule) == 0  # a read without its result


def test_only_claude_codes_own_preset_reinjects() -> None:
    assert reinjection(preset("claude-code")) == CLAUDE_CODE_REINJECTION
    assert reinjection(preset("codex")) is None
