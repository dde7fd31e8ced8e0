"""Start-up imports only what runs: subcommand modules load when invoked.

Timings live in benchmarks/run.py (ratio to ``python -c "import click"``); here, which
modules a start-up imports, which is deterministic.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from transcript_tools.cli.main import COMMANDS, _load, cli

HEAVY = (
    "asyncio",
    "sqlite3",
    "jinja2",
    "orjson",
    "transcript_tools.replay",
    "transcript_tools.formats",
    "transcript_tools.engine.session",
    "transcript_tools.diff",
    "transcript_tools.sweep",
    "transcript_tools.providers.registry",
    "transcript_tools.cli.check_cmd",
    "transcript_tools.cli.diff_cmd",
    "transcript_tools.cli.sweep_cmd",
)


def imported_by(*argv: str) -> set[str]:
    code = f"import sys; sys.argv = ['tsum', *{list(argv)!r}]; from transcript_tools.cli import main; main()"
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return {
        line.rsplit("|", 1)[-1].strip()
        for line in result.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["replay", "--help"]])
def test_start_up_imports_no_subcommand_machinery(argv: list[str]) -> None:
    modules = imported_by(*argv)
    assert "click" in modules  # the measurement works
    loaded = sorted(
        m for m in modules for heavy in HEAVY if m == heavy or m.startswith(heavy + ".")
    )
    assert loaded == []


def test_every_listed_command_loads_and_matches_its_listing() -> None:
    top = CliRunner().invoke(cli, ["--help"]).stdout
    for name in COMMANDS:
        command = _load(name)
        assert name in top
        assert CliRunner().invoke(cli, [name, "--help"]).exit_code == 0, name
        assert command.name is not None


def test_help_texts_written_without_imports_agree_with_the_library() -> None:
    from transcript_tools.formats import reader_names
    from transcript_tools.providers.registry import DEFAULT_MODELS, PROVIDER_NAMES

    text = CliRunner().invoke(cli, ["replay", "--help"]).stdout
    assert f"[{'|'.join(PROVIDER_NAMES)}]" in text
    model_help = next(p.help for p in _load("replay").params if p.name == "model")
    for provider, model in DEFAULT_MODELS.items():
        assert f"{provider} {model}" in (model_help or ""), provider
    bad = CliRunner().invoke(cli, ["replay", "x.jsonl", "--format", "nope"])
    assert bad.exit_code == 2 and all(name in bad.stderr for name in reader_names())


def _tsum(*argv: str) -> subprocess.CompletedProcess[str]:
    code = f"import sys; sys.argv = ['tsum', *{list(argv)!r}]; from transcript_tools.cli import main; main()"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def test_the_process_exits_with_the_commands_code_and_its_output_flushed(tmp_path) -> None:
    # cli.main.exit_now skips the interpreter's teardown: codes and output must survive it
    out = tmp_path / "out"
    done = _tsum("replay", "samples/long_session.jsonl", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "5 summaries (5 ok" in done.stderr
    assert (out / "manifest.json").is_file()
    lines = (out / "decisions.jsonl").read_text().splitlines()
    assert len(lines) == 18 and lines[-1].endswith("}")
    missing = _tsum("replay", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 3 and "no such file" in missing.stderr
    shown = _tsum("replay", "samples/long_session.jsonl", "--silent")
    assert shown.returncode == 0 and shown.stdout.strip()


def test_exit_now_leaves_exit_handlers_to_run_when_something_may_need_them(monkeypatch) -> None:
    import importlib
    import os
    import threading

    cli_main = importlib.import_module("transcript_tools.cli.main")

    exits: list[int] = []
    monkeypatch.setattr(os, "_exit", exits.append)
    release = threading.Event()
    helper = threading.Thread(target=release.wait)
    helper.start()
    try:
        cli_main.exit_now(0)  # another thread is alive: the normal exit
        assert exits == []
        if sys.gettrace() is None and sys.getprofile() is None:  # not under coverage here
            # signalled: a thread that may never end (a pool's manager) does not hold it up
            cli_main.exit_now(143)
            cli_main.exit_now(130)
            assert exits == [143, 130]
            exits.clear()
    finally:
        release.set()
        helper.join()
    assert exits == []
    monkeypatch.setitem(sys.modules, "ray", object())
    cli_main.exit_now(0)  # Ray's atexit shuts its workers down
    assert exits == []
    monkeypatch.delitem(sys.modules, "ray")
    previous = sys.getprofile()
    sys.setprofile(lambda *_args: None)  # a profiler writes its data at exit
    try:
        cli_main.exit_now(0)
    finally:
        sys.setprofile(previous)
    assert exits == []
    if sys.gettrace() is None and sys.getprofile() is None:  # not under coverage here
        cli_main.exit_now(4)
        assert exits == [4]
