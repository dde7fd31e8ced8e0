"""Anthropic Messages API through the official SDK (imported only when selected).

The seed's call: one user message = the rendered prompt, no tools,
``max_tokens`` from the request. Retries are ours (``max_retries=0``); every SDK
exception is turned into a sanitized ``ProviderCallError``.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

import anthropic
import httpx2

from ..errors import ProviderConfigError
from ..messages import Usage
from .base import SummaryResponse
from .registry import DEFAULT_MODELS
from .retry import ProviderCallError, public_url, refuse_if_offline, status_error

DEFAULT_MODEL = DEFAULT_MODELS["anthropic"]
DEFAULT_BASE_URL = "https://api.anthropic.com"
KEY_ENV = "ANTHROPIC_API_KEY"
# The SDK's own variable, resolved here so the cache key sees it.
BASE_URL_ENV = "ANTHROPIC_BASE_URL"


class AnthropicProvider:
    """Summaries from Claude. The key comes only from ``ANTHROPIC_API_KEY``."""

    name = "anthropic"
    key_env: str | None = KEY_ENV

    def __init__(
        self,
        *,
        model: str | None = None,
        base_url: str | None = None,
        timeout: float = 60.0,
        temperature: float | None = None,
        max_connections: int = 32,
        require_key: bool = True,  # False with --cache-only: no request is ever sent
    ) -> None:
        key = os.environ.get(KEY_ENV, "").strip()
        if not key and require_key:
            raise ProviderConfigError(
                f"the anthropic provider needs an API key: set {KEY_ENV}, "
                "or use --provider offline to run without one"
            )
        self._api_key = key  # private, never in repr, identity or messages
        self._model = model or DEFAULT_MODEL
        self._base_url = (base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL).strip()
        self._timeout = timeout
        self._temperature = temperature
        self._max_connections = max(1, max_connections)
        self._sdk: anthropic.AsyncAnthropic | None = None
        self._sdk_loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return f"AnthropicProvider(model={self._model!r}, base_url={public_url(self._base_url)!r})"

    @property
    def default_model(self) -> str:
        return self._model

    def identity(self, model: str | None) -> dict[str, Any]:
        return {
            "provider": self.name,
            "api": "messages",
            "base_url": public_url(self._base_url),
            "model": model or self._model,
            "temperature": self._temperature,  # None = the API's default
        }

    def _client(self) -> anthropic.AsyncAnthropic:
        # httpx connections belong to the event loop that opened them, so a
        # second asyncio.run() (tests, library users) gets a fresh client.
        loop = asyncio.get_running_loop()
        if self._sdk is None or self._sdk_loop is not loop:
            limits = httpx2.Limits(
                max_connections=self._max_connections,
                max_keepalive_connections=self._max_connections,
            )
            self._sdk = anthropic.AsyncAnthropic(
                api_key=self._api_key,  # explicit: the SDK must not fall back to profile files
                base_url=self._base_url,
                timeout=self._timeout,
                max_retries=0,  # one retry policy: the executor's
                http_client=anthropic.DefaultAsyncHttpxClient(limits=limits, timeout=self._timeout),
            )
            self._sdk_loop = loop
        return self._sdk

    async def aclose(self) -> None:
        sdk, loop = self._sdk, self._sdk_loop
        self._sdk = self._sdk_loop = None
        if sdk is not None and loop is asyncio.get_running_loop():
            await sdk.close()

    async def complete(self, prompt: str, model: str | None, max_tokens: int) -> SummaryResponse:
        refuse_if_offline(self.name)  # kill switch: before any connection is made
        requested = model or self._model
        kwargs: dict[str, Any] = {
            "model": requested,
            "max_tokens": max_tokens,
            "messages": [{"role": "user", "content": prompt}],
        }
        if self._temperature is not None:
            # This SDK's create() has no temperature argument; the API field goes as-is.
            kwargs["extra_body"] = {"temperature": self._temperature}
        try:
            message = await self._client().messages.create(**kwargs)
        # `from None` everywhere: the SDK's exception text may quote the body,
        # which can echo the key or the prompt.
        except anthropic.APIStatusError as exc:
            raise status_error(
                self.name, exc.status_code, headers=exc.response.headers, error_type=exc.type
            ) from None
        except anthropic.APITimeoutError:
            raise ProviderCallError(
                f"{self.name}: timed out after {self._timeout:g}s", retryable=True
            ) from None
        except anthropic.APIConnectionError as exc:
            cause = type(exc.__cause__).__name__ if exc.__cause__ else "unknown"
            raise ProviderCallError(
                f"{self.name}: connection error ({cause}) to {public_url(self._base_url)}",
                retryable=True,
            ) from None
        except anthropic.APIResponseValidationError:
            raise ProviderCallError(f"{self.name}: malformed response") from None
        except ValueError:  # a 200 whose body is not JSON (broken proxy)
            raise ProviderCallError(f"{self.name}: malformed response (invalid JSON)") from None
        except anthropic.AnthropicError as exc:
            raise ProviderCallError(f"{self.name}: {type(exc).__name__}") from None
        return _to_response(message, requested)


def _to_response(message: Any, requested: str) -> SummaryResponse:
    content = getattr(message, "content", None)
    if not isinstance(content, list):
        raise ProviderCallError("anthropic: malformed response (no content)")
    stop_reason = getattr(message, "stop_reason", None)
    if stop_reason == "refusal":  # a refusal is a failed summary, never a summary
        raise ProviderCallError("anthropic: the model refused (stop_reason=refusal)")
    # All text blocks joined: the API may split one answer over several blocks.
    text = "".join(
        block.text
        for block in content
        if getattr(block, "type", None) == "text" and isinstance(getattr(block, "text", None), str)
    )
    if not text.strip():
        raise ProviderCallError(f"anthropic: empty summary (stop_reason={stop_reason})")
    model = getattr(message, "model", None)
    return SummaryResponse(
        text=text,
        model=model if isinstance(model, str) and model else requested,
        usage=_usage(getattr(message, "usage", None)),
    )


def _usage(usage: Any) -> Usage | None:
    if usage is None:
        return None

    def count(field: str) -> int:
        value = getattr(usage, field, None)
        return value if isinstance(value, int) else 0

    read = count("cache_read_input_tokens")
    created = count("cache_creation_input_tokens")
    # Usage.input_tokens is the whole prompt (messages.Usage docstring).
    return Usage(
        input_tokens=count("input_tokens") + read + created,
        output_tokens=count("output_tokens"),
        cache_read_tokens=read,
        cache_creation_tokens=created,
    )
