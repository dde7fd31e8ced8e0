"""The size model a compaction policy measures with: tokens as the model was billed them.

A log leaves out what every prompt carries besides its messages (system prompt, tool
schemas, reminders) and the estimate of a message's text (``tokens.py``) runs from 0.6
to 33 times its billed size (a sanitized log's placeholders). Where the log records each
call's prompt, the growth from one call to the next is the billed size of the messages
added between them, and the first prompt less its messages is the hidden prefix; the
calibration that reads them is ``cost/sizes.py`` ``calibrate`` (a layer above: the
replay drivers build a :class:`SizeModel` from it and hand it to the engine).

Text the log never sent — a summary, a placeholder, a lead-in, a cut copy — is sized by
its estimate: on the unsanitized logs of the shared corpus the billed-to-estimated ratio
of recorded growth is 1.0–1.4, while a sanitized log's (Codex, every text replaced by a
short placeholder) is 7, which a new text does not share (docs/fidelity.md, "Sizes").
Without a size model (no usage recorded, or the seed's own path) every size is the
estimate, as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .messages import Message
from .tokens import estimate_message_tokens


@dataclass(frozen=True, slots=True)
class SizeModel:
    """Billed sizes by message identity (the log's own messages), the hidden prefix, and
    the estimate for anything else."""

    by_id: Mapping[int, float] = field(default_factory=dict)
    hidden: int = 0
    # The first message after each compaction the log records (by identity): from there
    # the recorded prompts restart, and the current measure needs the view as its floor
    # (engine/accounting.py current_context_tokens)
    restarts: frozenset[int] = frozenset()
    # ``by_id`` rounded, as ``of`` answers: made once, for every slot that sizes the log
    _rounded: dict[int, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        rounded = {key: round(size) for key, size in self.by_id.items()}
        object.__setattr__(self, "_rounded", rounded)

    def of(self, message: Message) -> int:
        """``message``'s size: recorded where the log sized it, else its estimate."""
        size = self._rounded.get(id(message))
        return estimate_message_tokens(message) if size is None else size

    def copy_of(self, original: Message, copy: Message) -> int:
        """A copy cut from a log message (inputs cleared, a message cut short): the
        original's billed size scaled by how much of its estimate the copy keeps (the
        original itself: its size)."""
        if copy is original:
            return self.of(original)
        estimate = estimate_message_tokens(original)
        return round(self.of(original) * estimate_message_tokens(copy) / max(estimate, 1))

    def output_of(self, message: Message, recorded: int) -> int:
        """The billed output of the call that wrote ``message``, whose usage records
        ``recorded``: never less than the message's own estimate where the log sizes its
        calls. Claude Code writes the usage of a streamed reply's first event into the
        record of each of its content blocks, so a long reply's output often reads 1 to 5
        tokens (a 2.0.1 log: a 2,256-character tool call recorded as 2, after which
        Claude Code's own ``compact_boundary`` counted ``preTokens`` 671 above the call's
        prompt; docs/fidelity.md, "Sizes"). Without a recording (no size model) the
        recorded figure stands, as the seed's measure reads it."""
        if not self.by_id:
            return recorded
        return max(recorded, estimate_message_tokens(message))


ESTIMATES = SizeModel()  # no recording: every size is the estimate, no hidden prefix
