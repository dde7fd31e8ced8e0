"""The providers' batch APIs (half price, results within 24 hours) behind one small protocol.

``submit`` (requests keyed by ``custom_id``) → a batch id; ``poll`` → its status;
``results`` → a stream of ``BatchResult`` (a ``SummaryResponse`` or an error).
The ``custom_id`` of a request is its response-cache key (64 hex digits: within
Anthropic's ``^[a-zA-Z0-9_-]{1,64}$``), so a result goes straight into the cache
under the key the synchronous path would use. Request bodies are built exactly
as the synchronous providers build them (one user message, ``max_tokens``, the
model, the temperature if set).

Importing this package never imports an SDK: ``batch_client`` imports the
provider's module only when asked for it.
"""

from __future__ import annotations

import os

from ...errors import ConfigError, ProviderConfigError
from ..base import Provider
from .base import BatchClient, BatchLimits


def batch_client(provider: Provider, limits: BatchLimits | None = None) -> BatchClient:
    """The batch client sharing ``provider``'s SDK client, key, base URL and request shape."""
    name = getattr(provider, "name", "")
    if name == "anthropic":
        from .anthropic_batch import AnthropicBatchClient

        return AnthropicBatchClient(provider, limits)  # type: ignore[arg-type]
    if name == "openai":
        from .openai_batch import OpenAIBatchClient

        return OpenAIBatchClient(provider, limits)  # type: ignore[arg-type]
    raise ProviderConfigError(
        f"--batch needs --provider anthropic or openai (the {name or 'given'} provider has no batch API)"
    )


LIMIT_ENVS = ("TSUM_BATCH_MAX_REQUESTS", "TSUM_BATCH_MAX_BYTES")  # lower than the APIs' (tests)


def limits_from_env() -> BatchLimits | None:
    """Batch limits lowered by ``LIMIT_ENVS`` (None: the APIs' own)."""
    values = []
    for name in LIMIT_ENVS:
        raw = os.environ.get(name, "").strip()
        try:
            values.append(int(raw) if raw else 1 << 62)
        except ValueError:
            raise ConfigError(f"{name}={raw!r}: give a whole number") from None
    if values == [1 << 62, 1 << 62]:
        return None
    if min(values) < 1:
        raise ConfigError(f"{' and '.join(LIMIT_ENVS)} must be at least 1")
    return BatchLimits(values[0], values[1])
