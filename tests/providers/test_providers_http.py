"""The real anthropic and openai SDK clients against a local HTTP server.

No patching of SDK internals: each test starts ``FakeLLMServer`` on 127.0.0.1
and points ``base_url`` at it. Backoff sleeps are injected (recorded, not
slept) and timeouts are short, so the module runs in a few seconds.
"""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.utils import formatdate
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_llm_server import (
    FakeLLMServer,
    Reply,
    anthropic_message,
    error_body,
    isolate_env,
    openai_completion,
)
from transcript_tools.engine.requests import SummaryRequest
from transcript_tools.errors import ProviderConfigError, ProviderError
from transcript_tools.providers.base import Provider
from transcript_tools.providers.cache import CacheMode, ResponseCache
from transcript_tools.providers.executor import SummaryExecutor
from transcript_tools.providers.registry import get_provider
from transcript_tools.providers.retry import RetryPolicy

FAKE_KEY = "sk-test-SECRET123"
PROMPT = "Summarize:\n<messages>\nUser: hello\n\nAssistant: hi there\n</messages>"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_env(monkeypatch, tmp_path / "home")


@pytest.fixture
def network(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests talk to 127.0.0.1 only: lift the kill switch, give fake keys."""
    monkeypatch.delenv("TSUM_OFFLINE", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)


@dataclass(frozen=True)
class Flavor:
    name: str
    ok: Callable[[str], Any]  # text -> success body
    empty: Any
    refused: Any

    def provider(self, server: FakeLLMServer, **kwargs: Any) -> Provider:
        if self.name == "anthropic":
            return get_provider("anthropic", base_url=server.anthropic_base_url, **kwargs)
        kwargs.setdefault("model", "gpt-test")
        return get_provider("openai", base_url=server.openai_base_url, **kwargs)


ANTHROPIC = Flavor(
    "anthropic",
    ok=lambda text: anthropic_message([text[:4], text[4:]]),  # two blocks, joined
    empty=anthropic_message(["  \n "]),
    refused=anthropic_message([], stop_reason="refusal"),
)
OPENAI = Flavor(
    "openai",
    ok=lambda text: openai_completion(text),
    empty=openai_completion("   "),
    refused=openai_completion(None, refusal="I can't help with that."),
)
FLAVORS = pytest.mark.parametrize("flavor", [ANTHROPIC, OPENAI], ids=lambda f: f.name)


def request(turn: int = 3, prompt: str = PROMPT, session: str = "s1") -> SummaryRequest:
    return SummaryRequest(session_id=session, turn=turn, prompt=prompt)


def make_executor(
    provider: Provider,
    *,
    attempts: int = 4,
    delays: list[float] | None = None,
    timeout: float = 5.0,
    **kwargs: Any,
) -> SummaryExecutor:
    recorded = delays if delays is not None else []

    async def sleep(seconds: float) -> None:  # record the backoff, never wait for it
        recorded.append(seconds)

    return SummaryExecutor(
        provider,
        timeout=timeout,
        retry=RetryPolicy(max_attempts=attempts, base_delay=0.01),
        sleep=sleep,
        **kwargs,
    )


def run(executor: SummaryExecutor, *requests: SummaryRequest) -> list[Any]:
    async def go() -> list[Any]:
        try:
            return list(await asyncio.gather(*(executor.execute(r) for r in requests)))
        finally:
            await executor.aclose()

    return asyncio.run(go())


@FLAVORS
def test_success_sends_the_seed_call_and_returns_text_and_usage(
    flavor: Flavor, network: None
) -> None:
    with FakeLLMServer([Reply(body=flavor.ok("the summary"))]) as server:
        [outcome] = run(make_executor(flavor.provider(server)), request())
    assert outcome.ok and outcome.attempts == 1 and not outcome.cached
    assert outcome.response.text == "the summary"
    assert outcome.response.usage.input_tokens > 0 and outcome.response.usage.output_tokens > 0
    [sent] = server.requests
    body = sent.body
    assert body["messages"] == [{"role": "user", "content": PROMPT}]  # one user message
    assert "tools" not in body and "system" not in body
    if flavor.name == "anthropic":
        assert sent.path == "/v1/messages"
        assert body["max_tokens"] == 1024 and body["model"] == "claude-haiku-4-5"
        assert outcome.response.model == "claude-test"
    else:
        assert sent.path == "/v1/chat/completions"
        # a compatible server gets the widely understood max_tokens
        assert body["max_tokens"] == 1024 and body["model"] == "gpt-test"
    assert sent.headers["x-stainless-retry-count"] == "0"  # the SDK does not retry


@FLAVORS
def test_429_with_retry_after_then_success(flavor: Flavor, network: None) -> None:
    limited = Reply(
        status=429, headers={"Retry-After": "2"}, body=error_body("rate_limit_error", "slow")
    )
    delays: list[float] = []
    with FakeLLMServer([limited, Reply(body=flavor.ok("after waiting"))]) as server:
        executor = make_executor(flavor.provider(server), delays=delays)
        [outcome] = run(executor, request())
    assert outcome.ok and outcome.response.text == "after waiting"
    assert outcome.attempts == 2 and server.count == 2
    assert len(delays) == 1 and 2.0 <= delays[0] <= 2.2  # Retry-After honoured (+ <=10% jitter)
    assert executor.stats.retries == 1 and executor.stats.calls == 2


@FLAVORS
def test_retry_after_http_date_is_capped(flavor: Flavor, network: None) -> None:
    later = formatdate(time.time() + 3600, usegmt=True)  # an hour away: capped
    limited = Reply(
        status=503, headers={"Retry-After": later}, body=error_body("overloaded", "busy")
    )
    delays: list[float] = []
    with FakeLLMServer([limited, Reply(body=flavor.ok("ok now"))]) as server:
        [outcome] = run(make_executor(flavor.provider(server), delays=delays), request())
        assert server.count == 2
    assert outcome.ok and delays == [pytest.approx(60.0)]


@FLAVORS
def test_500s_until_attempts_run_out(flavor: Flavor, network: None) -> None:
    failing = Reply(status=500, body=error_body("api_error", "boom " + PROMPT))
    delays: list[float] = []
    with FakeLLMServer([failing] * 5) as server:
        executor = make_executor(flavor.provider(server), attempts=3, delays=delays)
        [outcome] = run(executor, request())
        assert server.count == 3
    assert not outcome.ok and outcome.attempts == 3
    assert outcome.error == f"{flavor.name}: HTTP 500 internal server error (api_error)"
    assert len(delays) == 2 and delays[1] > delays[0] / 2  # exponential, jittered
    assert executor.stats.failures == 1 and executor.stats.retries == 2


@FLAVORS
def test_timeout_is_retried_then_fails(flavor: Flavor, network: None) -> None:
    slow = Reply(body=flavor.ok("too late"), delay=3.0)
    with FakeLLMServer([slow, slow]) as server:
        provider = flavor.provider(server, timeout=0.25)
        started = time.monotonic()
        [outcome] = run(make_executor(provider, attempts=2, timeout=0.25), request())
        elapsed = time.monotonic() - started
        assert server.count == 2
    assert not outcome.ok and "timed out after 0.25s" in outcome.error
    assert outcome.attempts == 2 and elapsed < 2.0


@FLAVORS
def test_malformed_json_is_a_failure_not_retried(flavor: Flavor, network: None) -> None:
    with FakeLLMServer([Reply(body=b"{not json"), Reply(body={"unexpected": True})]) as server:
        outcomes = run(
            make_executor(flavor.provider(server), concurrency=1), request(1), request(2)
        )
        assert server.count == 2
    for outcome in outcomes:
        assert not outcome.ok and outcome.attempts == 1
        assert outcome.error.startswith(f"{flavor.name}: malformed response")


@FLAVORS
@pytest.mark.parametrize("kind", ["empty", "refused"])
def test_empty_or_refused_answer_is_a_failed_summary_and_not_cached(
    flavor: Flavor, kind: str, network: None, tmp_path: Path
) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite3")
    with FakeLLMServer([Reply(body=getattr(flavor, kind))] * 2) as server:
        [first] = run(make_executor(flavor.provider(server), cache=cache), request())
        cache = ResponseCache(tmp_path / "c.sqlite3")
        [second] = run(make_executor(flavor.provider(server), cache=cache), request())
        assert server.count == 2  # the failure was not cached: the rerun asked again
    for outcome in (first, second):
        assert not outcome.ok and outcome.attempts == 1
        assert (
            ("refused" in outcome.error)
            if kind == "refused"
            else ("empty summary" in outcome.error)
        )
    with ResponseCache(tmp_path / "c.sqlite3") as check:
        assert len(check) == 0


@FLAVORS
def test_cached_rerun_and_cache_only_make_zero_calls(
    flavor: Flavor, network: None, tmp_path: Path
) -> None:
    path = tmp_path / "cache.sqlite3"
    requests = [request(turn) for turn in (3, 6, 9)]
    requests = [SummaryRequest("s1", r.turn, f"{PROMPT} #{r.turn}") for r in requests]
    with FakeLLMServer() as server:
        first = run(make_executor(flavor.provider(server), cache=ResponseCache(path)), *requests)
        assert server.count == 3 and all(o.ok and not o.cached for o in first)

        again = run(make_executor(flavor.provider(server), cache=ResponseCache(path)), *requests)
        assert server.count == 3  # zero new calls
        assert [o.response for o in again] == [o.response for o in first]
        assert all(o.cached and o.attempts == 0 for o in again)

        only = make_executor(
            flavor.provider(server), cache=ResponseCache(path), cache_mode=CacheMode.CACHE_ONLY
        )
        unknown = SummaryRequest("s2", 4, PROMPT + " changed")
        outcomes = run(only, *requests, unknown)
        assert server.count == 3  # cache_only never calls, not even for the miss
    assert all(o.ok for o in outcomes[:3])
    assert outcomes[3].error == "cache miss (--cache-only): session s2 turn 4"
    assert only.stats.cache_only_misses == 1 and only.stats.cache_only_missing == [("s2", 4)]
    assert only.stats.calls == 0


@FLAVORS
def test_refresh_calls_again_and_overwrites(flavor: Flavor, network: None, tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite3"
    with FakeLLMServer(
        [Reply(body=flavor.ok("old summary")), Reply(body=flavor.ok("new summary"))]
    ) as server:
        run(make_executor(flavor.provider(server), cache=ResponseCache(path)), request())
        refresh = make_executor(
            flavor.provider(server), cache=ResponseCache(path), cache_mode="refresh"
        )
        [outcome] = run(refresh, request())
        assert server.count == 2
        [cached] = run(make_executor(flavor.provider(server), cache=ResponseCache(path)), request())
    assert outcome.response.text == "new summary" and not outcome.cached
    assert cached.cached and cached.response.text == "new summary"


@FLAVORS
def test_the_key_never_appears_in_errors_cache_or_logs(
    flavor: Flavor, network: None, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    echo = f"Incorrect API key provided: {FAKE_KEY}. Prompt was: {PROMPT}"
    replies = [
        Reply(status=429, body=error_body("rate_limit_error", echo)),
        Reply(body=flavor.ok("cached summary")),
        Reply(status=401, body=error_body("authentication_error", echo)),
    ]
    path = tmp_path / "cache.sqlite3"
    with FakeLLMServer(replies) as server:
        provider = flavor.provider(server)
        executor = make_executor(provider, cache=ResponseCache(path), concurrency=1)
        outcomes = run(
            executor, request(1), request(2, prompt="another prompt"), request(3, prompt="third")
        )
        sent_keys = [
            r.headers.get("authorization", "") + r.headers.get("x-api-key", "")
            for r in server.requests
        ]
    assert all(FAKE_KEY in k for k in sent_keys)  # the test is meaningful: the key was sent
    assert outcomes[0].ok
    assert (
        outcomes[1].error
        == f"{flavor.name}: HTTP 401 authentication failed (check the API key) (authentication_error)"
    )
    # 401 is fatal: the third request fails without a call
    assert (
        outcomes[2].error == outcomes[1].error and outcomes[2].attempts == 0 and server.count == 3
    )
    written = b"".join(p.read_bytes() for p in tmp_path.glob("cache.sqlite3*"))
    texts = [o.error or "" for o in outcomes] + [
        repr(provider),
        str(provider.identity(None)),
        caplog.text,
    ]
    for blob in [written.decode("latin-1"), *texts]:
        assert FAKE_KEY not in blob and "SECRET123" not in blob
        assert "Prompt was" not in blob


@FLAVORS
def test_kill_switch_refuses_before_sending(
    flavor: Flavor, network: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TSUM_OFFLINE", "1")
    with FakeLLMServer() as server:
        provider = flavor.provider(server)
        with pytest.raises(ProviderError) as info:
            asyncio.run(provider.complete(PROMPT, None, 1024))
        assert not info.value.retryable and "TSUM_OFFLINE" in str(info.value)
        executor = make_executor(provider)
        outcomes = run(executor, request(1), request(2))
        assert server.count == 0
    assert all(not o.ok and "TSUM_OFFLINE" in o.error for o in outcomes)
    assert executor.stats.calls == 1  # the switch is fatal: no second attempt either


@FLAVORS
def test_connection_refused_is_retried(flavor: Flavor, network: None) -> None:
    with FakeLLMServer() as server:
        provider = flavor.provider(server)
    # the server is gone: connections to its port are refused
    [outcome] = run(make_executor(provider, attempts=2), request())
    assert not outcome.ok and outcome.attempts == 2 and "connection error" in outcome.error


@FLAVORS
def test_cancellation_propagates_promptly(flavor: Flavor, network: None) -> None:
    with FakeLLMServer([Reply(body=flavor.ok("late"), delay=5.0)]) as server:
        executor = make_executor(flavor.provider(server), timeout=30.0)

        async def go() -> float:
            task = asyncio.create_task(executor.execute(request()))
            while server.count == 0:
                await asyncio.sleep(0.01)
            started = time.monotonic()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await executor.aclose()
            return time.monotonic() - started

        assert asyncio.run(go()) < 0.5


def test_missing_keys_fail_at_start_naming_the_variable_and_offline() -> None:
    for name, env in (("anthropic", "ANTHROPIC_API_KEY"), ("openai", "OPENAI_API_KEY")):
        with pytest.raises(ProviderConfigError) as info:
            get_provider(name)
        assert env in str(info.value) and "--provider offline" in str(info.value)
    with pytest.raises(ProviderConfigError, match="unknown provider 'gemini'"):
        get_provider("gemini")


def test_openai_compatible_server_needs_a_model_but_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ProviderConfigError, match="--model is required"):
        get_provider("openai", base_url="http://127.0.0.1:8000/v1")
    provider = get_provider("openai", base_url="http://127.0.0.1:8000/v1", model="qwen2.5")
    assert provider.default_model == "qwen2.5"
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    lookalike = get_provider("openai", base_url="https://api.openai.com.example/v1", model="m")
    assert lookalike.identity(None)["tokens_param"] == "max_tokens"  # not the official host
    official = get_provider("openai")
    assert official.default_model == "gpt-4o-mini"
    assert official.identity(None)["tokens_param"] == "max_completion_tokens"


def test_keyless_compatible_server_gets_a_placeholder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TSUM_OFFLINE")
    with FakeLLMServer() as server:
        provider = get_provider("openai", base_url=server.openai_base_url, model="local")
        [outcome] = run(make_executor(provider), request())
        assert server.requests[0].headers["authorization"] == "Bearer not-needed"
    assert outcome.ok


def test_identity_holds_what_determines_the_response_and_no_credentials(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    provider = get_provider(
        "anthropic", base_url="https://user:pw@proxy.example/anthropic/?token=abc"
    )
    identity = provider.identity("claude-x")
    assert (
        identity
        == {
            "provider": "anthropic",
            "api": "messages",
            "base_url": "https://proxy.example/anthropic",
            "model": "claude-x",
            "temperature": None,
            # the query tells endpoints apart in the cache key; hashed, for it may be a secret
            "base_url_query_sha256": "906b1a00bc75e17ce0089843e63c602bd9e911df9197c84edde3f3c4f174b392",  # sha256(b"token=abc")
        }
    )
    assert "abc" not in str(identity) and "pw" not in str(identity)
    assert provider.identity(None)["model"] == "claude-haiku-4-5"


def test_importing_tsum_never_imports_the_sdks() -> None:
    code = (
        "import sys, transcript_tools, transcript_tools.providers\n"
        "from transcript_tools.providers import cache, executor, registry, retry\n"
        "import transcript_tools.cli.setting_options, transcript_tools.cli.cache_cmd\n"
        "bad = sorted(m for m in ('anthropic', 'openai', 'httpx2') if m in sys.modules)\n"
        "assert not bad, bad\n"
    )
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@FLAVORS
def test_temperature_is_sent_and_part_of_the_identity(flavor: Flavor, network: None) -> None:
    with FakeLLMServer() as server:
        provider = flavor.provider(server, temperature=0.0)
        [outcome] = run(make_executor(provider), request())
        assert server.requests[0].body["temperature"] == 0.0
    assert outcome.ok and provider.identity(None)["temperature"] == 0.0


@FLAVORS
@pytest.mark.parametrize("kind", ["empty", "refused"])
def test_a_billed_answer_that_is_no_summary_counts_in_the_usage(
    flavor: Flavor, kind: str, network: None
) -> None:
    """A refusal or an empty answer is a failed summary, but the API billed its tokens:
    they are in the executor's usage, which the cost line and the manifest price."""
    body = getattr(flavor, kind)
    billed = body["usage"]
    with FakeLLMServer([Reply(body=body)]) as server:
        executor = make_executor(flavor.provider(server), attempts=1)
        [outcome] = run(executor, request())
    assert not outcome.ok
    usage = executor.stats.usage
    assert (usage.input_tokens, usage.output_tokens) == (
        billed.get("input_tokens", billed.get("prompt_tokens")),
        billed.get("output_tokens", billed.get("completion_tokens")),
    )
    assert usage.total_tokens > 0
