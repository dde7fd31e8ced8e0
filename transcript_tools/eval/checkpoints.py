"""Fired checkpoints and what each summary replaced.

tsum's own: the session engine runs turn by turn (as ``tsum replay`` does); after a
successful summary the next view (``ContextSlot.load_messages``) is the system
messages, the last ``keep_recent_turns`` whole turns and the summary, so the
REPLACED part is every non-system message before the first kept turn. Recorded:
where the log says the runtime compacted (Claude Code's ``isCompactSummary``
message, Codex's ``compacted`` item), the runtime's summary replaced the whole
context it had since its previous compaction.

What the summarizer was SHOWN: tsum's summary prompt holds the newest messages of the
whole history that fit ``max_transcript_chars`` (F3), so a long session's oldest
replaced messages are never in it (only the previous summary, when the template passes
it, can carry them); a runtime's compactor is taken to have seen the whole context it
replaced.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..engine.messages import INJECTED, Conversation, TextBlock, UserMessage
from ..engine.requests import SummaryRequest
from ..engine.session import SessionEngine
from .records import ScoreRecord, recorded_label
from .score import ConversationProbes, score_checkpoint

CLAUDE_CODE_CONTINUATION = "This session is being continued from a previous conversation"
TSUM = "tsum"
RECORDED = "recorded"


@dataclass(slots=True)
class SummaryReplacement:
    """One summary and the history it replaced."""

    kind: str  # TSUM or RECORDED
    label: str  # the template (and model) that wrote it, or the runtime's name
    session: str
    path: str
    turn: int  # the turn after which the summary was made
    position: int  # 1st, 2nd, ... summary of its session (of its label)
    summary: str
    replaced: tuple[int, int]  # message range the summary stands for
    kept: tuple[int, int]  # message range the next view still shows
    model: str | None = None
    usage: dict[str, Any] | None = None
    prompt_sha256: str | None = None
    # message range whose text the summary prompt held (for one message too long alone:
    # its tail); a probe from before it was never shown to the summarizer. None: unknown
    # (a summary read back from records), taken as the whole replaced part.
    shown: tuple[int, int] | None = None
    # estimated tokens of the next view (``slot.view_size()`` after the summary): what the
    # model still sees, for eval --cost's recall per 1,000 retained tokens. None: unknown
    # (a recorded compaction). Not in ``head()``: records without --cost are unchanged.
    view_tokens: int | None = None

    def head(self) -> ScoreRecord:
        return {
            "kind": self.kind,
            "label": self.label,
            "session": self.session,
            "path": self.path,
            "turn": self.turn,
            "position": self.position,
            "model": self.model,
            "usage": self.usage,
            "prompt_sha256": self.prompt_sha256,
            "shown_messages": None if self.shown is None else list(self.shown),
            "summary": self.summary,
        }


def score_record(cp: SummaryReplacement, probes: ConversationProbes) -> ScoreRecord:
    """The summary's record: who, where, the summary, and its scores on the history it
    replaced (``score.score_checkpoint``)."""
    record = cp.head()
    record.update(score_checkpoint(probes, replaced=cp.replaced, kept=cp.kept, summary=cp.summary))
    if cp.shown is not None:  # lost before the summary was written, or by it?
        first_shown = cp.shown[0]
        for probe in record["probes"]:
            probe["shown"] = probe["message"] >= first_shown
    return record


def tsum_replacement(
    engine: SessionEngine, request: SummaryRequest, row: tuple[str, str, str], position: int
) -> SummaryReplacement | None:
    """The summary ``engine`` just applied (a successful one, the ``position``-th of its
    session; ``row``: its label, session and path) and the history it replaced; None
    when it replaced nothing (the window still holds everything). ``request``: the
    summary's, for what its prompt showed."""
    slot = engine.slot
    total = len(slot.messages)  # F3: the prompt shows the newest of all of them
    shown = (total - len(request.messages or ()), total)
    # the next view's first kept message (under a policy: the first one it shows again)
    cut = slot.base
    if cut == 0:
        return None
    record = engine.summaries[-1]
    return SummaryReplacement(
        TSUM,
        *row,
        record["turn"],
        position,
        record.get("text") or "",
        (0, cut),
        (cut, total),
        shown=shown,
        model=record.get("model"),
        usage=record.get("usage"),
        prompt_sha256=record.get("prompt_sha256"),
        view_tokens=slot.view_size()[1],
    )


def _user_text(conv: Conversation, index: int) -> str | None:
    if index >= len(conv.messages):
        return None
    message = conv.messages[index]
    if not isinstance(message, UserMessage):
        return None
    return " ".join(b.text for b in message.blocks if isinstance(b, TextBlock))


# Compactions whose summary the reader kept as the injected message at the compaction's
# place (Roo Code / Kilo Code's condense summary).
SUMMARY_AT_INDEX = frozenset({"cline:isSummary"})


def _summary_at_index(conv: Conversation, source: str, index: int) -> str | None:
    message = conv.messages[index] if index < len(conv.messages) else None
    if source in SUMMARY_AT_INDEX and isinstance(message, UserMessage):
        if message.origin == INJECTED:
            return _user_text(conv, index)
    return None


def compaction_message_indices(conv: Conversation) -> frozenset[int]:
    """Messages that ARE a runtime's compaction summary (never probed, never a request)."""
    out = set()
    for comp in conv.compactions:
        text = _user_text(conv, comp.message_index)
        if text is not None and text.lstrip().startswith(CLAUDE_CODE_CONTINUATION):
            out.add(comp.message_index)
        elif _summary_at_index(conv, comp.source, comp.message_index) is not None:
            out.add(comp.message_index)
    return frozenset(out)


def recorded_checkpoints(
    conv: Conversation, turn_of: Any
) -> tuple[list[SummaryReplacement], list[str]]:
    """The runtime's own compactions with their summary text; notes for those without."""
    out: list[SummaryReplacement] = []
    notes: list[str] = []
    previous = 0
    for comp in conv.compactions:
        index = comp.message_index
        text: str | None = None
        label = recorded_label(comp.source)
        if comp.source.startswith("claude-code"):
            candidate = _user_text(conv, index)
            if candidate is not None and candidate.lstrip().startswith(CLAUDE_CODE_CONTINUATION):
                text = candidate
        else:  # kept apart by the reader (Codex's `compacted`), or at the index
            text = comp.summary
            if text is None:
                text = _summary_at_index(conv, comp.source, index)
        if not text or not text.strip() or text.startswith("[REDACTED"):
            where = f"{conv.path}: session {conv.session_id}: {comp.source} at message {index}"
            if comp.line is not None:  # the log's line, where the reader knows it
                where = f"{conv.path}:{comp.line}: session {conv.session_id}: {comp.source}"
            notes.append(
                f"{where} has no readable summary text (redacted or not recorded): not scored"
            )
            previous = index
            continue
        if index > previous:
            turn = turn_of(max(index - 1, 0))
            position = sum(1 for c in out if c.label == label) + 1
            out.append(
                SummaryReplacement(
                    RECORDED,
                    label,
                    conv.session_id,
                    conv.path,
                    turn,
                    position,
                    text,
                    (previous, index),
                    (index, index),
                    shown=(previous, index),
                )
            )
        previous = index
    return out, notes
