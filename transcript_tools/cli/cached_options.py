"""The options that name a provider's cached responses as the source of summary text,
for commands that never call an API (sweep, compare)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ..engine.config import DEFAULT_PROVIDER

F = TypeVar("F", bound=Callable[..., Any])


def cached_summary_options(func: F) -> F:
    """--provider, --model, --base-url and --cache (responses read, never requested)."""
    decorators = [
        click.option(
            "--provider",
            default=DEFAULT_PROVIDER,
            show_default=True,
            envvar="TSUM_PROVIDER",
            help="Where summary text comes from when needed: offline, or a provider whose responses are read "
            "from --cache (never called).",
        ),
        click.option(
            "--model", envvar="TSUM_MODEL", help="Model of the cached responses (their cache key)."
        ),
        click.option(
            "--base-url",
            envvar="TSUM_BASE_URL",
            help="Base URL of the cached responses (their cache key).",
        ),
        click.option(
            "--cache",
            "cache_path",
            type=click.Path(dir_okay=False, path_type=Path),
            envvar="TSUM_CACHE",
            help="Response cache to read summaries from (with --provider other than offline).",
        ),
    ]
    for decorator in reversed(decorators):
        func = decorator(func)
    return func
