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
    Usage,
    UserMessage,
)
from transcript_tools.engine.policy_toml import preset
from transcript_tools.engine.runtime_policy import reinjected_tokens


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


def test_claude_code_reinjects_files_from_2_0_on() -> None:
    claude = preset("claude-code")
    assert reinjected_tokens(claude, "2.0.1") == 25_000  # 5 files of at most 5,000 tokens
    assert reinjected_tokens(claude, "2.1.112") == 25_000
    assert reinjected_tokens(claude, "1.0.56") == 0  # no rule claimed for 1.0.x
    assert reinjected_tokens(claude, None) == 0
    assert reinjected_tokens(preset("codex"), "2.0.1") == 0
