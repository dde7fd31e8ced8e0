"""Provider registry. Each SDK-backed provider module is imported only when selected.

Importing ``transcript_tools`` must never import ``anthropic`` or ``openai``:
they are slow to import and not needed for the offline default. So the facts the
CLI needs before choosing (names, default models, key variables) live here, and
the modules that import an SDK are imported inside ``get_provider``.
"""

from __future__ import annotations

from ..errors import ProviderConfigError
from .base import Provider

PROVIDER_NAMES = ("offline", "anthropic", "openai")
DEFAULT_MODELS = {
    "offline": "extractive-v1",
    "anthropic": "claude-haiku-4-5",
    "openai": "gpt-4o-mini",
}
KEY_ENVS: dict[str, str | None] = {
    "offline": None,
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",  # optional with a custom --base-url (local servers)
}


def get_provider(
    name: str,
    *,
    model: str | None = None,
    base_url: str | None = None,
    timeout: float = 60.0,
    temperature: float | None = None,
    max_connections: int = 32,
    require_key: bool = True,
) -> Provider:
    """Build a provider, or fail before any work with ``ProviderConfigError``.

    ``model`` becomes the provider's default model (a request's own model, i.e.
    ``SummaryConfig.summary_model``, still wins). Keys come only from the
    environment variables in ``KEY_ENVS``. ``max_connections`` sizes the HTTP
    connection pool: give it at least the executor's concurrency.
    """
    if name == "offline":
        if base_url:
            raise ProviderConfigError(
                "--base-url applies to --provider openai or anthropic, not offline"
            )
        if model and model != DEFAULT_MODELS["offline"]:
            raise ProviderConfigError(
                f"the offline provider has one model ({DEFAULT_MODELS['offline']}), not {model!r}; "
                "choose --provider anthropic or openai for other models"
            )
        if temperature is not None:
            raise ProviderConfigError(
                "the offline provider is deterministic: it takes no temperature"
            )
        from .offline import OfflineProvider

        return OfflineProvider()
    if name not in PROVIDER_NAMES:
        raise ProviderConfigError(
            f"unknown provider {name!r} (known: {', '.join(PROVIDER_NAMES)}); "
            "use --provider offline to run without a key"
        )
    if timeout <= 0:
        raise ProviderConfigError(f"--timeout must be positive, not {timeout:g}")
    if name == "anthropic":
        from .anthropic import AnthropicProvider

        return AnthropicProvider(
            model=model,
            base_url=base_url,
            timeout=timeout,
            temperature=temperature,
            max_connections=max_connections,
            require_key=require_key,
        )
    from .openai import OpenAIProvider

    return OpenAIProvider(
        model=model,
        base_url=base_url,
        timeout=timeout,
        temperature=temperature,
        max_connections=max_connections,
        require_key=require_key,
    )
