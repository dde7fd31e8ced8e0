"""SummaryConfig (the seed's six fields, F1) and the replay settings around it.

One precedence rule for every setting (``settings.PRECEDENCE``): command line > environment
(``TSUM_*``) > settings file (``--config``, ``./tsum.toml`` or ``[tool.tsum]`` in
``./pyproject.toml``) > default. ``settings.merge_settings`` is its one home.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..writable import MAX_SETTING_INT
from .kinds import Checkpoint as Checkpoint
from .kinds import Measure as Measure
from .seed_defaults import (
    DEFAULT_DEBOUNCE_TURNS,
    DEFAULT_KEEP_RECENT_TURNS,
    DEFAULT_MAX_CONTEXT_TOKENS,
    DEFAULT_MAX_TOOL_RESULT_CHARS,
    DEFAULT_MAX_TRANSCRIPT_CHARS,
    DEFAULT_SUMMARY_MARKER,
    DEFAULT_TEMPLATE,
    DEFAULT_TRIGGER_RATIO,
)

if TYPE_CHECKING:  # only an annotation here: `tsum replay --help` need not build the policy types
    from .policy import Policy

AUTO = "auto"  # --max-context-tokens auto: the window the log records, else the default


def _default_prompt() -> str:
    from .prompt import builtin_template_source

    return builtin_template_source(DEFAULT_TEMPLATE)


@dataclass(frozen=True, slots=True)
class SummaryConfig:
    """F1. Defaults are the seed's; the last two fields make its constants configurable."""

    trigger_token_ratio: float = DEFAULT_TRIGGER_RATIO
    max_context_tokens: int = DEFAULT_MAX_CONTEXT_TOKENS
    summary_prompt: str = field(default_factory=_default_prompt)
    debounce_turns: int = DEFAULT_DEBOUNCE_TURNS
    summary_model: str | None = None
    max_tool_result_chars: int = DEFAULT_MAX_TOOL_RESULT_CHARS
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
    if value > MAX_SETTING_INT:
        raise ConfigError(f"{name} must be at most {MAX_SETTING_INT} (2^63-1), got {value}")


class SlotMode(StrEnum):
    FOCUSED = "focused"
    FULL = "full"


class TurnPath(StrEnum):
    SYNC = "sync"  # submit_turn
    STREAM = "stream"  # submit_turn_stream + finalize_turn


@dataclass(frozen=True, slots=True)
class ReplaySettings:
    """Everything besides SummaryConfig that shapes a replay's decisions."""

    summary: SummaryConfig | None = field(default_factory=SummaryConfig)  # None: N2, no checkpoint
    mode: SlotMode = SlotMode.FOCUSED
    keep_recent_turns: int = DEFAULT_KEEP_RECENT_TURNS
    path: TurnPath = TurnPath.SYNC
    measure: Measure = Measure.CUMULATIVE
    template_name: str = DEFAULT_TEMPLATE
    dry_run: bool = False
    checkpoint: Checkpoint = Checkpoint.TURN
    # --max-context-tokens auto: the log's own window where it records one (per session)
    auto_window: bool = False
    # --policy: a compaction policy other than the seed's (policy_engine.with_policy sets
    # the fields above from it); None runs the seed's checkpoint exactly.
    policy: Policy | None = None

    def __post_init__(self) -> None:
        _int_at_least("keep_recent_turns", self.keep_recent_turns, 1, "must be >= 1")


DEFAULT_CONCURRENCY = 8  # summary calls (and sessions) in flight at once

# The provider options' defaults (RunSettings.provider). They are used by providers/ and
# replay/batch.py; they live here, import-light, so that --help renders them without
# importing the providers (tests/cli/test_startup.py).
DEFAULT_PROVIDER = "offline"  # no network, no key: the README's first command
DEFAULT_MAX_ATTEMPTS = 4  # per summary call: the first try and three retries
# A provider whose summary calls failed this many times in a row (each after its retries)
# is down for the run: no more calls to it (a hung server at the local-server timeout
# would otherwise be retried at every turn, hours for one corpus).
DEFAULT_BREAKER_FAILURES = 5
DEFAULT_MAX_CONNECTIONS = 32  # an SDK client's HTTP connection pool
DEFAULT_TIMEOUT_S = 60.0  # per attempt, against a hosted API
# Against a server on this machine (llama.cpp, Ollama, vLLM, LM Studio on a CPU): with a
# 135M model on 2 idle cores one summary took 10-73 s (CI's llama.cpp smoke test), on 2
# loaded cores over 10 minutes; and a server with one slot queues tsum's concurrent calls,
# so the wait counts too.
LOCAL_TIMEOUT_S = 600.0
DEFAULT_BATCH_POLL = 30.0  # seconds between two polls of a batch, at first (--batch-poll)

# The workflows' own defaults, here for the same reason: the library's front door (api.py)
# and the CLI show them without importing diff/ or eval/.
# replay --out-format: the views under DIR/compressed as written, or as ATIF trajectories
OUT_FORMATS = ("native", "atif")
DEFAULT_DIFF_CONTEXT = 3  # lines of context around each change in a unified diff
DEFAULT_MAX_DROP = 0.05  # check: the artifact recall may drop by five percentage points


@dataclass(frozen=True, slots=True)
class RunSettings:
    """Every setting of a run after the precedence rule (``settings.load_settings``): what
    replay, sweep, eval and check are handed, whoever built it (the CLI or a script)."""

    settings: ReplaySettings
    template: Any  # engine.prompt.PromptTemplate (typed loosely: config stays import-light)
    fmt: str | None
    provider: dict[str, Any]  # build_executor's options: provider, model, base_url, cache flags…
    concurrency: int
    values: dict[str, Any]  # the merged settings by file key
    skip_bad_lines: bool = False
