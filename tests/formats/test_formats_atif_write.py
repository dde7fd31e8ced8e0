"""``tsum replay --out DIR --out-format atif``: compressed/<session>.json as ATIF, read back
by the `atif` reader to the same counts as the native view; the other files unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import transcript_tools as tt
from tests.support.corpus import FIXTURES, read
from transcript_tools.cli.main import cli
from transcript_tools.engine.messages import (
    INJECTED,
    SYNTHETIC_MODEL,
    AssistantMessage,
    ToolResultMessage,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from transcript_tools.formats.atif_write import trajectory

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def replay(out: Path, *extra: str) -> None:
    args = ["replay", str(SAMPLES), str(FIXTURES / "representative_pi.jsonl"), "--silent"]
    result = CliRunner().invoke(cli, [*args, "--out", str(out), *extra])
    assert result.exit_code == 0, result.output


def test_atif_view_reads_back_as_the_native_view(tmp_path: Path) -> None:
    native, atif = tmp_path / "native", tmp_path / "atif"
    replay(native)
    replay(atif, "--out-format", "atif")
    for name in ("decisions.jsonl", "summaries.jsonl", "prompts.jsonl", "slots.jsonl"):
        assert (native / name).read_bytes() == (atif / name).read_bytes()
    views = sorted((native / "compressed").iterdir())
    assert [p.stem for p in views] == sorted(p.stem for p in (atif / "compressed").iterdir())
    assert all(p.suffix == ".json" for p in (atif / "compressed").iterdir())

    def counts(path: Path) -> tuple[int, int, int, int]:
        [conv] = read(path)
        replies = [m for m in conv.messages if isinstance(m, AssistantMessage)]
        prompts = [m for m in conv.messages if isinstance(m, UserMessage)]
        tokens = sum(m.usage.total_tokens for m in replies if m.usage)
        return len(prompts), len(replies), sum(1 for m in prompts if m.origin == INJECTED), tokens

    for view in views:
        back = atif / "compressed" / f"{view.stem}.json"
        assert counts(back) == counts(view), view.name


def test_orphan_results_synthetic_replies_and_totals_by_hand() -> None:
    messages = [
        UserMessage.text("go"),
        AssistantMessage((ToolUseBlock("c1", "run", "ls"),), Usage(100, 10, 40, 0), "m-1"),
        ToolResultMessage("c1", "a b"),
        ToolResultMessage("c-gone", "late result"),
        AssistantMessage.text("done", Usage(150, 5, 100, 0)),
        AssistantMessage((), None, SYNTHETIC_MODEL),
    ]
    doc = trajectory(messages, "s")
    steps = doc["steps"]
    assert [s["source"] for s in steps] == ["user", "agent", "system", "agent", "agent"]
    assert [s["step_id"] for s in steps] == [1, 2, 3, 4, 5]
    assert steps[1]["tool_calls"] == [
        {"tool_call_id": "c1", "function_name": "run", "arguments": {"input": "ls"}}
    ]
    assert steps[1]["observation"] == {"results": [{"source_call_id": "c1", "content": "a b"}]}
    orphan = steps[2]["observation"]["results"][0]
    assert "source_call_id" not in orphan and orphan["extra"] == {"tool_call_id": "c-gone"}
    assert steps[4] == {"source": "agent", "message": "", "llm_call_count": 0, "step_id": 5}
    assert doc["final_metrics"] == {
        "total_prompt_tokens": 250,  # 100 + 150
        "total_completion_tokens": 15,
        "total_cached_tokens": 140,
        "total_steps": 5,
    }
    assert doc["agent"]["model_name"] == "m-1"
    assert json.loads(json.dumps(doc)) == doc


def test_an_out_format_with_no_views_to_rewrite_is_refused(tmp_path: Path) -> None:
    log = str(SAMPLES / "long_session.jsonl")
    cases = {
        (): "tsum: error: --out-format atif rewrites the views under --out DIR: give --out\n",
        ("--out", str(tmp_path / "o"), "--dry-run"): (
            "tsum: error: --out-format atif: a --dry-run writes no views to rewrite\n"
        ),
    }
    for extra, line in cases.items():
        result = CliRunner().invoke(cli, ["replay", log, "--out-format", "atif", *extra])
        assert (result.exit_code, result.stderr, result.stdout) == (2, line, "")
    assert not (tmp_path / "o").exists()  # refused before any work
    with pytest.raises(tt.ConfigError, match="give --out"):
        tt.replay_corpus(log, out_format="atif")
