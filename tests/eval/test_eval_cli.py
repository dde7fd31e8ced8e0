"""``tsum eval`` from the command line: table, notes, --json, --out, --html."""

from __future__ import annotations

from pathlib import Path

import orjson
from click.testing import CliRunner, Result

from transcript_tools.cli.main import cli
from transcript_tools.eval.probes import EXTRACTOR_VERSION

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = str(ROOT / "samples")


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_offline_templates_are_not_reported_as_a_difference() -> None:
    result = run("eval", SAMPLES, "--prompt", "zh", "--prompt", "en")
    assert result.exit_code == 0, result.output
    assert (
        "zh=en" in result.stdout and "truncation" in result.stdout and "no summary" in result.stdout
    )
    assert "whatever the template's instructions say" in result.stderr
    assert "identical summaries" in result.stderr


def test_json_out_and_every_probe_recorded(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run("eval", SAMPLES, "--json", "--out", str(out), "--silent")
    assert result.exit_code == 0
    data = orjson.loads(result.stdout)
    variant = data["variants"]["zh"]
    assert data["extractor_version"] == EXTRACTOR_VERSION and variant["checkpoints"] == 5
    assert (
        variant["recall"]["summary"]["artifact"] > variant["recall"]["truncation"]["artifact"] > 0
    )
    assert variant["recall"]["none"]["artifact"] == 0
    lines = [orjson.loads(line) for line in (out / "checkpoints.jsonl").read_bytes().splitlines()]
    assert len(lines) == 5 and [r["position"] for r in lines] == [1, 2, 3, 4, 5]
    probe = lines[0]["probes"][0]
    assert set(probe) >= {
        "kind",
        "message",
        "turn",
        "text",
        "summary",
        "truncation",
        "none",
        "in_kept",
    }
    assert orjson.loads((out / "eval.json").read_bytes())["variants"]["zh"]["checkpoints"] == 5


def test_html_highlights_lost_probes_and_escapes(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    rows = []
    for i in range(30):  # more files than a summary lists: some are lost
        rows.append(
            {"role": "user", "content": f"Look at src/mod_{i}.py <script>alert({i})</script>"}
        )
        rows.append(
            {
                "role": "assistant",
                "content": "ok",
                "usage": {"prompt_tokens": 5000, "completion_tokens": 10},
            }
        )
    transcript.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    page = tmp_path / "eval.html"
    result = run(
        "eval",
        str(transcript),
        "--max-context-tokens",
        "8000",
        "--keep-recent-turns",
        "1",
        "--html",
        str(page),
        "--silent",
    )
    assert result.exit_code == 0, result.output
    html = page.read_text()
    assert "<script>alert" not in html and "&lt;script&gt;alert" in html
    assert "<mark>src/mod_" in html


def test_offline_cannot_judge_says_so_once() -> None:
    result = run("eval", SAMPLES, "--judge")
    assert result.exit_code == 0
    assert result.stderr.count("cannot judge") == 1


def test_no_sessions_is_a_failure(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = run("eval", str(tmp_path / "empty"))
    assert result.exit_code == 3


def test_eval_fires_where_replay_does_when_checkpointing_per_call(tmp_path: Path) -> None:
    """`checkpoint = "call"` (a settings file: eval has no flag for it) makes eval feed the
    engine calls, as `tsum replay --checkpoint call` does: the same summaries, at the
    same units."""
    (tmp_path / "tsum.toml").write_text('checkpoint = "call"\n')
    config = ["--config", str(tmp_path / "tsum.toml")]
    out = tmp_path / "replay"
    replayed = run("replay", SAMPLES, "--out", str(out), "--silent", *config)
    assert replayed.exit_code == 0, replayed.output
    summaries = [orjson.loads(line) for line in (out / "summaries.jsonl").read_bytes().splitlines()]
    fired = sorted((s["session"], s["turn"]) for s in summaries if s["status"] == "ok")
    assert len(fired) > 5  # more than per turn: calls are the unit
    result = run("eval", SAMPLES, "--out", str(tmp_path / "eval"), *config)
    assert result.exit_code == 0, result.output
    records = (tmp_path / "eval" / "checkpoints.jsonl").read_bytes().splitlines()
    scored = sorted((r["session"], r["turn"]) for r in map(orjson.loads, records))
    assert scored and set(scored) <= set(fired)
    assert len(scored) == len(fired)  # every summary replaced something in these samples


def test_eval_takes_the_window_and_the_unit_as_flags() -> None:
    def aggregate(*flags: str) -> dict:
        result = run("eval", SAMPLES, "--json", "--silent", *flags)
        assert result.exit_code == 0, result.output
        return orjson.loads(result.stdout)["variants"]["zh"]

    default = aggregate()
    assert default["probes_not_shown"] == {}  # the samples fit the 30,000 characters
    narrow = aggregate("--max-transcript-chars", "2000")
    assert narrow["checkpoints"] == default["checkpoints"]  # the window moves no firing
    assert sum(narrow["probes_not_shown"].values()) > sum(narrow["probes"].values()) / 2
    text = run("eval", SAMPLES, "--silent", "--max-transcript-chars", "2000").stdout
    assert "never shown to the summarizer" in text and "--max-transcript-chars" in text
    assert aggregate("--checkpoint", "call")["checkpoints"] > default["checkpoints"]
