"""A compaction policy as data: one frozen value per part, each part with one home.

A policy says *when* the context is compacted (``Trigger``), what is cleared first
without an LLM call (``PrePass``), what stays verbatim (``Keep``), what the
summarizer is given (``SummarizerInput``), where the summary goes (``Placement``)
and how it is written (``SummarySpec``); ``runtime`` names the agent runtime whose
prompt layout it models (where that runtime marks cache breakpoints, ``cost/breakpoints.py``).
The seed's checkpoint is one value of this
type (preset ``seed``); the presets of the leading agent runtimes are others
(``transcript_tools/engine/presets/*.toml``, sources in ``docs/policies.md``).

Every value checks itself when it is built: a bad one raises ``ConfigError`` whose
text starts with the key (``trigger.ratio: must be in (0, 1], got 1.5``), so the TOML
loader only has to put the file name in front. What each part does to a view is in
``compaction.py``; the slot that holds a policy's view is ``policy_slot.py``; the session
engine applies the trigger (``policy_skip`` there). The seed's policy runs the seed's own
engine path, unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, TypeVar

from ..errors import ConfigError
from ..writable import MAX_SETTING_INT
from .kinds import Checkpoint, Threshold, TriggerMeasure
from .seed_defaults import (
    DEFAULT_DEBOUNCE_TURNS,
    DEFAULT_KEEP_RECENT_TURNS,
    DEFAULT_MAX_TOOL_RESULT_CHARS,
    DEFAULT_MAX_TRANSCRIPT_CHARS,
    DEFAULT_SUMMARY_MARKER,
    DEFAULT_TEMPLATE,
    DEFAULT_TRIGGER_RATIO,
    SUMMARY_MAX_TOKENS,
)

PREPASS_KINDS = ("none", "clear-tool-results")
KEEP_KINDS = ("turns", "messages", "tokens", "user-messages", "fraction", "none")
INPUT_KINDS = ("history", "dropped", "dropped-tail", "since-last-summary")
ROLES = ("system", "user", "assistant")
POSITIONS = ("front", "end", "tail")
RUNTIMES = ("claude-code", "opencode", "automatic")  # cache-breakpoint placements known


_Kind = TypeVar("_Kind", bound=StrEnum)


def _fail(key: str, text: str, value: Any) -> ConfigError:
    return ConfigError(f"{key}: {text}, got {value!r}")


def _member(key: str, value: Any, kind: type[_Kind]) -> _Kind:
    """``value`` (a TOML string, or the member itself) as a member of ``kind``."""
    try:
        return kind(value)
    except ValueError:
        raise _fail(key, f"must be one of {', '.join(kind)}", value) from None


_CHOICES = {
    "runtime": RUNTIMES,
    "prepass.kind": PREPASS_KINDS,
    "keep.kind": KEEP_KINDS,
    "summarizer_input.kind": INPUT_KINDS,
    "placement.role": ROLES,
    "placement.position": POSITIONS,
}


def _check(part: Any, prefix: str, names: str) -> None:
    """Check the ``names`` fields of ``part``, in that order, by the type of their
    default; an enum's TOML string becomes its member (frozen: set once here)."""
    defaults = {f.name: f.default for f in fields(part)}
    for name in names.split():
        key = f"{prefix}.{name}" if prefix else name
        value, default = getattr(part, name), defaults[name]
        if isinstance(default, StrEnum):
            object.__setattr__(part, name, _member(key, value, type(default)))
        elif problem := _problem(key, value, default):
            raise _fail(key, problem, value)


def _problem(key: str, value: Any, default: Any) -> str | None:
    """What is wrong with ``value`` for a field with this ``default``, None if nothing: one
    of ``_CHOICES``, an integer >= 0, a fraction (0 too, meaning unset, where the default
    is 0), a string, a flag or a list of tool names."""
    if key in _CHOICES:
        return None if value in _CHOICES[key] else f"must be one of {', '.join(_CHOICES[key])}"
    if isinstance(default, bool):
        return None if isinstance(value, bool) else "must be true or false"
    if isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            return "must be an integer >= 0"
        return f"must be at most {MAX_SETTING_INT} (2^63-1)" if value > MAX_SETTING_INT else None
    if isinstance(default, float):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return "must be a number"
        if 0 < value <= 1 or (default == 0 and value == 0):
            return None
        return "must be in (0, 1]" + (" or 0" if default == 0 else "")
    if isinstance(default, str):
        return None if isinstance(value, str) else "must be a string"
    if isinstance(value, tuple) and all(isinstance(t, str) for t in value):
        return None
    return "must be a list of tool names"


@dataclass(frozen=True, slots=True)
class Trigger:
    """When the summarizing checkpoint fires.

    ``measure``: ``cumulative`` (the seed: every call's input + output so far),
    ``current`` (the size of the view the model is sent) or ``conversation`` (its
    conversation messages alone, estimated: no system messages, nothing hidden, no
    recorded prompt — Aider's ``done_messages``). ``threshold``: ``ratio``
    (window × ratio, clamped to [floor_tokens, ceiling_tokens] when those are set; with a
    reserve set too, the earlier of that and the reserve line), ``tokens`` (absolute),
    ``reserve`` (window × (1 − reserve_ratio) − reserve_tokens), ``every`` (every N
    units), ``messages`` (the view holds at least N messages) or ``never`` (no summary:
    a pre-pass-only policy). ``debounce``: units between two summaries (the seed's F6).
    ``window``: the context window the runtime's own models have, used where a run names
    none (no ``--max-context-tokens``, no window in the log); 0: the run's default. A
    reserve below which nothing is left (Claude Code's 33K of a 32K default) would
    otherwise fire at every unit.
    """

    measure: TriggerMeasure = TriggerMeasure.CUMULATIVE
    threshold: Threshold = Threshold.RATIO
    ratio: float = DEFAULT_TRIGGER_RATIO  # the seed's
    tokens: int = 0
    reserve_tokens: int = 0
    reserve_ratio: float = 0.0
    floor_tokens: int = 0
    ceiling_tokens: int = 0
    every: int = 0
    messages: int = 0
    debounce: int = DEFAULT_DEBOUNCE_TURNS  # the seed's
    unit: Checkpoint = Checkpoint.TURN
    window: int = 0

    def __post_init__(self) -> None:
        _check(self, "trigger", "measure threshold unit ratio reserve_ratio")
        if self.reserve_ratio == 1:
            raise _fail("trigger.reserve_ratio", "must be below 1 (it reserves the window)", 1.0)
        ints = "tokens reserve_tokens floor_tokens ceiling_tokens every messages debounce window"
        _check(self, "trigger", ints)
        needs = {
            Threshold.TOKENS: "tokens",
            Threshold.RESERVE: "reserve_tokens",
            Threshold.EVERY: "every",
            Threshold.MESSAGES: "messages",
        }
        if self.threshold in needs and getattr(self, needs[self.threshold]) < 1:
            name = needs[self.threshold]
            raise _fail(f"trigger.{name}", f"must be >= 1 with threshold = {self.threshold}", 0)
        if self.ceiling_tokens and self.ceiling_tokens < self.floor_tokens:
            raise _fail(
                "trigger.ceiling_tokens", "must be 0 or >= floor_tokens", self.ceiling_tokens
            )


@dataclass(frozen=True, slots=True)
class PrePass:
    """Clearing old tool results before the trigger check, with no LLM call.

    ``kind = "clear-tool-results"`` replaces the content of old tool results with
    ``placeholder``, except: the ``keep_newest`` newest, those within the newest
    ``protect_tokens`` tokens of tool output, those in the last ``protect_turns``
    units, and those of ``exclude_tools``; with ``only_tools`` set, only those tools'
    outputs are cleared at all (Claude Code's built-in compactable tools). It runs when the view is at least
    ``trigger_tokens``, or window × ``trigger_ratio`` (both 0: every unit), and holds
    more than ``min_results`` tool results,
    and changes nothing unless it frees at least ``min_freed_tokens``.
    ``clear_inputs`` also clears the calls' arguments.
    """

    kind: str = "none"
    trigger_tokens: int = 0
    trigger_ratio: float = 0.0
    min_results: int = 0
    keep_newest: int = 0
    protect_tokens: int = 0
    protect_turns: int = 0
    min_freed_tokens: int = 0
    placeholder: str = "[tool result cleared]"
    exclude_tools: tuple[str, ...] = ()
    clear_inputs: bool = False
    only_tools: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        ints = "trigger_tokens min_results keep_newest protect_tokens"
        _check(self, "prepass", f"kind {ints} trigger_ratio")
        if self.trigger_tokens and self.trigger_ratio:
            raise _fail(
                "prepass.trigger_ratio",
                "set trigger_tokens or trigger_ratio, not both",
                self.trigger_ratio,
            )
        rest = "protect_turns min_freed_tokens placeholder clear_inputs exclude_tools only_tools"
        _check(self, "prepass", rest)
        if self.kind != "none" and not self.placeholder:
            raise _fail(
                "prepass.placeholder",
                "must not be empty (an empty tool result is invalid for most APIs)",
                "",
            )


@dataclass(frozen=True, slots=True)
class Keep:
    """What stays verbatim after a summary (besides what came after it, which always stays).

    ``kind``: ``turns`` (the last N whole units), ``messages`` (the last N messages),
    ``tokens`` (a tail of at most the budget), ``user-messages`` (the person's messages,
    newest first, up to the budget; the oldest kept one cut), ``fraction`` (the newest
    ``fraction`` of the history by characters, starting at a turn) or ``none``.
    The token budget is ``tokens``, else window × ``tokens_ratio`` clamped to
    [floor_tokens, ceiling_tokens]; with ``turns`` / ``messages`` it caps the tail.
    ``pairs_intact``: never split a tool call from its result. ``system``: keep the
    system messages. ``first_user``: also keep the first user message (the task).
    ``at_least``: the token walk keeps the message that crosses the budget too, so the
    tail is at least the budget (Cline's ``findCutIndex``), not at most.
    ``latest_turn``: never cut inside the latest person turn: it is kept whole, whatever
    its size (Cline's ``lastTurnStartIndex``).
    """

    kind: str = "turns"
    turns: int = DEFAULT_KEEP_RECENT_TURNS
    messages: int = 0
    tokens: int = 0
    tokens_ratio: float = 0.0
    floor_tokens: int = 0
    ceiling_tokens: int = 0
    fraction: float = 0.0
    pairs_intact: bool = True
    system: bool = True
    first_user: bool = False
    at_least: bool = False
    latest_turn: bool = False

    def __post_init__(self) -> None:
        sizes = "turns messages tokens floor_tokens ceiling_tokens tokens_ratio fraction"
        _check(self, "keep", f"kind {sizes} pairs_intact system first_user at_least latest_turn")
        if self.kind == "turns" and self.turns < 1:
            raise _fail("keep.turns", "must be >= 1 with kind = turns", self.turns)
        if self.kind == "messages" and self.messages < 1:
            raise _fail("keep.messages", "must be >= 1 with kind = messages", self.messages)
        if self.kind in ("tokens", "user-messages") and not (self.tokens or self.tokens_ratio):
            raise _fail(
                "keep.tokens", f"or keep.tokens_ratio must be set with kind = {self.kind}", 0
            )
        if self.kind == "fraction" and not 0 < self.fraction < 1:
            raise _fail("keep.fraction", "must be in (0, 1) with kind = fraction", self.fraction)
        if self.ceiling_tokens and self.ceiling_tokens < self.floor_tokens:
            raise _fail("keep.ceiling_tokens", "must be 0 or >= floor_tokens", self.ceiling_tokens)


@dataclass(frozen=True, slots=True)
class SummarizerInput:
    """What the summary call is given, formatted by ``format_messages_as_text``.

    ``kind``: ``history`` (the whole history: the seed), ``dropped`` (only what the
    view drops), ``dropped-tail`` (the newest ``tail_tokens`` of what is dropped) or
    ``since-last-summary`` (the kept system/task messages, the previous summary and
    everything after it). ``max_transcript_chars`` / ``max_tool_result_chars``: the
    formatter's caps (0: no cap). Whether the previous summary is passed to the
    template as ``previous_summary`` is the template's choice (it always receives it).
    """

    kind: str = "history"
    tail_tokens: int = 0
    max_transcript_chars: int = DEFAULT_MAX_TRANSCRIPT_CHARS
    max_tool_result_chars: int = DEFAULT_MAX_TOOL_RESULT_CHARS

    def __post_init__(self) -> None:
        caps = "max_transcript_chars max_tool_result_chars"
        _check(self, "summarizer_input", f"kind tail_tokens {caps}")
        if self.kind == "dropped-tail" and self.tail_tokens < 1:
            raise _fail("summarizer_input.tail_tokens", "must be >= 1 with kind = dropped-tail", 0)


@dataclass(frozen=True, slots=True)
class Placement:
    """Where the summary goes in the next view.

    ``role`` of the summary message; ``position``: ``front`` (right after the leading
    system messages, before what is kept), ``end`` (after what is kept, before what comes
    next: where a runtime appends it) or ``tail`` (the very end of every view, after what
    comes next too: the seed's ``filter_focused``).
    The message text is ``marker + " " + summary`` (just the summary when ``marker`` is
    empty). ``lead_in``: a user message before an assistant-role summary;
    ``acknowledgement``: an assistant message after a user-role summary.
    """

    role: str = "system"
    position: str = "tail"
    marker: str = DEFAULT_SUMMARY_MARKER
    lead_in: str = ""
    acknowledgement: str = ""

    def __post_init__(self) -> None:
        _check(self, "placement", "role position marker lead_in acknowledgement")
        if self.lead_in and self.role != "assistant":
            raise _fail("placement.lead_in", "needs role = assistant", self.lead_in)
        if self.acknowledgement and self.role != "user":
            raise _fail("placement.acknowledgement", "needs role = user", self.acknowledgement)


@dataclass(frozen=True, slots=True)
class SummarySpec:
    """How the summary is written: a template (built-in name or file) and the
    summary call's ``max_tokens`` (0: the runtime sets none; tsum then uses the seed's 1024)."""

    template: str = DEFAULT_TEMPLATE
    max_tokens: int = SUMMARY_MAX_TOKENS

    def __post_init__(self) -> None:
        _check(self, "summary", "template")
        if not self.template.strip():
            raise _fail("summary.template", "must name a built-in template or a file", "")
        _check(self, "summary", "max_tokens")


@dataclass(frozen=True, slots=True)
class Policy:
    """A whole compaction policy. The defaults of every part are the seed's. ``runtime``:
    whose prompt layout it models (one of ``RUNTIMES``); empty: the log's runtime."""

    name: str = "seed"
    description: str = ""
    runtime: str = ""
    trigger: Trigger = field(default_factory=Trigger)
    prepass: PrePass = field(default_factory=PrePass)
    keep: Keep = field(default_factory=Keep)
    summarizer_input: SummarizerInput = field(default_factory=SummarizerInput)
    placement: Placement = field(default_factory=Placement)
    summary: SummarySpec = field(default_factory=SummarySpec)

    def __post_init__(self) -> None:
        _check(self, "", "name")
        if not self.name.strip():
            raise _fail("name", "must not be empty", self.name)
        _check(self, "", "description" if self.runtime == "" else "description runtime")
        for part in PARTS:
            value = getattr(self, part)
            if type(value) is not PART_TYPES[part]:
                raise _fail(part, f"must be a {PART_TYPES[part].__name__}", value)
        if self.trigger.threshold is Threshold.NEVER and self.prepass.kind == "none":
            raise _fail(
                "trigger.threshold",
                "is never and there is no prepass: the policy does nothing",
                "never",
            )

    @property
    def summarizes(self) -> bool:
        """Whether the policy ever calls the summarizer (pre-pass-only policies do not)."""
        return self.trigger.threshold is not Threshold.NEVER


PART_TYPES: dict[str, type] = {
    "trigger": Trigger,
    "prepass": PrePass,
    "keep": Keep,
    "summarizer_input": SummarizerInput,
    "placement": Placement,
    "summary": SummarySpec,
}
PARTS = tuple(PART_TYPES)


def part_fields(part: str) -> tuple[str, ...]:
    """The keys of one part, in their declared order (the TOML order)."""
    return tuple(f.name for f in fields(PART_TYPES[part]))
