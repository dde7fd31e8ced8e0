"""Prompts the person typed while Claude Code was working (``queue-operation`` entries).

A prompt typed mid-turn is queued: ``enqueue`` (with the text), then either ``dequeue``
(idle: it is sent as an ordinary ``user`` entry right after, read there) or ``remove``
(mid-turn: Claude Code hands it to the model inside the running turn). The model received
it, so it is the person's message at the place it was delivered:

- 2.0.x writes nothing else: the ``remove`` is the delivery (its ``content``, else the
  oldest waiting ``enqueue``).
- 2.1.x also writes an ``attachment`` of type ``queued_command`` with the ``prompt``: that
  is the delivery, and the ``remove`` beside it (before or after) is bookkeeping. Once a
  file has shown such attachments, a ``remove`` no attachment claims is the person
  cancelling the queued prompt (the ``×``): not delivered.
- A ``remove`` whose ``reason`` is not ``absorbed_mid_turn`` (``delivered_to_agent``,
  ``agent_stopped``) did not reach this conversation's model.

Text the runtime queued itself (``<task-notification>`` …, a ``commandMode`` other than
``prompt``) is INJECTED: delivered, but never a turn of the person's. Queued prompts still
waiting when the log ends are a warning naming their line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...engine.messages import INJECTED, Block, Message, UserMessage
from ..anthropic_api import blocks_from_anthropic, user_message
from ..content_parts import text_of
from ..source import Record, Source

DELIVERED_REASONS = (None, "absorbed_mid_turn")
RUNTIME_PREFIXES = ("<task-notification>",)


def _text(blocks: list[Block]) -> str:
    return text_of(blocks).strip()


def _message(blocks: list[Block], runtime: bool) -> Message:
    if runtime or _text(blocks).startswith(RUNTIME_PREFIXES):
        return UserMessage(tuple(blocks), INJECTED)
    return user_message(blocks)


@dataclass(slots=True)
class _Queued:
    blocks: list[Block]
    record: Record


def _pop_text(items: list[_Queued], text: str) -> _Queued | None:
    """The first of ``items`` whose text is ``text``, taken out; None where there is none."""
    for i, item in enumerate(items):
        if _text(item.blocks) == text:
            return items.pop(i)
    return None


@dataclass(slots=True)
class Queue:
    """The queued prompts of one file; each method returns the messages to add."""

    source: Source
    waiting: list[_Queued] = field(default_factory=list)
    removed: list[_Queued] = field(default_factory=list)  # removes no attachment claimed yet
    claimed: int = 0  # attachments whose remove is still to come
    attachments: bool = False  # this writer logs deliveries as queued_command attachments

    def operation(self, obj: dict[str, Any], record: Record) -> None:
        op = obj.get("operation")
        if op == "enqueue":
            blocks = blocks_from_anthropic(obj.get("content"), self.source.warner(record))
            self.waiting.append(_Queued(blocks, record))
        elif op == "dequeue":
            if self.waiting:
                self.waiting.pop(0)  # sent next as an ordinary user entry
        elif op == "popAll":
            self.waiting.clear()
        elif op == "remove":
            item = self._take(obj.get("content"))
            if item is not None and obj.get("reason") in DELIVERED_REASONS:
                self.removed.append(item)

    def attachment(self, attachment: dict[str, Any], record: Record) -> list[Message]:
        """A ``queued_command`` attachment: the delivered prompt itself."""
        self.attachments = True
        blocks = blocks_from_anthropic(attachment.get("prompt"), self.source.warner(record))
        if not blocks:
            return []
        text = _text(blocks)
        # the remove before it was this delivery; else a waiting prompt's remove comes after
        if _pop_text(self.removed, text) is None and _pop_text(self.waiting, text) is not None:
            self.claimed += 1
        mode = attachment.get("commandMode")
        return [_message(blocks, runtime=mode is not None and mode != "prompt")]

    def sent(self, blocks: list[Block]) -> None:
        """An ordinary user entry: a waiting prompt with its text was sent that way."""
        if self.waiting:
            _pop_text(self.waiting, _text(blocks))

    def settle(self) -> list[Message]:
        """Before any other entry: a remove no attachment claimed was the delivery (2.0.x),
        or, from a writer that logs attachments, the person cancelling."""
        if not self.removed:  # the common case: nothing to settle (per entry: keep it cheap)
            return []
        items, self.removed = self.removed, []
        if self.attachments:
            return []
        return [_message(item.blocks, runtime=False) for item in items]

    def finish(self) -> list[Message]:
        out = self.settle()
        for item in self.waiting:
            self.source.dropped(
                item.record, "a queued prompt never delivered before the log ends (not read)"
            )
        self.waiting.clear()
        return out

    def _take(self, content: Any) -> _Queued | None:
        """The waiting prompt a remove names (by its text), else the oldest, unless an
        attachment already took the prompt this remove is for."""
        if content is not None:
            text = content if isinstance(content, str) else _text(blocks_from_anthropic(content))
            named = _pop_text(self.waiting, text.strip())
            if named is not None:
                return named
        if self.claimed:
            self.claimed -= 1
            return None
        return self.waiting.pop(0) if self.waiting else None
