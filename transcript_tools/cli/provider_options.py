"""Shared provider / cache / concurrency options, and the executor they build.

Usage in a command::

    @click.command()
    @provider_options
    def replay(**opts):
        executor = build_executor(opts)   # fails here, before any work
        ...

Cache rule: network providers use the response cache by default
(``default_cache_path()``). The offline provider is deterministic and cheaper
than a cache lookup, so it skips the cache unless asked for one (``--cache
PATH`` / ``TSUM_CACHE``, ``--cache-only`` or ``--refresh``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import click

from ..errors import ProviderConfigError
from ..providers.cache import CacheMode, ResponseCache, default_cache_path
from ..providers.executor import ExecutorStats, SummaryExecutor
from ..providers.registry import DEFAULT_MODELS, PROVIDER_NAMES, get_provider
from ..providers.retry import KILL_SWITCH_ENV, RetryPolicy, kill_switch_on

F = TypeVar("F", bound=Callable[..., Any])

# The keyword arguments provider_options adds (a command can pop these).
PROVIDER_OPTION_NAMES = (
    "provider",
    "model",
    "base_url",
    "cache",
    "cache_only",
    "refresh",
    "no_cache",
    "concurrency",
    "timeout",
    "max_attempts",
    "batch",
    "batch_poll",
    "price_per_mtok",
)

_MODEL_HELP = ", ".join(f"{name}: {model}" for name, model in DEFAULT_MODELS.items())


def provider_options(func: F) -> F:
    """Add --provider, --model, --base-url, the cache flags, -j, --timeout, --max-attempts."""
    options = [
        click.option(
            "--provider",
            type=click.Choice(PROVIDER_NAMES),
            default="offline",
            show_default=True,
            envvar="TSUM_PROVIDER",
            show_envvar=True,
            help="Who writes the summaries. anthropic needs ANTHROPIC_API_KEY, openai "
            "OPENAI_API_KEY (not with a local --base-url); offline needs nothing.",
        ),
        click.option(
            "--model",
            envvar="TSUM_MODEL",
            show_envvar=True,
            help=f"Summary model (default: the provider's; {_MODEL_HELP}). "
            "A summary_model in the config wins over it.",
        ),
        click.option(
            "--base-url",
            envvar="TSUM_BASE_URL",
            show_envvar=True,
            help="API endpoint: any OpenAI-compatible server (vLLM, Ollama, llama.cpp, "
            "LM Studio) with --provider openai, or a proxy.",
        ),
        click.option(
            "--cache",
            type=click.Path(dir_okay=False, path_type=Path),
            envvar="TSUM_CACHE",
            show_envvar=True,
            help="Response cache file (default: $TSUM_HOME/cache.sqlite3 or "
            "~/.tsum/cache.sqlite3; offline uses no cache unless given).",
        ),
        click.option(
            "--cache-only",
            is_flag=True,
            envvar="TSUM_CACHE_ONLY",
            show_envvar=True,
            help="Never call the API: a missing response fails the run (exit 3).",
        ),
        click.option("--refresh", is_flag=True, help="Call the API even on a hit; overwrite."),
        click.option("--no-cache", is_flag=True, help="Neither read nor write the cache."),
        click.option(
            "-j",
            "--concurrency",
            type=click.IntRange(min=1),
            default=8,
            show_default=True,
            envvar="TSUM_CONCURRENCY",
            show_envvar=True,
            help="At most N summary calls at once.",
        ),
        click.option(
            "--timeout",
            type=click.FloatRange(min=0, min_open=True),
            default=60.0,
            show_default=True,
            envvar="TSUM_TIMEOUT",
            show_envvar=True,
            help="Seconds per summary call attempt.",
        ),
        click.option(
            "--max-attempts",
            type=click.IntRange(min=1),
            default=4,
            show_default=True,
            envvar="TSUM_MAX_ATTEMPTS",
            show_envvar=True,
            help="Attempts per summary call (429, 5xx, timeouts and connection errors are retried).",
        ),
        click.option(
            "--batch",
            is_flag=True,
            envvar="TSUM_BATCH",
            show_envvar=True,
            help="Send summary calls through the provider's batch API (half price, results "
            "within 24 h), in rounds; resumable: rerun the same command after an interruption.",
        ),
        click.option(
            "--batch-poll",
            type=click.FloatRange(min=0, min_open=True),
            default=30.0,
            show_default=True,
            envvar="TSUM_BATCH_POLL",
            show_envvar=True,
            help="Seconds between two polls of a batch, growing to 20x (at most 10 min).",
        ),
        click.option(
            "--price-per-mtok",
            envvar="TSUM_PRICE_PER_MTOK",
            show_envvar=True,
            help="USD per million summary tokens, e.g. 3 or 3/15 (input/output): the end-of-run "
            "line gives batch vs synchronous cost (known models have a dated list price).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def resolve_cache_mode(opts: Mapping[str, Any]) -> CacheMode:
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


def build_executor(opts: Mapping[str, Any]) -> SummaryExecutor:
    """Validate the options and build provider + cache + executor.

    Raises ``ProviderConfigError`` (exit 2) before any work: unknown provider,
    missing key or model, conflicting cache flags, unusable cache file. Missing
    keys take the options' defaults, so a library caller may pass a partial dict.
    """
    name = opts.get("provider") or "offline"
    concurrency = int(opts.get("concurrency") or 8)
    timeout = float(opts.get("timeout") or 60.0)
    max_attempts = int(opts.get("max_attempts") or 4)
    if concurrency < 1 or timeout <= 0 or max_attempts < 1:
        raise ProviderConfigError("--concurrency and --max-attempts must be >= 1, --timeout > 0")
    mode = resolve_cache_mode(opts)
    provider = get_provider(
        name,
        model=opts.get("model") or None,
        base_url=opts.get("base_url") or None,
        timeout=timeout,
        max_connections=concurrency,  # a pool as wide as the concurrency: no queueing in httpx
        require_key=mode is not CacheMode.CACHE_ONLY,  # keyless CI replays from the cache
    )
    if provider.name != "offline" and mode is not CacheMode.CACHE_ONLY and kill_switch_on():
        # Fail before any work, like a missing key: every call would be refused.
        raise ProviderConfigError(
            f"network calls are disabled ({KILL_SWITCH_ENV} is set): unset it, "
            "use --cache-only to replay recorded responses, or --provider offline"
        )
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


def describe_stats(stats: ExecutorStats) -> str:
    """One line for the end-of-run summary on stderr."""
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


def cache_only_failure(stats: ExecutorStats, limit: int = 20) -> str | None:
    """The message for exit 3 when --cache-only found responses missing, else None."""
    missing = stats.cache_only_missing
    if not missing:
        return None
    shown = ", ".join(f"session {s} turn {t}" for s, t in sorted(missing)[:limit])
    more = f" and {len(missing) - limit} more" if len(missing) > limit else ""
    return (
        f"cache miss (--cache-only): {len(missing)} responses not in the cache: {shown}{more}; "
        "run once without --cache-only to record them (a missing response counts as a failed "
        "summary, so the checkpoint tries again at each later turn: there may be fewer to record)"
    )
