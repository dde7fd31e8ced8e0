"""The records of ``tsum fidelity``: one row per recorded compaction, one summary per runtime.

A row compares what the original agent did (``recorded_*``, read from its log) with what
the policy predicts on the same log (``predicted_*``): the model call after which it
first fires, the size of the next call's prompt after it compacts, and for Codex how many
of the person's messages it keeps verbatim (docs/fidelity.md).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

# How a prediction compares with the recorded call it should hit.
SAME = "same"  # fires after the very call the runtime compacted after
WITHIN_ONE = "within-one"  # one call early or late
OFF = "off"  # fires, but more than one call away
NEVER = "never"  # never fires before the runtime compacted
UNOBSERVED = "unobserved"  # the log holds no call before it (a continued session's start)
OUTCOMES = (SAME, WITHIN_ONE, OFF, NEVER, UNOBSERVED)


@dataclass(frozen=True, slots=True)
class FidelityRow:
    """One recorded compaction against the policy's replay of the same log."""

    path: str
    session_id: str
    runtime: str  # the log's format: claude-code, codex, ...
    version: str | None
    model: str | None
    trigger: str | None  # auto / manual / None (not recorded)
    policy: str
    window: int  # the context window the policy was replayed with
    window_from: str  # where that window came from (docs/fidelity.md, "The window")
    threshold: float | None  # the policy's token line at that window (None: not a token form)
    recorded_call: int  # 1-based model call the compaction followed (as tsum inspect counts)
    predicted_call: int | None  # the call after which the policy first fires; None: never
    recorded_tokens_before: int | None
    recorded_tokens_after: int | None  # the next call's recorded prompt
    recorded_post_tokens: int | None  # the size the runtime itself reported after it
    predicted_tokens_after: int | None
    summary_from: str  # "log": the runtime's own summary text; "assumed": its size assumed
    recorded_kept_messages: int | None = None  # Codex: user messages of replacement_history
    predicted_kept_messages: int | None = None
    # each earlier person message kept / partly / dropped / resupplied, as the runtime's
    # own view left it (engine/person_fates.py); None: the log does not say what it kept
    recorded_person_fates: dict[str, int] | None = None
    # the next call's prompt as the runtime's own view makes it under the size model (its
    # summary and kept messages): the floor of the size error (fidelity/replay.py)
    rebuilt_tokens_after: int | None = None

    @property
    def outcome(self) -> str:
        if self.recorded_call == 0:
            return UNOBSERVED
        if self.predicted_call is None:
            return NEVER
        gap = abs(self.predicted_call - self.recorded_call)
        return SAME if gap == 0 else WITHIN_ONE if gap == 1 else OFF

    @property
    def size_error(self) -> float | None:
        """(predicted − recorded) / recorded size of the next call's prompt."""
        recorded, predicted = self.recorded_tokens_after, self.predicted_tokens_after
        if not recorded or predicted is None:
            return None
        return (predicted - recorded) / recorded

    @property
    def rebuilt_error(self) -> float | None:
        """(rebuilt − recorded) / recorded size of the next call's prompt: what the size
        model misses with the runtime's own view (the policy's error beside it)."""
        recorded, rebuilt = self.recorded_tokens_after, self.rebuilt_tokens_after
        if not recorded or rebuilt is None:
            return None
        return (rebuilt - recorded) / recorded

    @property
    def scored(self) -> bool:
        """Counts toward the agreement: automatic, version known, a call before it."""
        return self.trigger == "auto" and self.version is not None and self.recorded_call > 0

    def to_json(self) -> dict[str, Any]:
        error = self.size_error
        return {
            "path": self.path,
            "session_id": self.session_id,
            "runtime": self.runtime,
            "version": self.version,
            "model": self.model,
            "trigger": self.trigger,
            "policy": self.policy,
            "window": self.window,
            "window_from": self.window_from,
            "threshold": None if self.threshold is None else round(self.threshold),
            "recorded_call": self.recorded_call,
            "predicted_call": self.predicted_call,
            "outcome": self.outcome,
            "recorded_tokens_before": self.recorded_tokens_before,
            "recorded_tokens_after": self.recorded_tokens_after,
            "recorded_post_tokens": self.recorded_post_tokens,
            "predicted_tokens_after": self.predicted_tokens_after,
            "size_error": None if error is None else round(error, 4),
            "summary_from": self.summary_from,
            "recorded_kept_messages": self.recorded_kept_messages,
            "predicted_kept_messages": self.predicted_kept_messages,
            "recorded_person_fates": self.recorded_person_fates,
            "rebuilt_tokens_after": self.rebuilt_tokens_after,
            "rebuilt_error": None if self.rebuilt_error is None else round(self.rebuilt_error, 4),
        }


@dataclass(slots=True)
class RuntimeSummary:
    """The rows of one runtime (and version line) in counts."""

    runtime: str
    rows: list[FidelityRow] = field(default_factory=list)

    def count(self, outcome: str) -> int:
        return sum(1 for r in self.rows if r.outcome == outcome)

    @property
    def scored(self) -> list[FidelityRow]:
        return [r for r in self.rows if r.scored]

    @property
    def agreement(self) -> float | None:
        """Share of the scored rows that fire within one call; None: nothing scored."""
        scored = self.scored
        if not scored:
            return None
        return sum(1 for r in scored if r.outcome in (SAME, WITHIN_ONE)) / len(scored)

    @property
    def median_size_error(self) -> float | None:
        """Median of |size error| over the rows with both sizes."""
        errors = [abs(e) for r in self.rows if (e := r.size_error) is not None]
        return statistics.median(errors) if errors else None

    @property
    def median_rebuilt_error(self) -> float | None:
        """Median of |rebuilt error|: the size model's floor with the runtime's own view."""
        errors = [abs(e) for r in self.rows if (e := r.rebuilt_error) is not None]
        return statistics.median(errors) if errors else None

    def to_json(self) -> dict[str, Any]:
        agreement, error, floor = self.agreement, self.median_size_error, self.median_rebuilt_error
        return {
            "runtime": self.runtime,
            "compactions": len(self.rows),
            "scored": len(self.scored),
            **{outcome: self.count(outcome) for outcome in OUTCOMES},
            "agreement": None if agreement is None else round(agreement, 4),
            "median_size_error": None if error is None else round(error, 4),
            "median_rebuilt_error": None if floor is None else round(floor, 4),
        }


def summarize(rows: list[FidelityRow], *, by_version: bool = False) -> list[RuntimeSummary]:
    """One summary per runtime (per runtime and version with ``by_version``), in the
    order first seen, then one for all rows (``all``)."""
    groups: dict[str, RuntimeSummary] = {}
    for row in rows:
        key = f"{row.runtime} {row.version or '?'}" if by_version else row.runtime
        groups.setdefault(key, RuntimeSummary(key)).rows.append(row)
    return [*groups.values(), RuntimeSummary("all", list(rows))]
