"""Settings (docs/configuration.md): command line > environment > settings file > default,
for every key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from transcript_tools.cli.main import cli
from transcript_tools.cli.replay_cmd import replay_command
from transcript_tools.cli.settings import FILE_KEY_OF_OPTION, resolve
from transcript_tools.engine.config import RunSettings
from transcript_tools.engine.settings_table import PROVIDER_ONLY_KEYS, SETTINGS
from transcript_tools.settings import CONFIG_KEYS, PRECEDENCE

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def resolved(args: list[str]) -> RunSettings:
    # with the group's context settings, as `tsum replay` has them: click keeps the help
    # option of a command's first context, and a bare one would leave it without -h
    ctx = replay_command.make_context("replay", ["x.jsonl", *args], **cli.context_settings)
    return resolve(dict(ctx.params), ctx=ctx)


def summary(field: str) -> Any:
    return lambda r: getattr(r.settings.summary, field)


# key: (how to read it, default, file value (TOML), option + value, env var + value or None)
CASES: dict[str, tuple[Any, Any, Any, tuple[str, str, Any], tuple[str, str, Any] | None]] = {
    "trigger_token_ratio": (
        summary("trigger_token_ratio"),
        0.75,
        0.6,
        ("--ratio", "0.5", 0.5),
        ("TSUM_TRIGGER_TOKEN_RATIO", "0.4", 0.4),
    ),
    "max_context_tokens": (
        summary("max_context_tokens"),
        32000,
        1000,
        ("--max-context-tokens", "2000", 2000),
        ("TSUM_MAX_CONTEXT_TOKENS", "1500", 1500),
    ),
    "debounce_turns": (
        summary("debounce_turns"),
        3,
        5,
        ("--debounce", "7", 7),
        ("TSUM_DEBOUNCE_TURNS", "6", 6),
    ),
    "max_tool_result_chars": (
        summary("max_tool_result_chars"),
        500,
        100,
        ("--max-tool-result-chars", "200", 200),
        ("TSUM_MAX_TOOL_RESULT_CHARS", "150", 150),
    ),
    "max_transcript_chars": (
        summary("max_transcript_chars"),
        30000,
        1000,
        ("--max-transcript-chars", "2000", 2000),
        ("TSUM_MAX_TRANSCRIPT_CHARS", "1500", 1500),
    ),
    "summary_marker": (
        summary("summary_marker"),
        "[上下文摘要]",
        "[F]",
        ("--marker", "[C]", "[C]"),
        ("TSUM_SUMMARY_MARKER", "7", "7"),
    ),
    "mode": (
        lambda r: r.settings.mode.value,
        "focused",
        "full",
        ("--mode", "focused", "focused"),
        ("TSUM_MODE", "focused", "focused"),
    ),
    "keep_recent_turns": (
        lambda r: r.settings.keep_recent_turns,
        3,
        5,
        ("--keep-recent-turns", "7", 7),
        ("TSUM_KEEP_RECENT_TURNS", "6", 6),
    ),
    "path": (
        lambda r: r.settings.path.value,
        "sync",
        "stream",
        ("--path", "sync", "sync"),
        ("TSUM_PATH", "sync", "sync"),
    ),
    "measure": (
        lambda r: r.settings.measure.value,
        "cumulative",
        "current",
        ("--measure", "cumulative", "cumulative"),
        ("TSUM_MEASURE", "cumulative", "cumulative"),
    ),
    "checkpoint": (
        lambda r: r.settings.checkpoint.value,
        "turn",
        "call",
        ("--checkpoint", "turn", "turn"),
        ("TSUM_CHECKPOINT", "turn", "turn"),
    ),
    "prompt": (
        lambda r: r.template.name,
        "zh",
        "en",
        ("--prompt", "zh", "zh"),
        ("TSUM_PROMPT", "TEMPLATE_FILE", "t.j2"),
    ),
    "summary_prompt": (
        lambda r: r.template.source,
        None,
        "Summarize: {messages}",
        ("--prompt", "TEMPLATE_FILE", "Sum {{ messages }}"),
        ("TSUM_PROMPT", "TEMPLATE_FILE", "Sum {{ messages }}"),
    ),
    "format": (
        lambda r: r.fmt,
        None,
        "openai",
        ("--format", "native", "native"),
        ("TSUM_FORMAT", "codex", "codex"),
    ),
    "provider": (
        lambda r: r.provider["provider"],
        "offline",
        "openai",
        ("--provider", "offline", "offline"),
        ("TSUM_PROVIDER", "anthropic", "anthropic"),
    ),
    "model": (
        lambda r: (r.settings.summary.summary_model, r.provider["model"]),
        (None, None),
        "m-file",
        ("--model", "m-cli", ("m-cli", "m-cli")),
        ("TSUM_MODEL", "m-env", ("m-env", "m-env")),
    ),
    "summary_model": (
        lambda r: (r.settings.summary.summary_model, r.provider["model"]),
        (None, None),
        "m-file",
        ("--model", "m-cli", ("m-cli", "m-cli")),
        ("TSUM_MODEL", "m-env", ("m-env", "m-env")),
    ),
    "base_url": (
        lambda r: r.provider["base_url"],
        None,
        "http://127.0.0.1:1/v1",
        ("--base-url", "http://127.0.0.1:3/v1", "http://127.0.0.1:3/v1"),
        ("TSUM_BASE_URL", "http://127.0.0.1:2/v1", "http://127.0.0.1:2/v1"),
    ),
    "temperature": (
        lambda r: r.provider["temperature"],
        None,
        0.5,
        ("--temperature", "0.2", 0.2),
        ("TSUM_TEMPERATURE", "0.7", 0.7),
    ),
    "concurrency": (
        lambda r: (r.concurrency, r.provider["concurrency"]),
        (8, 8),
        16,
        ("-j", "2", (2, 2)),
        ("TSUM_CONCURRENCY", "4", (4, 4)),
    ),
    "workers": (
        lambda r: r.values.get("workers"),
        None,
        3,
        ("--workers", "2", 2),
        ("TSUM_WORKERS", "4", 4),
    ),
}
FILE_READS = {
    "model": ("m-file", "m-file"),
    "summary_model": ("m-file", "m-file"),
    "concurrency": (16, 16),
    "prompt": "en",
    "summary_prompt": "Summarize: {messages}",
}


def test_every_settings_file_key_is_tested() -> None:
    assert set(CASES) == CONFIG_KEYS
    assert set(FILE_KEY_OF_OPTION.values()) <= CONFIG_KEYS


def test_every_setting_has_the_environment_name_its_test_sets() -> None:
    """Each setting of the table is tested through its TSUM_* name: a file key in CASES
    (summary_prompt through TSUM_PROMPT's file, and its own name below), the others in
    ENV_ONLY."""
    assert set(ENV_ONLY) == set(PROVIDER_ONLY_KEYS)
    tested = {key: case[4][0] for key, case in CASES.items() if case[4] is not None}
    tested.update({key: case[0] for key, case in ENV_ONLY.items()})
    for setting in SETTINGS:
        if setting.key != "summary_prompt":
            assert tested[setting.key] == setting.env, setting.key
    assert len({s.env for s in SETTINGS}) == len(SETTINGS)  # no two settings share a name


def test_every_environment_name_is_documented() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text("utf-8")
    assert [s.env for s in SETTINGS if f"`{s.env}`" not in docs] == []


def test_the_provider_options_typeddict_names_the_tables_provider_settings() -> None:
    from transcript_tools.engine.settings_table import PROVIDER_OPTION_NAMES
    from transcript_tools.providers.factory import ProviderOptions

    assert set(ProviderOptions.__annotations__) == set(PROVIDER_OPTION_NAMES) - {"provider"}


def test_a_wrong_choice_from_the_environment_is_a_config_error() -> None:
    from transcript_tools.errors import ConfigError
    from transcript_tools.settings import load_settings

    with pytest.raises(ConfigError, match="^mode must be focused or full, got 'sideways'$"):
        load_settings(env={"TSUM_MODE": "sideways"}, read_file=False)
    with pytest.raises(ConfigError, match="^keep_recent_turns must be an integer, got 'many'$"):
        load_settings(env={"TSUM_KEEP_RECENT_TURNS": "many"}, read_file=False)


def test_summary_prompt_text_from_the_environment(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TSUM_SUMMARY_PROMPT", "Env: {messages}")
    assert resolved([]).template.source == "Env: {messages}"


def test_max_context_tokens_from_the_environment_reaches_a_replay(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sample = str(SAMPLES / "long_session.jsonl")

    def decisions(*args: str) -> str:
        result = CliRunner().invoke(cli, ["replay", sample, "--dry-run", "--silent", *args])
        assert result.exit_code == 0, result.stderr
        return result.stdout

    default = decisions()
    by_flag = decisions("--max-context-tokens", "2000")
    assert by_flag != default  # a smaller window fires other checkpoints
    monkeypatch.setenv("TSUM_MAX_CONTEXT_TOKENS", "2000")
    assert decisions() == by_flag
    assert "TSUM_MAX_CONTEXT_TOKENS" in CliRunner().invoke(cli, ["replay", "--help"]).stdout
    from transcript_tools.settings import load_settings

    run = load_settings(env={"TSUM_MAX_CONTEXT_TOKENS": "2000"}, read_file=False)
    assert run.settings.summary is not None and run.settings.summary.max_context_tokens == 2000
    assert load_settings(
        env={"TSUM_MAX_CONTEXT_TOKENS": "auto"}, read_file=False
    ).settings.auto_window


def test_sweep_takes_its_grid_settings_from_the_environment(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sweep's grid options are lists without an env var of their own: given none, the grid
    is the setting's one value, which TSUM_* sets as it sets replay's."""

    def table(*args: str) -> str:
        result = CliRunner().invoke(cli, ["sweep", str(SAMPLES), "--csv", "--silent", *args])
        assert result.exit_code == 0, result.stderr
        return result.stdout

    default = table()
    by_flags = table("--debounce", "1", "--max-context-tokens", "8000")
    assert by_flags != default
    monkeypatch.setenv("TSUM_DEBOUNCE_TURNS", "1")
    monkeypatch.setenv("TSUM_MAX_CONTEXT_TOKENS", "8000")
    assert table() == by_flags


@pytest.mark.parametrize("key", sorted(CONFIG_KEYS))
def test_a_wrong_file_value_is_one_line_naming_the_file(key: str, workdir: Path) -> None:
    (workdir / "tsum.toml").write_text(f"{key} = [1]\n", encoding="utf-8")  # right for none
    result = CliRunner().invoke(cli, ["replay", str(SAMPLES / "long_session.jsonl")])
    assert result.exit_code == 2, result.stderr
    assert result.stderr.startswith(f"tsum: error: tsum.toml:1: {key} must be "), result.stderr
    assert result.stderr.count("\n") == 1


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.j2").write_text("Sum {{ messages }}", encoding="utf-8")
    return tmp_path


def _arg(value: str, workdir: Path) -> str:
    return str(workdir / "t.j2") if value == "TEMPLATE_FILE" else value


@pytest.mark.parametrize("key", sorted(CASES))
def test_precedence_command_line_environment_file_default(
    key: str, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read, default, file_value, (option, cli_arg, cli_read), env = CASES[key]
    if default is not None or key != "summary_prompt":
        assert read(resolved([])) == default, "default"
    (workdir / "tsum.toml").write_text(f"{key} = {json.dumps(file_value)}\n", encoding="utf-8")
    assert read(resolved([])) == FILE_READS.get(key, file_value), "file over default"
    if env is not None:
        name, env_value, env_read = env
        monkeypatch.setenv(name, _arg(env_value, workdir))
        assert read(resolved([])) == env_read, "environment over file"
    assert read(resolved([option, _arg(cli_arg, workdir)])) == cli_read, (
        "command line over environment and file"
    )


def test_max_context_tokens_auto_from_file_and_command_line(workdir: Path) -> None:
    (workdir / "tsum.toml").write_text('max_context_tokens = "auto"\n', encoding="utf-8")
    r = resolved([])
    assert r.settings.auto_window and r.settings.summary.max_context_tokens == 32000
    assert not resolved(["--max-context-tokens", "9000"]).settings.auto_window
    (workdir / "tsum.toml").unlink()
    assert resolved(["--max-context-tokens", "auto"]).settings.auto_window
    assert not resolved([]).settings.auto_window


def test_pyproject_tool_tsum_is_a_settings_file(workdir: Path) -> None:
    (workdir / "pyproject.toml").write_text(
        "[tool.tsum]\ndebounce_turns = 9\nconcurrency = 5\n", encoding="utf-8"
    )
    r = resolved([])
    assert r.settings.summary.debounce_turns == 9 and r.concurrency == 5
    (workdir / "tsum.toml").write_text("debounce_turns = 4\n", encoding="utf-8")  # tsum.toml first
    assert resolved([]).settings.summary.debounce_turns == 4


def test_a_policy_table_in_pyproject_is_not_a_setting(workdir: Path) -> None:
    """[tool.tsum.policy] belongs to the policy loader: the settings beside it still load,
    whether found in ./pyproject.toml or named with --config."""
    (workdir / "pyproject.toml").write_text(
        '[tool.tsum]\ndebounce_turns = 7\n[tool.tsum.policy]\nextends = "codex"\n',
        encoding="utf-8",
    )
    assert resolved([]).settings.summary.debounce_turns == 7
    assert resolved(["--config", "pyproject.toml"]).settings.summary.debounce_turns == 7
    (workdir / "pyproject.toml").write_text(
        '[tool.tsum.policy]\nextends = "codex"\n', encoding="utf-8"
    )
    assert resolved([]).settings.summary.debounce_turns == 3  # only a policy: no settings


def test_model_and_summary_model_in_one_file_is_a_usage_error(workdir: Path) -> None:
    (workdir / "tsum.toml").write_text('model = "a"\nsummary_model = "b"\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["replay", str(SAMPLES / "long_session.jsonl")])
    assert result.exit_code == 2
    assert "tsum.toml:2: model and summary_model are the same setting" in result.stderr
    assert "Traceback" not in result.stderr


def test_file_concurrency_sets_the_sessions_in_flight(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import transcript_tools.replay.run as run_module

    seen: list[int] = []
    original = run_module.ReplayDriver

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs["concurrency"])
        return original(*args, **kwargs)

    monkeypatch.setattr(run_module, "ReplayDriver", spy)
    (workdir / "tsum.toml").write_text("concurrency = 16\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["replay", str(SAMPLES), "--silent"])
    assert result.exit_code == 0, result.stderr
    assert seen == [16]
    monkeypatch.setenv("TSUM_CONCURRENCY", "3")
    assert CliRunner().invoke(cli, ["replay", str(SAMPLES), "--silent", "--dry-run"]).exit_code == 0
    assert seen == [16, 3]


def test_file_format_reaches_replay_and_inspect(workdir: Path) -> None:
    path = workdir / "chat.jsonl"
    path.write_bytes(
        b"".join(
            orjson.dumps(r) + b"\n"
            for r in (
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": "hello",
                    "usage": {"prompt_tokens": 3, "completion_tokens": 1},
                },
            )
        )
    )
    runner = CliRunner()
    assert (
        json.loads(runner.invoke(cli, ["inspect", str(path), "--json"]).stdout)[0]["format"]
        == "openai"
    )
    (workdir / "tsum.toml").write_text('format = "sharegpt"\n', encoding="utf-8")
    for args in (["inspect", str(path), "--json"], ["replay", str(path), "--dry-run"]):
        result = runner.invoke(cli, args)
        # read as ShareGPT, as the file says: this file is not ShareGPT
        assert result.exit_code == 3 and "'conversations' must be an array" in result.stderr, args


def test_the_rule_is_stated_in_help_and_readme() -> None:
    top = CliRunner().invoke(cli, ["--help"]).stdout
    assert "command line > environment" in top
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert PRECEDENCE.split(" (")[0] in readme
    model_help = CliRunner().invoke(cli, ["replay", "--help"]).stdout
    assert "wins over it" not in model_help  # the old, wrong claim


# Settings with an environment variable but no settings-file key: command line > environment > default.
# key: (env var, env value, what it reads as, command line, what that reads as, default)
ENV_ONLY: dict[str, tuple[str, str, Any, list[str], Any, Any]] = {
    "cache": (
        "TSUM_CACHE",
        "/tmp/env.sqlite3",
        Path("/tmp/env.sqlite3"),
        ["--cache", "/tmp/cli.sqlite3"],
        Path("/tmp/cli.sqlite3"),
        None,
    ),
    "cache_only": ("TSUM_CACHE_ONLY", "1", True, [], True, False),  # a flag: on from either
    # no default here: build_executor picks 60 s, or 600 s for a server on this machine
    "timeout": ("TSUM_TIMEOUT", "5", 5.0, ["--timeout", "7"], 7.0, None),
    "max_attempts": ("TSUM_MAX_ATTEMPTS", "2", 2, ["--max-attempts", "3"], 3, 4),
    "refresh": ("TSUM_REFRESH", "yes", True, ["--refresh"], True, False),
    "no_cache": ("TSUM_NO_CACHE", "on", True, ["--no-cache"], True, False),
    "batch": ("TSUM_BATCH", "true", True, ["--batch"], True, False),
    "batch_poll": ("TSUM_BATCH_POLL", "5", 5.0, ["--batch-poll", "7"], 7.0, 30.0),
    "price_per_mtok": ("TSUM_PRICE_PER_MTOK", "3/15", "3/15", ["--price-per-mtok", "2"], "2", None),
}


@pytest.mark.parametrize("key", sorted(ENV_ONLY))
def test_precedence_of_environment_only_settings(
    key: str, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name, env_value, env_read, cli_args, cli_read, default = ENV_ONLY[key]
    assert resolved([]).provider[key] == default
    monkeypatch.setenv(name, env_value)
    assert resolved([]).provider[key] == env_read
    assert resolved(cli_args).provider[key] == cli_read


def test_load_settings_applies_the_one_rule_without_click(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A script gets the CLI's settings: flags > TSUM_* > settings file > default."""
    (tmp_path / "empty").mkdir()
    monkeypatch.chdir(tmp_path / "empty")
    from transcript_tools.settings import load_settings

    toml = tmp_path / "tsum.toml"
    toml.write_text("debounce_turns = 5\nformat = 'openai'\nmode = 'full'\n", encoding="utf-8")
    env = {"TSUM_FORMAT": "native", "TSUM_CONCURRENCY": "2", "TSUM_CACHE_ONLY": "1"}
    run = load_settings({"debounce_turns": 6}, config=toml, env=env)
    assert run.settings.summary is not None and run.settings.summary.debounce_turns == 6  # flag
    assert run.fmt == "native" and run.concurrency == 2  # environment over file
    assert run.settings.mode.value == "full" and run.provider["cache_only"] is True  # file; env
    assert run.settings.summary.max_context_tokens == 32_000  # default
    assert load_settings(env={"TSUM_CONFIG": str(toml)}).settings.summary.debounce_turns == 5
    plain = load_settings(env={})  # no settings file in this folder
    assert plain.provider["provider"] == "offline" and plain.settings.checkpoint.value == "turn"


def test_a_settings_error_names_the_line_of_its_key(workdir: Path) -> None:
    """[tool.tsum] of a pyproject: the line of the key at fault, below other tables."""
    (workdir / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.tsum]\nworkers = 1\n# why\ndebounce_turns = -1\n',
        encoding="utf-8",
    )
    result = CliRunner().invoke(cli, ["replay", str(SAMPLES / "long_session.jsonl")])
    assert result.exit_code == 2
    assert result.stderr == "tsum: error: pyproject.toml:7: debounce_turns must be >= 0, got -1\n"
    (workdir / "tsum.toml").write_text("workers = 1\n\nratoi = 0.5\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["replay", str(SAMPLES / "long_session.jsonl")])
    assert result.stderr.startswith("tsum: error: tsum.toml:3: unknown setting(s) ratoi (known: ")
