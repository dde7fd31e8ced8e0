"""A model call's tokens by kind (the unit the cost model counts and prices)."""

from __future__ import annotations

from dataclasses import dataclass

from ..engine.messages import Usage
from .records import TokensJson


@dataclass(frozen=True, slots=True)
class CallTokens:
    """``prompt`` is the whole prompt; ``cache_read`` and ``cache_write`` are parts of it,
    the rest is fresh (uncached) input."""

    prompt: int = 0
    cache_read: int = 0
    cache_write: int = 0
    output: int = 0

    @property
    def fresh(self) -> int:
        return self.prompt - self.cache_read - self.cache_write

    @classmethod
    def recorded(cls, usage: Usage) -> CallTokens:
        """A call as its log recorded it (``Usage.input_tokens`` is the whole prompt)."""
        read = min(usage.cache_read_tokens, usage.input_tokens)
        write = min(usage.cache_creation_tokens, usage.input_tokens - read)
        return cls(usage.input_tokens, read, write, usage.output_tokens)

    def __add__(self, other: CallTokens) -> CallTokens:
        return CallTokens(
            self.prompt + other.prompt,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
            self.output + other.output,
        )

    def to_json(self) -> TokensJson:
        return {
            "prompt": self.prompt,
            "cache_read": self.cache_read,
            "cache_write": self.cache_write,
            "fresh": self.fresh,
            "output": self.output,
        }
