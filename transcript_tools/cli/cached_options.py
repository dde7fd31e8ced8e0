"""The options that name a provider's cached responses as the source of summary text,
for commands that never call an API (sweep, compare)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from .setting_options import setting_option

F = TypeVar("F", bound=Callable[..., Any])


def cached_summary_options(func: F) -> F:
    """--provider, --model, --base-url and --cache (responses read, never requested)."""
    decorators = [
        setting_option(
            "provider",
            type=None,  # any name, as sweep and compare have always taken
            help="Where summary text comes from when needed: offline, or a provider whose "
            "responses are read from --cache (never called).",
        ),
        setting_option("summary_model", help="Model of the cached responses (their cache key)."),
        setting_option("base_url", help="Base URL of the cached responses (their cache key)."),
        setting_option(
            "cache",
            "cache_path",
            help="Response cache to read summaries from (with --provider other than offline).",
        ),
    ]
    for decorator in reversed(decorators):
        func = decorator(func)
    return func
