"""SummaryConfig (the seed's six fields, F1) and the replay settings around it.

One precedence rule for every setting (``PRECEDENCE``): command line > environment
(``TSUM_*``) > settings file (``--config``, ``./tsum.toml`` or ``[tool.tsum]`` in
``./pyproject.toml``) > default. ``merge_settings`` is its one home.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from .errors import ConfigError

AUTO = "auto"  # --max-context-tokens auto: the window the log records, else the default
DEFAULT_SUMMARY_MARKER = "[上下文摘要]"  # the seed's filter_focused marker
DEFAULT_MAX_TRANSCRIPT_CHARS = 30_000  # the seed: whole conversation text capped at 30K chars


def _default_prompt() -> str:
    from .prompt import builtin_template_source

    return builtin_template_source("zh")


@dataclass(frozen=True, slots=True)
class SummaryConfig:
    """F1. Defaults are the seed's; the last two fields make its constants configurable."""

    trigger_token_ratio: float = 0.75
    max_context_tokens: int = 32_000
    summary_prompt: str = field(default_factory=_default_prompt)
    debounce_turns: int = 3
    summary_model: str | None = None
    max_tool_result_chars: int = 500
    max_transcript_chars: int = DEFAULT_MAX_TRANSCRIPT_CHARS
    summary_marker: str = DEFAULT_SUMMARY_MARKER

    def __post_init__(self) -> None:
        validate(self)

    @property
    def threshold(self) -> float:
        # F2: fire when tokens >= max_context_tokens * trigger_token_ratio
        return self.max_context_tokens * self.trigger_token_ratio


def validate(cfg: SummaryConfig) -> None:
    ratio = cfg.trigger_token_ratio
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not 0 < ratio <= 1:
        raise ConfigError(f"trigger_token_ratio must be in (0, 1], got {ratio!r}")
    _int_at_least("max_context_tokens", cfg.max_context_tokens, 1, "must be > 0")
    _int_at_least("debounce_turns", cfg.debounce_turns, 0, "must be >= 0")
    _int_at_least("max_tool_result_chars", cfg.max_tool_result_chars, 0, "must be >= 0")
    _int_at_least("max_transcript_chars", cfg.max_transcript_chars, 1, "must be > 0")
    if not isinstance(cfg.summary_prompt, str) or not cfg.summary_prompt.strip():
        raise ConfigError("summary_prompt must be a non-empty template")
    if cfg.summary_model is not None and (
        not isinstance(cfg.summary_model, str) or not cfg.summary_model
    ):
        raise ConfigError("summary_model must be a model name or unset")


def _int_at_least(name: str, value: Any, low: int, text: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ConfigError(f"{name} {text}, got {value!r}")


class SlotMode(StrEnum):
    FOCUSED = "focused"
    FULL = "full"


class TurnPath(StrEnum):
    SYNC = "sync"  # submit_turn
    STREAM = "stream"  # submit_turn_stream + finalize_turn


class Measure(StrEnum):
    CUMULATIVE = "cumulative"  # the seed: cost_so_far.total_tokens
    CURRENT = "current"  # size of the context the model is sent next turn


class Checkpoint(StrEnum):
    """Where the checkpoint runs (DESIGN §4): after each user turn (the seed) or after
    each model call (``--checkpoint call``: every rule that counts turns counts calls)."""

    TURN = "turn"
    CALL = "call"


DEFAULT_KEEP_RECENT_TURNS = 3  # = the default debounce: no turn since the last summary is dropped


@dataclass(frozen=True, slots=True)
class ReplaySettings:
    """Everything besides SummaryConfig that shapes a replay's decisions."""

    summary: SummaryConfig | None = field(default_factory=SummaryConfig)  # None: N2, no checkpoint
    mode: SlotMode = SlotMode.FOCUSED
    keep_recent_turns: int = DEFAULT_KEEP_RECENT_TURNS
    path: TurnPath = TurnPath.SYNC
    measure: Measure = Measure.CUMULATIVE
    template_name: str = "zh"
    dry_run: bool = False
    checkpoint: Checkpoint = Checkpoint.TURN
    # --max-context-tokens auto: the log's own window where it records one (per session)
    auto_window: bool = False

    def __post_init__(self) -> None:
        _int_at_least("keep_recent_turns", self.keep_recent_turns, 1, "must be >= 1")


# ---- files -------------------------------------------------------------------

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
                if table:
                    return _checked(table, candidate)
        return {}
    if not path.is_file():
        raise ConfigError(f"{path}: no such config file")
    data = _read_toml(path)
    if path.name == "pyproject.toml":
        data = data.get("tool", {}).get("tsum", {})
    return _checked(data, path)


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
