"""Settings and their one precedence rule: flags > ``TSUM_*`` > settings file > default.

``load_settings`` is the rule's one home, for the CLI (whose flags click parses) and for a
script or notebook alike: it lays the flags over the environment, both over the settings
file (tsum.toml, ``[tool.tsum]`` in pyproject.toml), and leaves every other value to the
defaults of the engine's config dataclasses (``PRECEDENCE``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .engine.config import (
    AUTO,
    DEFAULT_CONCURRENCY,
    ReplaySettings,
    RunSettings,
    SummaryConfig,
    _int_at_least,
)
from .engine.settings_table import (
    FILE_KEYS,
    PROVIDER_ONLY_KEYS,
    SETTING,
    SETTINGS,
    Setting,
    from_environment,
    value_problem,
)
from .errors import ConfigError
from .untrusted import check_file_endpoint, check_file_path

if TYPE_CHECKING:  # only annotations: settings load without building the policy types
    from .engine.policy import Policy

log = logging.getLogger("transcript_tools")

# Every key a settings file may hold (the table declares them; ``model`` = ``summary_model``).
CONFIG_KEYS = set(FILE_KEYS)


PRECEDENCE = (
    "command line > environment (TSUM_*) > settings file (--config FILE, else ./tsum.toml, "
    "else [tool.tsum] in ./pyproject.toml) > default"
)


def merge_settings(explicit: dict[str, Any], file_values: dict[str, Any]) -> dict[str, Any]:
    """The effective settings by file key: ``explicit`` (command line, else environment —
    click has already put the two in that order) over ``file_values`` (the
    settings file's); keys absent from both take their defaults where they are read.

    ``model`` and ``summary_model`` are one setting, as are ``prompt`` (a built-in name
    or a file) and ``summary_prompt`` (the text): a value given explicitly replaces the
    file's, whichever spelling the file used. The result spells them ``summary_model``
    and ``prompt`` / ``summary_prompt``.
    """
    merged = dict(file_values)
    if "model" in merged:
        merged["summary_model"] = merged.pop("model")
    for key, value in explicit.items():
        if value is None:
            continue
        if key in ("model", "summary_model"):
            merged.pop("model", None)
            key = "summary_model"
        elif key in ("prompt", "summary_prompt"):
            merged.pop("prompt", None)
            merged.pop("summary_prompt", None)
        merged[key] = value
    return merged


KeyPlace = Callable[[str], str]  # a settings key -> "file:line" where the file writes it


def _config_file(path: Path | None) -> tuple[KeyPlace, dict[str, Any]]:
    """Settings from ``path``, else ./tsum.toml, else ``[tool.tsum]`` of ./pyproject.toml,
    and where in the file they came from each key is (``file:line``; "" without a file)."""
    if path is None:
        for candidate, section in (
            (Path("tsum.toml"), None),
            (Path("pyproject.toml"), "tool.tsum"),
        ):
            if candidate.is_file():
                text, data = _read_toml(candidate)
                table = data.get("tool", {}).get("tsum") if section else data
                if section and table:
                    table = _without_policy(table)
                if table:
                    where = _key_place(candidate, text, section)
                    return where, _checked(table, where)
        return lambda key: "", {}
    if not path.is_file():
        raise ConfigError(f"{path}: no such config file")
    text, data = _read_toml(path)
    section = None
    if path.name == "pyproject.toml":
        data, section = _without_policy(data.get("tool", {}).get("tsum", {})), "tool.tsum"
    where = _key_place(path, text, section)
    return where, _checked(data, where)


def _key_place(path: Path, text: str, section: str | None) -> KeyPlace:
    """Where ``path`` (its ``text``) writes a key of its settings (``section``: the table
    holding them, ``tool.tsum`` in a pyproject): ``file:line``, else the file."""
    from .engine.policy_toml import toml_where

    prefix = tuple(section.split(".")) if section else ()
    return lambda key: toml_where(str(path), text, (*prefix, key))


def _without_policy(table: dict[str, Any]) -> dict[str, Any]:
    """``[tool.tsum]`` minus ``[tool.tsum.policy]``, which the policy loader reads
    (engine/policy_toml.py): a policy there is not a setting of its own."""
    return {key: value for key, value in table.items() if key != "policy"}


def _read_toml(path: Path) -> tuple[str, dict[str, Any]]:
    """The settings file's text (where its errors find their line) and its values."""
    from .engine.policy_toml import loads_toml  # only when a settings file exists

    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML ({exc})") from None
    return text, loads_toml(text, str(path))


def _checked(table: dict[str, Any], at: KeyPlace) -> dict[str, Any]:
    """The file's settings, or one error naming the file and the line of the key at fault."""
    unknown = sorted(set(table) - CONFIG_KEYS)
    if unknown:
        raise ConfigError(
            f"{at(unknown[0])}: unknown setting(s) {', '.join(unknown)} (known: {', '.join(sorted(CONFIG_KEYS))})"
        )
    if isinstance(table.get("prompt"), str):
        from .engine.prompt import builtin_template_names

        if table["prompt"] not in builtin_template_names():
            check_file_path(at("prompt"), "prompt", table["prompt"])
    if "prompt" in table and "summary_prompt" in table:
        raise ConfigError(
            f"{at('summary_prompt')}: set prompt (a built-in name or a file) or summary_prompt (the text), not both"
        )
    if "model" in table and "summary_model" in table:
        raise ConfigError(
            f"{at('summary_model')}: model and summary_model are the same setting: set one of them, not both"
        )
    for key, value in table.items():
        setting = SETTING["summary_model" if key == "model" else key]
        if (wrong := value_problem(setting, value)) is not None:
            raise ConfigError(f"{at(key)}: {key} {wrong}")
    if "format" in table:
        from .formats import reader_names  # only when a file names a format

        if table["format"] not in reader_names():
            raise ConfigError(
                f"{at('format')}: unknown format {table['format']!r} (known: {', '.join(reader_names())})"
            )
    if isinstance(table.get("provider"), str):
        from .providers.registry import provider_class  # only when a file names a provider

        try:
            provider_class(table["provider"])
        except ConfigError as exc:
            raise ConfigError(f"{at('provider')}: {exc}") from None
    try:  # the file's own values, checked where they are written
        summary_config_from(merge_settings({}, table))
    except ConfigError as exc:  # its message starts with the setting's name
        raise ConfigError(f"{at(str(exc).split(' ', 1)[0])}: {exc}") from None
    return dict(table)


def typed_values(key: str, values: Sequence[Any]) -> list[Any]:
    """Each of ``values`` (a sweep axis given to the library) as the setting ``key`` holds
    it, checked as a settings file's value is: a wrong one is a ConfigError naming it."""
    setting = SETTING[key]
    for value in values:
        if (wrong := value_problem(setting, value)) is not None:
            raise ConfigError(f"{key} {wrong}")
    return [setting.typed(value) for value in values]


def summary_config_from(values: dict[str, Any], base: SummaryConfig | None = None) -> SummaryConfig:
    """A SummaryConfig from a mapping of field names (None values are ignored)."""
    names = {f.name for f in fields(SummaryConfig)}
    given = {k: v for k, v in values.items() if k in names and v is not None}
    if given.get("max_context_tokens") == AUTO:  # per session (ReplaySettings.auto_window)
        del given["max_context_tokens"]
    try:
        return replace(base or SummaryConfig(), **given)
    except TypeError as exc:
        raise ConfigError(str(exc)) from None


CONFIG_ENV = "TSUM_CONFIG"
# The ReplaySettings fields that are settings (mode, keep_recent_turns, path, measure, checkpoint)
_REPLAY_KEYS = tuple(f.name for f in fields(ReplaySettings) if f.name in SETTING)


def _from_env(setting: Setting, env: Mapping[str, str]) -> Any:
    raw = env.get(setting.env)
    return None if raw is None or raw == "" else from_environment(setting, raw)


def environment_settings(env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The settings ``TSUM_*`` gives, by settings-file key."""
    env = os.environ if env is None else env
    found = {s.key: _from_env(s, env) for s in SETTINGS if s.in_file}
    return {key: value for key, value in found.items() if value is not None}


def settings_values(
    flags: Mapping[str, Any] | None = None,
    *,
    config: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    read_file: bool = True,
) -> dict[str, Any]:
    """The effective settings by file key (``PRECEDENCE``): ``flags`` (None values are not
    given) over ``TSUM_*`` over the settings file (``config``, else ``TSUM_CONFIG``, else
    ./tsum.toml, else ``[tool.tsum]`` of ./pyproject.toml; none with ``read_file=False``)."""
    unknown = sorted(set(flags or {}) - CONFIG_KEYS)
    if unknown:  # a misspelt key would otherwise run at its default, silently
        known = ", ".join(sorted(CONFIG_KEYS))
        raise ConfigError(f"unknown setting(s) {', '.join(unknown)} (known: {known})")
    env = os.environ if env is None else env
    explicit = {**environment_settings(env)}
    explicit.update({k: v for k, v in (flags or {}).items() if v is not None})
    if config is None and env.get(CONFIG_ENV):
        config = env[CONFIG_ENV]
    if not read_file and config is None:
        return merge_settings(explicit, {})
    where, file_values = _config_file(Path(config) if config else None)
    if file_values.get("base_url") is not None and explicit.get("base_url") is None:
        provider = explicit.get("provider") or file_values.get("provider") or "offline"
        check_file_endpoint(where("base_url"), file_values.get("base_url"), _key_env(provider), env)
    return merge_settings(explicit, file_values)


def _key_env(provider: str) -> str | None:
    """The environment variable holding ``provider``'s key (None: unknown, or keyless)."""
    from .errors import ProviderConfigError
    from .providers.registry import provider_class

    try:
        key_env: str | None = provider_class(provider).key_env
        return key_env
    except ProviderConfigError:
        return None  # reported where the provider is built


def load_settings(
    flags: Mapping[str, Any] | None = None,
    *,
    config: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    provider_options: Mapping[str, Any] | None = None,
    dry_run: bool = False,
    skip_bad_lines: bool = False,
    warn: Callable[[str], None] | None = None,
    read_file: bool = True,
    policy: Policy | None = None,
) -> RunSettings:
    """Every setting of a run: flags > environment (``TSUM_*``) > settings file > default.

    ``flags`` are by settings-file key (``CONFIG_KEYS``: ``trigger_token_ratio``,
    ``prompt``, ``mode``, ``provider``, ``model``…); ``provider_options`` the cache and
    call options that no file holds (``PROVIDER_ONLY_KEYS``; absent ones come from
    ``TSUM_*``). ``warn`` gets the template's problems (default: ``logging``).
    ``env={}, read_file=False``: the flags and the defaults only. ``policy``: a compaction
    policy (docs/policies.md); its values replace the seed's settings but for those the
    ``flags`` give (``policy_engine.policy_with_flags``)."""
    from .engine.prompt import builtin_template_names, load_template, template_from_config

    if flags and flags.get("prompt") == "":
        raise ConfigError(
            f"--prompt is empty: give a built-in name ({', '.join(builtin_template_names())}) or a file"
        )
    env = os.environ if env is None else env
    values = settings_values(flags, config=config, env=env, read_file=read_file)
    if isinstance(values.get("summary_prompt"), str):
        # the prompt text itself in the config file (Jinja or the seed's plain form)
        template = template_from_config(values["summary_prompt"], "config")
    else:
        template = load_template(values.get("prompt"))
    for problem in template.check():
        if warn is None:
            log.warning("%s", problem)
        else:
            warn(f"tsum: warning: {problem}")
    values["summary_prompt"] = template.source
    summary = summary_config_from(values, SummaryConfig(summary_prompt=template.source))
    try:
        given = {k: SETTING[k].typed(values[k]) for k in _REPLAY_KEYS if values.get(k) is not None}
        settings = ReplaySettings(
            summary=summary,
            template_name=template.name,
            dry_run=dry_run,
            auto_window=values.get("max_context_tokens") == AUTO,
            **given,
        )
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    concurrency = values.get("concurrency") or DEFAULT_CONCURRENCY
    _int_at_least("concurrency", concurrency, 1, "must be >= 1")
    provider = {k: v for k, v in (provider_options or {}).items() if k in PROVIDER_ONLY_KEYS}
    for key in PROVIDER_ONLY_KEYS:
        if provider.get(key) is None and (value := _from_env(SETTING[key], env)) is not None:
            provider[key] = value
    provider.update(
        provider=values.get("provider") or "offline",
        model=summary.summary_model,
        base_url=values.get("base_url"),
        temperature=values.get("temperature"),
        concurrency=concurrency,
    )
    run = RunSettings(
        settings, template, values.get("format"), provider, concurrency, values, skip_bad_lines
    )
    return run if policy is None else apply_policy(run, policy, flags)


def apply_policy(
    run: RunSettings, policy: Policy | None, flags: Mapping[str, Any] | None = None
) -> RunSettings:
    """``run`` under a compaction policy (docs/policies.md): the policy's values replace the
    seed's settings, but for those ``flags`` give (``policy_engine.policy_with_flags``);
    the window stays the run's where it named one (flag, environment or file)."""
    if policy is None:
        return run
    from .engine.policy_engine import policy_with_flags, with_policy
    from .engine.prompt import template_from_config

    window_given = run.values.get("max_context_tokens") is not None
    policy = policy_with_flags(policy, dict(flags or {}))
    settings = with_policy(run.settings, policy, window_given=window_given)
    template = run.template
    if settings.summary is not None:  # the policy's template (or --prompt's)
        template = template_from_config(settings.summary.summary_prompt, settings.template_name)
    return replace(run, settings=settings, template=template)
