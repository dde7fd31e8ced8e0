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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..engine.config import (
    AUTO,
    DEFAULT_KEEP_RECENT_TURNS,
    Checkpoint,
    Measure,
    ReplaySettings,
    SlotMode,
    SummaryConfig,
    TurnPath,
)
from ..errors import ConfigError
from ..settings import PRECEDENCE, load_config_file, merge_settings, summary_config_from
from ..terminal import echo

if TYPE_CHECKING:
    from ..engine.prompt import PromptTemplate


class LazyChoice(click.Choice):
    """A Choice whose values come from a function called when an argument is checked,
    never when help is shown (with an explicit ``metavar``): the format readers and the
    providers are not imported for ``tsum replay --help``."""

    def __init__(self, load: Callable[[], Sequence[str]]) -> None:
        super().__init__(())
        self._load = load
        self._loaded: tuple[str, ...] | None = None

    @property
    def choices(self) -> tuple[str, ...]:
        if self._loaded is None:
            self._loaded = tuple(self._load())
        return self._loaded

    @choices.setter
    def choices(self, value: Sequence[str]) -> None:
        return None  # click.Choice.__init__ sets it; the values come from _load


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
DEFAULT_CONCURRENCY = 8

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
format_option = click.option(
    "--format",
    "fmt",
    type=LazyChoice(format_names),
    metavar="FORMAT",
    envvar="TSUM_FORMAT",
    help="Force the input format instead of detecting it (native, openai, claude-code, codex, ...; "
    "see `tsum inspect --help`).",
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
            help="Fire when tokens >= max_context_tokens * ratio. [default: 0.75]",
        ),
        click.option(
            "--max-context-tokens",
            type=WindowType(),
            help="The model's context window, or auto: the window the log records (Codex), else 32000. [default: 32000]",
        ),
        click.option(
            "--debounce",
            "--debounce-turns",
            "debounce_turns",
            type=int,
            help="At least this many turns between two summaries. [default: 3]",
        ),
        click.option(
            "--max-tool-result-chars",
            type=int,
            help="Keep the first N characters of each tool result. [default: 500]",
        ),
        click.option(
            "--max-transcript-chars",
            type=int,
            help="Cap of the formatted conversation. [default: 30000]",
        ),
        click.option(
            "--marker",
            "summary_marker",
            help="Prefix of the injected summary message. [default: [上下文摘要]]",
        ),
        click.option(
            "--prompt",
            "prompt_spec",
            envvar="TSUM_PROMPT",
            help="Summary prompt: a built-in name (zh, en, ...: `tsum prompts list`) or a file (Jinja if it has {{{{ }}}} tags, else the seed's plain {{messages}} form). [default: zh]",
        ),
        click.option(
            "--mode",
            type=click.Choice([m.value for m in SlotMode]),
            help="Slot mode. [default: focused]",
        ),
        click.option(
            "--keep-recent-turns",
            type=int,
            help=f"Focused view: whole turns kept before the summary. [default: {DEFAULT_KEEP_RECENT_TURNS}]",
        ),
        click.option(
            "--path",
            "turn_path",
            type=click.Choice([p.value for p in TurnPath]),
            help="Turn path: submit_turn (sync) or submit_turn_stream + finalize_turn (stream). [default: sync]",
        ),
        click.option(
            "--measure",
            type=click.Choice([m.value for m in Measure]),
            help="Watermark: cumulative cost_so_far (the seed) or the current context size. [default: cumulative]",
        ),
        click.option(
            "--checkpoint",
            type=click.Choice([c.value for c in Checkpoint]),
            help="Run the checkpoint after each user turn (the seed) or each model call; "
            "with call, debounce and keep_recent_turns count calls. [default: turn]",
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


@dataclass(frozen=True, slots=True)
class Resolved:
    """Every setting of a run, after the precedence rule."""

    settings: ReplaySettings
    template: PromptTemplate
    fmt: str | None
    provider: dict[str, Any]  # build_executor's options: provider, model, base_url, cache flags…
    concurrency: int
    values: dict[str, Any]  # the merged settings by file key
    skip_bad_lines: bool = False


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
) -> Resolved:
    """All settings: command line > environment > file > default (``config.PRECEDENCE``).

    ``overrides`` (by file key) count as given on the command line: a command that runs
    several variants (``tsum eval --prompt A --prompt B``) resolves each one this way."""
    from ..engine.prompt import builtin_template_names, load_template, template_from_config

    if opts.get("prompt_spec") == "":
        raise ConfigError(
            f"--prompt is empty: give a built-in name ({', '.join(builtin_template_names())}) or a file"
        )
    explicit = {
        **explicit_options(opts, ctx),
        **{k: v for k, v in (overrides or {}).items() if v is not None},
    }
    merged = merge_settings(explicit, load_config_file(opts.get("config_path")))
    if isinstance(merged.get("summary_prompt"), str):
        # the prompt text itself in the config file (Jinja or the seed's plain form)
        template = template_from_config(merged["summary_prompt"], "config")
    else:
        template = load_template(merged.get("prompt"))
    for problem in template.check():
        echo(f"tsum: warning: {problem}", err=True)
    values = dict(merged)
    values["summary_prompt"] = template.source
    summary = summary_config_from(values, SummaryConfig(summary_prompt=template.source))
    try:
        settings = ReplaySettings(
            summary=summary,
            mode=SlotMode(values.get("mode", "focused")),
            keep_recent_turns=int(values.get("keep_recent_turns", DEFAULT_KEEP_RECENT_TURNS)),
            path=TurnPath(values.get("path", "sync")),
            measure=Measure(values.get("measure", "cumulative")),
            template_name=template.name,
            dry_run=dry_run,
            checkpoint=Checkpoint(values.get("checkpoint", "turn")),
            auto_window=values.get("max_context_tokens") == AUTO,
        )
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    if opts.get("policy") is not None:  # a compaction policy (docs/policies.md)
        from ..engine.policy_engine import policy_with_flags, with_policy

        policy = policy_with_flags(opts["policy"], explicit)
        window_given = "max_context_tokens" in merged  # flag, environment or file
        settings = with_policy(settings, policy, window_given=window_given)
        if settings.summary is not None:  # the policy's template (or --prompt's)
            template = template_from_config(settings.summary.summary_prompt, settings.template_name)
    concurrency = int(values.get("concurrency") or DEFAULT_CONCURRENCY)
    provider: dict[str, Any] = {
        k: opts[k]
        for k in (
            "cache",
            "cache_only",
            "refresh",
            "no_cache",
            "timeout",
            "max_attempts",
            "batch",
            "batch_poll",
            "price_per_mtok",
        )
        if k in opts
    }
    provider.update(
        provider=values.get("provider") or "offline",
        model=summary.summary_model,
        base_url=values.get("base_url"),
        temperature=values.get("temperature"),
        concurrency=concurrency,
    )
    return Resolved(
        settings,
        template,
        values.get("format"),
        provider,
        concurrency,
        values,
        bool(opts.get("skip_bad_lines")),
    )
