"""What a Claude Code log records about each of its compactions, beside where it is.

Claude Code marks a compaction with a ``system`` ``compact_boundary`` entry (since about
2.0; ``compactMetadata``: ``trigger`` "auto" or "manual", ``preTokens``, in newer
versions ``postTokens``) and with the ``isCompactSummary`` user entry that holds the
summary. Older versions (1.0.x) write only the summary entry; a ``/compact`` command echo
logged next to it (before it, or after it and before the next model call, as 1.0.70
does) makes it manual; with none it was automatic. Every entry carries the ``version``
of Claude Code that wrote it, and every assistant entry its ``model``. Newer releases
name in ``compactMetadata.preservedMessages`` (``uuids``) the entries the view kept
verbatim beside the summary; where a boundary names none, the compaction kept only its
summary ("Clear conversation history but keep a summary in context", the command's own
description), so no earlier message was kept verbatim.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ...engine.messages import SYNTHETIC_MODEL, Compaction, UserMessage
from ...engine.person_fates import person_text
from ..fields import int_or_none, nested

AUTO = "auto"
MANUAL = "manual"
COMPACT_COMMAND = "<command-name>/compact</command-name>"


class CompactionNotes:
    """The runtime version, model and trigger of a session's compactions, as read."""

    def __init__(self) -> None:
        self.version: str | None = None
        self.model: str | None = None
        self.command = False  # a /compact echo since the latest model call
        self.open: int | None = None  # a summary-only compaction whose trigger is unknown

    def entry(self, obj: dict[str, Any]) -> None:
        version = obj.get("version")
        if isinstance(version, str) and version:
            self.version = version

    def model_call(self, model: str | None) -> None:
        if model is not None and model != SYNTHETIC_MODEL:
            self.model = model
            self.command = False
            self.open = None

    def user_text(self, text: str, compactions: list[Compaction]) -> None:
        """A user line that is not a prompt: a ``/compact`` echo makes the compaction
        logged just before it (still without a trigger) manual, or the next one."""
        if COMPACT_COMMAND not in text:
            return
        if self.open is not None and self.open < len(compactions):
            compactions[self.open] = replace(compactions[self.open], trigger=MANUAL)
            self.open = None
        else:
            self.command = True

    def made(self, compaction: Compaction, position: int) -> Compaction:
        """``compaction`` with the version and model in use; a summary-only one gets its
        trigger from a ``/compact`` echo (before it now, or after it: ``open``)."""
        trigger = compaction.trigger
        if trigger is None and self.command:
            trigger, self.command = MANUAL, False
        elif trigger is None:
            self.open = position
        return replace(compaction, trigger=trigger, version=self.version, model=self.model)

    def boundary(self, meta: Any) -> tuple[str | None, int | None]:
        """``compactMetadata``'s trigger and ``postTokens`` (None where not recorded)."""
        if not isinstance(meta, dict):
            return None, None
        trigger = meta.get("trigger")
        post = meta.get("postTokens")
        return (
            trigger if trigger in (AUTO, MANUAL) else None,
            int_or_none(post),
        )

    def settle(self, compactions: list[Compaction]) -> None:
        """A summary-only compaction with no ``/compact`` echo beside it was automatic."""
        for index, comp in enumerate(compactions):
            if comp.trigger is None and comp.source == "claude-code:isCompactSummary":
                compactions[index] = replace(comp, trigger=AUTO)


def preserved_texts(
    meta: Any, positions: Mapping[str, int], messages: Sequence[object]
) -> tuple[str, ...]:
    """The text of the person's messages ``compactMetadata.preservedMessages`` names
    (``positions``: an entry's uuid -> the messages read up to and with it); () where
    it names none."""
    uuids = nested(meta, "preservedMessages", "uuids")
    if not isinstance(uuids, list):
        return ()
    indices = sorted({positions[u] - 1 for u in uuids if isinstance(u, str) and u in positions})
    found = (messages[i] for i in indices if 0 <= i < len(messages))
    texts = (person_text(m) for m in found if isinstance(m, UserMessage))
    return tuple(t for t in texts if t)
