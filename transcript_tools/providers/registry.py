"""Provider registry: every provider class registers itself (``@register``).

A provider class declares its ``name``, the environment variable holding its key
(``key_env``), its ``DEFAULT_MODEL`` and how it is built (``create``); the registry
only maps names to classes. Built-in providers live in ``BUILTIN_MODULES``; others
come from the ``tsum.providers`` entry point group (name = provider name, object =
the class), loaded only when a name is not a built-in one.

Importing a provider module never imports its SDK (the SDK is imported when the
first client is built), so listing providers and their defaults stays cheap, and
importing ``transcript_tools`` never imports ``anthropic`` or ``openai``. The
provider modules import this one for ``register``; this one imports them by name at
run time, so there is no import cycle.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any, ClassVar, Protocol, TypeVar

from ..engine.config import DEFAULT_MAX_CONNECTIONS, DEFAULT_TIMEOUT_S
from ..errors import ProviderConfigError
from ..plugins import load_entry_points
from .base import Provider

ENTRY_POINT_GROUP = "tsum.providers"
BUILTIN_MODULES = (
    "transcript_tools.providers.offline",
    "transcript_tools.providers.anthropic",
    "transcript_tools.providers.openai",
)


class ProviderClass(Protocol):
    """What a provider class declares (besides the ``Provider`` protocol of its instances)."""

    name: ClassVar[str]
    key_env: ClassVar[str | None]  # None: no key needed
    DEFAULT_MODEL: ClassVar[str]

    @classmethod
    def create(
        cls,
        *,
        model: str | None,
        base_url: str | None,
        timeout: float,
        temperature: float | None,
        max_connections: int,
        require_key: bool,
    ) -> Provider:
        """Build the provider, or raise ``ProviderConfigError`` saying how to fix the settings."""
        ...


_P = TypeVar("_P")
_registry: dict[str, Any] = {}
_entry_points_loaded = False


def register(cls: type[_P]) -> type[_P]:
    """Class decorator: make ``cls`` available under ``cls.name``."""
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"provider class {cls.__qualname__} has no name")
    existing = _registry.get(name)
    if existing is not None and existing is not cls:
        raise ProviderConfigError(
            f"two providers are named {name!r}: {existing.__module__} and {cls.__module__}"
        )
    _registry[name] = cls
    return cls


def _load_builtins() -> None:
    for module in BUILTIN_MODULES:
        import_module(module)  # each registers its class


def _load_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    _load_builtins()
    # ~20 ms of importlib.metadata: only when a name is not a built-in one
    found = load_entry_points(ENTRY_POINT_GROUP, "provider", _registry, ProviderConfigError)
    for name, cls in found.items():
        if getattr(cls, "name", None) != name:
            raise ProviderConfigError(
                f"entry point {name!r} gives a provider named {getattr(cls, 'name', None)!r}"
            )
        register(cls)


def builtin_names() -> tuple[str, ...]:
    """The built-in providers' names, in ``BUILTIN_MODULES`` order."""
    _load_builtins()
    return tuple(name for name, cls in _registry.items() if cls.__module__ in BUILTIN_MODULES)


def provider_names() -> tuple[str, ...]:
    """Every provider: the built-in ones, then the installed plug-ins."""
    _load_entry_points()
    return tuple(_registry)


def provider_class(name: str) -> Any:
    """The class registered under ``name`` (built-in, or from a ``tsum.providers`` entry point)."""
    _load_builtins()
    if name not in _registry:
        _load_entry_points()
    cls = _registry.get(name)
    if cls is None:
        raise ProviderConfigError(
            f"unknown provider {name!r} (known: {', '.join(provider_names())}); "
            "use --provider offline to run without a key"
        )
    return cls


def get_provider(
    name: str,
    *,
    model: str | None = None,
    base_url: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    temperature: float | None = None,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    require_key: bool = True,
) -> Provider:
    """Build a provider, or fail before any work with ``ProviderConfigError``.

    ``model`` becomes the provider's default model (a request's own model, i.e.
    ``SummaryConfig.summary_model``, still wins). Keys come only from the provider's
    ``key_env``. ``max_connections`` sizes the HTTP connection pool: give it at least
    the executor's concurrency.
    """
    provider: Provider = provider_class(name).create(
        model=model,
        base_url=base_url,
        timeout=timeout,
        temperature=temperature,
        max_connections=max_connections,
        require_key=require_key,
    )
    return provider


def __getattr__(attribute: str) -> Any:
    # Computed on first use, from the classes: the built-in providers' names, default
    # models and key variables (what the CLI shows before a provider is chosen).
    if attribute == "PROVIDER_NAMES":
        return builtin_names()
    if attribute == "DEFAULT_MODELS":
        return {name: _registry[name].DEFAULT_MODEL for name in builtin_names()}
    if attribute == "KEY_ENVS":
        return {name: _registry[name].key_env for name in builtin_names()}
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")


__all__ = [
    "ENTRY_POINT_GROUP",
    "ProviderClass",
    "builtin_names",
    "get_provider",
    "provider_class",
    "provider_names",
    "register",
]
