"""providers.sdk: what the SDK-backed providers share, against a fake SDK module."""

from __future__ import annotations

import asyncio
import importlib
import sys
import types
from typing import Any

import pytest

from transcript_tools.engine.requests import SummaryResponse
from transcript_tools.errors import ProviderConfigError
from transcript_tools.providers.retry import ProviderCallError
from transcript_tools.providers.sdk import SdkProvider

SECRET = "sk-secret-123"


def fake_sdk(behaviour: list[Any]) -> types.ModuleType:
    """A module shaped like the anthropic / openai SDKs; ``create`` pops ``behaviour``."""
    sdk = types.ModuleType("fake_sdk_for_tsum")

    class SdkError(Exception):
        pass

    class APIStatusError(SdkError):
        def __init__(self, status_code: int) -> None:
            self.status_code = status_code
            self.response = types.SimpleNamespace(headers={})
            self.type = None

    class APITimeoutError(SdkError):
        pass

    class APIConnectionError(SdkError):
        pass

    class APIResponseValidationError(SdkError):
        pass

    class AsyncClient:
        built: list[dict[str, Any]] = []

        def __init__(self, **kwargs: Any) -> None:
            AsyncClient.built.append(kwargs)

        async def create(self, **kwargs: Any) -> Any:
            step = behaviour.pop(0)
            if isinstance(step, Exception):
                raise step
            return step

        async def close(self) -> None:
            pass

    sdk.SdkError = SdkError  # type: ignore[attr-defined]
    sdk.APIStatusError = APIStatusError  # type: ignore[attr-defined]
    sdk.APITimeoutError = APITimeoutError  # type: ignore[attr-defined]
    sdk.APIConnectionError = APIConnectionError  # type: ignore[attr-defined]
    sdk.APIResponseValidationError = APIResponseValidationError  # type: ignore[attr-defined]
    sdk.AsyncClient = AsyncClient  # type: ignore[attr-defined]
    sdk.DefaultAsyncHttpxClient = lambda **kwargs: kwargs  # type: ignore[attr-defined]
    return sdk


class FakeProvider(SdkProvider):
    name = "fake-sdk"
    key_env = "FAKE_SDK_KEY"
    DEFAULT_MODEL = "fake-1"
    DEFAULT_BASE_URL = "https://user:pw@api.example/v1?token=t"
    base_url_env = "FAKE_SDK_BASE_URL"
    api = "fake.create"
    sdk_module = "fake_sdk_for_tsum"
    client_class_name = "AsyncClient"
    base_error_name = "SdkError"

    def _key(self, base_url: str, model: str | None, require_key: bool) -> str:
        return SECRET

    async def _create(self, client: Any, prompt: str, model: str, max_tokens: int) -> Any:
        return await client.create(model=model, prompt=prompt, max_tokens=max_tokens)

    def _response(self, raw: Any, requested: str) -> SummaryResponse:
        return SummaryResponse(str(raw), requested)


@pytest.fixture
def sdk(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    behaviour: list[Any] = []
    monkeypatch.setitem(sys.modules, "fake_sdk_for_tsum", fake_sdk(behaviour))
    monkeypatch.delenv("TSUM_OFFLINE", raising=False)
    return behaviour


def build(**settings: Any) -> SdkProvider:
    defaults: dict[str, Any] = dict(
        model=None,
        base_url=None,
        timeout=5.0,
        temperature=None,
        max_connections=4,
        require_key=True,
    )
    defaults.update(settings)
    provider = FakeProvider.create(**defaults)
    assert isinstance(provider, FakeProvider)
    return provider


def test_a_call_returns_the_subclass_response(sdk: list[Any]) -> None:
    sdk.append("the summary")
    provider = build()
    response = asyncio.run(provider.complete("prompt", None, 100))
    assert response == SummaryResponse("the summary", "fake-1")
    built = sys.modules["fake_sdk_for_tsum"].AsyncClient.built[-1]
    assert built["api_key"] == SECRET and built["max_retries"] == 0  # retries are the executor's


def test_the_key_and_credentials_never_show(sdk: list[Any]) -> None:
    provider = build()
    shown = repr(provider) + str(provider.identity(None))
    assert SECRET not in shown and "pw" not in shown and "token" not in shown
    assert provider.identity("m2")["model"] == "m2"


@pytest.mark.parametrize(
    ("error", "retryable", "text"),
    [
        ("APITimeoutError", True, "timed out after 5s"),
        ("APIConnectionError", True, "connection error"),
        ("APIResponseValidationError", False, "malformed response"),
        ("SdkError", False, "fake-sdk: SdkError"),
    ],
)
def test_sdk_errors_become_sanitized_provider_errors(
    sdk: list[Any], error: str, retryable: bool, text: str
) -> None:
    sdk.append(getattr(sys.modules["fake_sdk_for_tsum"], error)(f"body with {SECRET}"))
    with pytest.raises(ProviderCallError) as caught:
        asyncio.run(build().complete("prompt", None, 100))
    assert text in str(caught.value) and SECRET not in str(caught.value)
    assert caught.value.retryable is retryable
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_a_status_error_keeps_its_status(sdk: list[Any]) -> None:
    sdk.append(sys.modules["fake_sdk_for_tsum"].APIStatusError(429))
    with pytest.raises(ProviderCallError) as caught:
        asyncio.run(build().complete("prompt", None, 100))
    assert "429" in str(caught.value) and caught.value.retryable


def test_the_kill_switch_refuses_before_any_client(
    sdk: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TSUM_OFFLINE", "1")
    provider = build()
    with pytest.raises(ProviderCallError, match="network calls are disabled"):
        asyncio.run(provider.complete("prompt", None, 100))
    assert provider._sdk_client is None


def test_a_bad_timeout_is_a_config_error(sdk: list[Any]) -> None:
    with pytest.raises(ProviderConfigError, match="--timeout must be positive"):
        build(timeout=0)


def test_the_sdk_is_imported_when_a_provider_is_built_not_before() -> None:
    assert FakeProvider.sdk_module not in sys.modules  # defining the class imported nothing


def test_sdk_clients_use_the_aiohttp_transport_when_the_sdk_has_it() -> None:
    # at -j 128 httpx's pool costs ~4 ms of CPU per call (providers/sdk.http_client)
    import httpx2

    from transcript_tools.providers.sdk import http_client

    limits = httpx2.Limits(max_connections=7, max_keepalive_connections=7)
    for name in ("openai", "anthropic"):
        sdk = importlib.import_module(name)
        client = http_client(sdk, limits, 5.0)
        assert type(client._transport).__name__ == "AiohttpTransport", name
        assert client._transport.limits.max_connections == 7

    class Placeholder:  # what the SDKs define when their aiohttp extra is missing
        def __init__(self, **_kwargs: Any) -> None:
            raise RuntimeError("install the aiohttp extra")

    fallback = types.SimpleNamespace(
        DefaultAioHttpClient=Placeholder, DefaultAsyncHttpxClient=httpx2.AsyncClient
    )
    assert type(http_client(fallback, limits, 5.0)) is httpx2.AsyncClient
    old_sdk = types.SimpleNamespace(DefaultAsyncHttpxClient=httpx2.AsyncClient)
    assert type(http_client(old_sdk, limits, 5.0)) is httpx2.AsyncClient


def test_a_refused_connection_is_not_reported_as_a_timeout() -> None:
    from transcript_tools.providers.sdk import _os_error_under

    refused = ConnectionRefusedError(111, "Connect call failed")
    wrapped = OSError("client os error")
    wrapped.__cause__ = refused
    outer = TimeoutError("mapped to a timeout by the transport")
    outer.__cause__ = wrapped
    assert _os_error_under(outer) is refused
    plain = TimeoutError("read timed out")
    assert _os_error_under(plain) is None
