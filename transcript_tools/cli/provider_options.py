"""Shared provider / cache / concurrency options.

The executor they describe is built by the library (``providers.factory.build_executor``).
Cache rule: network providers use the response cache by default
(``default_cache_path()``). The offline provider is deterministic and cheaper
than a cache lookup, so it skips the cache unless asked for one (``--cache
PATH`` / ``TSUM_CACHE``, ``--cache-only`` or ``--refresh``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ..engine.settings_table import PROVIDER_KEYS, PROVIDER_OPTION_NAMES
from .setting_options import setting_option

__all__ = ["PROVIDER_OPTION_NAMES", "provider_options"]

F = TypeVar("F", bound=Callable[..., Any])


def provider_options(func: F) -> F:
    """Add --provider, --model, --base-url, the cache flags, -j, --timeout, --max-attempts."""
    for key in reversed(PROVIDER_KEYS[1:]):  # click lists the last decorator applied first
        func = setting_option(key)(func)
    return setting_option("provider", metavar="[offline|anthropic|openai]")(func)
