"""What a local OpenAI-compatible server needs, against the stdlib fake server:
``temperature`` from the option, the environment and a settings file reaches the request
body, ``run.json`` and the cache key; unset, nothing changes; a server's context-length
error is one line naming ``--max-transcript-chars`` and the run goes on; a server on this
machine gets a longer default timeout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from tests.support.fake_llm_server import FakeLLMServer, Reply, anthropic_message
from transcript_tools.cli.main import cli
from transcript_tools.engine.config import DEFAULT_TIMEOUT_S, LOCAL_TIMEOUT_S
from transcript_tools.providers.factory import build_executor
from transcript_tools.providers.retry import (
    default_timeout,
    is_context_overflow,
    is_local_url,
)

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "long_session.jsonl"
SUMMARIES = 5  # what long_session.jsonl makes under the default settings


@pytest.fixture
def network(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """127.0.0.1 only: lift the kill switch; no key (a local --base-url needs none)."""
    monkeypatch.delenv("TSUM_OFFLINE", raising=False)
    monkeypatch.chdir(tmp_path)  # no tsum.toml but the test's own


def replay(server: FakeLLMServer, out: Path, *extra: str, provider: str = "openai") -> Result:
    if provider == "openai":
        where = ["--base-url", server.openai_base_url, "--model", "local-model"]
    else:
        where = ["--base-url", server.anthropic_base_url]
    args = ["replay", str(SAMPLE), "--provider", provider, *where, "--out", str(out), *extra]
    return CliRunner().invoke(cli, args, catch_exceptions=False)


def summaries(out: Path) -> list[dict[str, Any]]:
    lines = (out / "summaries.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_temperature_reaches_the_request_body_and_run_json(network: None, tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        assert replay(server, tmp_path / "set", "--temperature", "0.2", "--no-cache").exit_code == 0
        sent = [r.body for r in server.requests]
        assert len(sent) == SUMMARIES and all(body["temperature"] == 0.2 for body in sent)
        assert json.loads((tmp_path / "set" / "run.json").read_text())["temperature"] == 0.2

        server.requests.clear()
        assert replay(server, tmp_path / "unset", "--no-cache").exit_code == 0
        # unset: nothing sent, nothing recorded (byte-identical to before the option)
        assert len(server.requests) == SUMMARIES
        assert all("temperature" not in r.body for r in server.requests)
        assert "temperature" not in json.loads((tmp_path / "unset" / "run.json").read_text())


def test_temperature_from_the_environment_and_a_settings_file(
    network: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "tsum.toml").write_text("temperature = 0\n", encoding="utf-8")  # an int
    with FakeLLMServer() as server:
        assert replay(server, tmp_path / "file", "--no-cache").exit_code == 0
        # a float on the wire and in run.json, as from the command line
        assert {repr(r.body["temperature"]) for r in server.requests} == {"0.0"}
        assert json.loads((tmp_path / "file" / "run.json").read_text())["temperature"] == 0.0
        server.requests.clear()
        monkeypatch.setenv("TSUM_TEMPERATURE", "0.7")  # environment over file
        assert replay(server, tmp_path / "env", "--no-cache").exit_code == 0
        assert {r.body["temperature"] for r in server.requests} == {0.7}


def test_temperature_reaches_the_anthropic_request_body(
    network: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-key")
    with FakeLLMServer(default=lambda _r: Reply(body=anthropic_message(["a summary"]))) as server:
        result = replay(
            server, tmp_path / "o", "--temperature", "0.5", "--no-cache", provider="anthropic"
        )
        assert result.exit_code == 0, result.stderr
        assert [r.body["temperature"] for r in server.requests] == [0.5] * SUMMARIES


def test_temperature_is_part_of_the_response_cache_key(network: None, tmp_path: Path) -> None:
    cache = ["--cache", str(tmp_path / "cache.sqlite3")]
    with FakeLLMServer() as server:
        assert replay(server, tmp_path / "a", *cache).exit_code == 0
        assert server.count == SUMMARIES
        assert replay(server, tmp_path / "b", *cache).exit_code == 0
        assert server.count == SUMMARIES  # the same key: every response from the cache
        assert replay(server, tmp_path / "c", *cache, "--temperature", "0").exit_code == 0
        assert server.count == 2 * SUMMARIES  # another key: called again
        assert replay(server, tmp_path / "d", *cache, "--temperature", "0.0").exit_code == 0
        assert server.count == 2 * SUMMARIES  # 0 and 0.0 are one temperature


def test_the_offline_provider_refuses_a_temperature(tmp_path: Path) -> None:
    args = ["replay", str(SAMPLE), "--temperature", "0.3", "--out", str(tmp_path / "o")]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2 and "takes no temperature" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_settings_file_temperature_must_be_a_number(network: None, tmp_path: Path) -> None:
    (tmp_path / "tsum.toml").write_text('temperature = "hot"\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["replay", str(SAMPLE), "--dry-run"])
    assert result.exit_code == 2
    assert "tsum.toml:1: temperature must be a number >= 0, got 'hot'" in result.stderr


LLAMA_CPP_OVERFLOW = {  # llama.cpp's server, as measured (.ci/llama_server.py, n_ctx 4096)
    "error": {
        "code": 400,
        "message": "request (5031 tokens) exceeds the available context size (4096 tokens), "
        "try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 5031,
        "n_ctx": 4096,
    }
}
OPENAI_OVERFLOW = {
    "error": {
        "message": "This model's maximum context length is 8192 tokens. However, your "
        "messages resulted in 9000 tokens.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}


@pytest.mark.parametrize("body", [LLAMA_CPP_OVERFLOW, OPENAI_OVERFLOW], ids=["llama.cpp", "openai"])
def test_a_context_overflow_is_one_line_naming_the_setting_and_the_run_goes_on(
    network: None, tmp_path: Path, body: dict[str, Any]
) -> None:
    with FakeLLMServer([Reply(status=400, body=body)]) as server:
        result = replay(server, tmp_path / "o", "--no-cache")
        assert server.count == SUMMARIES  # a 400 is not retried; every later turn is called
    assert result.exit_code == 0, result.stderr  # N3: the other summaries are made
    records = summaries(tmp_path / "o")
    assert [r["status"] for r in records] == ["failed"] + ["ok"] * (SUMMARIES - 1)
    error = records[0]["error"]
    assert "\n" not in error and error.startswith("openai: HTTP 400 bad request (")
    assert "the prompt is longer than the model's context" in error
    assert "lower --max-transcript-chars" in error
    assert "5031" not in error and "9000" not in error  # the body's message is never shown
    assert "Traceback" not in result.stderr


def test_context_overflow_is_recognised_by_code_type_or_words() -> None:
    assert is_context_overflow(400, ("exceed_context_size_error", "400"), None)
    assert is_context_overflow(400, ("invalid_request_error", "context_length_exceeded"), None)
    # vLLM and Anthropic say it in words only
    assert is_context_overflow(400, ("BadRequestError", None), "maximum context length is 2048")
    assert is_context_overflow(400, ("invalid_request_error", None), "prompt is too long: 9 > 8")
    assert not is_context_overflow(400, ("invalid_request_error", None), "bad model name")
    assert not is_context_overflow(500, ("exceed_context_size_error", None), None)


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://127.0.0.1:8080/v1", True),
        ("http://localhost:11434/v1", True),
        ("http://[::1]:1234/v1", True),
        ("http://127.1.2.3/v1", True),
        ("https://api.openai.com/v1", False),
        ("http://127.evil.example/v1", False),
        ("http://10.0.0.5:8000/v1", False),  # another machine: the hosted default
        (None, False),
    ],
)
def test_a_server_on_this_machine_gets_the_longer_default_timeout(
    url: str | None, local: bool
) -> None:
    assert is_local_url(url) is local
    assert default_timeout(url) == (LOCAL_TIMEOUT_S if local else DEFAULT_TIMEOUT_S)


def test_the_default_timeout_reaches_the_executor_and_an_explicit_one_wins(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def timeouts(**opts: Any) -> tuple[float, float]:
        # --cache-only: built without a key or a network call
        executor = build_executor({"provider": "openai", "model": "m", "cache_only": True, **opts})
        try:
            return executor.timeout, executor.provider._timeout  # the executor's, the HTTP client's
        finally:
            executor.close()

    local = "http://127.0.0.1:9/v1"
    assert timeouts(base_url=local) == (LOCAL_TIMEOUT_S, LOCAL_TIMEOUT_S)
    assert timeouts(base_url="https://api.openai.com/v1") == (DEFAULT_TIMEOUT_S, DEFAULT_TIMEOUT_S)
    assert timeouts(base_url=local, timeout=5.0) == (5.0, 5.0)
    # the SDK's own variable counts like --base-url
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:11434/v1")
    assert timeouts() == (LOCAL_TIMEOUT_S, LOCAL_TIMEOUT_S)
