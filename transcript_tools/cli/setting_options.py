"""The click option of a setting, made from its one declaration (``engine/settings_table.py``).

``setting_option(key)`` gives the option every command shares: its flags, its click type,
its ``TSUM_*`` variable (shown in ``--help``) and its help with the library's default. A
command whose help says more (eval, sweep) passes its own ``help`` or click arguments;
``sweep_list_option`` is the comma-list form sweep takes for a grid dimension. The option
groups several commands share follow: the provider's (the executor they describe is built by
``providers.factory.build_executor``), the cached responses' (sweep, compare), the pricing
ones (docs/cost.md) and where per-file work runs (built by ``parallel.pool.backend_for``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from ..engine.config import AUTO
from ..engine.settings_table import (
    CHOICE,
    FLAG,
    FLOAT,
    FORMAT,
    INT,
    PATH,
    PROVIDER,
    PROVIDER_KEYS,
    SETTING,
    WINDOW,
    Setting,
)
from ..parallel import RAY_LOCAL

F = TypeVar("F", bound=Callable[..., Any])


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


def format_names() -> list[str]:
    from ..formats import reader_names

    return reader_names()


def provider_names() -> tuple[str, ...]:
    """Built-in providers and those registered through the ``tsum.providers`` entry point."""
    from ..providers.registry import provider_names as names

    return names()


def click_type(setting: Setting) -> Any:
    """The click type that parses ``setting``'s flag and ``TSUM_*`` variable."""
    low, open_ = setting.low, setting.low_open
    if setting.kind == INT:
        return int if low is None else click.IntRange(min=int(low), min_open=open_)
    if setting.kind == FLOAT:
        return float if low is None else click.FloatRange(min=low, min_open=open_)
    if setting.kind == CHOICE:
        return click.Choice(setting.choices)
    if setting.kind == PATH:
        from pathlib import Path

        return click.Path(dir_okay=False, path_type=Path)
    kinds: dict[str, Any] = {
        WINDOW: WindowType(),
        FORMAT: LazyChoice(format_names),
        PROVIDER: LazyChoice(provider_names),
    }
    return kinds.get(setting.kind)


def shown_default(key: str, prefix: str = "") -> str:
    """``[default: VALUE]`` for --help, VALUE the table's (``prefix``: ``config or ``)."""
    return f"[default: {prefix}{SETTING[key].default}]"


def setting_option(
    key: str, param: str | None = None, *, help: str | None = None, **click_args: Any
) -> Callable[[F], F]:
    """``key``'s option: its flags, type, ``TSUM_*`` variable and help (``param``: this
    command's parameter name; ``help``: its own words, the default added all the same);
    ``click_args`` replace the table's."""
    setting = SETTING[key]
    text = setting.help if help is None else help
    if setting.default is not None and not setting.click_default:
        text = f"{text} {shown_default(key)}"
    args: dict[str, Any] = {
        "type": click_type(setting),
        "envvar": setting.env,
        "show_envvar": True,
        "help": text,
    }
    if setting.kind == FLAG:
        args["is_flag"] = True
    if setting.click_default:
        args.update(default=setting.default, show_default=True)
    args.update(click_args)
    return click.option(*setting.flags, param or setting.name, **args)


_LIST_METAVAR = {FLOAT: "R[,R...]", INT: "N[,N...]", WINDOW: "N|auto[,...]"}


def sweep_list_option(
    key: str, param: str, help: str, prefix: str = "config or "
) -> Callable[[F], F]:
    """Sweep's comma-list form of a grid setting (``Setting.sweeps``): its flags, repeatable,
    the values split and checked by the command. Given none, the grid takes the setting's
    one value (flag, ``TSUM_*``, file or default: ``prefix`` says so in ``--help``)."""
    setting = SETTING[key]
    assert setting.sweeps, key
    metavar = _LIST_METAVAR.get(setting.kind) or "|".join(setting.choices) + "[,...]"
    return click.option(
        *setting.flags,
        param,
        multiple=True,
        metavar=metavar,
        help=f"{help} {shown_default(key, prefix)}",
    )


def provider_options(func: F) -> F:
    """Add --provider, --model, --base-url, the cache flags, -j, --timeout, --max-attempts.

    Network providers use the response cache by default (``default_cache_path()``); the
    offline provider is deterministic and cheaper than a cache lookup, so it skips the cache
    unless asked for one (``--cache PATH`` / ``TSUM_CACHE``, ``--cache-only`` or ``--refresh``).
    """
    for key in reversed(PROVIDER_KEYS[1:]):  # click lists the last decorator applied first
        func = setting_option(key)(func)
    return setting_option("provider", metavar="[offline|anthropic|openai]")(func)


def cached_summary_options(func: F) -> F:
    """--provider, --model, --base-url and --cache, naming a provider's cached responses as
    the source of summary text, for commands that never call an API (sweep, compare)."""
    decorators = [
        setting_option(
            "provider",
            type=None,  # any name, as sweep and compare have always taken
            help="Where summary text comes from when needed: offline, or a provider whose "
            "responses are read from --cache (never called).",
        ),
        setting_option("summary_model", help="Model of the cached responses (their cache key)."),
        setting_option("base_url", help="Base URL of the cached responses (their cache key)."),
        setting_option(
            "cache",
            "cache_path",
            help="Response cache to read summaries from (with --provider other than offline).",
        ),
    ]
    for decorator in reversed(decorators):
        func = decorator(func)
    return func


def prices_option(func: F) -> F:
    """``--prices FILE``: prices used before the bundled list (every priced command)."""
    return click.option(
        "--prices",
        "prices_file",
        type=click.Path(dir_okay=False, exists=True),
        help="A JSON prices file (model -> input/output/cache_read/cache_write USD per "
        "million tokens) used before the bundled genai-prices list.",
    )(func)


def cost_options(func: F) -> F:
    """``--cost`` and ``--prices``: the options that price a run."""
    func = prices_option(func)
    return click.option(
        "--cost",
        is_flag=True,
        help="Price each conversation as replayed: prompt tokens split into cache reads, "
        "cache writes and fresh input by the provider's cache rules, summarizer calls "
        "included, against the original run (docs/cost.md).",
    )(func)


def scale_options(func: F) -> F:
    """``--workers N`` and ``--ray [ADDRESS]``, for commands that read many files (sweep,
    replay --dry-run, inspect)."""
    func = click.option(
        "--ray",
        "ray_address",
        is_flag=False,
        flag_value=RAY_LOCAL,
        default=None,
        metavar="[ADDRESS]",
        help="Run the per-file work as Ray Data tasks: alone, a local Ray (or the one RAY_ADDRESS "
        "names); `auto` or ray://HOST:PORT for a cluster. Paths may be URLs Ray reads (s3://...). "
        "Put it after the paths (its value is optional). Needs pip install 'transcript-tools[ray]'.",
    )(func)
    return setting_option("workers")(func)


class NonEmptyPath(click.Path):
    """A ``click.Path`` giving a ``Path`` (a replay output, a baseline), where "" (an unset
    variable) is a usage error naming the option, never the current folder."""

    def __init__(self, **kwargs: Any) -> None:
        from pathlib import Path

        super().__init__(path_type=Path, **kwargs)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value == "":
            from ..formats.bounds import EMPTY_PATH

            self.fail(f'"": {EMPTY_PATH}', param, ctx)
        return super().convert(value, param, ctx)
