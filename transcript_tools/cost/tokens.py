"""A model call's tokens by kind (the unit the cost model counts and prices)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..engine.messages import Usage
from .records import TokensJson


@dataclass(frozen=True, slots=True)
class CallTokens:
    """``prompt`` is the whole prompt; ``cache_read`` and ``cache_write`` are parts of it,
    the rest is fresh (uncached) input. ``cache_write_1h`` is the part of ``cache_write``
    written with a 1-hour lifetime (billed above the 5-minute rest: docs/cost.md,
    "Cache lifetimes")."""

    prompt: int = 0
    cache_read: int = 0
    cache_write: int = 0
    output: int = 0
    cache_write_1h: int = 0

    @property
    def fresh(self) -> int:
        return self.prompt - self.cache_read - self.cache_write

    @classmethod
    def recorded(cls, usage: Usage) -> CallTokens:
        """A call as its log recorded it (``Usage.input_tokens`` is the whole prompt)."""
        read = min(usage.cache_read_tokens, usage.input_tokens)
        write = min(usage.cache_creation_tokens, usage.input_tokens - read)
        one_hour = min(usage.cache_write_1h_tokens, write)
        return cls(usage.input_tokens, read, write, usage.output_tokens, one_hour)

    def with_one_hour_share(self, share: float) -> CallTokens:
        """The same call with ``share`` of its cache writes at the 1-hour lifetime: a
        modeled call writes at the lifetime the agent chose for the original one
        (``original.one_hour_shares``)."""
        return replace(self, cache_write_1h=round(self.cache_write * share))

    def __add__(self, other: CallTokens) -> CallTokens:
        return CallTokens(
            self.prompt + other.prompt,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
            self.output + other.output,
            self.cache_write_1h + other.cache_write_1h,
        )

    def to_json(self) -> TokensJson:
        return {
            "prompt": self.prompt,
            "cache_read": self.cache_read,
            "cache_write": self.cache_write,
            "cache_write_1h": self.cache_write_1h,
            "fresh": self.fresh,
            "output": self.output,
        }
