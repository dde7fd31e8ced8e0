"""What a new user meets on a first run: the window tip, failed runs, help pages."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner, Result

from transcript_tools.cli.main import cli


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def chat_log(path: Path, prompt_tokens: int, turns: int = 4) -> Path:
    """A chat log whose every call records ``prompt_tokens`` of prompt."""
    rows: list[object] = []
    for n in range(turns):
        rows.append({"role": "user", "content": f"question {n}"})
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": 10}
        rows.append({"role": "assistant", "content": f"answer {n}", "usage": usage})
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


# ---- the window tip -------------------------------------------------------------------


def test_tip_once_when_the_model_took_far_more_than_the_default_window(tmp_path: Path) -> None:
    # two logs, both over 2 x 32,000: one tip line for the run, naming the largest
    chat_log(tmp_path / "a.jsonl", 70_000)
    chat_log(tmp_path / "b.jsonl", 65_000)
    result = run("replay", str(tmp_path), "--dry-run")
    assert result.exit_code == 0, result.stderr
    tips = [line for line in result.stderr.splitlines() if line.startswith("tsum: tip:")]
    assert tips == [
        "tsum: tip: these logs show a model taking up to 70,000 tokens of context, far over "
        "the seed's default window of 32,000, so the checkpoint fires from the first turns; "
        "for the model's own window try --max-context-tokens auto --measure current"
    ]
    assert "tsum: tip" not in result.stdout  # stdout stays the report alone


def test_no_tip_when_the_default_window_fits(tmp_path: Path) -> None:
    chat_log(tmp_path / "a.jsonl", 63_999)  # under 2 x 32,000
    result = run("replay", str(tmp_path), "--dry-run")
    assert result.exit_code == 0
    assert "tsum: tip" not in result.stderr


def test_no_tip_when_the_window_was_chosen(tmp_path: Path) -> None:
    log = str(chat_log(tmp_path / "a.jsonl", 70_000))
    for window in ("32000", "auto"):
        result = run("replay", log, "--dry-run", "--max-context-tokens", window)
        assert "tsum: tip" not in result.stderr, window
    assert "tsum: tip" not in run("replay", log, "--dry-run", "--silent").stderr


def test_no_tip_when_nothing_fired(tmp_path: Path) -> None:
    # two turns over 2 x 32,000 where the checkpoint fired nowhere: the tip's "so the
    # checkpoint fires from the first turns" would claim what did not happen
    log = str(chat_log(tmp_path / "a.jsonl", 70_000, turns=2))
    for extra in (["--dry-run"], ["--provider", "offline"]):
        result = run("replay", log, *extra)
        assert result.exit_code == 0, result.stderr
        assert "0 summaries" in result.stderr
        assert "tsum: tip" not in result.stderr, extra


def test_tip_leaves_out_the_measure_already_chosen(tmp_path: Path) -> None:
    log = str(chat_log(tmp_path / "a.jsonl", 70_000))
    result = run("replay", log, "--dry-run", "--measure", "current")
    tip = next(line for line in result.stderr.splitlines() if line.startswith("tsum: tip:"))
    assert tip.endswith("try --max-context-tokens auto")


# ---- failed runs print no results -----------------------------------------------------


def test_eval_with_nothing_read_prints_the_error_and_no_table(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"role": "user",\n')  # a JSON record cut short
    for extra in ((), ("--json",)):
        result = run("eval", str(bad), *extra)
        assert result.exit_code == 3, extra  # bad input
        assert result.stdout == "", extra  # no table, no advice to lower the ratio
        assert f"error: {bad}:1: invalid JSON" in result.stderr
        assert result.stderr.rstrip().endswith(
            "tsum: error: no session could be read (the errors above say why): nothing to score"
        )


def test_sweep_with_nothing_read_prints_the_error_and_no_table(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"role": "user",\n')  # a JSON record cut short
    result = run("sweep", str(bad))
    assert result.exit_code == 3
    assert result.stdout == ""
    assert result.stderr.rstrip().endswith(
        "tsum: error: no conversations could be read (the errors above say why)"
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run("sweep", str(empty))
    assert result.exit_code == 3 and result.stdout == ""
    assert "tsum: error: no conversations found in the given paths" in result.stderr


# ---- help pages -----------------------------------------------------------------------


def test_every_command_and_group_help_has_examples() -> None:
    from transcript_tools.cli.docs import command_contexts

    for ctx in command_contexts():
        if ctx.parent is None:
            continue  # `tsum --help` has its own "Typical use"
        text = ctx.command.get_help(ctx)
        assert "\nExamples:\n" in text.replace("  Examples:", "Examples:"), ctx.command_path
        example = text.split("Examples:\n", 1)[1].splitlines()[0].strip()
        assert example.startswith(f"{ctx.command_path} ") or example.startswith(
            ctx.command_path.rsplit(" ", 1)[0]
        ), ctx.command_path


def test_format_help_lists_every_reader_whole() -> None:
    from transcript_tools.cli.settings import FORMAT_NAMES
    from transcript_tools.formats import reader_names

    assert sorted(FORMAT_NAMES) == sorted(reader_names())
    text = run("replay", "--help").stdout
    flat = " ".join(text.split())  # the names whole, whatever the line breaks
    for name in FORMAT_NAMES:
        assert f" {name}," in flat or f" {name}." in flat, name
    assert "\u2011" not in text  # the no-break hyphens print as "-"


def test_prompt_help_shows_jinja_tags_as_typed() -> None:
    text = " ".join(run("replay", "--help").stdout.split())
    assert "{{{{" not in text
    assert (
        "Jinja if it has {{ }}, {% %} or {# #} tags, else the seed's plain {messages} form" in text
    )


def test_long_help_pages_group_their_options() -> None:
    headings = [
        "Input options:",
        "Trigger options:",
        "Policy and prompt options:",
        "Provider options:",
        "Output options:",
        "Run options:",
    ]
    for command in ("replay", "check", "sweep", "eval"):
        text = run(command, "--help").stdout
        lines = text.splitlines()
        present = [h for h in headings if h in lines]
        assert present[:3] == ["Input options:", "Trigger options:", "Policy and prompt options:"]
        assert "Options:" not in lines, command  # no flat list
        assert "Other options:" not in lines, f"{command}: an option with no group (cli/help.py)"
        assert "-h, --help" in text.split(present[-1])[1], command  # help in the last group
    # a short page keeps click's one list
    assert "Options:" in run("inspect", "--help").stdout.splitlines()


# ---- the README's first commands --------------------------------------------------------


def test_the_readme_local_server_options_run_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the README's options for "any OpenAI-compatible server": --base-url alone goes to the
    # offline provider, which refuses it; as written they must reach the openai provider
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    sentence = " ".join(readme.split("OpenAI-compatible server on your machine", 1)[1].split())
    fragment = sentence.split("`", 2)[1]
    assert "--base-url" in fragment
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # "no key needed"
    monkeypatch.setenv("TSUM_HOME", str(tmp_path))
    sample = str(Path(__file__).resolve().parents[2] / "samples" / "long_session.jsonl")
    args = fragment.replace("NAME", "smollm2").split()
    result = run("replay", sample, *args, "--dry-run")  # the provider is built, not called
    assert result.exit_code == 0, result.stderr
    assert "tsum: error" not in result.stderr and "5 summaries would fire" in result.stderr


# ---- a fresh machine ------------------------------------------------------------------


def test_batch_list_on_a_fresh_machine_says_nothing_was_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the --help example on a machine with no response cache yet: nothing to list, exit 0
    monkeypatch.setenv("TSUM_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("TSUM_CACHE", raising=False)
    for args in (["list"], ["list", "--all", "--json"], ["cancel"]):
        result = run("batch", *args)
        assert result.exit_code == 0, result.stderr
        assert result.stdout == ""
        assert result.stderr.startswith("tsum: no batch sent yet (no response cache at ")
    assert not (tmp_path / "home").exists()  # listing made no cache
    missing = run("batch", "list", "--cache", str(tmp_path / "typo.sqlite3"))
    assert missing.exit_code == 2 and "no response cache here" in missing.stderr
