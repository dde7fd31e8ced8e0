"""Which part of a prompt the provider's prompt cache serves, and what the rest costs.

Anthropic (platform.claude.com/docs/en/build-with-claude/prompt-caching): the cache
holds a prompt's prefix up to a cache breakpoint; agents (Claude Code) mark the end of
each prompt, so a call reads the prefix the previous call wrote and writes the rest, at
1.25× the input price (5-minute lifetime, refreshed by each hit); a prefix shorter than
the model's minimum (1,024 tokens; 2,048 for Haiku; newer models range 512-4,096 and
are taken as 1,024 here) is not cached at all.

OpenAI (developers.openai.com/api/docs/guides/prompt-caching): caching is automatic for
prompts of 1,024 tokens or more, a hit counts in 128-token steps of the longest prefix
seen recently, there is no write premium (the uncached rest is fresh input), and a
prefix stays cached for 5-10 minutes of inactivity (up to an hour off-peak; longer with
extended retention).

Other providers: no cache; the prompt is fresh input.
"""

from __future__ import annotations

from dataclasses import dataclass

from .prices import provider_of


@dataclass(frozen=True, slots=True)
class CacheRules:
    provider: str  # "anthropic", "openai" or "none"
    min_prefix_tokens: int  # shorter prompts/prefixes are not cached
    step_tokens: int  # a hit counts in steps of this many tokens
    lifetime_seconds: float | None  # a gap longer than this finds the cache empty
    writes_at_premium: bool  # the uncached rest is a cache write, not fresh input

    def split(
        self, prompt: int, shared: int, gap_seconds: float | None = None
    ) -> tuple[int, int, int]:
        """(cache read, cache write, fresh) of a prompt of ``prompt`` tokens whose first
        ``shared`` tokens are a prefix of the previous call's prompt, ``gap_seconds``
        after it (None: unknown, taken as within the lifetime)."""
        if self.provider == "none":
            return 0, 0, prompt
        expired = (
            gap_seconds is not None
            and self.lifetime_seconds is not None
            and gap_seconds > self.lifetime_seconds
        )
        shared = 0 if expired else min(shared, prompt)
        read = (shared // self.step_tokens) * self.step_tokens
        if read < self.min_prefix_tokens:
            read = 0
        rest = prompt - read
        if not self.writes_at_premium:
            return read, 0, rest
        if prompt < self.min_prefix_tokens:
            return 0, 0, prompt  # too short to cache: nothing is written
        return read, rest, 0


ANTHROPIC = CacheRules("anthropic", 1024, 1, 300.0, True)
ANTHROPIC_HAIKU = CacheRules("anthropic", 2048, 1, 300.0, True)
OPENAI = CacheRules("openai", 1024, 128, 600.0, False)
NO_CACHE = CacheRules("none", 0, 1, None, False)


def rules_for(model: str | None) -> CacheRules:
    provider = provider_of(model)
    if provider == "anthropic":
        return ANTHROPIC_HAIKU if "haiku" in (model or "") else ANTHROPIC
    if provider == "openai":
        return OPENAI
    return NO_CACHE
