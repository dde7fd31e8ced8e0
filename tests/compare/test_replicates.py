"""``tsum compare --replicates``: live calls to a local fake server, each replicate cached
apart, the spread of recall per policy and model; the spread's figures by hand."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.fake_llm_server import (
    FakeLLMServer,
    RecordedRequest,
    Reply,
    openai_completion,
)
from transcript_tools.cli.main import cli
from transcript_tools.compare.replicates import ReplicateRow, replicate_cache

SAMPLE = str(Path(__file__).parents[2] / "samples" / "long_session.jsonl")


def test_the_spread_by_hand() -> None:
    row = ReplicateRow("p", "m", [0.2, None, 0.5, 0.4])
    assert row.spread() == "40% [20%, 50%] 2.5x"  # median of 0.2, 0.4, 0.5; 0.5 / 0.2
    assert ReplicateRow("p", "m", [None]).spread() == "-"
    assert ReplicateRow("p", "m", [0.0, 0.3]).spread() == "15% [0%, 30%] inf"
    assert replicate_cache(Path("/x/c.sqlite3"), 2) == Path("/x/c.r2.sqlite3")


@pytest.fixture
def network(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """127.0.0.1 only: lift the kill switch; no key (a local --base-url needs none)."""
    monkeypatch.delenv("TSUM_OFFLINE", raising=False)
    monkeypatch.chdir(tmp_path)


def _prompt(request: RecordedRequest) -> str:
    return "\n".join(str(m.get("content", "")) for m in request.body["messages"])


def test_replicates_call_the_provider_and_cache_each_replicate_apart(
    network: None, tmp_path: Path
) -> None:
    calls: list[int] = []

    def reply(request: RecordedRequest) -> Reply:
        # replicate 1's first summary copies its whole prompt; every later one says nothing
        calls.append(1)
        return Reply(body=openai_completion(_prompt(request) if len(calls) == 1 else "nothing"))

    cache = tmp_path / "c.sqlite3"
    with FakeLLMServer(default=reply) as server:
        args = ["compare", SAMPLE, "--policy", "codex", "--max-context-tokens", "4000",
                "--provider", "openai", "--base-url", server.openai_base_url,
                "--model", "local-model", "--cache", str(cache), "--replicates", "2",
                "--temperature", "0.5", "--silent"]  # fmt: skip
        first = CliRunner().invoke(cli, args, catch_exceptions=False)
        assert first.exit_code == 0, first.stderr
        made = server.count
        assert made >= 2 and {r.body["temperature"] for r in server.requests} == {0.5}
        again = CliRunner().invoke(cli, args, catch_exceptions=False)
        assert server.count == made  # a rerun replays both replicates from their caches
    assert again.stdout == first.stdout
    assert (tmp_path / "c.r1.sqlite3").exists() and (tmp_path / "c.r2.sqlite3").exists()
    table = first.stdout.split("recall by replicate:", 1)[1].splitlines()
    assert table[2].split() == ["policy", "model", "r1", "r2", "spread"]
    row = table[3].split()
    assert row[:2] == ["codex", "local-model"]
    assert row[2] != row[3]  # a summary that copies its prompt against one that says nothing


def test_replicates_need_a_real_provider() -> None:
    args = ["compare", SAMPLE, "--policy", "codex", "--replicates", "2"]
    done = CliRunner().invoke(cli, args)
    assert done.exit_code == 2 and "the offline provider is deterministic" in done.stderr
    done = CliRunner().invoke(cli, ["compare", SAMPLE, "--policy", "codex", "--temperature", "1"])
    assert done.exit_code == 2 and "give --replicates N too" in done.stderr


def test_replicates_leave_the_warnings_to_the_comparison(network: None, tmp_path: Path) -> None:
    """Each replicate sweeps the files again: what their readers dropped is said once."""
    from tests.cli.test_session_warnings_everywhere import REWOUND, SAID

    with FakeLLMServer(default=lambda _r: Reply(body=openai_completion("a summary"))) as server:
        args = ["compare", str(REWOUND), "--policy", "codex", "--max-context-tokens", "4000",
                "--provider", "openai", "--base-url", server.openai_base_url,
                "--model", "local-model", "--cache", str(tmp_path / "c.sqlite3"),
                "--replicates", "2", "--warnings", "all"]  # fmt: skip
        done = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert done.exit_code == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning: ")]
    assert warnings.count(SAID) == 1
    assert len(warnings) == len(set(warnings))
