"""The cost model: each call's prompt split by the cache rules, summed per conversation.

A call's cache read is the prefix its prompt shares with the previous call's prompt
(message by message: the same object, or an equal one — a summary message is rebuilt
for every view), plus the hidden prefix every prompt starts with; the rest is written
or fresh, per :mod:`cache_rules`. The first call of a conversation finds nothing cached.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from ..engine.messages import Message
from .breakpoints import Breakpoints, served_prefix
from .cache_rules import CacheRules
from .prices import Pricer
from .records import RunCostJson
from .sizes import Sizes
from .tokens import CallTokens


def shared_prefix(previous: Sequence[Message], view: Sequence[Message]) -> int:
    """How many leading messages ``view`` shares with ``previous``."""
    n = 0
    for old, new in zip(previous, view, strict=False):
        if old is not new and old != new:
            break
        n += 1
    return n


@dataclass(frozen=True, slots=True)
class PricedCall:
    model: str | None
    tokens: CallTokens
    usd: float | None  # None: no price source knows the model
    source: str | None
    break_usd: float = 0.0  # what the call paid beyond a warm cache (a compaction's price)
    summarizer: bool = False
    at: int = -1  # the call's message index in the history (-1: a summarizer call)
    modeled: bool = False  # priced by the model, not from recorded usage
    # a modeled prompt over the model's window: a view no runtime could have sent, so its
    # price is no real cost — counted and named beside the total (docs/cost.md, "Overflow")
    over_window: bool = False


def modeled_call(
    previous: Sequence[Message] | None,
    view: Sequence[Message],
    sizes: Sizes,
    rules: CacheRules,
    *,
    output: int,
    new_tokens: int | None = None,
    gap_seconds: float | None = None,
    survived: int | None = None,
    previous_prompt: int | None = None,
    prompt_tokens: int | None = None,
    breakpoints: Breakpoints | None = None,
) -> tuple[CallTokens, int]:
    """The call's tokens by kind, and its cache-break tokens: the uncached part beyond
    ``new_tokens`` (the messages appended since the previous call; None: no break).

    ``survived``: the original call found only this many tokens cached (a break the log
    recorded, :func:`original.recorded_breaks`): the same call of any policy finds at
    most as many — the break's causes (time, the agent rewriting its prompt, the
    provider's eviction) do not depend on the policy. ``previous_prompt``: the previous
    call's whole prompt (the cache holds no more of it than that); ``prompt_tokens``: the
    prompt's size where it is known (the recording's), else the sizes' sum.
    ``breakpoints``: the runtime's placement of Anthropic's cache breakpoints — the call
    reads only an entry written at one of them (:mod:`breakpoints`); None: any message
    boundary the previous prompt shares is read (OpenAI's automatic prefix caching)."""
    prompt = sizes.prompt(list(view)) if prompt_tokens is None else prompt_tokens
    shared = 0
    if previous is not None:
        n: int | None = shared_prefix(previous, view)
        if breakpoints is not None:
            n = served_prefix(breakpoints, previous, view, n or 0)
        shared = 0 if n is None else round(sizes.hidden + sum(sizes.of(m) for m in view[:n]))
        if previous_prompt is not None:
            # the whole previous prompt is a prefix of this one: the cache holds all of
            # it, whatever the sizes say; else it cannot hold more than that prompt
            shared = previous_prompt if n == len(previous) else min(shared, previous_prompt)
    # what the views alone leave uncached: the compaction's part of a miss (a recorded
    # break below is the original run's, paid by every policy alike)
    view_read = rules.split(prompt, shared, gap_seconds)[0]
    if survived is not None:
        shared = survived if previous is None else min(shared, survived)
    read, write, _fresh = rules.split(prompt, shared, gap_seconds)
    tokens = CallTokens(prompt, read, write, output)
    cacheless = rules.provider == "none"  # nothing is cached, so nothing can break
    broken = 0
    if new_tokens is not None and not cacheless:
        broken = min(max(0, prompt - view_read - new_tokens), prompt - read)
    return tokens, broken


def warm(tokens: CallTokens, broken: int) -> CallTokens:
    """The same call with its ``broken`` tokens read from the cache instead."""
    from_write = min(broken, tokens.cache_write)
    left = tokens.cache_write - from_write
    return replace(
        tokens,
        cache_read=tokens.cache_read + broken,
        cache_write=left,
        # the writes left keep the call's mix of lifetimes
        cache_write_1h=round(tokens.cache_write_1h * left / tokens.cache_write) if left else 0,
    )


@dataclass(slots=True)
class RunCost:
    """One conversation's calls (and summarizer calls), priced."""

    calls: list[PricedCall] = field(default_factory=list)

    def add(
        self,
        pricer: Pricer,
        model: str | None,
        tokens: CallTokens,
        *,
        broken: int = 0,
        summarizer: bool = False,
        at: int = -1,
        modeled: bool = False,
        over_window: bool = False,
    ) -> None:
        quote = pricer.quote(model, tokens)
        break_usd = 0.0
        if quote is not None and broken:
            warm_quote = pricer.quote(model, warm(tokens, broken))
            break_usd = quote.usd - (warm_quote.usd if warm_quote is not None else 0.0)
        self.calls.append(
            PricedCall(
                model,
                tokens,
                None if quote is None else quote.usd,
                None if quote is None else quote.source,
                break_usd,
                summarizer,
                at,
                modeled,
                over_window,
            )
        )

    def tokens(self, *, summarizer: bool | None = None) -> CallTokens:
        total = CallTokens()
        for call in self.calls:
            if summarizer is None or call.summarizer == summarizer:
                total = total + call.tokens
        return total

    @property
    def usd(self) -> float | None:
        """The run's cost; None when some call has no price."""
        if any(c.usd is None for c in self.calls):
            return None
        return sum(c.usd or 0.0 for c in self.calls)

    @property
    def summarizer_usd(self) -> float:
        return sum(c.usd or 0.0 for c in self.calls if c.summarizer)

    @property
    def overflow(self) -> list[PricedCall]:
        """The modeled calls whose prompt is over the model's window."""
        return [c for c in self.calls if c.over_window]

    @property
    def break_usd(self) -> float:
        return sum(c.break_usd for c in self.calls)

    def same_model_delta(self, original: RunCost) -> float | None:
        """This run's cost change against ``original`` (the model's reconstruction of the
        original run, same model, same calls) over the calls this run priced by the model,
        plus the summarizer: the change with the model's own bias cancelled (docs/cost.md).
        None where a call of either run has no price: an unpriced run has no change,
        here as in ``delta_usd`` (0 is not no figure)."""
        if self.usd is None or original.usd is None:
            return None
        by_index = {c.at: c.usd for c in original.calls if c.at >= 0}
        delta = 0.0
        for call in self.calls:
            if call.summarizer:
                if call.usd is None:
                    return None
                delta += call.usd
            elif call.modeled and call.at in by_index:
                before = by_index[call.at]
                if call.usd is None or before is None:
                    return None
                delta += call.usd - before
        return delta

    def sources(self) -> list[str]:
        return sorted({c.source for c in self.calls if c.source})

    def _priced(self, usd: float, *, summarizer: bool) -> float | None:
        """``usd``, or None where a call of that kind (summarizer or not) has no price:
        an unpriced call adds nothing to the sum, which is then no figure (0 is not)."""
        unpriced = any(c.usd is None for c in self.calls if c.summarizer == summarizer)
        return None if unpriced else usd

    def to_json(self) -> RunCostJson:
        usd = self.usd
        return {
            "calls": sum(not c.summarizer for c in self.calls),
            "summarizer_calls": sum(c.summarizer for c in self.calls),
            "tokens": self.tokens(summarizer=False).to_json(),
            "summarizer_tokens": self.tokens(summarizer=True).to_json(),
            "usd": None if usd is None else round(usd, 6),
            "summarizer_usd": self._priced(round(self.summarizer_usd, 6), summarizer=True),
            "cache_break_usd": self._priced(round(self.break_usd, 6), summarizer=False),
            "overflow_calls": len(self.overflow),
            "overflow_max_prompt": max((c.tokens.prompt for c in self.overflow), default=0),
            "priced_by": self.sources(),
        }
