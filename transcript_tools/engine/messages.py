"""The seed's Message enum as frozen dataclasses, plus Usage.

Variants (seed, Phase 10/16): System; User text (here: user blocks, text and
others); Assistant with text / tool_use / other blocks; ToolResult with
tool_call_id, content and is_error; UserImage.
"""

from __future__ import annotations

import inspect
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, TypeVar

_T = TypeVar("_T")


def _fast_init(cls: type[_T]) -> type[_T]:
    """Give a frozen, slotted dataclass an ``__init__`` that stores each field through
    its slot's descriptor.

    Same signature, defaults and resulting object as the generated one, about twice
    as fast: the generated one calls ``object.__setattr__(self, name, value)`` (frozen
    classes must), which looks the name up on the type every time, and a message
    and its blocks are built for every line of every transcript (measured, with the
    decisions it saves: benchmarks/PROFILE.md, "The exec-built __init__ of the messages").

    It stores the fields and does nothing else, so a class that needs more from its
    ``__init__`` — a ``__post_init__`` (validation, a derived field), an ``InitVar``, a
    field with ``init=False`` or a ``default_factory`` — is refused here, when the module
    is imported, instead of silently skipping that code. Drop the decorator from it.
    """
    params_of = getattr(cls, "__dataclass_params__", None)
    if params_of is None or not params_of.frozen or "__slots__" not in cls.__dict__:
        raise TypeError(f"{cls.__name__}: _fast_init is for frozen, slotted dataclasses")
    if hasattr(cls, "__post_init__"):
        raise TypeError(
            f"{cls.__name__} defines __post_init__, which _fast_init's __init__ would never call"
        )
    generated = inspect.signature(cls.__init__)
    namespace: dict[str, Any] = {}
    params, body = [], []
    for f in fields(cls):  # type: ignore[arg-type]
        if f.default_factory is not MISSING or not f.init:
            raise TypeError(
                f"{cls.__name__}.{f.name}: _fast_init supports neither default_factory nor init=False"
            )
        if f.default is MISSING:
            params.append(f.name)
        else:
            namespace[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
        namespace[f"_set_{f.name}"] = cls.__dict__[f.name].__set__  # the slot's member descriptor
        body.append(f"    _set_{f.name}(self, {f.name})\n")
    exec(f"def __init__(self, {', '.join(params)}):\n{''.join(body)}", namespace)
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__annotations__ = dict(cls.__init__.__annotations__)
    if inspect.signature(init) != generated:  # an InitVar, or a dataclass feature added later
        raise TypeError(
            f"{cls.__name__}: _fast_init's __init__{inspect.signature(init)} is not {generated}"
        )
    cls.__init__ = init  # type: ignore[method-assign]
    return cls


@_fast_init
@dataclass(frozen=True, slots=True)
class Usage:
    """Recorded usage of one LLM call.

    ``input_tokens`` is the whole prompt the call was sent (for Claude Code:
    input + cache creation + cache read); the cache fields say how much of it
    came from / went to the prompt cache and are informational.
    ``cache_write_1h_tokens`` is the part of ``cache_creation_tokens`` written with a
    1-hour lifetime (Anthropic's ``cache_creation.ephemeral_1h_input_tokens``), billed
    at a higher rate than the 5-minute rest (docs/cost.md, "Cache lifetimes").
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    cache_write_1h_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_creation_tokens + other.cache_creation_tokens,
            self.cache_write_1h_tokens + other.cache_write_1h_tokens,
        )


@_fast_init
@dataclass(frozen=True, slots=True)
class TextBlock:
    text: str


@_fast_init
@dataclass(frozen=True, slots=True)
class ToolUseBlock:
    id: str
    name: str
    input: Any = None  # the call's arguments as a JSON value (never shown in summaries)


@_fast_init
@dataclass(frozen=True, slots=True)
class OtherBlock:
    """Any non-text block: image, audio, file, thinking, ...; formatted as ``[{kind}]``."""

    kind: str
    data: Any = None  # the original payload, kept for round-trips (may be large)


Block = TextBlock | ToolUseBlock | OtherBlock


@_fast_init
@dataclass(frozen=True, slots=True)
class SystemMessage:
    text: str
    role = "system"


# Who wrote a user-role message (docs/spec.md, "Turns"). Only a person (or the task
# statement) starts a turn; observations and injections ride in the turn they answer.
PERSON = "person"  # typed by a person, or the task statement
OBSERVATION = (
    "observation"  # an environment's output sent back as a user message (text-protocol agents)
)
INJECTED = (
    "injected"  # written by the runtime: compaction summaries, environment context, reminders
)
ORIGINS = (PERSON, OBSERVATION, INJECTED)


@_fast_init
@dataclass(frozen=True, slots=True)
class UserMessage:
    """A user message: text blocks and possibly non-text blocks (images pasted with text).

    ``origin`` says who wrote it; the reader of each format decides (docs/formats.md).
    """

    blocks: tuple[Block, ...]
    origin: str = PERSON
    role = "user"

    @classmethod
    def text(cls, text: str) -> UserMessage:
        return cls((TextBlock(text),))


@_fast_init
@dataclass(frozen=True, slots=True)
class UserImageMessage:
    """The seed's ``Message::UserImage``: a user message that is only an image."""

    media_type: str = ""
    data: Any = None
    role = "user_image"


# The model of an assistant message the runtime wrote itself, not a model (Claude Code's
# "<synthetic>": API errors, interrupts). It is not a model call: no usage is recorded
# for it and none may be estimated (docs/spec.md, "Turns": a turn's usage is its calls').
SYNTHETIC_MODEL = "<synthetic>"


@_fast_init
@dataclass(frozen=True, slots=True)
class AssistantMessage:
    blocks: tuple[Block, ...]
    usage: Usage | None = None  # recorded usage of the call that produced this message
    model: str | None = None
    role = "assistant"

    @classmethod
    def text(cls, text: str, usage: Usage | None = None) -> AssistantMessage:
        return cls((TextBlock(text),), usage)


@_fast_init
@dataclass(frozen=True, slots=True)
class ToolResultMessage:
    tool_call_id: str
    content: str
    is_error: bool = False
    role = "tool"


Message = SystemMessage | UserMessage | UserImageMessage | AssistantMessage | ToolResultMessage


def is_turn_start(message: Message) -> bool:
    """A turn starts at a message a person wrote, or the task statement (docs/spec.md, "Turns").

    Tool results, observations and runtime injections never start one."""
    if type(message) is UserMessage:
        return message.origin == PERSON
    return type(message) is UserImageMessage


@_fast_init
@dataclass(frozen=True, slots=True)
class Compaction:
    """A compaction the original agent recorded (Claude Code / Codex), for side-by-side output."""

    message_index: int  # index in Conversation.messages of the first message after it
    source: str  # e.g. "claude-code:isCompactSummary", "codex:compacted"
    pre_tokens: int | None = None
    # the runtime's summary text where the log keeps it apart from the messages (Codex's
    # ``compacted`` item); None: not recorded there (tsum eval scores it when present)
    summary: str | None = None
    # What the runtime recorded about it (None: not recorded). ``trigger``: "auto" or
    # "manual" (a manual one has no threshold to predict); ``post_tokens``: the context
    # size the runtime reports after it (Claude Code ``compactMetadata.postTokens``);
    # ``version`` / ``model``: the runtime's version and the model in use when it
    # compacted; ``kept_messages``: the user messages the runtime kept verbatim (Codex
    # ``replacement_history``). Read by ``tsum fidelity`` (docs/fidelity.md).
    trigger: str | None = None
    post_tokens: int | None = None
    version: str | None = None
    model: str | None = None
    kept_messages: int | None = None
    # the text of the person's messages the runtime kept verbatim (Codex
    # ``replacement_history`` less its injected context; Claude Code
    # ``compactMetadata.preservedMessages``, () where it names none): what the agent's
    # own view kept of each earlier one (engine/person_fates.py)
    kept_texts: tuple[str, ...] | None = None
    # the line of the log that records it (the first, where two lines record one), where
    # the reader knows it: what a note about it names (None: not known)
    line: int | None = None


SIDECHAIN = "sidechain"  # an inline subagent's (Task) call, logged beside the main chain
REWOUND = "rewound"  # a call of a branch the person rewound (abandoned, but billed)


@_fast_init
@dataclass(frozen=True, slots=True)
class OffChainCall:
    """A model call the log records and the provider billed, outside the messages the
    replay reads (docs/cost.md, "The whole bill"): priced beside the replayed calls."""

    model: str | None
    usage: Usage
    kind: str  # SIDECHAIN or REWOUND


@dataclass(slots=True)
class Conversation:
    """One session read from disk, already in the Message model."""

    session_id: str
    path: str
    format: str
    messages: list[Message] = field(default_factory=list)
    compactions: list[Compaction] = field(default_factory=list)
    context_window: int | None = None  # model's window if the log records it (Codex)
    # the version of the runtime that wrote the log, where it says (Claude Code entries'
    # ``version``, Codex ``session_meta.cli_version``): presets follow it
    # (engine/runtime_policy.py)
    runtime_version: str | None = None
    warnings: list[str] = field(default_factory=list)
    line: int | None = (
        None  # first line of this conversation in its file (multi-conversation files)
    )
    # The task's result as the log records it (tau-bench: {"reward": 1.0}), where it does:
    # the ORIGINAL run's outcome, reported beside its cost (docs/cost.md).
    outcome: dict[str, Any] | None = None
    # billed calls the replay does not read (inline subagents, rewound branches)
    off_chain_calls: list[OffChainCall] = field(default_factory=list)
    # Why a session read has nothing to replay, where its reader can tell (no prompt a
    # person wrote and no model call: an SDK session whose replies are all synthetic).
    skipped: str | None = None

    def empty_warning(self) -> str | None:
        """What replay and inspect say of a conversation with no message: the reader's
        reason, else that nothing was read (usually the wrong --format)."""
        if self.messages:
            return None
        if self.skipped is not None:
            return f"nothing to replay: {self.skipped}; skipped"
        return f"no messages read as {self.format} (is the file in that format? see --format)"

    def own_warnings(self) -> list[str]:
        """What its reader dropped or ignored (a rewound branch, canned replies...), then
        ``empty_warning``: what every command that reads it says of it, each line worded by
        ``reporter.session_warning``."""
        empty = self.empty_warning()
        return [*self.warnings, *([] if empty is None else [empty])]

    # Slash commands the log records and the reader leaves out of the messages (Claude
    # Code's /clear, /compact, /model ...): name -> how many times (tsum inspect)
    commands: dict[str, int] = field(default_factory=dict)

    def __repr__(self) -> str:  # counts, not every message's text
        return (
            f"<Conversation {self.session_id} ({self.format}, {self.path}): "
            f"{len(self.messages)} message(s), {len(self.compactions)} compaction(s)>"
        )
