"""A call reads from the cache only the entries the previous call wrote within the
messages the two share (cost/model.py ``modeled_call`` through cost/breakpoints.py
``served_prefix``): a view that shares no message with the previous one reads nothing
of it, though the previous request ended at a breakpoint (DeepSeek caches each request's
end, https://api-docs.deepseek.com/guides/kv_cache). Pinned against ``n or 0`` ->
``n or 1`` (a mutation run, docs/testing.md), which would serve the previous request's
1-message entry to a view whose first message differs. Sizes: engine/tokens.py estimates
a 400-character message at 110 tokens; no hidden prefix."""

from __future__ import annotations

from transcript_tools.cost.breakpoints import placement_for
from transcript_tools.cost.cache_rules import DEEPSEEK
from transcript_tools.cost.model import modeled_call
from transcript_tools.cost.sizes import Sizes
from transcript_tools.engine.messages import UserMessage

SIZES = Sizes({}, 0, 1.0, False)
DEEPSEEK_ENDS = placement_for("deepseek", None, None)


def test_a_view_sharing_no_message_reads_nothing_of_the_previous_request() -> None:
    before, other = UserMessage.text("a" * 400), UserMessage.text("z" * 400)
    tokens, _ = modeled_call(
        [before], [other], SIZES, DEEPSEEK, output=0, breakpoints=DEEPSEEK_ENDS
    )
    assert (tokens.prompt, tokens.cache_read) == (110, 0)
    # the same previous request, now the view's first message: its 110 tokens are read
    tokens, _ = modeled_call(
        [before], [before, other], SIZES, DEEPSEEK, output=0, breakpoints=DEEPSEEK_ENDS
    )
    assert (tokens.prompt, tokens.cache_read) == (220, 110)
