"""SDK exceptions → sanitized one-line ``ProviderCallError`` (never keys, bodies or prompts)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .base import sdk_error


@contextmanager
def guarded(provider: Any) -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        mapped = sdk_error(provider, exc)
        if mapped is None:
            raise
        # `from None`: the SDK's text may quote the body, which can echo the key.
        raise mapped from None
