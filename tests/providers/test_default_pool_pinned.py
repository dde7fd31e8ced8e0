"""The HTTP connection pool of a provider built from Python without a pool size, pinned
against one-point edits (docs/testing.md): the library's default of 32 connections
(engine/config.py ``DEFAULT_MAX_CONNECTIONS``), at least the default concurrency of 8
(``get_provider``: give the pool at least the executor's concurrency). The CLI passes its
concurrency instead (providers/factory.py). No key is needed, nothing is sent.
"""

from __future__ import annotations

import pytest

from transcript_tools.engine.config import DEFAULT_CONCURRENCY
from transcript_tools.providers.registry import get_provider


@pytest.mark.parametrize("name", ["openai", "anthropic"])
def test_a_provider_built_without_a_pool_size_holds_32_connections(name: str) -> None:
    provider = get_provider(name, model="m", require_key=False)
    pool = provider._max_connections  # type: ignore[attr-defined]
    assert pool == 32
    assert pool >= DEFAULT_CONCURRENCY == 8


def test_a_pool_size_given_is_the_pool() -> None:
    provider = get_provider("openai", model="m", require_key=False, max_connections=3)
    assert provider._max_connections == 3  # type: ignore[attr-defined]
