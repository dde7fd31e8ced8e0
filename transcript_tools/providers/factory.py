"""The executor a command runs on: provider + response cache + retries, from its options.

Replay, sweep, eval and check all build theirs here. The options are a mapping with the
CLI options' keys (``provider``, ``model``, ``base_url``, ``cache``, ``cache_only``,
``refresh``, ``no_cache``, ``concurrency``, ``timeout``, ``max_attempts``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any, TypedDict

from ..errors import ProviderConfigError
from ..present.numbers import shown_places
from .base import Provider


class ProviderOptions(TypedDict, total=False):
    """How summary calls are made: the options every command that calls a provider has
    (``--model``, ``--cache``…), by the name a script passes them as keyword arguments."""

    model: str | None  # the summary model (default: the provider's own)
    base_url: str | None  # an OpenAI-compatible server or a proxy
    cache: str | Path | None  # response cache file (default: $TSUM_HOME/cache.sqlite3)
    cache_only: bool  # never call the API: a missing response fails the run
    refresh: bool  # call the API even on a hit; overwrite
    no_cache: bool  # neither read nor write the cache
    concurrency: int  # summary calls at once
    timeout: float | None  # seconds per attempt (default: retry.default_timeout)
    temperature: float | None  # sent with every call (default: none, the API's own)
    max_attempts: int  # per call (429, 5xx, timeouts are retried)
    batch: bool  # through the provider's batch API, in rounds
    batch_poll: float | None  # seconds between two polls of a batch, at first
    price_per_mtok: str | float | None  # USD per million tokens, e.g. 3 or "3/15"


def resolve_cache_mode(opts: Mapping[str, Any]) -> Any:
    """The cache mode the flags ask for (offline: no cache unless one is asked for)."""
    from ..providers.cache import CacheMode

    chosen = [flag for flag in ("cache_only", "refresh", "no_cache") if opts.get(flag)]
    if len(chosen) > 1:
        flags = " and ".join("--" + flag.replace("_", "-") for flag in chosen)
        raise ProviderConfigError(f"{flags} cannot be combined: choose one")
    if opts.get("no_cache"):
        return CacheMode.OFF
    if opts.get("cache_only"):
        return CacheMode.CACHE_ONLY
    if opts.get("refresh"):
        return CacheMode.REFRESH
    if opts.get("provider", "offline") == "offline" and not opts.get("cache"):
        return CacheMode.OFF  # offline is cheaper than a lookup: no cache unless asked
    return CacheMode.READ_WRITE


def _limits(opts: Mapping[str, Any], base_url: str | None = None) -> tuple[int, float, int]:
    from ..engine.config import DEFAULT_CONCURRENCY, DEFAULT_MAX_ATTEMPTS
    from ..providers.retry import default_timeout

    concurrency = int(opts.get("concurrency") or DEFAULT_CONCURRENCY)
    # no --timeout: 60 s, or 600 s for a server on this machine (retry.default_timeout)
    timeout = float(opts.get("timeout") or default_timeout(base_url))
    max_attempts = int(opts.get("max_attempts") or DEFAULT_MAX_ATTEMPTS)
    if concurrency < 1 or timeout <= 0 or max_attempts < 1:
        raise ProviderConfigError("--concurrency and --max-attempts must be >= 1, --timeout > 0")
    return concurrency, timeout, max_attempts


def build_executor(opts: Mapping[str, Any]) -> Any:
    """Validate the options and build provider + cache + executor.

    Raises ``ProviderConfigError`` (exit 2) before any work: unknown provider,
    missing key or model, conflicting cache flags, unusable cache file. Missing
    keys take the options' defaults, so a library caller may pass a partial dict.
    """
    from ..providers.cache import CacheMode
    from ..providers.registry import get_provider, provider_class
    from ..providers.retry import KILL_SWITCH_ENV, kill_switch_on

    name = opts.get("provider") or "offline"
    base_url = opts.get("base_url") or None
    sdk_env = getattr(provider_class(name), "base_url_env", None)  # e.g. OPENAI_BASE_URL
    sdk_url = os.environ.get(sdk_env) if sdk_env else None  # where the SDK would send
    concurrency, timeout, _ = _limits(opts, base_url or sdk_url)
    mode = resolve_cache_mode(opts)
    provider = get_provider(
        name,
        model=opts.get("model") or None,
        base_url=base_url,
        timeout=timeout,
        temperature=opts.get("temperature"),
        max_connections=concurrency,  # a pool as wide as the concurrency: no queueing in httpx
        require_key=mode is not CacheMode.CACHE_ONLY,  # keyless CI replays from the cache
    )
    if provider.name != "offline" and mode is not CacheMode.CACHE_ONLY and kill_switch_on():
        # Fail before any work, like a missing key: every call would be refused.
        raise ProviderConfigError(
            f"network calls are disabled ({KILL_SWITCH_ENV} is set): unset it, "
            "use --cache-only to replay recorded responses, or --provider offline"
        )
    return _executor_for(provider, opts, mode)


def _executor_for(provider: Provider, opts: Mapping[str, Any], mode: Any = None) -> Any:
    from ..providers.cache import CacheMode, ResponseCache, default_cache_path
    from ..providers.executor import SummaryExecutor
    from ..providers.retry import RetryPolicy

    # the provider's own base URL (its identity's): the same timeout rule as its HTTP client's
    concurrency, timeout, max_attempts = _limits(opts, provider.identity(None).get("base_url"))
    if mode is None:
        mode = resolve_cache_mode({**opts, "provider": provider.name})
    cache = None
    if mode is not CacheMode.OFF:
        cache = ResponseCache(opts.get("cache") or default_cache_path())
    return SummaryExecutor(
        provider,
        cache=cache,
        cache_mode=mode,
        concurrency=concurrency,
        timeout=timeout,
        retry=RetryPolicy(max_attempts=max_attempts),
    )


def describe_stats(stats: Any) -> str:
    """The executor's part of the end-of-run line."""
    parts = [f"{stats.requests} summary requests", f"{stats.calls} API calls"]
    if stats.retries:
        parts.append(f"{stats.retries} retries")
    parts.append(f"{stats.cache_hits} cached")
    if stats.failures:
        parts.append(f"{stats.failures} failed")
    if stats.cache_errors:
        parts.append(f"{stats.cache_errors} cache errors")
    if stats.usage.total_tokens:
        parts.append(f"{stats.usage.input_tokens} in / {stats.usage.output_tokens} out tokens")
    return ", ".join(parts)


def executor_stats(executor: Any) -> dict[str, Any]:
    """The executor's counters for the manifest (empty without an executor)."""
    if executor is None:
        return {}
    stats = executor.stats
    out = {
        f.name: getattr(stats, f.name)
        for f in fields(stats)
        if f.name not in ("usage", "cache_only_missing")
    }
    out["line"] = describe_stats(stats)
    out["summary_input_tokens"] = stats.usage.input_tokens
    out["summary_output_tokens"] = stats.usage.output_tokens
    return out


def cache_only_failure(stats: Any, limit: int = 20) -> str | None:
    """The message for exit 3 when --cache-only found responses missing, else None."""
    missing = stats.cache_only_missing
    if not missing:
        return None
    shown = shown_places(
        [f"session {s} turn {t}" for s, t in sorted(missing)], limit, " and {} more"
    )
    return (
        f"cache miss (--cache-only): {len(missing)} responses not in the cache: {shown}; "
        "run once without --cache-only to record them (a missing response counts as a failed "
        "summary, so the checkpoint tries again at each later turn: there may be fewer to record)"
    )
