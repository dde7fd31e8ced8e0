"""The options every replaying command shares, and the one precedence rule applied to them.

``config.PRECEDENCE``: command line > environment (``TSUM_*``) > settings file >
default. Click resolves the first two (an option's ``envvar``); ``resolve`` lays
what they give over the file (``config.merge_settings``), so every file setting
reaches every place that reads it: the summary config, the slot, the reader's
format, the provider, its model and base URL, and the concurrency of both the
executor and the sessions in flight.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any

import click

from ..engine.config import (
    AUTO,
    Checkpoint,
    Measure,
    ReplaySettings,
    RunSettings,
    SlotMode,
    SummaryConfig,
    TurnPath,
)
from ..settings import PRECEDENCE, PROVIDER_OPTION_KEYS, load_settings
from ..terminal import echo
from .help import unbroken

# Every default --help shows, read from the config dataclasses that define it (the options
# themselves default to None: a value not given leaves room for the environment and file).
DEFAULTS: dict[str, Any] = {
    f.name: f.default
    for cls in (SummaryConfig, ReplaySettings)
    for f in fields(cls)
    if f.default is not MISSING
}
DEFAULTS["prompt"] = DEFAULTS["template_name"]


def shown_default(name: str, prefix: str = "") -> str:
    """``[default: VALUE]`` for --help, VALUE from ``DEFAULTS`` (``prefix``: ``config or ``)."""
    return f"[default: {prefix}{DEFAULTS[name]}]"


class LazyChoice(click.Choice):
    """A Choice whose values come from a function called when an argument is checked,
    never when help is shown (with an explicit ``metavar``): the format readers and the
    providers are not imported for ``tsum replay --help``."""

    def __init__(self, load: Callable[[], Sequence[str]]) -> None:
        super().__init__(())
        self._load = load

    @property
    def choices(self) -> tuple[str, ...]:
        # asked each time (the loaders cache): a plug-in provider registered since counts
        return tuple(self._load())

    @choices.setter
    def choices(self, value: Sequence[str]) -> None:
        return None  # click.Choice.__init__ sets it; the values come from _load


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


def format_names() -> list[str]:
    from ..formats import reader_names

    return reader_names()


class WindowType(click.ParamType):
    """``--max-context-tokens``: an integer, or ``auto`` (per session, from the log)."""

    name = "N|auto"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value == AUTO or isinstance(value, int):
            return value
        try:
            return int(value)
        except ValueError:
            self.fail(f"{value!r} is not an integer or auto", param, ctx)


# CLI option (parameter) name -> settings-file key, for every setting a file may hold.
FILE_KEY_OF_OPTION = {
    "trigger_token_ratio": "trigger_token_ratio",
    "max_context_tokens": "max_context_tokens",
    "debounce_turns": "debounce_turns",
    "max_tool_result_chars": "max_tool_result_chars",
    "max_transcript_chars": "max_transcript_chars",
    "summary_marker": "summary_marker",
    "mode": "mode",
    "keep_recent_turns": "keep_recent_turns",
    "turn_path": "path",
    "measure": "measure",
    "checkpoint": "checkpoint",
    "prompt_spec": "prompt",
    "fmt": "format",
    "provider": "provider",
    "model": "summary_model",
    "base_url": "base_url",
    "temperature": "temperature",
    "concurrency": "concurrency",
    "workers": "workers",
}

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


format_option = click.option(
    "--format",
    "fmt",
    cls=FormatOption,
    type=LazyChoice(format_names),
    metavar="FORMAT",
    envvar="TSUM_FORMAT",
)


def summary_options(func: Any) -> Any:
    """Options for every SummaryConfig field and the slot, shared by replay/format/prompt/check."""
    from .policies_cmd import policy_option

    options: list[Any] = [
        config_option,
        policy_option,
        click.option(
            "--ratio",
            "--trigger-token-ratio",
            "trigger_token_ratio",
            type=float,
            help="Fire when tokens >= max_context_tokens * ratio. "
            + shown_default("trigger_token_ratio"),
        ),
        click.option(
            "--max-context-tokens",
            type=WindowType(),
            help="The model's context window, or auto: the window the log records (Codex), else its "
            f"model's documented window, else the policy's, else {DEFAULTS['max_context_tokens']}; "
            "a preset then follows the log's runtime release. "
            + shown_default("max_context_tokens"),
        ),
        click.option(
            "--debounce",
            "--debounce-turns",
            "debounce_turns",
            type=int,
            help="At least this many turns between two summaries. "
            + shown_default("debounce_turns"),
        ),
        click.option(
            "--max-tool-result-chars",
            type=int,
            help="Keep the first N characters of each tool result. "
            + shown_default("max_tool_result_chars"),
        ),
        click.option(
            "--max-transcript-chars",
            type=int,
            help="Cap of the formatted conversation. " + shown_default("max_transcript_chars"),
        ),
        click.option(
            "--marker",
            "summary_marker",
            help="Prefix of the injected summary message. " + shown_default("summary_marker"),
        ),
        click.option(
            "--prompt",
            "prompt_spec",
            envvar="TSUM_PROMPT",
            help="Summary prompt: a built-in name (zh, en, ...: `tsum prompts list`) or a file (Jinja if it has {{ }}, {% %} or {# #} tags, else the seed's plain {messages} form). "
            + shown_default("prompt"),
        ),
        click.option(
            "--mode",
            type=click.Choice([m.value for m in SlotMode]),
            help="Slot mode. " + shown_default("mode"),
        ),
        click.option(
            "--keep-recent-turns",
            type=int,
            help="Focused view: whole turns kept before the summary. "
            + shown_default("keep_recent_turns"),
        ),
        click.option(
            "--path",
            "turn_path",
            type=click.Choice([p.value for p in TurnPath]),
            help="Turn path: submit_turn (sync) or submit_turn_stream + finalize_turn (stream). "
            + shown_default("path"),
        ),
        click.option(
            "--measure",
            type=click.Choice([m.value for m in Measure]),
            help="Watermark: cumulative cost_so_far (the seed) or the current context size. "
            + shown_default("measure"),
        ),
        click.option(
            "--checkpoint",
            type=click.Choice([c.value for c in Checkpoint]),
            help="Run the checkpoint after each user turn (the seed) or each model call; "
            "with call, debounce and keep_recent_turns count calls. " + shown_default("checkpoint"),
        ),
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
        provider_options={k: opts[k] for k in PROVIDER_OPTION_KEYS if k in opts},
        dry_run=dry_run,
        skip_bad_lines=bool(opts.get("skip_bad_lines")),
        warn=lambda message: echo(message, err=True),
        policy=opts.get("policy"),
    )
