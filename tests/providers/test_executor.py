"""SummaryExecutor with a scripted provider one level above the SDK; retry policy;
the CLI's provider options and ``tsum cache``."""

from __future__ import annotations

import asyncio
import random
import time
from collections import deque
from email.utils import formatdate
from pathlib import Path
from typing import Any

import click
import orjson
import pytest
from click.testing import CliRunner

from tests.support.fake_llm_server import isolate_env
from transcript_tools.cli.main import cli
from transcript_tools.cli.setting_options import provider_options
from transcript_tools.engine.messages import Usage
from transcript_tools.engine.requests import SummaryRequest, SummaryResponse
from transcript_tools.errors import ProviderConfigError, ProviderError
from transcript_tools.providers.cache import CacheMode, ResponseCache, cache_key
from transcript_tools.providers.executor import SummaryExecutor
from transcript_tools.providers.factory import build_executor, cache_only_failure, describe_stats
from transcript_tools.providers.retry import (
    ProviderCallError,
    RetryPolicy,
    parse_retry_after,
    public_url,
    status_error,
)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_env(monkeypatch, tmp_path / "home")


class ScriptedProvider:
    """A real Provider whose answers are queued: responses, exceptions, or waits."""

    name = "scripted"
    key_env = None

    def __init__(self, *script: Any, gate: asyncio.Event | None = None) -> None:
        self.script: deque[Any] = deque(script)
        self.prompts: list[str] = []
        self.active = 0
        self.peak = 0
        self.gate = gate

    @property
    def default_model(self) -> str:
        return "scripted-1"

    def identity(self, model: str | None) -> dict[str, Any]:
        return {"provider": self.name, "model": model or self.default_model}

    async def complete(self, prompt: str, model: str | None, max_tokens: int) -> SummaryResponse:
        self.prompts.append(prompt)
        self.active += 1
        self.peak = max(self.peak, self.active)
        try:
            if self.gate is not None:
                await self.gate.wait()
            else:
                await asyncio.sleep(0)
            item = self.script.popleft() if self.script else f"summary of {prompt}"
            if isinstance(item, BaseException):
                raise item
            if isinstance(item, float):  # hang this long (timeouts)
                await asyncio.sleep(item)
                item = "late"
            return SummaryResponse(item, model or self.default_model, Usage(100, 10))
        finally:
            self.active -= 1


def req(turn: int = 3, prompt: str = "p", session: str = "s") -> SummaryRequest:
    return SummaryRequest(session, turn, prompt)


def executor_for(
    provider: Any, *, delays: list[float] | None = None, **kwargs: Any
) -> SummaryExecutor:
    recorded = delays if delays is not None else []

    async def sleep(seconds: float) -> None:
        recorded.append(seconds)

    kwargs.setdefault("retry", RetryPolicy(max_attempts=4, base_delay=0.5))
    return SummaryExecutor(provider, rng=random.Random(7), sleep=sleep, **kwargs)


def run_all(executor: SummaryExecutor, *requests: SummaryRequest) -> list[Any]:
    async def go() -> list[Any]:
        return list(await asyncio.gather(*(executor.execute(r) for r in requests)))

    return asyncio.run(go())


def retryable(status: int = 503, retry_after: float | None = None) -> ProviderCallError:
    return ProviderCallError(
        f"HTTP {status}", retryable=True, status=status, retry_after=retry_after
    )


# ---- retries ---------------------------------------------------------------------


def test_retryable_errors_are_retried_with_growing_jittered_backoff() -> None:
    provider = ScriptedProvider(retryable(), retryable(), retryable(), "finally")
    delays: list[float] = []
    executor = executor_for(provider, delays=delays)
    [outcome] = run_all(executor, req())
    assert outcome.ok and outcome.response.text == "finally" and outcome.attempts == 4
    assert 0.25 <= delays[0] <= 0.5 and 0.5 <= delays[1] <= 1.0 and 1.0 <= delays[2] <= 2.0
    assert (
        executor.stats.calls == 4 and executor.stats.retries == 3 and executor.stats.failures == 0
    )


def test_attempts_are_bounded_and_the_failure_is_an_outcome() -> None:
    provider = ScriptedProvider(*[retryable(500)] * 10)
    executor = executor_for(provider, retry=RetryPolicy(max_attempts=3))
    [outcome] = run_all(executor, req())
    assert not outcome.ok and outcome.error == "HTTP 500" and outcome.attempts == 3
    assert len(provider.prompts) == 3 and executor.stats.failures == 1


def test_non_retryable_errors_are_not_retried() -> None:
    provider = ScriptedProvider(ProviderError("bad request", retryable=False, status=400))
    [outcome] = run_all(executor_for(provider), req())
    assert outcome.error == "bad request" and outcome.attempts == 1


def test_retry_after_wins_over_backoff_and_is_capped() -> None:
    provider = ScriptedProvider(
        retryable(429, retry_after=3.0), retryable(429, retry_after=900.0), "ok"
    )
    delays: list[float] = []
    policy = RetryPolicy(max_attempts=4, retry_after_cap=30.0)
    [outcome] = run_all(executor_for(provider, delays=delays, retry=policy), req())
    assert outcome.ok and 3.0 <= delays[0] <= 3.3 and delays[1] == 30.0


def test_policy_delay_bounds() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=8.0)
    rng = random.Random(1)
    for attempt, (low, high) in enumerate([(0.5, 1), (1, 2), (2, 4), (4, 8), (4, 8)], start=1):
        for _ in range(20):
            assert low <= policy.delay(attempt, None, rng) <= high
    with pytest.raises(ValueError):
        RetryPolicy(max_attempts=0)


def test_parse_retry_after_forms() -> None:
    now = time.time()
    assert parse_retry_after({"Retry-After": "7"}) == 7.0
    assert parse_retry_after({"retry-after": "1.5"}) == 1.5
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    in_ten = formatdate(now + 10, usegmt=True)
    assert parse_retry_after({"Retry-After": in_ten}, now=now) == pytest.approx(10, abs=1)
    assert parse_retry_after({"Retry-After": formatdate(now - 100, usegmt=True)}, now=now) == 0.0
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None


def test_status_errors_are_sanitized_and_classified() -> None:
    error = status_error("openai", 429, headers={"retry-after": "2"}, error_type="rate_limit_error")
    assert str(error) == "openai: HTTP 429 rate limited (rate_limit_error)"
    assert error.retryable and error.retry_after == 2.0 and not error.fatal
    assert status_error("x", 529).retryable and status_error("x", 408).retryable
    assert not status_error("x", 400).retryable and status_error("x", 401).fatal
    weird = status_error("x", 418, error_type="Key sk-abc is wrong: " + "p" * 100)
    assert str(weird) == "x: HTTP 418 HTTP error"  # a long or odd error type is dropped
    assert public_url("HTTPS://u:p@Host:8443/v1/?k=1#f") == "https://host:8443/v1"
    assert public_url("http://[::1]:8000/v1") == "http://[::1]:8000/v1"


def test_executor_deadline_times_out_a_hung_call() -> None:
    provider = ScriptedProvider(10.0, 10.0)
    executor = executor_for(provider, timeout=0.05, retry=RetryPolicy(max_attempts=2))
    started = time.monotonic()
    [outcome] = run_all(executor, req())
    assert time.monotonic() - started < 1.0
    assert outcome.error == "scripted: timed out after 0.05s" and outcome.attempts == 2


def test_empty_text_is_a_failure_whatever_the_provider(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite3")
    provider = ScriptedProvider(" \n ")
    [outcome] = run_all(executor_for(provider, cache=cache), req())
    assert outcome.error == "scripted: empty summary" and len(cache) == 0


def test_fatal_errors_stop_further_calls_for_that_model() -> None:
    auth = ProviderCallError("bad key", status=401, fatal=True)
    provider = ScriptedProvider(auth)
    executor = executor_for(provider, concurrency=1)
    outcomes = run_all(
        executor, req(1, "a"), req(2, "b"), SummaryRequest("s", 3, "c", model="other")
    )
    assert [o.error for o in outcomes] == ["bad key", "bad key", None]
    assert [o.attempts for o in outcomes] == [1, 0, 1]  # b: never sent, a's error repeated
    assert provider.prompts == ["a", "c"]


# ---- concurrency and cancellation --------------------------------------------------


def test_at_most_n_calls_run_at_once_and_n_are_reached() -> None:
    async def go() -> ScriptedProvider:
        gate = asyncio.Event()
        provider = ScriptedProvider(gate=gate)
        executor = executor_for(provider, concurrency=3)
        tasks = [asyncio.create_task(executor.execute(req(i, f"p{i}"))) for i in range(10)]
        for _ in range(20):
            await asyncio.sleep(0)
        assert provider.active == 3
        gate.set()
        outcomes = await asyncio.gather(*tasks)
        assert all(o.ok for o in outcomes)
        return provider

    assert asyncio.run(go()).peak == 3


@pytest.mark.parametrize("where", ["call", "backoff"])
def test_cancellation_propagates_promptly(where: str) -> None:
    script = [60.0] if where == "call" else [retryable(retry_after=60.0)]
    provider = ScriptedProvider(*script)
    # real asyncio.sleep: the backoff would wait 60 s if cancellation were swallowed
    executor = SummaryExecutor(provider, timeout=None, retry=RetryPolicy(retry_after_cap=120))

    async def go() -> float:
        task = asyncio.create_task(executor.execute(req()))
        await asyncio.sleep(0.05)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - started

    assert asyncio.run(go()) < 0.2


def test_identical_requests_in_flight_share_one_call(tmp_path: Path) -> None:
    provider = ScriptedProvider()
    executor = executor_for(provider, cache=ResponseCache(tmp_path / "c.sqlite3"))
    outcomes = run_all(executor, *[req(t, "same prompt", session=f"s{t}") for t in range(5)])
    assert provider.prompts == ["same prompt"]
    assert [o.cached for o in outcomes].count(False) == 1 and all(o.ok for o in outcomes)
    assert executor.stats.cache_hits == 4 and executor.stats.cache_misses == 1


def test_a_failed_leader_lets_waiters_call_on_their_own(tmp_path: Path) -> None:
    provider = ScriptedProvider(ProviderError("nope"), "second try")
    executor = executor_for(provider, cache=ResponseCache(tmp_path / "c.sqlite3"))
    outcomes = run_all(executor, req(1, "same"), req(2, "same"), req(3, "same"))
    assert [o.error for o in outcomes] == ["nope", None, None]
    assert len(provider.prompts) == 2 and outcomes[2].cached


# ---- cache modes ---------------------------------------------------------------------


def test_read_write_stores_and_serves(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    first = executor_for(ScriptedProvider("A"), cache=ResponseCache(path))
    [a] = run_all(first, req())
    second_provider = ScriptedProvider("B")
    second = executor_for(second_provider, cache=ResponseCache(path))
    [b] = run_all(second, req())
    assert a.response.text == b.response.text == "A" and b.cached and second_provider.prompts == []
    assert second.stats.cache_hits == 1 and second.stats.calls == 0


def test_the_key_includes_the_resolved_model(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite3")
    run_all(executor_for(ScriptedProvider(), cache=cache), req())
    key = cache_key({"provider": "scripted", "model": "scripted-1"}, "p", 1024)
    assert cache.get(key) is not None


def test_refresh_overwrites_and_off_ignores(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    run_all(executor_for(ScriptedProvider("old"), cache=ResponseCache(path)), req())
    refresh = executor_for(
        ScriptedProvider("new"), cache=ResponseCache(path), cache_mode=CacheMode.REFRESH
    )
    [r] = run_all(refresh, req())
    assert r.response.text == "new" and not r.cached
    off = executor_for(
        ScriptedProvider("live"), cache=ResponseCache(path), cache_mode=CacheMode.OFF
    )
    [o] = run_all(off, req())
    assert o.response.text == "live" and off.cache is None
    [c] = run_all(executor_for(ScriptedProvider("x"), cache=ResponseCache(path)), req())
    assert c.response.text == "new"


def test_cache_only_misses_are_failures_named_by_session_and_turn(tmp_path: Path) -> None:
    provider = ScriptedProvider()
    executor = executor_for(
        provider, cache=ResponseCache(tmp_path / "c.sqlite3"), cache_mode="cache_only"
    )
    outcomes = run_all(executor, req(3, "a", "alpha"), req(6, "b", "beta"))
    assert outcomes[0].error == "cache miss (--cache-only): session alpha turn 3"
    assert provider.prompts == [] and executor.stats.cache_only_misses == 2
    message = cache_only_failure(executor.stats)
    assert message is not None and "session alpha turn 3, session beta turn 6" in message
    with pytest.raises(ProviderConfigError, match="--cache-only needs"):
        SummaryExecutor(provider, cache_mode=CacheMode.CACHE_ONLY)


def test_errors_are_never_cached(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    run_all(executor_for(ScriptedProvider(ProviderError("down")), cache=ResponseCache(path)), req())
    provider = ScriptedProvider("up")
    [outcome] = run_all(executor_for(provider, cache=ResponseCache(path)), req())
    assert outcome.response.text == "up" and provider.prompts == ["p"]


def test_stats_line() -> None:
    executor = executor_for(ScriptedProvider(retryable(), "ok"))
    run_all(executor, req())
    line = describe_stats(executor.stats)
    assert line == "1 summary requests, 2 API calls, 1 retries, 0 cached, 100 in / 10 out tokens"


# ---- provider options and build_executor ---------------------------------------------


def test_build_executor_defaults_to_offline_without_a_cache() -> None:
    executor = build_executor({})
    assert executor.provider.name == "offline" and executor.cache is None
    assert executor.concurrency == 8 and executor.retry.max_attempts == 4


def test_build_executor_offline_uses_a_cache_when_asked(tmp_path: Path) -> None:
    executor = build_executor({"cache": tmp_path / "x.sqlite3"})
    assert executor.cache is not None and executor.cache_mode is CacheMode.READ_WRITE
    executor.close()


def test_build_executor_network_provider(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-SECRET123")
    monkeypatch.delenv("TSUM_OFFLINE")  # the kill switch refuses network providers at start
    executor = build_executor(
        {
            "provider": "anthropic",
            "concurrency": 3,
            "timeout": 5,
            "max_attempts": 2,
            "refresh": True,
        }
    )
    assert executor.provider.name == "anthropic" and executor.cache_mode is CacheMode.REFRESH
    assert executor.cache.path == tmp_path / "home" / "cache.sqlite3"
    assert executor.concurrency == 3 and executor.timeout == 5 and executor.retry.max_attempts == 2
    executor.close()


@pytest.mark.parametrize(
    ("opts", "message"),
    [
        ({"provider": "anthropic"}, "ANTHROPIC_API_KEY"),
        ({"provider": "openai"}, "OPENAI_API_KEY"),
        ({"provider": "nope"}, "unknown provider"),
        ({"provider": "openai", "base_url": "http://127.0.0.1:1/v1"}, "--model is required"),
        ({"cache_only": True, "no_cache": True}, "--cache-only and --no-cache cannot be combined"),
        ({"refresh": True, "cache_only": True}, "cannot be combined"),
        ({"base_url": "http://x"}, "--base-url applies to"),
        ({"model": "gpt-4o"}, "offline provider has one model"),
        ({"concurrency": -1}, "--concurrency"),
    ],
)
def test_build_executor_fails_before_any_work(opts: dict[str, Any], message: str) -> None:
    with pytest.raises(ProviderConfigError, match=message.replace("-", r"\-")):
        build_executor(opts)


def _options_command() -> click.Command:
    @click.command()
    @provider_options
    def show(**opts: Any) -> None:
        click.echo(orjson.dumps(opts, default=str, option=orjson.OPT_SORT_KEYS).decode())

    return show


def test_provider_options_defaults_and_env_vars() -> None:
    runner = CliRunner()
    result = runner.invoke(_options_command(), [])
    assert result.exit_code == 0, result.output
    assert orjson.loads(result.output) == {
        "provider": "offline", "model": None, "base_url": None, "cache": None,
        "cache_only": False, "refresh": False, "no_cache": False,
        "concurrency": 8, "timeout": None, "temperature": None, "max_attempts": 4,
        "batch": False, "batch_poll": 30.0, "price_per_mtok": None,
    }  # fmt: skip
    env = {"TSUM_PROVIDER": "openai", "TSUM_MODEL": "m", "TSUM_BASE_URL": "http://h/v1",
           "TSUM_CACHE": "/tmp/c.db", "TSUM_CACHE_ONLY": "1"}  # fmt: skip
    result = runner.invoke(_options_command(), ["-j", "32", "--timeout", "5"], env=env)
    opts = orjson.loads(result.output)
    assert (
        opts["provider"] == "openai" and opts["model"] == "m" and opts["base_url"] == "http://h/v1"
    )
    assert opts["cache"] == "/tmp/c.db" and opts["cache_only"] is True and opts["concurrency"] == 32
    bad = runner.invoke(_options_command(), ["--provider", "gemini"])
    assert bad.exit_code == 2 and "gemini" in bad.output
    assert runner.invoke(_options_command(), ["-j", "0"]).exit_code == 2
    help_text = runner.invoke(_options_command(), ["--help"]).output
    for flag in (
        "--provider",
        "--cache-only",
        "--refresh",
        "--no-cache",
        "--max-attempts",
        "TSUM_MODEL",
    ):
        assert flag in help_text


# ---- tsum cache ----------------------------------------------------------------------


def test_cache_commands(tmp_path: Path) -> None:
    runner = CliRunner()
    path = tmp_path / "c.sqlite3"
    assert runner.invoke(cli, ["cache", "path"]).output.strip() == str(
        tmp_path / "home" / "cache.sqlite3"
    )
    assert runner.invoke(cli, ["cache", "path", "--cache", str(path)]).output.strip() == str(path)

    empty = runner.invoke(cli, ["cache", "stats", "--json", "--cache", str(path)])
    # inspecting creates nothing
    assert orjson.loads(empty.stdout)["entries"] == 0 and not path.exists()

    with ResponseCache(path) as cache:
        identity = {"provider": "anthropic", "model": "claude-haiku-4-5"}
        for i in range(3):
            cache.put(cache_key(identity, str(i), 1024), identity, SummaryResponse("s", "m"))
    stats = runner.invoke(cli, ["cache", "stats", "--json", "--cache", str(path)])
    data = orjson.loads(stats.stdout)
    assert data["entries"] == 3 and data["by_model"] == [
        {"provider": "anthropic", "model": "claude-haiku-4-5", "entries": 3}
    ]
    text = runner.invoke(cli, ["cache", "stats", "--cache", str(path)]).stdout
    assert "entries: 3" in text and "anthropic  claude-haiku-4-5  3" in text

    cleared = runner.invoke(cli, ["cache", "clear", "--cache", str(path)])
    assert cleared.exit_code == 0 and cleared.stdout == ""
    assert "removed 3 cached responses" in cleared.stderr
    stats = runner.invoke(cli, ["cache", "stats", "--json"], env={"TSUM_CACHE": str(path)})
    assert orjson.loads(stats.stdout)["entries"] == 0


def test_cache_commands_on_a_file_that_is_not_a_cache_offer_what_they_have(
    tmp_path: Path,
) -> None:
    from transcript_tools.cli.main import cli

    path = tmp_path / "bin.jsonl"
    path.write_bytes(bytes(range(256)) * 4)
    for command in ("stats", "clear"):
        result = CliRunner().invoke(cli, ["cache", command, "--cache", str(path)])
        assert result.exit_code == 2
        assert result.stderr.strip() == (
            f"tsum: error: {path}: cannot open the response cache (file is not a database); "
            "pass another --cache PATH"
        )  # never --no-cache, which the cache commands do not have
    assert path.read_bytes() == bytes(range(256)) * 4


def test_kill_switch_refuses_network_providers_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-SECRET123")
    with pytest.raises(ProviderConfigError, match="TSUM_OFFLINE is set"):
        build_executor({"provider": "anthropic"})
    assert (
        build_executor({"provider": "anthropic", "cache_only": True}).cache_mode
        is CacheMode.CACHE_ONLY
    )
