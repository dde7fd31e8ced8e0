"""Judged probes and template comparisons end to end: real openai SDK, local fake server."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner, Result

from tests.support.eval_fake_model import NO_PATHS_TEMPLATE, OK_TEMPLATE, model_reply
from tests.support.fake_llm_server import FakeLLMServer
from transcript_tools.cli.main import cli
from transcript_tools.eval.judge import parse_array

SAMPLES = str(Path(__file__).resolve().parents[2] / "samples")


@pytest.fixture
def network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TSUM_OFFLINE", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def eval_args(server: FakeLLMServer, cache: Path, *extra: str) -> list[str]:
    return [
        "eval",
        SAMPLES,
        "--provider",
        "openai",
        "--base-url",
        server.openai_base_url,
        "--model",
        "fake-model",
        "--cache",
        str(cache),
        "--json",
        *extra,
    ]


def test_judged_probes_cached_and_replayed_with_cache_only(network: None, tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite3"
    with FakeLLMServer(default=model_reply) as server:
        first = run(*eval_args(server, cache, "--judge", "--out", str(tmp_path / "a")))
        assert first.exit_code == 0, first.output
        calls = server.count
        # 5 summaries; 4 judged requests per checkpoint (identical ones are asked once)
        assert 5 + 5 < calls <= 5 + 5 * 4
        again = run(*eval_args(server, cache, "--judge"))
        assert again.exit_code == 0 and server.count == calls  # a rerun is free
        only = run(*eval_args(server, cache, "--judge", "--cache-only"))
        assert only.exit_code == 0, only.output
        assert server.count == calls  # --cache-only: zero calls
    judged = orjson.loads(first.stdout)["judged"]
    assert judged["checkpoints"] == 5 and judged["errors"] == 0 and judged["requests"] == 20
    assert judged["api_calls"] == calls - 5
    assert orjson.loads(only.stdout)["judged"]["cache_hits"] == 20
    assert orjson.loads(only.stdout)["variants"] == orjson.loads(first.stdout)["variants"]
    record = orjson.loads((tmp_path / "a" / "checkpoints.jsonl").read_bytes().splitlines()[0])
    questions = record["judged"]["questions"]
    assert [q["kind"] for q in questions] == ["recall", "artifact", "continuation", "decision"]
    assert all({"question", "reference", "answer", "grade"} <= set(q) for q in questions)
    assert all(q["grade"] in (0, 5) for q in questions)


def test_cache_only_without_responses_fails(network: None, tmp_path: Path) -> None:
    with FakeLLMServer(default=model_reply) as server:
        result = run(*eval_args(server, tmp_path / "empty.sqlite3", "--cache-only"))
        assert server.count == 0
    assert result.exit_code == 3 and "cache miss" in result.stderr


def test_ok_template_scores_at_or_below_the_floors(network: None, tmp_path: Path) -> None:
    (tmp_path / "ok.txt").write_text(OK_TEMPLATE)
    (tmp_path / "nopaths.txt").write_text(NO_PATHS_TEMPLATE)
    with FakeLLMServer(default=model_reply) as server:
        result = run(
            *eval_args(
                server,
                tmp_path / "c.sqlite3",
                "--prompt",
                "zh",
                "--prompt",
                str(tmp_path / "ok.txt"),
                "--prompt",
                str(tmp_path / "nopaths.txt"),
            )
        )
    assert result.exit_code == 0, result.output
    variants = orjson.loads(result.stdout)["variants"]
    zh, ok, nopaths = (
        variants["zh"]["recall"],
        variants["ok.txt"]["recall"],
        variants["nopaths.txt"]["recall"],
    )
    assert zh["summary"]["artifact"] > zh["truncation"]["artifact"] > zh["none"]["artifact"] == 0
    assert ok["summary"]["artifact"] <= min(ok["truncation"]["artifact"], ok["none"]["artifact"])
    assert nopaths["summary"]["path"] < zh["summary"]["path"] / 2
    assert "whatever the template's instructions say" not in result.stderr


def test_parse_array_is_lenient_but_strict_about_shape() -> None:
    assert parse_array('```json\n[{"kind": "recall", "grade": 4}]\n```') == [
        {"kind": "recall", "grade": 4}
    ]
    assert parse_array("no json here") is None
    assert parse_array("[1, 2]") is None
