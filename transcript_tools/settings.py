"""Settings files and their precedence: tsum.toml, ``[tool.tsum]``, the command line.

The command line (and ``TSUM_*``) wins over the settings file, which wins over the
defaults of the engine's config dataclasses (``PRECEDENCE``).
"""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from .engine.config import AUTO, Checkpoint, SummaryConfig, _int_at_least
from .errors import ConfigError

CONFIG_KEYS = {f.name for f in fields(SummaryConfig)} | {
    "mode",
    "keep_recent_turns",
    "path",
    "measure",
    "checkpoint",
    "prompt",
    "provider",
    "model",
    "base_url",
    "temperature",  # sent with every summary call; unset: the API's own default
    "format",
    "concurrency",
    "workers",  # processes for sweep / replay --dry-run (cli/scale_options.py)
}


PRECEDENCE = (
    "command line > environment (TSUM_*) > settings file (--config FILE, else ./tsum.toml, "
    "else [tool.tsum] in ./pyproject.toml) > default"
)

# Two spellings of one setting each: a file may hold one of them, never both.
SAME_SETTING = (("model", "summary_model"), ("prompt", "summary_prompt"))


def merge_settings(explicit: dict[str, Any], file_values: dict[str, Any]) -> dict[str, Any]:
    """The effective settings by file key: ``explicit`` (command line, else environment —
    click has already put the two in that order) over ``file_values`` (from
    ``load_config_file``); keys absent from both take their defaults where they are read.

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


def load_config_file(path: Path | None = None) -> dict[str, Any]:
    """Settings from ``path``, else ./tsum.toml, else ``[tool.tsum]`` of ./pyproject.toml."""
    if path is None:
        for candidate, section in (
            (Path("tsum.toml"), None),
            (Path("pyproject.toml"), "tool.tsum"),
        ):
            if candidate.is_file():
                data = _read_toml(candidate)
                table = data.get("tool", {}).get("tsum") if section else data
                if section and table:
                    table = _without_policy(table)
                if table:
                    return _checked(table, candidate)
        return {}
    if not path.is_file():
        raise ConfigError(f"{path}: no such config file")
    data = _read_toml(path)
    if path.name == "pyproject.toml":
        data = _without_policy(data.get("tool", {}).get("tsum", {}))
    return _checked(data, path)


def _without_policy(table: dict[str, Any]) -> dict[str, Any]:
    """``[tool.tsum]`` minus ``[tool.tsum.policy]``, which the policy loader reads
    (engine/policy_toml.py): a policy there is not a setting of its own."""
    return {key: value for key, value in table.items() if key != "policy"}


def _read_toml(path: Path) -> dict[str, Any]:
    import tomllib  # only when a settings file exists: `tsum --help` stays light

    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: invalid TOML ({exc})") from None


def _checked(table: dict[str, Any], path: Path) -> dict[str, Any]:
    unknown = sorted(set(table) - CONFIG_KEYS)
    if unknown:
        raise ConfigError(
            f"{path}: unknown setting(s) {', '.join(unknown)} (known: {', '.join(sorted(CONFIG_KEYS))})"
        )
    if "prompt" in table and "summary_prompt" in table:
        raise ConfigError(
            f"{path}: set prompt (a built-in name or a file) or summary_prompt (the text), not both"
        )
    if "model" in table and "summary_model" in table:
        raise ConfigError(
            f"{path}: model and summary_model are the same setting: set one of them, not both"
        )
    if "concurrency" in table:
        try:
            _int_at_least("concurrency", table["concurrency"], 1, "must be >= 1")
        except ConfigError as exc:
            raise ConfigError(f"{path}: {exc}") from None
    temperature = table.get("temperature")
    if temperature is not None and (
        isinstance(temperature, bool)
        or not isinstance(temperature, (int, float))
        or temperature < 0
    ):
        raise ConfigError(f"{path}: temperature must be a number >= 0, got {temperature!r}")
    if "checkpoint" in table and table["checkpoint"] not in {c.value for c in Checkpoint}:
        raise ConfigError(f"{path}: checkpoint must be turn or call, got {table['checkpoint']!r}")
    if "format" in table:
        from .formats import reader_names  # only when a file names a format

        if table["format"] not in reader_names():
            raise ConfigError(
                f"{path}: unknown format {table['format']!r} (known: {', '.join(reader_names())})"
            )
    try:
        summary_config_from(
            merge_settings({}, table)
        )  # the file's own values, checked where they are written
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    return dict(table)


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
