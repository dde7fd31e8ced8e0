"""Which part of a prompt the provider's prompt cache serves, and what the rest costs.

Anthropic (platform.claude.com/docs/en/build-with-claude/prompt-caching): the cache
holds a prompt's prefix up to a cache breakpoint (where the entries are: breakpoints.py);
what a call does not read up to its last breakpoint is written, at 1.25× the input price
(5-minute lifetime, refreshed by each hit); a prefix shorter than the model's minimum
(:func:`anthropic_minimum`) is not cached at all.

Gemini 2.5 and newer (ai.google.dev/gemini-api/docs/caching, "Implicit caching", as of
2026-10-13): implicit caching is on by default, a hit on a prefix a recent request sent
is billed at the cache rate, with no write premium; the minimum is 2,048 tokens for
Gemini 2.5 Flash and Pro, 4,096 for the newer models. Older Gemini models have no
implicit caching.

DeepSeek (api-docs.deepseek.com/guides/kv_cache): context caching on disk is on by
default; each request persists its prefix at the end of its input (and output), and a
later request reads only a persisted unit it fully matches (breakpoints.DEEPSEEK); a miss
is billed as input, with no write premium.

OpenAI (developers.openai.com/api/docs/guides/prompt-caching): caching is automatic for
prompts of 1,024 tokens or more, a hit counts in 128-token steps of the longest prefix
seen recently, there is no write premium (the uncached rest is fresh input), and a
prefix stays cached for 5-10 minutes of inactivity (up to an hour off-peak; longer with
extended retention).

Other providers: no cache; the prompt is fresh input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

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
OPENAI = CacheRules("openai", 1024, 128, 600.0, False)
GEMINI = CacheRules("google", 2048, 1, None, False)
DEEPSEEK = CacheRules("deepseek", 0, 1, None, False)
NO_CACHE = CacheRules("none", 0, 1, None, False)

# Anthropic's minimum cacheable prefix per model (the prompt-caching page's "Cache
# limitations", quoted in github.com/anthropics/anthropic-sdk-python/issues/1194):
# 4,096 for Opus 4.6, Opus 4.5 and Haiku 4.5; 2,048 for Haiku 3.5 and 3; 1,024 for the
# others (Sonnet 4.6/4.5/4/3.7, Opus 4.1/4). genai-prices carries no minimum.
ANTHROPIC_MINIMUMS = (
    (("opus-4-6", "opus-4-5", "haiku-4-5"), 4096),
    (("3-5-haiku", "3-haiku", "haiku-3"), 2048),
)


def anthropic_minimum(model: str | None) -> int:
    name = (model or "").lower()
    for keys, tokens in ANTHROPIC_MINIMUMS:
        if any(key in name for key in keys):
            return tokens
    return ANTHROPIC.min_prefix_tokens


def _gemini_rules(name: str) -> CacheRules:
    """Implicit caching from Gemini 2.5 on: 2,048 tokens for 2.5, 4,096 after it."""
    version = re.search(r"gemini-(\d+)(?:\.(\d+))?", name)
    if version is None:
        return NO_CACHE
    major, minor = int(version.group(1)), int(version.group(2) or 0)
    if (major, minor) < (2, 5):
        return NO_CACHE
    return GEMINI if (major, minor) == (2, 5) else replace(GEMINI, min_prefix_tokens=4096)


def rules_for(model: str | None) -> CacheRules:
    provider = provider_of(model)
    name = (model or "").lower()
    if provider == "anthropic":
        return replace(ANTHROPIC, min_prefix_tokens=anthropic_minimum(model))
    if provider == "openai":
        return OPENAI
    if "gemini" in name:
        return _gemini_rules(name)
    if "deepseek" in name:
        return DEEPSEEK
    return NO_CACHE
