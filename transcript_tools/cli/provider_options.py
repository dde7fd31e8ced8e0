"""Shared provider / cache / concurrency options.

The executor they describe is built by the library (``providers.factory.build_executor``).
Cache rule: network providers use the response cache by default
(``default_cache_path()``). The offline provider is deterministic and cheaper
than a cache lookup, so it skips the cache unless asked for one (``--cache
PATH`` / ``TSUM_CACHE``, ``--cache-only`` or ``--refresh``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ..engine.config import (
    DEFAULT_BATCH_POLL,
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_PROVIDER,
    DEFAULT_TIMEOUT_S,
    LOCAL_TIMEOUT_S,
)
from .setting_options import LazyChoice

__all__ = ["PROVIDER_OPTION_NAMES", "provider_options"]

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
    "temperature",
    "max_attempts",
    "batch",
    "batch_poll",
    "price_per_mtok",
)


def _provider_names() -> tuple[str, ...]:
    """Built-in providers and those registered through the ``tsum.providers`` entry point."""
    from ..providers.registry import provider_names

    return provider_names()


def provider_options(func: F) -> F:
    """Add --provider, --model, --base-url, the cache flags, -j, --timeout, --max-attempts."""
    options = [
        click.option(
            "--provider",
            type=LazyChoice(_provider_names),
            metavar="[offline|anthropic|openai]",
            default=DEFAULT_PROVIDER,
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
            help="Summary model (default: the provider's own: offline extractive-v1, anthropic "
            "claude-haiku-4-5, openai gpt-4o-mini). "
            "Same setting as model / summary_model in a settings file.",
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
            default=DEFAULT_CONCURRENCY,
            show_default=True,
            envvar="TSUM_CONCURRENCY",
            show_envvar=True,
            help="At most N summary calls at once.",
        ),
        click.option(
            "--timeout",
            type=click.FloatRange(min=0, min_open=True),
            envvar="TSUM_TIMEOUT",
            show_envvar=True,
            help=f"Seconds per summary call attempt. [default: {DEFAULT_TIMEOUT_S:g}; "
            f"{LOCAL_TIMEOUT_S:g} when --base-url is on this machine (localhost, 127.0.0.1, "
            "::1): a CPU model is slow]",
        ),
        click.option(
            "--temperature",
            type=click.FloatRange(min=0),
            envvar="TSUM_TEMPERATURE",
            show_envvar=True,
            help="Sampling temperature sent with every summary call (0 = the most likely "
            "text; part of the cache key). Default: none sent, the API's or server's own "
            "(a local server's 0.8 makes a small model ramble). Config key: temperature.",
        ),
        click.option(
            "--max-attempts",
            type=click.IntRange(min=1),
            default=DEFAULT_MAX_ATTEMPTS,
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
            default=DEFAULT_BATCH_POLL,
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
