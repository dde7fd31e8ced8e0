"""Token sizes of a conversation's messages, calibrated against its recorded usage.

The engine's estimate (engine/tokens.py) is a character-class guess, and a log leaves
out what every prompt carries besides the messages (the agent's tool definitions and
system prompt, hidden reasoning). Where the log records each call's whole prompt, the
growth of the prompt from one call to the next is the real size of the messages added
between them: that growth is spread over those messages in proportion to their
estimates, and what the first call's prompt holds beyond its messages is the hidden
prefix every prompt of the conversation starts with. A stretch the recording cannot
size (no usage, or a prompt that shrank: the original agent compacted) is sized by its
estimate times the conversation's overall ratio of real to estimated tokens. Text the log
never sent (a summary, a placeholder the replay wrote) is sized by its plain estimate,
as the engine's size model sizes it (engine/sizes.py): one size per text, in the view
and as the summarizer's output alike — a sanitized log's ratio (7x) is its own text's.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..engine.messages import INJECTED, Conversation, Message, UserMessage
from ..engine.rules import is_model_call
from ..engine.tokens import estimate_message_tokens, estimate_text_tokens


def original_starts(conv: Conversation) -> list[int]:
    """Where the original agent's prompts restarted: 0 and each recorded compaction."""
    return sorted({0, *(c.message_index for c in conv.compactions)})


@dataclass(slots=True)
class Sizes:
    """Real-token sizes by message identity (every message of the log), the hidden
    prefix, and the log's ratio of recorded to estimated tokens (for its own unsized
    stretches); anything else — text the replay wrote — is its plain estimate."""

    by_id: dict[int, float]
    hidden: int
    ratio: float
    calibrated: bool  # False: no recorded usage, sizes are the plain estimates

    def of(self, message: Message) -> float:
        size = self.by_id.get(id(message))
        return estimate_message_tokens(message) if size is None else size

    def of_text(self, text: str) -> float:
        return estimate_text_tokens(text)

    def prompt(self, view: list[Message]) -> int:
        return round(self.hidden + sum(self.of(m) for m in view))


def calibrate(conv: Conversation, unseen: frozenset[int] = frozenset()) -> Sizes:
    """``conv``'s sizes; ``unseen``: restarts (message indices) whose first prompt is not
    read as evidence of the hidden prefix (tsum fidelity predicts a compaction's next
    prompt without it)."""
    messages = conv.messages
    estimates = [estimate_message_tokens(m) for m in messages]
    restarts = original_starts(conv)
    calls = [
        (i, m.usage.input_tokens)
        for i, m in enumerate(messages)
        if is_model_call(m) and m.usage is not None and m.usage.input_tokens > 0
    ]
    if not calls:
        return Sizes(
            {id(m): float(e) for m, e in zip(messages, estimates, strict=True)}, 0, 1.0, False
        )
    # the stretches between consecutive recorded calls of one original prompt
    stretches: list[tuple[int, int, int]] = []  # (start, end, real tokens)
    real_sum = estimated_sum = 0
    for (a, pa), (b, pb) in zip(calls, calls[1:], strict=False):
        same_prompt = not any(a < r <= b for r in restarts)
        grown = sum(estimates[a:b])
        if same_prompt and pb >= pa and grown > 0:
            stretches.append((a, b, pb - pa))
            real_sum += pb - pa
            estimated_sum += grown
    ratio = real_sum / estimated_sum if estimated_sum else 1.0
    by_id = {id(m): ratio * e for m, e in zip(messages, estimates, strict=True)}
    for start, end, real in stretches:
        scale = real / sum(estimates[start:end])
        for j in range(start, end):
            by_id[id(messages[j])] = scale * estimates[j]
    firsts = _restart_calls(restarts, calls)
    # What each restart's first prompt holds beyond its messages is the hidden prefix, plus,
    # at the start of a log that continues an earlier session, that session's history and
    # re-injected files (docs/fidelity.md, "Sizes"). The smallest bound is the prefix every
    # prompt carries; the rest belongs to the messages before that call.
    excess = {
        restart: _prefix_bound(messages, restart, end, prompt, by_id)
        for restart, (end, prompt) in firsts.items()
    }
    seen = [e for restart, e in excess.items() if restart not in unseen] or list(excess.values())
    hidden = max(0, round(min(seen)))
    head = min(firsts)
    for restart, (end, prompt) in firsts.items():
        grown = sum(estimates[restart:end])
        if restart == head and round(excess[head]) <= hidden:
            continue  # the prefix is read from this prompt: its messages stay as sized
        if grown > 0 and prompt > hidden:
            scale = (prompt - hidden) / grown
            for j in range(restart, end):
                by_id[id(messages[j])] = scale * estimates[j]
    return Sizes(by_id, hidden, ratio, True)


def _restart_calls(restarts: list[int], calls: list[tuple[int, int]]) -> dict[int, tuple[int, int]]:
    """Each restart's first recorded call (its index and prompt), where one comes before
    the next restart."""
    out: dict[int, tuple[int, int]] = {}
    for restart in restarts:
        found = next(((i, p) for i, p in calls if i >= restart), None)
        if found is not None and not any(restart < r <= found[0] for r in restarts):
            out[restart] = found
    return out


def _prefix_bound(
    messages: list[Message], restart: int, end: int, prompt: int, by_id: dict[int, float]
) -> float:
    """What the prompt of the call at ``end`` (a restart's first) can hold of the hidden
    prefix: the prompt less the messages since ``restart``; where the restart opens with
    the runtime's summary (after a compaction, or a log that continues an earlier session)
    no more than the part the call read from the provider's cache, if it read any — the
    summary and what follows are new, only the runtime's own prefix is shared with an
    earlier prompt (Claude Code 2.0.1/2.0.5: about 36K read after every automatic
    compaction; docs/fidelity.md, "Sizes")."""
    bound = prompt - sum(by_id[id(m)] for m in messages[restart:end])
    opening = messages[restart]
    if type(opening) is not UserMessage or opening.origin != INJECTED:
        return bound
    usage = getattr(messages[end], "usage", None)
    read = 0 if usage is None else usage.cache_read_tokens
    return min(bound, read) if read > 0 else bound
