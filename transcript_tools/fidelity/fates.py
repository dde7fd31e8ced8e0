"""What a recorded compaction did to each of the person's earlier messages, as the
runtime's own record of the agent's view says (Codex ``replacement_history``).

Each person message of the stretch before the compaction is ``kept`` (its text is among
the kept messages), ``partly`` kept (a kept message begins and ends as it does: Codex
cuts the middle of a message over its budget), or ``dropped``; a dropped one the person
wrote again later (its text inside a later person message) is also ``resupplied`` — a
cost paid twice (docs/fidelity.md, "Per compaction").
"""

from __future__ import annotations

from collections.abc import Sequence

from ..engine.messages import Message, TextBlock, UserMessage, is_turn_start

# The ends a cut copy keeps of its original: enough to tell two messages apart, short
# enough for a copy cut well inside its first and last paragraphs.
EDGE = 40


def person_text(message: Message) -> str:
    if type(message) is not UserMessage:
        return ""
    return "".join(b.text for b in message.blocks if type(b) is TextBlock).strip()


def _partly(text: str, kept: Sequence[str]) -> bool:
    if len(text) <= 2 * EDGE:
        return False
    return any(
        len(k) < len(text) and k.startswith(text[:EDGE]) and k.endswith(text[-EDGE:]) for k in kept
    )


def person_fates(
    before: Sequence[Message], kept: Sequence[str], after: Sequence[Message]
) -> dict[str, int]:
    """Counts of ``kept``, ``partly``, ``dropped`` and ``resupplied`` over the person's
    messages in ``before``; ``kept``: the text of the person messages the runtime kept;
    ``after``: the log after the compaction."""
    whole = {k.strip() for k in kept}
    later = [person_text(m) for m in after if is_turn_start(m)]
    fates = {"kept": 0, "partly": 0, "dropped": 0, "resupplied": 0}
    for message in before:
        text = person_text(message) if is_turn_start(message) else ""
        if not text:
            continue
        if text in whole:
            fates["kept"] += 1
        elif _partly(text, [k.strip() for k in kept]):
            fates["partly"] += 1
        else:
            fates["dropped"] += 1
            fates["resupplied"] += any(text in t for t in later)
    return fates
