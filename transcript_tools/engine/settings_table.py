"""Every setting of a run, declared once: its key, kind, default, ``TSUM_*`` name, flags and help.

The table is the one list the rest derives from: the settings-file keys and their checks
(``settings.py``), the environment names, and the click options of every command
(``cli/setting_options.py``: scalar for replay and eval, comma lists for sweep's grid). It
lives with the engine's config so that ``--help`` renders it without importing a provider
or a reader. psf/black declares its settings once too, as its click options, and hands
the settings file to click as ``default_map`` (psf/black:src/black/__init__.py,
``read_pyproject_toml``); tsum's library applies the precedence itself
(``settings.load_settings``), so a script gets the CLI's rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .config import (
    AUTO,
    DEFAULT_BATCH_POLL,
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_PROVIDER,
    DEFAULT_TIMEOUT_S,
    LOCAL_TIMEOUT_S,
    Checkpoint,
    Measure,
    SlotMode,
    TurnPath,
)
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

# A setting's kind: how the environment's text becomes its value, how a settings file's
# value is checked, and which click type parses it.
INT, FLOAT, TEXT, FLAG, WINDOW, PATH = "int", "float", "text", "flag", "window", "path"
CHOICE = "choice"
FORMAT, PROVIDER = "format", "provider"  # names known at run time (readers, provider plug-ins)


@dataclass(frozen=True, slots=True)
class Setting:
    """One setting. ``key``: its settings-file key and ``load_settings`` flag; ``param``:
    the click parameter name; ``default``: the library's, shown in ``--help`` (with
    ``click_default`` click holds it too); ``in_file``: a settings file may set it;
    ``sweeps``: sweep takes a comma list of it (a grid dimension)."""

    key: str
    flags: tuple[str, ...]
    kind: str
    help: str
    param: str = ""
    default: Any = None
    enum: type[StrEnum] | None = None  # kind choice: its values
    low: float | None = None  # the least value (kinds int and float)
    low_open: bool = False  # the least value itself is refused
    click_default: bool = False
    in_file: bool = True
    sweeps: bool = False
    env_name: str = ""

    @property
    def name(self) -> str:
        """The click parameter name."""
        return self.param or self.key

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(member.value for member in self.enum or ())

    def typed(self, value: Any) -> Any:
        """``value`` as the config holds it: a choice's enum member, an int (else ValueError)."""
        try:
            if self.enum is not None:
                return self.enum(value)
            return int(value) if self.kind == INT else value
        except (TypeError, ValueError):
            raise ValueError(f"{self.key} {value_problem(self, value)}") from None

    @property
    def env(self) -> str:
        """The ``TSUM_*`` variable that sets it."""
        return self.env_name or "TSUM_" + self.key.upper()


# One row per setting: key, flags, kind, help, then what differs from Setting's defaults.
# fmt: off
SETTINGS: tuple[Setting, ...] = (
    Setting("trigger_token_ratio", ("--ratio", "--trigger-token-ratio"), FLOAT,
            "Fire when tokens >= max_context_tokens * ratio.",
            default=DEFAULT_TRIGGER_RATIO, sweeps=True),
    Setting("max_context_tokens", ("--max-context-tokens",), WINDOW,
            "The model's context window, or auto: the window the log records (Codex), else its "
            f"model's documented window, else the policy's, else {DEFAULT_MAX_CONTEXT_TOKENS}; "
            "a preset then follows the log's runtime release.",
            default=DEFAULT_MAX_CONTEXT_TOKENS, sweeps=True),
    Setting("debounce_turns", ("--debounce", "--debounce-turns"), INT,
            "At least this many turns between two summaries.",
            default=DEFAULT_DEBOUNCE_TURNS, sweeps=True),
    Setting("max_tool_result_chars", ("--max-tool-result-chars",), INT,
            "Keep the first N characters of each tool result.",
            default=DEFAULT_MAX_TOOL_RESULT_CHARS),
    Setting("max_transcript_chars", ("--max-transcript-chars",), INT,
            "Cap of the formatted conversation.", default=DEFAULT_MAX_TRANSCRIPT_CHARS),
    Setting("summary_marker", ("--marker",), TEXT,
            "Prefix of the injected summary message.", default=DEFAULT_SUMMARY_MARKER),
    Setting("prompt", ("--prompt",), TEXT,
            "Summary prompt: a built-in name (zh, en, ...: `tsum prompts list`) or a file (Jinja "
            "if it has {{ }}, {% %} or {# #} tags, else the seed's plain {messages} form).",
            param="prompt_spec", default=DEFAULT_TEMPLATE),
    Setting("summary_prompt", (), TEXT, "The summary prompt's text (a settings file's own)."),
    Setting("mode", ("--mode",), CHOICE, "Slot mode.",
            default=SlotMode.FOCUSED, enum=SlotMode, sweeps=True),
    Setting("keep_recent_turns", ("--keep-recent-turns",), INT,
            "Focused view: whole turns kept before the summary.",
            default=DEFAULT_KEEP_RECENT_TURNS),
    Setting("path", ("--path",), CHOICE,
            "Turn path: submit_turn (sync) or submit_turn_stream + finalize_turn (stream).",
            param="turn_path", default=TurnPath.SYNC, enum=TurnPath),
    Setting("measure", ("--measure",), CHOICE,
            "Watermark: cumulative cost_so_far (the seed) or the current context size.",
            default=Measure.CUMULATIVE, enum=Measure, sweeps=True),
    Setting("checkpoint", ("--checkpoint",), CHOICE,
            "Run the checkpoint after each user turn (the seed) or each model call; "
            "with call, debounce and keep_recent_turns count calls.",
            default=Checkpoint.TURN, enum=Checkpoint, sweeps=True),
    Setting("format", ("--format",), FORMAT, "", param="fmt"),  # help: cli FormatOption
    Setting("provider", ("--provider",), PROVIDER,
            "Who writes the summaries. anthropic needs ANTHROPIC_API_KEY, openai "
            "OPENAI_API_KEY (not with a local --base-url); offline needs nothing.",
            default=DEFAULT_PROVIDER, click_default=True),
    Setting("summary_model", ("--model",), TEXT,
            "Summary model (default: the provider's own: offline extractive-v1, anthropic "
            "claude-haiku-4-5, openai gpt-4o-mini). "
            "Same setting as model / summary_model in a settings file.",
            param="model", env_name="TSUM_MODEL"),
    Setting("base_url", ("--base-url",), TEXT,
            "API endpoint: any OpenAI-compatible server (vLLM, Ollama, llama.cpp, "
            "LM Studio) with --provider openai, or a proxy."),
    Setting("cache", ("--cache",), PATH,
            "Response cache file (default: $TSUM_HOME/cache.sqlite3 or "
            "~/.tsum/cache.sqlite3; offline uses no cache unless given).", in_file=False),
    Setting("cache_only", ("--cache-only",), FLAG,
            "Never call the API: a missing response fails the run (exit 3).", in_file=False),
    Setting("refresh", ("--refresh",), FLAG,
            "Call the API even on a hit; overwrite.", in_file=False),
    Setting("no_cache", ("--no-cache",), FLAG,
            "Neither read nor write the cache.", in_file=False),
    Setting("concurrency", ("-j", "--concurrency"), INT, "At most N summary calls at once.",
            default=DEFAULT_CONCURRENCY, low=1, click_default=True),
    Setting("timeout", ("--timeout",), FLOAT,
            f"Seconds per summary call attempt. [default: {DEFAULT_TIMEOUT_S:g}; "
            f"{LOCAL_TIMEOUT_S:g} when --base-url is on this machine (localhost, 127.0.0.1, "
            "::1): a CPU model is slow]",
            low=0, low_open=True, in_file=False),
    Setting("temperature", ("--temperature",), FLOAT,
            "Sampling temperature sent with every summary call (0 = the most likely "
            "text; part of the cache key). Default: none sent, the API's or server's own "
            "(a local server's 0.8 makes a small model ramble). Config key: temperature.",
            low=0),
    Setting("max_attempts", ("--max-attempts",), INT,
            "Attempts per summary call (429, 5xx, timeouts and connection errors are retried).",
            default=DEFAULT_MAX_ATTEMPTS, low=1, click_default=True, in_file=False),
    Setting("batch", ("--batch",), FLAG,
            "Send summary calls through the provider's batch API (half price, results "
            "within 24 h), in rounds; resumable: rerun the same command after an interruption.",
            in_file=False),
    Setting("batch_poll", ("--batch-poll",), FLOAT,
            "Seconds between two polls of a batch, growing to 20x (at most 10 min).",
            default=DEFAULT_BATCH_POLL, low=0, low_open=True, click_default=True, in_file=False),
    Setting("price_per_mtok", ("--price-per-mtok",), TEXT,
            "USD per million summary tokens, e.g. 3 or 3/15 (input/output): the end-of-run "
            "line gives batch vs synchronous cost (known models have a dated list price).",
            in_file=False),
    Setting("workers", ("--workers",), INT,
            "Processes reading and evaluating files in parallel (output identical to 1). "
            "[default: config `workers`, else every core]",
            low=1),
)
# fmt: on

SETTING = {setting.key: setting for setting in SETTINGS}
# The settings a file may hold; ``model`` is a second spelling of ``summary_model``.
FILE_KEYS = frozenset(s.key for s in SETTINGS if s.in_file) | {"model"}
# build_executor's options that no settings file holds: flags or the environment only.
PROVIDER_ONLY_KEYS = tuple(s.key for s in SETTINGS if not s.in_file)
# The provider's settings, in the order --help lists them (cli/setting_options.py).
PROVIDER_KEYS = (
    *("provider", "summary_model", "base_url", "cache", "cache_only", "refresh", "no_cache"),
    *("concurrency", "timeout", "temperature", "max_attempts", "batch", "batch_poll"),
    "price_per_mtok",
)
# The provider options' click parameter names (a command can pop these).
PROVIDER_OPTION_NAMES = tuple(SETTING[key].name for key in PROVIDER_KEYS)
_TRUE = {"1", "true", "t", "yes", "y", "on"}


def from_environment(setting: Setting, raw: str) -> Any:
    """The value ``raw`` (a ``TSUM_*`` variable's text) gives ``setting``. Numbers are
    converted loosely: whoever reads the value checks it, with the setting's name."""
    if setting.kind == FLAG:
        return raw.strip().lower() in _TRUE
    if setting.kind not in (INT, FLOAT, WINDOW):
        return raw
    for convert in (int, float):
        try:
            return convert(raw)
        except ValueError:
            continue
    return raw


def value_problem(setting: Setting, value: Any) -> str | None:
    """What is wrong with a settings file's ``value`` for ``setting``, by its kind (None:
    nothing; the engine's config then checks its own fields' ranges)."""
    kind, low = setting.kind, setting.low
    if kind == CHOICE:
        return (
            None
            if value in setting.choices
            else f"must be {' or '.join(setting.choices)}, got {value!r}"
        )
    if kind == FLAG:
        return None if isinstance(value, bool) else f"must be true or false, got {value!r}"
    if kind not in (INT, FLOAT, WINDOW):
        return None if isinstance(value, str) else f"must be text, got {value!r}"
    if kind == WINDOW and value == AUTO:
        return None
    number = (int, float) if kind == FLOAT else int
    if (
        not isinstance(value, bool)
        and isinstance(value, number)
        and (low is None or value > low or (value == low and not setting.low_open))
    ):
        return None
    what = {INT: "an integer", FLOAT: "a number", WINDOW: "an integer or auto"}[kind]
    bound = "" if low is None else f" {'>' if setting.low_open else '>='} {low:g}"
    return f"must be {what}{bound}, got {value!r}"
