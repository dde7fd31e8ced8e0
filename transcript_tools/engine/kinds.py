"""The kinds the engine and the policies share: what a checkpoint measures, where it runs,
and the form of a policy's trigger line. String enums: each member is its own TOML and
command-line text.
"""

from __future__ import annotations

from enum import StrEnum


class Measure(StrEnum):
    CUMULATIVE = "cumulative"  # the seed: cost_so_far.total_tokens
    CURRENT = "current"  # size of the context the model is sent next turn


class Checkpoint(StrEnum):
    """Where the checkpoint runs (docs/spec.md, "Checkpoint units"): after each user turn
    (the seed) or after each model call (``--checkpoint call``: every rule that counts turns
    counts calls)."""

    TURN = "turn"
    CALL = "call"


class TriggerMeasure(StrEnum):
    """What a trigger measures: the engine's two measures, or ``conversation`` (its
    conversation messages alone, estimated), which the engine times as ``current``."""

    CUMULATIVE = "cumulative"
    CURRENT = "current"
    CONVERSATION = "conversation"

    @property
    def engine(self) -> Measure:
        """The engine's measure (``conversation`` is read by
        ``TurnAccounting.conversation_tokens`` at the current measure's times)."""
        return Measure.CURRENT if self is TriggerMeasure.CONVERSATION else Measure(self.value)


class Threshold(StrEnum):
    """The form of a trigger's line (``Trigger``)."""

    RATIO = "ratio"
    TOKENS = "tokens"
    RESERVE = "reserve"
    EVERY = "every"
    MESSAGES = "messages"
    NEVER = "never"
