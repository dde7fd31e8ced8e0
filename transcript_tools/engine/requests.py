"""What the session engine hands out and takes back: a summary request and its outcome.

The session engine never calls a provider itself: it hands out a
``SummaryRequest`` and takes back a ``SummaryOutcome``. Drivers (inline,
concurrent pool, cache) sit between the two.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .messages import Message, Usage
from .seed_defaults import (
    DEFAULT_MAX_TOOL_RESULT_CHARS,
    DEFAULT_MAX_TRANSCRIPT_CHARS,
    SUMMARY_MAX_TOKENS,
)


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    """What the checkpoint asks for: one user message = ``prompt``, no tools."""

    session_id: str
    turn: int
    prompt: str
    model: str | None = None  # SummaryConfig.summary_model; None = provider default
    max_tokens: int = SUMMARY_MAX_TOKENS
    # The messages whose formatted text is in the prompt (the newest ones that fit the
    # cut) and the formatting settings, for providers that read structure rather than
    # text (the offline one). Not part of what determines a response: the prompt is.
    messages: tuple[Message, ...] | None = field(default=None, compare=False, repr=False)
    max_tool_result_chars: int = DEFAULT_MAX_TOOL_RESULT_CHARS
    max_transcript_chars: int = DEFAULT_MAX_TRANSCRIPT_CHARS
    # ``transcript.formatted_blocks`` of ``messages`` with those settings, when the engine
    # made the prompt (it formatted them already): one block per message, oldest first,
    # or with ``formatted_cut`` the newest message's tail alone.
    formatted: tuple[str, ...] | None = field(default=None, compare=False, repr=False)
    formatted_cut: bool = field(default=False, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class SummaryResponse:
    text: str
    model: str
    usage: Usage | None = None  # the summary call's own usage: never enters cost_so_far (seed)


@dataclass(frozen=True, slots=True)
class SummaryOutcome:
    """A response, or the reason there is none (N3: a failure changes nothing)."""

    response: SummaryResponse | None
    error: str | None = None
    cached: bool = False
    attempts: int = 0
    provider: str | None = None  # name of the provider that ran (or cached) it; None: unknown

    @property
    def ok(self) -> bool:
        return self.response is not None
