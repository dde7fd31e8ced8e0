"""Token sizes of a conversation's messages, calibrated against its recorded usage.

The engine's estimate (engine/tokens.py) is a character-class guess, and a log leaves
out what every prompt carries besides the messages (the agent's tool definitions and
system prompt, hidden reasoning). Where the log records each call's whole prompt, the
growth of the prompt from one call to the next is the real size of the messages added
between them: that growth is spread over those messages in proportion to their
estimates, and what the first call's prompt holds beyond its messages is the hidden
prefix every prompt of the conversation starts with. A stretch the recording cannot
size (no usage, or a prompt that shrank: the original agent compacted) is sized by its
estimate times the conversation's overall ratio of real to estimated tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..engine.messages import Conversation, Message
from ..engine.rules import is_model_call
from ..engine.tokens import estimate_message_tokens, estimate_text_tokens


def original_starts(conv: Conversation) -> list[int]:
    """Where the original agent's prompts restarted: 0 and each recorded compaction."""
    return sorted({0, *(c.message_index for c in conv.compactions)})


@dataclass(slots=True)
class Sizes:
    """Real-token sizes by message identity, the hidden prefix, and the ratio for text
    no recording sized (a summary written by the replay)."""

    by_id: dict[int, float]
    hidden: int
    ratio: float
    calibrated: bool  # False: no recorded usage, sizes are the plain estimates

    def of(self, message: Message) -> float:
        size = self.by_id.get(id(message))
        return self.ratio * estimate_message_tokens(message) if size is None else size

    def of_text(self, text: str) -> float:
        return self.ratio * estimate_text_tokens(text)

    def prompt(self, view: list[Message]) -> int:
        return round(self.hidden + sum(self.of(m) for m in view))


def calibrate(conv: Conversation) -> Sizes:
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
    first, prompt0 = calls[0]
    head = max((r for r in restarts if r <= first), default=0)
    hidden = max(0, round(prompt0 - sum(by_id[id(m)] for m in messages[head:first])))
    # After each restart the prompt begins anew: the messages before its first recorded
    # call are what that call's prompt holds beyond the hidden prefix.
    for restart in restarts:
        if restart <= head:
            continue
        found = next(((i, p) for i, p in calls if i >= restart), None)
        if found is None or any(restart < r <= found[0] for r in restarts):
            continue
        end, prompt = found
        grown = sum(estimates[restart:end])
        if grown > 0 and prompt > hidden:
            scale = (prompt - hidden) / grown
            for j in range(restart, end):
                by_id[id(messages[j])] = scale * estimates[j]
    return Sizes(by_id, hidden, ratio, True)
