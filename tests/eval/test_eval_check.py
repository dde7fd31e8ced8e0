"""``tsum check`` gates on recall: a prompt edit that drops file paths fails, naming them."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner, Result

from tests.support.eval_fake_model import NO_PATHS_TEMPLATE, model_reply
from tests.support.fake_llm_server import FakeLLMServer
from transcript_tools.cli.main import cli
from transcript_tools.errors import TsumError
from transcript_tools.eval.baseline import compare_scores
from transcript_tools.eval.probes import EXTRACTOR_VERSION

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TSUM_OFFLINE", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    shutil.copytree(SAMPLES, tmp_path / "samples")
    (tmp_path / "nopaths.txt").write_text(NO_PATHS_TEMPLATE)
    return tmp_path


def check(server: FakeLLMServer, prompt: str, *extra: str) -> Result:
    args = [
        "check",
        "--baseline",
        "baseline",
        "samples",
        "--prompt",
        prompt,
        "--provider",
        "openai",
        "--base-url",
        server.openai_base_url,
        "--model",
        "fake-model",
        "--cache",
        "cache.sqlite3",
        *extra,
    ]
    return CliRunner().invoke(cli, args, catch_exceptions=False)


def test_prompt_edit_that_drops_paths_fails_naming_the_lost_probes(repo: Path) -> None:
    with FakeLLMServer(default=model_reply) as server:
        assert check(server, "zh", "--update").exit_code == 0
        stored = orjson.loads((repo / "baseline" / "eval.json").read_bytes())
        assert stored["extractor_version"] == EXTRACTOR_VERSION and len(stored["checkpoints"]) == 5
        same = check(server, "zh")
        assert same.exit_code == 0, same.output
        assert "eval: artifact recall" in same.stderr and ": ok" in same.stderr
        edited = check(server, "nopaths.txt")
    assert edited.exit_code == 1
    assert "FAILED" in edited.stderr
    assert "lost [path] tests/test_invoices.py" in edited.stderr
    assert "from message 1, turn 0 of samples/long_session.jsonl" in edited.stderr


def test_a_baseline_scored_by_another_extractor_is_rescored(repo: Path) -> None:
    with FakeLLMServer(default=model_reply) as server:
        assert check(server, "zh", "--update").exit_code == 0
        path = repo / "baseline" / "eval.json"
        path.write_bytes(orjson.dumps(orjson.loads(path.read_bytes()) | {"extractor_version": 0}))
        result = check(server, "zh")
    assert result.exit_code == 0
    assert (
        f"scores from probe extractor v0; its summaries were rescored with v{EXTRACTOR_VERSION}"
        in result.stderr
    )


def scores(hits: list[bool], version: int = 1) -> dict:
    probes = [
        {"kind": "path", "text": f"f{i}.py", "message": i, "turn": 0, "summary": h}
        for i, h in enumerate(hits)
    ]
    return {
        "extractor_version": version,
        "checkpoints": [{"session": "s", "turn": 3, "path": "p", "probes": probes}],
    }


def test_max_drop_is_the_threshold() -> None:
    old = scores([True] * 20)
    assert not compare_scores(old, scores([True] * 19 + [False]), 0.05).failed  # -5.0%: allowed
    failed = compare_scores(old, scores([True] * 18 + [False] * 2), 0.05)
    assert failed.failed and any("lost [path] f19.py" in line for line in failed.lines)
    with pytest.raises(TsumError, match="extractor v1 and v2"):
        compare_scores(old, scores([True], version=2))


def test_the_change_is_signed_by_its_direction() -> None:
    same = compare_scores(scores([True, False]), scores([True, False]), 0.05)
    assert "(+0.0%; allowed drop 5.0%): ok" in same.lines[0]  # never "-0.0%"
    lower = compare_scores(scores([True] * 20), scores([True] * 19 + [False]), 0.05)
    assert "100.0% -> 95.0% (-5.0%;" in lower.lines[0]


def test_the_rest_of_the_lost_probes_points_at_a_file_that_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without --out the fresh eval.json is in a temporary folder removed at the end: the
    "... and N more" line must not send the user to it, but say how to keep it."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(SAMPLES, tmp_path / "samples")
    base = ["check", "--baseline", "baseline", "samples", "--provider", "offline"]
    runner = CliRunner()
    assert runner.invoke(cli, [*base, "--update"], catch_exceptions=False).exit_code == 0
    narrow = [*base, "--max-transcript-chars", "2000"]  # the summaries lose most probes
    temporary = runner.invoke(cli, narrow, catch_exceptions=False)
    assert temporary.exit_code == 1 and "FAILED" in temporary.stderr
    assert "more (keep this run's eval.json with --out DIR)" in temporary.stderr
    assert "(see eval.json)" not in temporary.stderr
    kept = runner.invoke(cli, [*narrow, "--out", "fresh"], catch_exceptions=False)
    assert kept.exit_code == 1
    assert f"more (see {Path('fresh') / 'eval.json'})" in kept.stderr
    assert (tmp_path / "fresh" / "eval.json").is_file()
