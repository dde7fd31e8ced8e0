"""The original run, twice: as its log recorded it (the reference every cost is compared
with), and as the cost model reconstructs it from its own prompts (the model's error bar).

The original prompts are the view the original agent continued from after it last
compacted (``Conversation.compactions``): the person's messages the runtime kept
verbatim (Codex ``replacement_history``, Claude Code ``compactMetadata.preservedMessages``;
``Compaction.kept_texts``), then the whole history since; only calls with recorded usage
are compared.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..engine.messages import AssistantMessage, Conversation, Message
from ..engine.person_fates import person_text
from ..engine.rules import is_model_call
from .breakpoints import placement_for
from .cache_rules import rules_for
from .model import RunCost, modeled_call
from .prices import Pricer
from .records import BillJson
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


def off_chain_run(conv: Conversation, pricer: Pricer) -> RunCost:
    """The billed calls the replay does not read (``Conversation.off_chain_calls``: inline
    subagents, rewound branches), priced from their recorded usage. No policy changes
    them: they are the same in every run's bill (docs/cost.md, "The whole bill")."""
    run = RunCost()
    for call in conv.off_chain_calls:
        run.add(pricer, call.model, CallTokens.recorded(call.usage))
    return run


def bill_json(original: RunCost, off_chain: RunCost, conv: Conversation) -> BillJson | None:
    """The whole bill of the original run: its replayed calls (``original``) and the
    others, and the share of it the replayed calls cover; None where a call is unpriced."""
    if original.usd is None or off_chain.usd is None:
        return None
    billed = original.usd + off_chain.usd
    kinds = Counter(call.kind for call in conv.off_chain_calls)
    return {
        "usd": round(billed, 6),
        "off_chain_usd": round(off_chain.usd, 6),
        "off_chain_calls": {kind: kinds[kind] for kind in sorted(kinds)},
        "replayed_share": None if not billed else round(original.usd / billed, 4),
    }


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


def one_hour_shares(conv: Conversation) -> dict[int, float]:
    """Message index of each model call -> the share of its cache writes a modeled call
    puts at the 1-hour lifetime: the recorded call's own share, else (no usage, or it
    wrote nothing) the latest recorded share before it, else 0. The agent picks the
    lifetime per request (``cache_control.ttl``), not per policy, so a policy's call
    writes at the lifetime the original call used (docs/cost.md, "Cache lifetimes")."""
    shares: dict[int, float] = {}
    share = 0.0
    for i, message in enumerate(conv.messages):
        if not is_model_call(message):
            continue
        usage = message.usage
        if usage is not None and usage.cache_creation_tokens > 0:
            share = min(usage.cache_write_1h_tokens, usage.cache_creation_tokens) / (
                usage.cache_creation_tokens
            )
        shares[i] = share
    return shares


def kept_across(conv: Conversation) -> dict[int, list[Message]]:
    """Each recorded compaction's message index -> the earlier person messages its view
    kept verbatim, in log order (the latest message of each kept text)."""
    out: dict[int, list[Message]] = {}
    for comp in conv.compactions:
        kept = set(comp.kept_texts or ())
        if not kept:
            continue
        latest: dict[str, Message] = {}
        for message in conv.messages[: comp.message_index]:
            text = person_text(message)
            if text in kept:
                latest.pop(text, None)
                latest[text] = message
        out[comp.message_index] = list(latest.values())  # re-inserted: log order
    return out


def reconstructed_run(
    conv: Conversation, sizes: Sizes, pricer: Pricer, *, carry_breaks: bool = False
) -> RunCost:
    """The same calls with the cache model's split of their original prompts; with
    ``carry_breaks``, the recorded cache breaks applied (``recorded_breaks``)."""
    run = RunCost()
    restarts = original_starts(conv)
    carried = kept_across(conv)
    breaks = recorded_breaks(conv) if carry_breaks else {}
    shares = one_hour_shares(conv)
    previous, previous_prompt = None, None
    for i, message in enumerate(conv.messages):
        if not is_model_call(message) or message.usage is None:
            continue
        assert isinstance(message, AssistantMessage)
        head = max(r for r in restarts if r <= i)
        view = [*carried.get(head, ()), *conv.messages[head:i]]
        rules = rules_for(message.model)
        tokens, _ = modeled_call(
            previous,
            view,
            sizes,
            rules,
            output=message.usage.output_tokens,
            survived=breaks.get(i),
            previous_prompt=previous_prompt,
            prompt_tokens=message.usage.input_tokens,
            breakpoints=placement_for(rules.provider, None, conv.format),
        )
        tokens = tokens.with_one_hour_share(shares[i])
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
        "cache_write_1h": _round(_relative(mod.cache_write_1h, rec.cache_write_1h)),
        "fresh": _round(_relative(mod.fresh, rec.fresh)),
    }


def _usd_error(modeled: RunCost, recorded: RunCost) -> float | None:
    if modeled.usd is None or recorded.usd is None:
        return None
    return _round(_relative(modeled.usd, recorded.usd))


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
