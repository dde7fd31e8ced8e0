"""What a recorded compaction did to each of the person's earlier messages, as the
runtime's own record of the agent's view says: the messages it kept (Codex
``replacement_history``, Claude Code ``compactMetadata.preservedMessages``) and the
summary the view continued from.

Each person message of the stretch before the compaction is ``kept`` (its text is among
the kept messages, or whole inside the summary: Claude Code's summary prompt asks for
every user message), ``partly`` kept (a kept message begins and ends as it does — Codex
cuts the middle of a message over its budget — or the summary holds its beginning and
its end), or ``dropped``; a dropped one the person wrote again later (its text inside a
later person message) is also ``resupplied`` — a cost paid twice (docs/fidelity.md,
"Per compaction"). One rule for every reader of it: ``tsum fidelity`` and ``tsum eval
--person-fates``.
"""

from __future__ import annotations

from collections.abc import Sequence

from .messages import Message, TextBlock, UserMessage, is_turn_start

# The ends a cut copy keeps of its original: enough to tell two messages apart, short
# enough for a copy cut well inside its first and last paragraphs.
EDGE = 40
FATES = ("kept", "partly", "dropped", "resupplied")


def person_text(message: Message) -> str:
    """The text the person wrote in ``message`` ("" for any other message)."""
    if type(message) is not UserMessage or not is_turn_start(message):
        return ""
    return "".join(b.text for b in message.blocks if type(b) is TextBlock).strip()


def _partly(text: str, kept: Sequence[str], summary: str) -> bool:
    if len(text) <= 2 * EDGE:
        return False
    head, tail = text[:EDGE], text[-EDGE:]
    if summary and head in summary and tail in summary:
        return True
    return any(len(k) < len(text) and k.startswith(head) and k.endswith(tail) for k in kept)


def person_fates(
    before: Sequence[Message],
    kept: Sequence[str],
    after: Sequence[Message],
    summary: str = "",
) -> dict[str, int]:
    """Counts of ``kept``, ``partly``, ``dropped`` and ``resupplied`` over the person's
    messages in ``before``; ``kept``: the text of the person messages the runtime kept;
    ``after``: the log after the compaction; ``summary``: the runtime's summary text
    where the log holds it ("" where not: an encrypted Codex summary)."""
    whole = [k.strip() for k in kept]
    later = [person_text(m) for m in after]
    fates = dict.fromkeys(FATES, 0)
    for message in before:
        text = person_text(message)
        if not text:
            continue
        if text in whole or (summary and text in summary):
            fates["kept"] += 1
        elif _partly(text, whole, summary):
            fates["partly"] += 1
        else:
            fates["dropped"] += 1
            fates["resupplied"] += any(text in t for t in later if t)
    return fates
