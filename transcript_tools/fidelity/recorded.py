"""The view the original run continued from after each of its recorded compactions: the
runtime's own summary where the log keeps it, the person's messages it kept, and what
that did to each earlier person message (engine/person_fates.py). ``tsum fidelity``
compares the policy's view with it; ``tsum eval --person-fates`` scores it as an action,
summary text or not (docs/fidelity.md, "Per compaction").
"""

from __future__ import annotations

from ..engine.messages import INJECTED, Compaction, Conversation, UserMessage
from ..engine.person_fates import person_fates


def runtime_summary(conv: Conversation, comp: Compaction) -> str | None:
    """The runtime's own summary: the compaction's text (Codex ``compacted``), else the
    runtime-written user message the log holds right after it (Claude Code); None where
    the log has none it can read (redacted, encrypted)."""
    if comp.summary and comp.summary.strip() and not comp.summary.startswith("[REDACTED"):
        return comp.summary
    index = comp.message_index
    if index < len(conv.messages):
        message = conv.messages[index]
        if type(message) is UserMessage and message.origin == INJECTED:
            return "".join(getattr(b, "text", "") for b in message.blocks)
    return None


def recorded_fates(conv: Conversation) -> list[dict[str, int] | None]:
    """Per recorded compaction of ``conv``, the fate of each person message of the stretch
    before it (since the previous compaction); None where the log does not say what the
    runtime kept."""
    out: list[dict[str, int] | None] = []
    messages, start = conv.messages, 0
    for comp in conv.compactions:
        end = min(comp.message_index, len(messages))
        if comp.kept_texts is None:
            out.append(None)
        else:
            summary = runtime_summary(conv, comp) or ""
            out.append(person_fates(messages[start:end], comp.kept_texts, messages[end:], summary))
        start = end
    return out
