"""The records of ``tsum fidelity``: one row per recorded compaction, one summary per runtime.

A row compares what the original agent did (``recorded_*``, read from its log) with what
the policy predicts on the same log (``predicted_*``): the model call after which it
first fires, the size of the next call's prompt after it compacts, and for Codex how many
of the person's messages it keeps verbatim (docs/fidelity.md).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field, fields
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
        return _error(self.predicted_tokens_after, self.recorded_tokens_after)

    @property
    def rebuilt_error(self) -> float | None:
        """(rebuilt − recorded) / recorded size of the next call's prompt: what the size
        model misses with the runtime's own view (the policy's error beside it)."""
        return _error(self.rebuilt_tokens_after, self.recorded_tokens_after)

    @property
    def scored(self) -> bool:
        """Counts toward the agreement: automatic, version known, a call before it."""
        return self.trigger == "auto" and self.version is not None and self.recorded_call > 0

    def to_json(self) -> dict[str, Any]:
        """The fields in their order, with ``outcome`` after ``predicted_call``,
        ``size_error`` after ``predicted_tokens_after`` and ``rebuilt_error`` last."""
        out: dict[str, Any] = {}
        for f in fields(self):
            out[f.name] = getattr(self, f.name)
            if f.name == "predicted_call":
                out["outcome"] = self.outcome
            elif f.name == "predicted_tokens_after":
                out["size_error"] = _round4(self.size_error)
        out["threshold"] = None if self.threshold is None else round(self.threshold)
        out["rebuilt_error"] = _round4(self.rebuilt_error)
        return out


def _error(size: int | None, recorded: int | None) -> float | None:
    return None if not recorded or size is None else (size - recorded) / recorded


def _round4(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


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
        return _median_abs([r.size_error for r in self.rows])

    @property
    def median_rebuilt_error(self) -> float | None:
        """Median of |rebuilt error|: the size model's floor with the runtime's own view."""
        return _median_abs([r.rebuilt_error for r in self.rows])

    def to_json(self) -> dict[str, Any]:
        return {
            "runtime": self.runtime,
            "compactions": len(self.rows),
            "scored": len(self.scored),
            **{outcome: self.count(outcome) for outcome in OUTCOMES},
            "agreement": _round4(self.agreement),
            "median_size_error": _round4(self.median_size_error),
            "median_rebuilt_error": _round4(self.median_rebuilt_error),
        }


def _median_abs(errors: list[float | None]) -> float | None:
    present = [abs(e) for e in errors if e is not None]
    return statistics.median(present) if present else None


def summarize(rows: list[FidelityRow], *, by_version: bool = False) -> list[RuntimeSummary]:
    """One summary per runtime (per runtime and version with ``by_version``), in the
    order first seen, then one for all rows (``all``)."""
    groups: dict[str, RuntimeSummary] = {}
    for row in rows:
        key = f"{row.runtime} {row.version or '?'}" if by_version else row.runtime
        groups.setdefault(key, RuntimeSummary(key)).rows.append(row)
    return [*groups.values(), RuntimeSummary("all", list(rows))]
