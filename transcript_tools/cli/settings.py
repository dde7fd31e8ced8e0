"""The options every replaying command shares, and the one precedence rule applied to them.

``config.PRECEDENCE``: command line > environment (``TSUM_*``) > settings file >
default. Click resolves the first two (an option's ``envvar``); ``resolve`` lays
what they give over the file (``config.merge_settings``), so every file setting
reaches every place that reads it: the summary config, the slot, the reader's
format, the provider, its model and base URL, and the concurrency of both the
executor and the sessions in flight.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..engine.config import RunSettings
from ..engine.settings_table import PROVIDER_ONLY_KEYS, SETTINGS
from ..settings import PRECEDENCE, load_settings
from ..terminal import echo
from .help import unbroken
from .setting_options import setting_option

# The readers' names, written here so that --help imports no reader; a test holds them
# equal to formats.reader_names() (detection order there; here, to find one by name).
FORMAT_NAMES = (
    "aider-chat",
    "aider-llm",
    "anthropic",
    "atif",
    "claude-code",
    "cline",
    "codex",
    "continue",
    "crush",
    "gemini-cli",
    "gemini-stream",
    "inspect-ai",
    "managed-agents",
    "native",
    "openai",
    "opencode",
    "opencode-db",
    "otel",
    "pi",
    "sharegpt",
    "specstory",
    "tau-bench",
    "trajectory",
)


# CLI option (parameter) name -> settings-file key, for every setting a file may hold.
FILE_KEY_OF_OPTION = {setting.name: setting.key for setting in SETTINGS if setting.in_file}

CONFIG_HELP = (
    "Settings file (tsum.toml, or a pyproject.toml with [tool.tsum]). "
    f"Default: ./tsum.toml, else ./pyproject.toml. Precedence: {PRECEDENCE}."
)


# Shared by every command that reads transcripts or settings (one definition, one help).
config_option = click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar="TSUM_CONFIG",
    help=CONFIG_HELP,
)
FORMAT_HELP = "Force the input format instead of detecting it: "


class FormatOption(click.Option):
    """``--format``: its help names the built-in formats, then the installed plug-ins'
    (``tsum.formats`` entry points, read only when the help is shown)."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        from ..plugins import FORMATS_GROUP, entry_point_names

        names = [*FORMAT_NAMES, *entry_point_names(FORMATS_GROUP, FORMAT_NAMES)]
        self.help = FORMAT_HELP + ", ".join(map(unbroken, names)) + "."
        return super().get_help_record(ctx)


format_option = setting_option("format", cls=FormatOption, metavar="FORMAT")


# The settings of the summary and the slot, in the order --help lists them.
SUMMARY_KEYS = (
    "trigger_token_ratio",
    "max_context_tokens",
    "debounce_turns",
    "max_tool_result_chars",
    "max_transcript_chars",
    "summary_marker",
    "prompt",
    "mode",
    "keep_recent_turns",
    "path",
    "measure",
    "checkpoint",
)


def summary_options(func: Any) -> Any:
    """Options for every SummaryConfig field and the slot, shared by replay/format/prompt/check."""
    from .policies_cmd import policy_option

    options: list[Any] = [
        config_option,
        policy_option,
        *map(setting_option, SUMMARY_KEYS),
        format_option,
        click.option(
            "--skip-bad-lines",
            is_flag=True,
            help="Warn about bad lines and replay the rest of the file.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def explicit_options(opts: dict[str, Any], ctx: click.Context | None = None) -> dict[str, Any]:
    """The settings given on the command line or in the environment, by file key."""
    ctx = ctx if ctx is not None else click.get_current_context(silent=True)
    given = (click.core.ParameterSource.COMMANDLINE, click.core.ParameterSource.ENVIRONMENT)
    out: dict[str, Any] = {}
    for name, key in FILE_KEY_OF_OPTION.items():
        if name not in opts or opts[name] is None:
            continue
        source = ctx.get_parameter_source(name) if ctx is not None else None
        # Without a click context (a caller passing a dict) every value given counts.
        if ctx is None or source in given:
            out[key] = opts[name]
    return out


def resolve(
    opts: dict[str, Any],
    *,
    dry_run: bool = False,
    ctx: click.Context | None = None,
    overrides: dict[str, Any] | None = None,
) -> RunSettings:
    """The command's options through the one precedence rule (``settings.load_settings``).

    ``overrides`` (by file key) count as given on the command line: a command that runs
    several variants (``tsum eval --prompt A --prompt B``) resolves each one this way."""
    flags = {
        **explicit_options(opts, ctx),
        **{k: v for k, v in (overrides or {}).items() if v is not None},
    }
    return load_settings(
        flags,
        config=opts.get("config_path"),
        provider_options={k: opts[k] for k in PROVIDER_ONLY_KEYS if k in opts},
        dry_run=dry_run,
        skip_bad_lines=bool(opts.get("skip_bad_lines")),
        warn=lambda message: echo(message, err=True),
        policy=opts.get("policy"),
    )
