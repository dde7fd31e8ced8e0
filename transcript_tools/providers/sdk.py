"""What the SDK-backed providers (anthropic, openai) share.

A subclass names its SDK module, the SDK's client class and base exception, its key's
and base URL's variables and defaults, its API's ``path``, and overrides two methods:
``_body`` (the request's JSON) and ``_response`` (answer → ``SummaryResponse``); ``_key``
where its key has rules of its own. Everything else lives here: one lazy client per event loop
with a pool of ``max_connections`` and ``max_retries=0`` (retries are the
executor's), ``aclose``, the offline kill switch, and the mapping of every SDK
exception to a sanitized ``ProviderCallError``.

A subclass names its SDK by module and attribute names; the SDK is imported when
the provider is built (``httpx2`` with its first client), never when the module is:
importing ``transcript_tools`` or listing the providers never imports an SDK.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from importlib import import_module
from types import ModuleType, SimpleNamespace
from typing import Any, ClassVar
from urllib.parse import urlsplit

import orjson

from ..engine.config import DEFAULT_MAX_CONNECTIONS, DEFAULT_TIMEOUT_S
from ..engine.requests import SummaryResponse
from ..errors import ProviderConfigError
from .base import Provider
from .retry import ProviderCallError, public_url, refuse_if_offline, status_error


class SdkProvider:
    """Base of the providers that call an API through its official async SDK."""

    name: ClassVar[str]
    key_env: ClassVar[str]
    key_hint: ClassVar[str] = ""  # after the missing key's message
    base_url_env: ClassVar[str]  # the SDK's own variable, resolved here so the cache key sees it
    DEFAULT_MODEL: ClassVar[str]
    DEFAULT_BASE_URL: ClassVar[str]
    api: ClassVar[str]  # the identity's "api" field
    path: ClassVar[str]  # the API call's path (``post_json``)
    sdk_module: ClassVar[str]  # the SDK module: its http client and exception types
    client_class_name: ClassVar[str]  # e.g. "AsyncAnthropic"
    base_error_name: ClassVar[str]  # the SDK's root exception, e.g. "AnthropicError"

    @classmethod
    def create(cls, *, timeout: float, **settings: Any) -> Provider:
        """The registry's constructor (``registry.ProviderClass``: the settings ``__init__``
        takes)."""
        if timeout <= 0:
            raise ProviderConfigError(f"--timeout must be positive, not {timeout:g}")
        subclass: Any = cls  # a Provider, whose name and key_env are class variables here
        provider: Provider = subclass(timeout=timeout, **settings)
        return provider

    @classmethod
    def sdk(cls) -> ModuleType:
        """The SDK module, imported on first use."""
        return import_module(cls.sdk_module)

    def __init__(
        self,
        *,
        model: str | None = None,
        base_url: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        temperature: float | None = None,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
        require_key: bool = True,  # False with --cache-only: no request is ever sent
    ) -> None:
        base_url = (base_url or os.environ.get(self.base_url_env) or self.DEFAULT_BASE_URL).strip()
        # private, never in repr, identity or messages
        self._api_key = self._key(base_url, model, require_key)
        self._model = model or self.DEFAULT_MODEL
        self._base_url = base_url
        # Endpoints differing only by query (?api-version=…, a tenant) answer differently:
        # the query is part of the cache identity, hashed, for it may hold a secret.
        query = urlsplit(base_url).query
        self._query_sha256 = hashlib.sha256(query.encode()).hexdigest() if query else None
        self._timeout = timeout
        # a float whatever the source (a settings file's `temperature = 0` is an int):
        # the cache key must not tell 0 from 0.0
        self._temperature = None if temperature is None else float(temperature)
        self._max_connections = max(1, max_connections)
        self._sdk_client: Any = None
        self._sdk_loop: asyncio.AbstractEventLoop | None = None
        # Imported now, when the provider is built, so that the first call's timeout does
        # not pay for the SDK's import (about a second).
        self.sdk()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(model={self._model!r}, base_url={public_url(self._base_url)!r})"
        )

    @property
    def default_model(self) -> str:
        return self._model

    def identity(self, model: str | None) -> dict[str, Any]:
        identity = {
            "provider": self.name,
            "api": self.api,
            "base_url": public_url(self._base_url),
            "model": model or self._model,
            "temperature": self._temperature,  # None = the API's (or server's) default
        }
        if self._query_sha256 is not None:  # absent without a query: keys as before
            identity["base_url_query_sha256"] = self._query_sha256
        return identity

    # -- the SDK-specific parts ------------------------------------------------------------

    def _key(self, base_url: str, model: str | None, require_key: bool) -> str:
        """The API key (only from ``key_env``), or ``ProviderConfigError`` saying how to fix
        the settings."""
        key = os.environ.get(self.key_env, "").strip()
        if not key and require_key:
            raise ProviderConfigError(
                f"the {self.name} provider needs an API key: set {self.key_env}, "
                f"or use --provider offline to run without one{self.key_hint}"
            )
        return key

    def _body(self, prompt: str, model: str, max_tokens: int) -> dict[str, Any]:
        """The API's request body: one user message = ``prompt``, no tools."""
        raise NotImplementedError

    def body(self, prompt: str, model: str, max_tokens: int) -> dict[str, Any]:
        """The call's JSON body (sent alone, or in a batch), with the temperature if set."""
        body = self._body(prompt, model, max_tokens)
        if self._temperature is not None:
            body["temperature"] = self._temperature
        return body

    async def _create(self, client: Any, prompt: str, model: str, max_tokens: int) -> Any:
        """The API call: ``body`` POSTed to ``path``."""
        return await post_json(client, self.path, self.body(prompt, model, max_tokens))

    def _response(self, raw: Any, requested: str) -> SummaryResponse:
        """The SDK's answer as a summary, or ``ProviderCallError`` (refusal, empty, malformed)."""
        raise NotImplementedError

    # -- shared ----------------------------------------------------------------------------

    def _client(self) -> Any:
        # HTTP connections belong to the event loop that opened them, so a
        # second asyncio.run() (tests, library users) gets a fresh client.
        loop = asyncio.get_running_loop()
        if self._sdk_client is None or self._sdk_loop is not loop:
            # Room for every concurrent call: a smaller pool would queue calls
            # inside the HTTP client and cap the executor's concurrency.
            import httpx2

            sdk = self.sdk()
            limits = httpx2.Limits(
                max_connections=self._max_connections,
                max_keepalive_connections=self._max_connections,
            )
            self._sdk_client = getattr(sdk, self.client_class_name)(
                api_key=self._api_key,  # explicit: the SDK must not fall back to profile files
                base_url=self._base_url,
                timeout=self._timeout,
                max_retries=0,  # one retry policy: the executor's
                http_client=http_client(sdk, limits, self._timeout),
            )
            self._sdk_loop = loop
        return self._sdk_client

    async def aclose(self) -> None:
        client, loop = self._sdk_client, self._sdk_loop
        self._sdk_client = self._sdk_loop = None
        if client is not None and loop is asyncio.get_running_loop():
            await client.close()

    async def complete(self, prompt: str, model: str | None, max_tokens: int) -> SummaryResponse:
        refuse_if_offline(self.name)  # kill switch: before any connection is made
        requested = model or self._model
        sdk = self.sdk()
        try:
            raw = await self._create(self._client(), prompt, requested, max_tokens)
        # `from None` everywhere: the SDK's exception text may quote the body,
        # which can echo the key (OpenAI's 401 does) or the prompt.
        except sdk.APIStatusError as exc:
            body = getattr(exc, "body", None)  # openai: the body's "error" object
            raise status_error(
                self.name,
                exc.status_code,
                headers=exc.response.headers,
                error_type=exc.type,
                # read to recognise a context overflow, never shown
                error_code=getattr(exc, "code", None) or getattr(exc, "error_code", None),
                detail=getattr(exc, "api_message", None)  # anthropic's
                or (body.get("message") if isinstance(body, dict) else None),
            ) from None
        except sdk.APITimeoutError as exc:
            refused = _os_error_under(exc)
            if refused is not None:  # see _os_error_under: not a timeout
                raise ProviderCallError(
                    f"{self.name}: connection error ({type(refused).__name__}) to "
                    f"{public_url(self._base_url)}",
                    retryable=True,
                ) from None
            raise ProviderCallError(
                f"{self.name}: timed out after {self._timeout:g}s", retryable=True
            ) from None
        except sdk.APIConnectionError as exc:
            cause = type(exc.__cause__).__name__ if exc.__cause__ else "unknown"
            raise ProviderCallError(
                f"{self.name}: connection error ({cause}) to {public_url(self._base_url)}",
                retryable=True,
            ) from None
        except sdk.APIResponseValidationError:
            raise ProviderCallError(f"{self.name}: malformed response") from None
        except orjson.JSONDecodeError:  # a 200 whose body is not JSON (broken proxy or server)
            raise ProviderCallError(f"{self.name}: malformed response (invalid JSON)") from None
        except ValueError as exc:  # the SDK or its transport refused the request itself
            raise ProviderCallError(
                f"{self.name}: the request could not be sent to {public_url(self._base_url)} "
                f"({type(exc).__name__}: {_without_secrets(str(exc), self._base_url)})",
                fatal=True,  # every later call would fail the same way
            ) from None
        except getattr(sdk, self.base_error_name) as exc:
            raise ProviderCallError(f"{self.name}: {type(exc).__name__}") from None
        return self._response(raw, requested)


def _without_secrets(text: str, base_url: str) -> str:
    """``text`` without the base URL's user, password or query (they may be secrets)."""
    parts = urlsplit(base_url)
    for secret in (parts.username, parts.password, parts.query):
        if secret:
            text = text.replace(secret, "***")
    return text[:300]


def http_client(sdk: ModuleType, limits: Any, timeout: float) -> Any:
    """The SDK's aiohttp transport (``openai[aiohttp]`` / ``anthropic[aiohttp]``, both
    dependencies of tsum) where the SDK has it, else its default httpx one.

    Why: at -j 128 httpx's connection pool re-checks every pooled connection for every
    request it assigns (``_assign_requests_to_connections``), and that alone cost about
    4 ms of CPU per call here: the 1,558 calls of the end-to-end benchmark took 16 s of
    CPU with httpx and 8.5 s with aiohttp (benchmarks/PROFILE.md). The SDKs document
    aiohttp as the transport "for improved concurrency performance".
    """
    factory = getattr(sdk, "DefaultAioHttpClient", None)
    if factory is not None:
        try:
            return factory(limits=limits, timeout=timeout)
        except RuntimeError:  # the SDK's placeholder when its aiohttp extra is missing
            pass
    return sdk.DefaultAsyncHttpxClient(limits=limits, timeout=timeout)


async def post_json(client: Any, path: str, body: dict[str, Any]) -> Any:
    """POST ``body`` to the API's ``path`` through the SDK client (its auth, headers,
    base URL, timeout, connection pool and status errors); the answer's JSON as
    attribute access (``json_namespace``). A body that is not JSON raises ValueError
    (``complete`` reports a malformed response).

    Why not ``client.chat.completions.create`` / ``client.messages.create``: for one
    user message they add nothing to the request on the wire, but the SDK's type-driven
    transform of the parameters and its response models cost about 1.2 ms of CPU per
    call, a quarter of the call's whole cost at high concurrency (PROFILE.md). The SDKs
    document ``client.post`` for requests they do not model.
    """
    import httpx2

    response = await client.post(path, body=body, cast_to=httpx2.Response)
    return json_namespace(orjson.loads(response.content))


def json_namespace(value: Any) -> Any:
    """JSON → attribute access, the way the SDK's models read (the providers'
    ``_to_response`` use getattr, so one reading serves SDK objects and raw JSON)."""
    if isinstance(value, dict):
        return SimpleNamespace(**{k: json_namespace(v) for k, v in value.items()})
    if isinstance(value, list):
        return [json_namespace(v) for v in value]
    return value


def _os_error_under(exc: BaseException) -> OSError | None:
    """The socket error at the bottom of ``exc``'s causes, unless it is a timeout.

    The SDKs' aiohttp transport maps every ``aiohttp.ClientConnectionError`` to
    ``ConnectTimeout`` (its table matches the base class first), so a refused
    connection arrives as ``APITimeoutError``; the error under it tells the truth.
    """
    seen = 0
    cause: BaseException | None = exc
    while cause is not None and seen < 16:  # a cycle guard: causes can loop
        if isinstance(cause, OSError) and not isinstance(cause, TimeoutError):
            # aiohttp's ClientOSError is an OSError too: look for the socket's own error
            deeper = cause.__cause__ or cause.__context__
            if deeper is None or not isinstance(deeper, OSError):
                return cause
        cause = cause.__cause__ or cause.__context__
        seen += 1
    return None
