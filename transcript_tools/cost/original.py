"""The original run, twice: as its log recorded it (the reference every cost is compared
with), and as the cost model reconstructs it from its own prompts (the model's error bar).

The original prompts are the whole history since the original agent last compacted
(``Conversation.compactions``); only calls with recorded usage are compared.
"""

from __future__ import annotations

from typing import Any

from ..engine.messages import AssistantMessage, Conversation
from ..engine.rules import is_model_call
from .cache_rules import rules_for
from .model import RunCost, modeled_call
from .prices import Pricer
from .sizes import Sizes, original_starts
from .tokens import CallTokens


def recorded_run(conv: Conversation, pricer: Pricer) -> RunCost:
    """The calls whose usage the log recorded, priced from that usage."""
    run = RunCost()
    for i, message in enumerate(conv.messages):
        if is_model_call(message) and message.usage is not None:
            assert isinstance(message, AssistantMessage)
            run.add(pricer, message.model, CallTokens.recorded(message.usage), at=i)
    return run


# A recorded read this far below the previous call's whole prompt is a cache break
# (Anthropic's prefix shifts by a few tokens at the moved breakpoint; OpenAI's counts in
# 128-token steps and its smallest cached prompt is 1,024 tokens).
BREAK_SLACK_TOKENS = 1024


def recorded_breaks(conv: Conversation) -> dict[int, int]:
    """Message index of each recorded call that found less cached than the previous
    call's prompt (and of the first call, which finds what other sessions left: the
    agent's shared system prompt and tools) -> the tokens it did read."""
    breaks: dict[int, int] = {}
    previous: int | None = None
    for i, message in enumerate(conv.messages):
        if not is_model_call(message) or message.usage is None:
            continue
        usage = message.usage
        if previous is None or usage.cache_read_tokens < previous - BREAK_SLACK_TOKENS:
            breaks[i] = usage.cache_read_tokens
        previous = usage.input_tokens
    return breaks


def reconstructed_run(
    conv: Conversation, sizes: Sizes, pricer: Pricer, *, carry_breaks: bool = False
) -> RunCost:
    """The same calls with the cache model's split of their original prompts; with
    ``carry_breaks``, the recorded cache breaks applied (``recorded_breaks``)."""
    run = RunCost()
    restarts = original_starts(conv)
    breaks = recorded_breaks(conv) if carry_breaks else {}
    previous, previous_prompt = None, None
    for i, message in enumerate(conv.messages):
        if not is_model_call(message) or message.usage is None:
            continue
        assert isinstance(message, AssistantMessage)
        head = max(r for r in restarts if r <= i)
        view = conv.messages[head:i]
        tokens, _ = modeled_call(
            previous,
            view,
            sizes,
            rules_for(message.model),
            output=message.usage.output_tokens,
            survived=breaks.get(i),
            previous_prompt=previous_prompt,
            prompt_tokens=message.usage.input_tokens,
        )
        run.add(pricer, message.model, tokens, at=i, modeled=True)
        previous, previous_prompt = view, message.usage.input_tokens
    return run


def _relative(modeled: float, recorded: float) -> float | None:
    return None if not recorded else (modeled - recorded) / recorded


def model_error(recorded: RunCost, modeled: RunCost, carried: RunCost) -> dict[str, Any]:
    """How far the reconstruction is from the recording: per token kind and in money
    (signed, relative to the recording; None where the recording has none), and in money
    with the recorded cache breaks carried over (``carried``: what the replay's cost
    does for calls after a compaction)."""
    rec, mod = recorded.tokens(), modeled.tokens()
    return {
        # False: the log records no cache read or write at all (not whether the provider
        # cached: e.g. tau2-bench's gpt-4o usage), so the split cannot be checked
        "cache_recorded": bool(rec.cache_read or rec.cache_write),
        "usd": _usd_error(modeled, recorded),
        "usd_breaks_carried": _usd_error(carried, recorded),
        "prompt": _round(_relative(mod.prompt, rec.prompt)),
        "cache_read": _round(_relative(mod.cache_read, rec.cache_read)),
        "cache_write": _round(_relative(mod.cache_write, rec.cache_write)),
        "fresh": _round(_relative(mod.fresh, rec.fresh)),
    }


def _usd_error(modeled: RunCost, recorded: RunCost) -> float | None:
    if modeled.usd is None or recorded.usd is None:
        return None
    return _round(_relative(modeled.usd, recorded.usd))


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
