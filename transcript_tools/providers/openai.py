"""OpenAI Chat Completions through the official SDK, and any OpenAI-compatible server.

``base_url`` points it at vLLM, Ollama, llama.cpp, LM Studio, ... Local servers
usually need no key, so with a custom base URL a missing ``OPENAI_API_KEY`` is
replaced by a placeholder; against api.openai.com the key is required. The SDK
module is imported only when this provider is selected.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any
from urllib.parse import urlsplit

import httpx2
import openai

from ..errors import ProviderConfigError
from ..messages import Usage
from .base import SummaryResponse
from .registry import DEFAULT_MODELS
from .retry import ProviderCallError, public_url, refuse_if_offline, status_error

DEFAULT_MODEL = DEFAULT_MODELS["openai"]
DEFAULT_BASE_URL = "https://api.openai.com/v1"
KEY_ENV = "OPENAI_API_KEY"
# The SDK's own variable, resolved here so the cache key sees it.
BASE_URL_ENV = "OPENAI_BASE_URL"
PLACEHOLDER_KEY = "not-needed"  # sent to keyless local servers; the SDK insists on some value


def _is_official(base_url: str) -> bool:
    return urlsplit(base_url.strip()).hostname == "api.openai.com"


class OpenAIProvider:
    """Summaries from OpenAI or an OpenAI-compatible server."""

    name = "openai"
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
        self._base_url = (base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL).strip()
        official = _is_official(self._base_url)
        key = os.environ.get(KEY_ENV, "").strip()
        if not key and official and require_key:
            raise ProviderConfigError(
                f"the openai provider needs an API key: set {KEY_ENV}, "
                "or use --provider offline to run without one "
                "(a local OpenAI-compatible server needs --base-url, and no key)"
            )
        if not model and not official:
            # gpt-4o-mini means nothing to a local server: fail now, not on call 1.
            raise ProviderConfigError(
                f"--model is required with --base-url {public_url(self._base_url)} "
                "(the name the server serves, e.g. the one in its /v1/models list)"
            )
        self._api_key = key or PLACEHOLDER_KEY  # private, never in repr, identity or messages
        self._model = model or DEFAULT_MODEL
        self._timeout = timeout
        self._temperature = temperature
        self._max_connections = max(1, max_connections)
        # api.openai.com's newer models reject `max_tokens`; compatible servers
        # (older vLLM, llama.cpp, Ollama) may only know `max_tokens`.
        self._tokens_param = "max_completion_tokens" if official else "max_tokens"
        self._sdk: openai.AsyncOpenAI | None = None
        self._sdk_loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return f"OpenAIProvider(model={self._model!r}, base_url={public_url(self._base_url)!r})"

    @property
    def default_model(self) -> str:
        return self._model

    def identity(self, model: str | None) -> dict[str, Any]:
        return {
            "provider": self.name,
            "api": "chat.completions",
            "base_url": public_url(self._base_url),
            "model": model or self._model,
            "temperature": self._temperature,  # None = the server's default
            "tokens_param": self._tokens_param,
        }

    def _client(self) -> openai.AsyncOpenAI:
        # httpx connections belong to the event loop that opened them, so a
        # second asyncio.run() (tests, library users) gets a fresh client.
        loop = asyncio.get_running_loop()
        if self._sdk is None or self._sdk_loop is not loop:
            # Room for every concurrent call: a smaller pool would queue calls
            # inside httpx and cap the executor's concurrency.
            limits = httpx2.Limits(
                max_connections=self._max_connections,
                max_keepalive_connections=self._max_connections,
            )
            self._sdk = openai.AsyncOpenAI(
                api_key=self._api_key,
                base_url=self._base_url,
                timeout=self._timeout,
                max_retries=0,  # one retry policy: the executor's
                http_client=openai.DefaultAsyncHttpxClient(limits=limits, timeout=self._timeout),
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
            "messages": [{"role": "user", "content": prompt}],
            self._tokens_param: max_tokens,
        }
        if self._temperature is not None:
            kwargs["temperature"] = self._temperature
        try:
            completion = await self._client().chat.completions.create(**kwargs)
        # `from None` everywhere: the SDK's exception text quotes the body,
        # which can echo the key (OpenAI's 401 does) or the prompt.
        except openai.APIStatusError as exc:
            raise status_error(
                self.name, exc.status_code, headers=exc.response.headers, error_type=exc.type
            ) from None
        except openai.APITimeoutError:
            raise ProviderCallError(
                f"{self.name}: timed out after {self._timeout:g}s", retryable=True
            ) from None
        except openai.APIConnectionError as exc:
            cause = type(exc.__cause__).__name__ if exc.__cause__ else "unknown"
            raise ProviderCallError(
                f"{self.name}: connection error ({cause}) to {public_url(self._base_url)}",
                retryable=True,
            ) from None
        except openai.APIResponseValidationError:
            raise ProviderCallError(f"{self.name}: malformed response") from None
        except ValueError:  # a 200 whose body is not JSON (broken proxy or server)
            raise ProviderCallError(f"{self.name}: malformed response (invalid JSON)") from None
        except openai.OpenAIError as exc:
            raise ProviderCallError(f"{self.name}: {type(exc).__name__}") from None
        return _to_response(completion, requested)


def _to_response(completion: Any, requested: str) -> SummaryResponse:
    choices = getattr(completion, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise ProviderCallError("openai: malformed response (no choices)")
    choice = choices[0]
    message = getattr(choice, "message", None)
    finish_reason = getattr(choice, "finish_reason", None)
    refusal = getattr(message, "refusal", None)
    # A refusal is a failed summary, never a summary.
    if isinstance(refusal, str) and refusal.strip():
        raise ProviderCallError("openai: the model refused (message.refusal)")
    if finish_reason == "content_filter":
        raise ProviderCallError("openai: the answer was filtered (finish_reason=content_filter)")
    content = getattr(message, "content", None)
    if isinstance(content, list):  # some compatible servers send content parts
        content = "".join(
            part.get("text", "") if isinstance(part, dict) else str(getattr(part, "text", ""))
            for part in content
        )
    if not isinstance(content, str) or not content.strip():
        raise ProviderCallError(f"openai: empty summary (finish_reason={finish_reason})")
    model = getattr(completion, "model", None)
    return SummaryResponse(
        text=content,
        model=model if isinstance(model, str) and model else requested,
        usage=_usage(getattr(completion, "usage", None)),
    )


def _usage(usage: Any) -> Usage | None:
    if usage is None:
        return None
    prompt = getattr(usage, "prompt_tokens", None)
    completion = getattr(usage, "completion_tokens", None)
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    return Usage(
        input_tokens=prompt if isinstance(prompt, int) else 0,
        output_tokens=completion if isinstance(completion, int) else 0,
        cache_read_tokens=cached if isinstance(cached, int) else 0,  # already part of prompt_tokens
    )
