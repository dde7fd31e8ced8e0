"""The seed's view measured in a log's billed sizes, beside a policy's (docs/compare.md).

The seed's own path sizes every message by its estimate (``ContextSlot.sizes``), and its
trigger reads those sizes: its outputs stay the seed's, byte for byte. A comparison
measures every row's view in one size model, the one a policy measures its own view in
(engine/sizes.py: the log's messages as billed, new text by its estimate). A seed row's
run keeps its schedule and is measured through a :class:`SizedView` of its slot
(``TurnAccounting.current_context_tokens(through=...)``): the same view
(``ContextSlot.view_window``: the system messages before the focused window, the window,
the summary), each history message at its billed size and the summary at its estimate,
as ``PolicySlot`` sizes its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from .accounting import Measured
from .messages import Message, SystemMessage
from .session import SessionEngine
from .sizes import SizeModel
from .slot import ContextSlot


def measuring(
    engine: SessionEngine, sizes: SizeModel | None
) -> tuple[Measured, Callable[..., int]]:
    """What a run's views are sized through (``view_size``) and measured with (the view
    over the first ``end`` messages, None: all): the engine's slot and current measure, in
    its slot's size model; where the engine runs the seed's slot (the seed, or a
    seed-shaped policy: its schedule the seed's, in estimates), a ``SizedView`` of it in
    ``sizes`` (the log's billed sizes; None: it records none), as a policy slot sizes and
    measures its own."""
    slot = engine.slot
    measure = engine.accounting.current_context_tokens
    if sizes is None or not isinstance(slot, ContextSlot):
        return slot, measure
    sized = SizedView(slot, sizes)
    return sized, partial(measure, through=sized)


@dataclass(slots=True)
class SizedView:
    """``slot``'s view over its history, sized by ``sizes`` (``accounting.Measured``)."""

    slot: ContextSlot
    sizes: SizeModel
    # prefix sums over the history in ``sizes``: all messages / system messages only
    _prefix: list[int] = field(default_factory=lambda: [0])
    _system: list[int] = field(default_factory=lambda: [0])
    _summary: tuple[SystemMessage | None, int] = (None, 0)  # (summary message, its size)
    _restarted: bool = False
    _seen: int = 0  # history messages looked at for a restart

    @property
    def messages(self) -> list[Message]:
        return self.slot.messages

    @property
    def restarted(self) -> bool:
        """A message the size model marks as a restart is in the history (as
        ``PolicySlot.restarted``: from then on the current measure's floor is the view)."""
        restarts, messages = self.sizes.restarts, self.slot.messages
        while restarts and not self._restarted and self._seen < len(messages):
            self._restarted = id(messages[self._seen]) in restarts
            self._seen += 1
        return self._restarted

    def token_prefix(self, upto: int) -> list[int]:
        """Running sums of the history's sizes, valid at least up to index ``upto``."""
        prefix, system, messages = self._prefix, self._system, self.slot.messages
        while len(prefix) <= upto:
            message = messages[len(prefix) - 1]
            size = self.sizes.of(message)
            prefix.append(prefix[-1] + size)
            system.append(system[-1] + (size if isinstance(message, SystemMessage) else 0))
        return prefix

    def view_size(self, upto: int | None = None) -> tuple[int, int]:
        """(messages, tokens) of the slot's view over messages[:upto], in ``sizes``."""
        end, start, summary = self.slot.view_window(upto)
        prefix = self.token_prefix(end)
        count = self.slot.view_size(upto)[0]
        if summary is None:
            return count, prefix[end]
        if summary is not self._summary[0]:  # asked every unit; a new one per summary
            self._summary = summary, self.sizes.of(summary)
        return count, self._system[start] + prefix[end] - prefix[start] + self._summary[1]
