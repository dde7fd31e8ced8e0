"""``tsum replay`` / ``format`` / ``prompt`` from the command line, incl. bad input."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from transcript_tools.cli.main import cli

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
GOOD_LINES = [
    {"role": "user", "content": "hello"},
    {"role": "assistant", "content": "hi", "usage": {"prompt_tokens": 10, "completion_tokens": 2}},
]


def run(*args: str, input: str | bytes | None = None) -> object:
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def write_jsonl(path: Path, rows: list[object], tail: bytes = b"") -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows) + tail)
    return path


def test_replay_report_on_stdout() -> None:
    result = run("replay", str(SAMPLES / "long_session.jsonl"))
    assert result.exit_code == 0, result.stderr
    assert "== long_session" in result.stdout
    assert result.stdout.count("summarized") == 5
    assert "latest summary" in result.stdout
    assert "1 session(s)" in result.stderr and "5 summaries (5 ok, 0 failed)" in result.stderr


def test_replay_out_dir_files_and_byte_identical_rerun(tmp_path: Path) -> None:
    out1, out2 = tmp_path / "a", tmp_path / "b"
    assert run("replay", str(SAMPLES), "--out", str(out1)).exit_code == 0
    assert run("replay", str(SAMPLES), "--out", str(out2), "-j", "3").exit_code == 0
    for name in ("decisions.jsonl", "summaries.jsonl", "prompts.jsonl", "slots.jsonl", "run.json"):
        assert (out1 / name).read_bytes() == (out2 / name).read_bytes(), name
    decisions = [json.loads(line) for line in (out1 / "decisions.jsonl").read_text().splitlines()]
    assert {d["session"] for d in decisions} == {
        "long_session",
        "clickhouse-migration-zh",
        "resize-job-incident",
    }
    first = decisions[0]
    assert set(first) >= {
        "session",
        "turn",
        "turn_tokens",
        "cost_so_far",
        "threshold",
        "turns_since_last_summary",
        "decision",
        "tokens",
    }
    summaries = [json.loads(line) for line in (out1 / "summaries.jsonl").read_text().splitlines()]
    assert len(summaries) == 5 and all(s["status"] == "ok" for s in summaries)
    prompts = {
        json.loads(line)["sha256"] for line in (out1 / "prompts.jsonl").read_text().splitlines()
    }
    assert {s["prompt_sha256"] for s in summaries} == prompts
    slots = [json.loads(line) for line in (out1 / "slots.jsonl").read_text().splitlines()]
    assert [s["turn"] for s in slots] == [s["turn"] for s in summaries]
    assert slots[-1]["slot"]["summary_override"] == summaries[-1]["text"]
    compressed = out1 / "compressed" / "long_session.jsonl"
    assert compressed.exists()
    # the compressed transcript is readable by tsum itself
    again = run("replay", str(compressed), "--dry-run")
    assert again.exit_code == 0, again.stderr
    manifest = json.loads((out1 / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["sessions"] == 3


def test_dry_run_makes_no_calls_and_marks_decisions(tmp_path: Path) -> None:
    result = run("replay", str(SAMPLES / "long_session.jsonl"), "--dry-run", "--out", str(tmp_path))
    assert result.exit_code == 0
    decisions = [
        json.loads(line) for line in (tmp_path / "decisions.jsonl").read_text().splitlines()
    ]
    assert [d["turn"] for d in decisions if d["decision"] == "would_summarize"] == [
        5,
        8,
        11,
        14,
        17,
    ]
    assert (tmp_path / "summaries.jsonl").read_text() == ""


def test_options_change_the_schedule(tmp_path: Path) -> None:
    result = run(
        "replay",
        str(SAMPLES / "long_session.jsonl"),
        "--dry-run",
        "--debounce",
        "5",
        "--ratio",
        "0.5",
        "--out",
        str(tmp_path),
    )
    decisions = [
        json.loads(line) for line in (tmp_path / "decisions.jsonl").read_text().splitlines()
    ]
    fired = [d["turn"] for d in decisions if d["decision"] == "would_summarize"]
    assert (
        result.exit_code == 0
        and fired[0] >= 5
        and all(b - a == 5 for a, b in zip(fired, fired[1:], strict=False))
    )


def test_stdin(tmp_path: Path) -> None:
    data = (SAMPLES / "chinese_migration.jsonl").read_bytes()
    result = run("replay", "-", "--max-context-tokens", "2000", input=data)
    assert result.exit_code == 0, result.stderr
    assert "clickhouse-migration-zh" in result.stdout and "目标" in result.stdout


def test_invalid_config_is_a_usage_error() -> None:
    result = run("replay", str(SAMPLES), "--ratio", "1.5")
    assert result.exit_code == 2
    assert "trigger_token_ratio must be in (0, 1]" in result.stderr
    assert "Traceback" not in result.stderr


BAD_INPUTS = {
    "malformed": (
        lambda p: write_jsonl(
            p,
            GOOD_LINES,
            b'{"role": "user", "content": oops}\n' + orjson.dumps(GOOD_LINES[0]) + b"\n",
        ),
        ":3: invalid JSON",
    ),
    # a truncated LAST line is a warning (a live log): tests/formats/test_formats_source.py
    "truncated": (
        lambda p: write_jsonl(
            p, GOOD_LINES, b'{"role": "user", "con\n' + orjson.dumps(GOOD_LINES[0]) + b"\n"
        ),
        ":3: invalid JSON",
    ),
    "utf8": (
        lambda p: write_jsonl(p, GOOD_LINES, b'{"role": "user", "content": "\xff\xfe"}\n'),
        ":3: invalid UTF-8",
    ),
    "non_object": (
        lambda p: write_jsonl(p, GOOD_LINES, b"[1, 2]\n"),
        ":3: expected a JSON object, got array",
    ),
    "unknown_role": (
        lambda p: write_jsonl(p, [*GOOD_LINES, {"role": "wizard", "content": "x"}]),
        ":3: unknown role 'wizard'",
    ),
    "empty": (lambda p: p.write_bytes(b""), ": empty file"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_is_one_line_and_others_still_replay(tmp_path: Path, case: str) -> None:
    make, expected = BAD_INPUTS[case]
    bad = tmp_path / f"{case}.jsonl"
    make(bad)
    good = write_jsonl(tmp_path / "good.jsonl", GOOD_LINES)
    out = tmp_path / "out"
    result = run("replay", str(bad), str(good), "--out", str(out))
    assert result.exit_code == 3
    errors = [line for line in result.stderr.splitlines() if line.startswith("tsum: error:")]
    assert len(errors) == 1 and str(bad) + expected in errors[0], result.stderr
    assert "Traceback" not in result.stderr
    sessions = {
        json.loads(x)["session"] for x in (out / "decisions.jsonl").read_text().splitlines()
    }
    assert "good" in sessions
    assert json.loads((out / "manifest.json").read_text())["errors"] == [
        errors[0].removeprefix("tsum: error: ")
    ]


@pytest.mark.parametrize("case", ["malformed", "utf8", "non_object", "unknown_role", "truncated"])
def test_skip_bad_lines_warns_and_replays_the_rest(tmp_path: Path, case: str) -> None:
    make, expected = BAD_INPUTS[case]
    bad = tmp_path / f"{case}.jsonl"
    make(bad)
    result = run("replay", str(bad), "--skip-bad-lines", "--dry-run", "--out", str(tmp_path / "o"))
    assert result.exit_code == 0, result.stderr
    assert f"warning: {bad}{expected}" in result.stderr
    turns = (tmp_path / "o" / "decisions.jsonl").read_text().splitlines()
    assert len(turns) >= 1


def test_missing_path(tmp_path: Path) -> None:
    good = write_jsonl(tmp_path / "good.jsonl", GOOD_LINES)
    result = run("replay", str(tmp_path / "nope.jsonl"), str(good))
    assert result.exit_code == 3
    assert f"error: {tmp_path / 'nope.jsonl'}: no such file" in result.stderr
    assert "== good" in result.stdout


def test_nothing_written_is_lost_when_a_later_file_fails(tmp_path: Path) -> None:
    good = write_jsonl(tmp_path / "a_good.jsonl", GOOD_LINES)
    bad = write_jsonl(tmp_path / "b_bad.jsonl", GOOD_LINES, b"not json\n")
    out = tmp_path / "out"
    result = run("replay", str(good), str(bad), "--out", str(out))
    assert result.exit_code == 3
    assert (out / "compressed" / "a_good.jsonl").exists()
    assert len((out / "decisions.jsonl").read_text().splitlines()) == 1


def test_oddities_are_warnings(tmp_path: Path) -> None:
    rows = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c9", "content": "orphan"},
    ]
    write_jsonl(tmp_path / "odd.jsonl", rows)
    (tmp_path / "notes.txt").write_text("not a transcript")
    (tmp_path / "data.json").write_text('{"hello": "world"}')
    result = run("replay", str(tmp_path), "--dry-run")
    assert result.exit_code == 0, result.stderr
    assert "1 tool result(s) with no matching call (first: c9)" in result.stderr
    assert "1 tool call(s) never answered (first: c1)" in result.stderr
    assert "data.json: not a transcript tsum can read (skipped)" in result.stderr


def test_format_command_prints_only_the_text() -> None:
    result = run("format", str(SAMPLES / "incident_tool_result.json"), "--turn", "0")
    assert result.exit_code == 0
    assert result.stdout.startswith("System: You are an on-call assistant")
    assert "Tool Result [call_log]: 2024-05-14T03:00:00Z" in result.stdout
    assert "Marketing ran a backfill" not in result.stdout  # that is turn 1
    assert result.stderr == ""


def test_prompt_command_renders_the_template() -> None:
    result = run("prompt", str(SAMPLES / "incident_tool_result.json"), "--prompt", "en")
    assert result.exit_code == 0
    assert result.stdout.startswith("Summarize the conversation below")
    assert "<messages>\nSystem: You are an on-call assistant" in result.stdout


def test_plain_prompt_file_and_literal_template_syntax(tmp_path: Path) -> None:
    prompt = tmp_path / "p.txt"
    prompt.write_text("Summarize:\n{messages}\nEND")
    convo = write_jsonl(
        tmp_path / "c.jsonl", [{"role": "user", "content": "what is {{ 7*7 }} {% raw %}"}]
    )
    result = run("prompt", str(convo), "--prompt", str(prompt))
    assert result.stdout == "Summarize:\nUser: what is {{ 7*7 }} {% raw %}\nEND"
    result = run("prompt", str(convo))
    assert "User: what is {{ 7*7 }} {% raw %}" in result.stdout


def test_template_without_messages_warns(tmp_path: Path) -> None:
    prompt = tmp_path / "bad.j2"
    prompt.write_text("Summarize turn {{ turn }}")
    result = run(
        "replay", str(SAMPLES / "long_session.jsonl"), "--prompt", str(prompt), "--dry-run"
    )
    assert "never uses `messages`" in result.stderr


def test_undefined_template_variable_is_an_error(tmp_path: Path) -> None:
    prompt = tmp_path / "bad.j2"
    prompt.write_text("{{ messages }} {{ user_name }}")
    result = run("replay", str(SAMPLES / "long_session.jsonl"), "--prompt", str(prompt))
    assert result.exit_code == 2 and "undefined variable(s) user_name" in result.stderr


def test_every_command_has_help_and_is_in_the_readme() -> None:
    # The real command list: the lazy group's own `commands` is empty (nothing is imported
    # until a command runs), so iterating it asserted nothing.
    from transcript_tools.cli.main import COMMANDS

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert len(COMMANDS) >= 12
    for name in COMMANDS:
        result = run(name, "--help")
        assert result.exit_code == 0, (name, result.output)
        assert "Usage: " in result.output, name
        assert f"tsum {name}" in readme, name


def test_config_file_settings_and_command_line_precedence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "tsum.toml").write_text(
        'max_context_tokens = 4000\ndebounce_turns = 2\nsummary_prompt = "Summarize briefly:\\n{messages}"\n'
    )
    monkeypatch.chdir(tmp_path)
    sample = str(SAMPLES / "chinese_migration.jsonl")
    assert run("prompt", sample).stdout.startswith("Summarize briefly:\nSystem: ")
    run("replay", sample, "--dry-run", "--out", "a")
    info = json.loads((tmp_path / "a" / "run.json").read_text())
    assert (
        info["summary_config"]["max_context_tokens"] == 4000
        and info["summary_config"]["debounce_turns"] == 2
    )
    assert info["template"] == {
        "kind": "plain",
        "name": "config",
        "sha256": info["template"]["sha256"],
    }
    run("replay", sample, "--dry-run", "--out", "b", "--debounce", "5", "--prompt", "en")
    info = json.loads((tmp_path / "b" / "run.json").read_text())
    assert info["summary_config"]["debounce_turns"] == 5 and info["template"]["name"] == "en"
    (tmp_path / "tsum.toml").write_text("max_context_token = 1\n")
    result = run("replay", sample, "--dry-run")
    assert result.exit_code == 2 and "unknown setting(s) max_context_token" in result.stderr


def test_unexpected_json_structure_is_a_located_error(tmp_path: Path) -> None:
    bad = write_jsonl(tmp_path / "odd.jsonl", [GOOD_LINES[0], {"role": ["x"], "content": "yo"}])
    good = write_jsonl(tmp_path / "good.jsonl", GOOD_LINES)
    result = run("replay", str(bad), str(good), "--dry-run")
    assert result.exit_code == 3 and "Traceback" not in result.stderr
    assert f"error: {bad}:2: unexpected JSON structure for openai (TypeError" in result.stderr
    assert "== good" in result.stdout


def test_a_run_whose_every_summary_failed_exits_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TSUM_OFFLINE")
    result = run(
        "replay",
        str(SAMPLES / "long_session.jsonl"),
        "--provider",
        "openai",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
        "--max-attempts",
        "1",
        "--timeout",
        "2",
        "--out",
        str(tmp_path / "o"),
    )
    assert result.exit_code == 3
    assert "all 13 summary call(s) failed (first: openai: connection error" in result.stderr
    assert json.loads((tmp_path / "o" / "manifest.json").read_text())["summaries_failed"] == 13


def test_kill_switch_stops_network_providers_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SECRET123")
    result = run("replay", str(SAMPLES), "--provider", "openai", "--out", str(tmp_path / "o"))
    assert result.exit_code == 2 and "TSUM_OFFLINE is set" in result.stderr
    assert not (tmp_path / "o").exists()


def test_output_folder_inside_the_inputs_is_not_read_back(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    write_jsonl(tree / "c.jsonl", GOOD_LINES)
    for _ in range(2):
        result = run("replay", str(tree), "--out", str(tree / "out"))
        assert result.exit_code == 0, result.stderr
        assert "1 file(s), 1 session(s)" in result.stderr


def test_forced_wrong_format_warns_about_empty_sessions() -> None:
    result = run(
        "replay", str(SAMPLES / "long_session.jsonl"), "--format", "claude-code", "--dry-run"
    )
    assert (
        "no messages read as claude-code (is the file in that format? see --format)"
        in result.stderr
    )


def test_template_that_cannot_render_fails_before_any_work(tmp_path: Path) -> None:
    prompt = tmp_path / "escape.j2"
    prompt.write_text('{{ "".__class__.__mro__ }} {{ messages }}')
    result = run(
        "replay",
        str(SAMPLES / "long_session.jsonl"),
        "--prompt",
        str(prompt),
        "--out",
        str(tmp_path / "o"),
    )
    assert result.exit_code == 2 and "SecurityError" in result.stderr
    assert not (tmp_path / "o").exists()


def test_closed_stdout_pipe_exits_quietly() -> None:
    import subprocess
    import sys

    code = "from transcript_tools.cli.main import main; main()"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "replay", str(SAMPLES), "--max-context-tokens", "2000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    proc.stdout.readline()
    proc.stdout.close()  # the reader goes away, as `| head -1` does
    _, err = proc.communicate(timeout=60)
    assert proc.returncode in (0, 141)  # 0 when everything was written before the close
    assert b"Traceback" not in err and b"BrokenPipe" not in err


def test_a_reader_gone_before_the_first_line_is_no_input_error() -> None:
    import subprocess
    import sys

    code = "from transcript_tools.cli.main import main; main()"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "replay", *[str(SAMPLES)] * 4, "--silent"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    proc.stdout.close()  # `| head` gone before tsum writes a line (16 kB: over a buffer)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 141
    # the run was cut short, no input was bad: never "failed: ... 1 error(s)" naming none
    assert err.startswith(b"tsum: interrupted: ") and b" 0 error(s)" in err, err


def test_diff_names_a_change_of_input_order(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    run("replay", str(SAMPLES), "--out", str(a), "--silent")
    files = sorted(str(p) for p in SAMPLES.iterdir() if p.suffix in (".json", ".jsonl"))
    run("replay", *reversed(files), "--out", str(b), "--silent")
    result = run("diff", str(a), str(b))
    assert result.exit_code == 1
    assert (
        "the same sessions in another order (were the inputs given in another order?)"
        in result.stdout
    )
    result = run("diff", str(a), files[0])
    assert result.exit_code == 3 and "is a file, not a directory" in result.stderr


def test_jsonl_whose_first_line_is_an_array_reports_each_line(tmp_path: Path) -> None:
    path = tmp_path / "notobj.jsonl"
    path.write_text('[1, 2, 3]\n"str"\n42\n')
    result = run("replay", str(path), "--dry-run")
    assert (
        result.exit_code == 3
        and f"error: {path}:1: expected a JSON object, got array" in result.stderr
    )
