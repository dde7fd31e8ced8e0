"""One hostile log costs its own file (formats/bounds.py): a valid JSON line nested a
thousand levels, in a record or in a tool call's arguments string, is a one-line error
naming the file, and the rest of the corpus goes on. Integers past 2^63-1 in options,
``TSUM_*``, settings and policy files, and TOML nested thousands of levels, are exit 2
naming the key, before any output directory exists."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from transcript_tools.cli.main import cli
from transcript_tools.formats.bounds import MAX_NESTING_DEPTH, too_deep

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "long_session.jsonl"
BIG = str(2**64)  # past the 2^63-1 orjson (and so every output file) can hold


def nested(depth: int) -> str:
    """A JSON object nested ``depth`` levels deep: {"a": {"a": ... 1}}."""
    return '{"a":' * depth + "1" + "}" * depth


def openai_log(arguments: str) -> str:
    call = {"id": "c1", "type": "function", "function": {"name": "x", "arguments": "ARGS"}}
    lines = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        {"role": "assistant", "content": "done"},
    ]
    text = "\n".join(json.dumps(line) for line in lines) + "\n"
    return text.replace('"ARGS"', arguments)


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, [*args], env=env, catch_exceptions=False)


def test_too_deep_counts_levels() -> None:
    assert not too_deep(json.loads(nested(MAX_NESTING_DEPTH)))
    assert too_deep(json.loads(nested(MAX_NESTING_DEPTH + 1)))
    assert not too_deep([[1], {"a": [2]}], limit=3) and too_deep([[[[1]]]], limit=3)


@pytest.mark.parametrize(
    "arguments",
    [nested(1000), json.dumps(nested(1000))],  # an object, and the same as a JSON string
    ids=["object", "string"],
)
def test_a_deeply_nested_line_fails_its_file_and_the_corpus_goes_on(
    tmp_path: Path, arguments: str
) -> None:
    hostile = tmp_path / "hostile.jsonl"
    hostile.write_text(openai_log(arguments), encoding="utf-8")
    out = tmp_path / "out"
    result = run("replay", str(hostile), str(SAMPLE), "--out", str(out))
    assert result.exit_code == 3  # bad input, not a bug (4)
    errors = [line for line in result.stderr.splitlines() if line.startswith("tsum: error: ")]
    assert errors == [
        f"tsum: error: {hostile}:1: session hostile: message 2 holds a JSON value nested more than "
        f"{MAX_NESTING_DEPTH} levels deep (tsum's limit: its outputs could not hold it)"
    ]
    decisions = (out / "decisions.jsonl").read_text(encoding="utf-8").splitlines()
    assert {json.loads(line)["session"] for line in decisions} == {"long_session"}
    assert (out / "run.json").is_file()
    for command in ("inspect", "sweep", "eval"):
        other = run(command, str(hostile), str(SAMPLE))
        assert other.exit_code == 3, (command, other.stderr)
        assert "nested more than 200 levels" in other.stderr


def test_the_deepest_value_allowed_is_written(tmp_path: Path) -> None:
    fine = tmp_path / "fine.jsonl"
    fine.write_text(openai_log(nested(MAX_NESTING_DEPTH)), encoding="utf-8")
    assert run("replay", str(fine), "--out", str(tmp_path / "out")).exit_code == 0


@pytest.mark.parametrize(
    "option",
    ["--debounce", "--max-context-tokens", "--keep-recent-turns", "--max-transcript-chars"],
)
def test_an_option_past_64_bits_is_a_usage_error(tmp_path: Path, option: str) -> None:
    result = run("replay", str(SAMPLE), option, BIG, "--out", str(tmp_path / "out"))
    assert result.exit_code == 2 and "must be at most 9223372036854775807" in result.stderr
    assert not (tmp_path / "out").exists()


def test_the_environment_settings_and_policy_past_64_bits_are_usage_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    env = run("replay", str(SAMPLE), "--out", "o", env={"TSUM_CONCURRENCY": BIG})
    assert (
        env.exit_code == 2
        and f"concurrency must be at most 9223372036854775807 (2^63-1), got {BIG}" in env.stderr
    )
    workers = run("sweep", str(SAMPLE), env={"TSUM_WORKERS": BIG})
    assert (
        workers.exit_code == 2
        and f"workers must be an integer from 1 to 4096, got {BIG}" in workers.stderr
    )
    (tmp_path / "tsum.toml").write_text(f"debounce_turns = {BIG}\n")
    settings = run("replay", str(SAMPLE), "--out", "o")
    assert (
        settings.exit_code == 2 and "tsum.toml:1: debounce_turns must be at most" in settings.stderr
    )
    (tmp_path / "tsum.toml").unlink()
    (tmp_path / "p.toml").write_text(f'extends = "seed"\n[trigger]\ndebounce = {BIG}\n')
    policy = run("replay", str(SAMPLE), "--policy", "p.toml", "--out", "o")
    assert policy.exit_code == 2 and "p.toml:3: trigger.debounce: must be at most" in policy.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "text",
    ["debounce_turns = " + "[" * 5000 + "]" * 5000, "x = " + "{a=" * 5000 + "1" + "}" * 5000],
)
def test_toml_nested_thousands_of_levels_is_a_usage_error(tmp_path: Path, text: str) -> None:
    (tmp_path / "deep.toml").write_text(text + "\n")
    result = run(
        "replay", str(SAMPLE), "--config", str(tmp_path / "deep.toml"), "--out", str(tmp_path / "o")
    )
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"tsum: error: {tmp_path / 'deep.toml'}: invalid TOML (arrays or tables nested too deep)"
    )
    (tmp_path / "p.toml").write_text(
        "[trigger]\n" + text.replace("debounce_turns", "debounce") + "\n"
    )
    policy = run("replay", str(SAMPLE), "--policy", str(tmp_path / "p.toml"))
    assert (
        policy.exit_code == 2 and "invalid TOML (arrays or tables nested too deep)" in policy.stderr
    )
    assert not (tmp_path / "o").exists()
