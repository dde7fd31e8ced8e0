"""A dead provider is not retried at every turn (providers/executor.py's circuit breaker):
after ``DEFAULT_BREAKER_FAILURES`` failed calls in a row no request leaves tsum for the
rest of the run, a warning says so, and the run exits 3, the provider-failure code. A
fake server on 127.0.0.1 counts what reaches it."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.support.fake_llm_server import FakeLLMServer, Reply, error_body, openai_completion
from transcript_tools.cli.main import cli
from transcript_tools.engine.config import DEFAULT_BREAKER_FAILURES

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


@pytest.fixture
def network(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("TSUM_OFFLINE", raising=False)
    monkeypatch.chdir(tmp_path)


def down(_request: object) -> Reply:
    return Reply(status=500, body=error_body("api_error", "the server is down"))


def replay(server: FakeLLMServer, *extra: str) -> Result:
    args = ["replay", str(SAMPLES), "--provider", "openai", "--model", "m"]
    args += ["--base-url", server.openai_base_url, "--no-cache", "--max-attempts", "1", *extra]
    return CliRunner().invoke(cli, args, catch_exceptions=False)


def test_a_dead_server_is_called_n_times_then_never_again(
    network: None, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="transcript_tools")
    with FakeLLMServer(default=down) as server:
        result = replay(server, "-j", "1", "--out", str(tmp_path / "out"))
        # 5 requests; before the breaker, one at every eligible turn: 13
        assert server.count == DEFAULT_BREAKER_FAILURES
    assert result.exit_code == 3
    warning = f"tsum: warning: openai: {DEFAULT_BREAKER_FAILURES} summary calls failed in a row"
    assert len([r for r in caplog.records if warning in r.getMessage()]) == 1  # said once
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("tsum: error: all 13 summary call(s) failed (first: openai: HTTP 500")
    assert f"; openai: {DEFAULT_BREAKER_FAILURES} summary calls failed in a row (last: " in last
    assert last.endswith("no more calls to it in this run; see summaries.jsonl")


def test_a_success_resets_the_count(network: None) -> None:
    replies = [down(None)] * (DEFAULT_BREAKER_FAILURES - 1) + [
        Reply(body=openai_completion("a summary"))
    ]
    with FakeLLMServer(replies, default=down) as server:
        result = replay(server, "-j", "1")
        # 4 failures, a success, then 5 more failures open the circuit
        assert server.count == 2 * DEFAULT_BREAKER_FAILURES
    assert result.exit_code == 3
