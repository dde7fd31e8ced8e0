"""The hidden prefix a summary restart's first prompt bounds (cost/sizes.py
``_prefix_bound``), pinned against one-point edits found by a mutation run
(docs/testing.md): the cache read bounds it only where the call read some.
"""

from __future__ import annotations

from transcript_tools.cost.sizes import calibrate
from transcript_tools.engine.messages import (
    INJECTED,
    AssistantMessage,
    Conversation,
    TextBlock,
    Usage,
    UserMessage,
)
from transcript_tools.engine.tokens import estimate_message_tokens


def test_a_summary_restart_that_read_no_cache_bounds_the_prefix_by_its_prompt() -> None:
    """``read > 0``: a log opening with the runtime's summary whose first call read
    nothing from the cache gives no evidence of a shared prefix, so the prefix is that
    call's 5,000-token prompt less the summary (one call: the summary sized by its
    estimate), not 0 (fails on ``read >= 0``: min(bound, 0))."""
    summary = UserMessage((TextBlock("summary " * 100),), origin=INJECTED)
    reply = AssistantMessage((TextBlock("ok"),), Usage(5_000, 10, 0, 0), "claude-sonnet-4-5")
    conv = Conversation("c", "c.jsonl", "claude-code", [summary, reply])
    assert calibrate(conv).hidden == 5_000 - estimate_message_tokens(summary) > 0
