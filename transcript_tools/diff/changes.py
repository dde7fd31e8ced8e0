"""What ``tsum diff`` finds between two replay outputs, as typed records.

:mod:`.compare` builds a :class:`RunDiff`; :mod:`.render` and :mod:`.parts` show it (text,
Markdown); ``RunDiff.to_json`` is ``tsum diff --json``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = [
    "DecisionChange",
    "Delta",
    "RunDiff",
    "ScheduleChange",
    "SessionDiff",
    "SettingChange",
    "SummaryChange",
]


@dataclass(slots=True)
class Delta:
    old: int
    new: int

    @property
    def change(self) -> int:
        return self.new - self.old


@dataclass(slots=True)
class ScheduleChange:
    kind: str  # "added" | "removed" | "moved"
    old_turn: int | None
    new_turn: int | None


@dataclass(slots=True)
class SummaryChange:
    """A turn where the checkpoint fired on both sides, and something about it changed."""

    turn: int
    changed: list[str]  # "prompt", "text", then compare.SHOWN_FIELDS names
    old: dict[str, Any]
    new: dict[str, Any]
    prompt_diff: str | None = None
    text_diff: str | None = None


@dataclass(slots=True)
class DecisionChange:
    turn: int
    old: str
    new: str


@dataclass(slots=True)
class SessionDiff:
    session: str
    state: str  # "changed" | "added" | "removed"
    old_turns: int
    new_turns: int
    old_fired: list[int]
    new_fired: list[int]
    schedule: list[ScheduleChange] = field(default_factory=list)
    summaries: list[SummaryChange] = field(default_factory=list)
    decisions: list[DecisionChange] = field(default_factory=list)
    token_turns: list[int] = field(default_factory=list)  # turns whose token numbers differ
    tokens: dict[str, Delta] = field(default_factory=dict)
    other: list[str] = field(default_factory=list)
    # what the records' "turn" counts: turns, or model calls with --checkpoint call
    unit: str = "turn"

    @property
    def prompts_changed(self) -> int:
        return sum(1 for s in self.summaries if "prompt" in s.changed)

    @property
    def texts_changed(self) -> int:
        # both sides have a summary text (a failure is a status change, not a text change)
        return sum(
            1 for s in self.summaries if "text" in s.changed and s.old["text"] and s.new["text"]
        )


@dataclass(slots=True)
class SettingChange:
    key: str
    old: Any
    new: Any


@dataclass(slots=True)
class RunDiff:
    old_label: str
    new_label: str
    template: SettingChange | None
    settings: list[SettingChange]
    sessions: list[SessionDiff]  # only sessions that differ, in the new run's order
    counts: dict[str, int]
    tokens: dict[str, Delta]
    other: list[str]

    def __repr__(self) -> str:  # what differs, in counts
        what = "identical" if self.identical else f"{len(self.sessions)} session(s) differ"
        return f"<RunDiff {self.old_label} -> {self.new_label}: {what}, {len(self.settings)} setting(s) changed>"

    @property
    def identical(self) -> bool:
        return not (self.template or self.settings or self.sessions or self.other)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["identical"] = self.identical
        for session, raw in zip(self.sessions, data["sessions"], strict=True):
            raw["prompts_changed"] = session.prompts_changed
            raw["texts_changed"] = session.texts_changed
        return data
