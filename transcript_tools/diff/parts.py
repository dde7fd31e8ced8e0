"""The pieces of a ``RunDiff`` both renderers show (``diff_render``: text and Markdown):
numbers, schedules, headlines, field changes, clipped diffs, and the memory of edits
already shown."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import orjson

from ..present.numbers import shown_places
from .changes import Delta, SessionDiff, SettingChange, SummaryChange


def show_number(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def show_delta(d: Delta) -> str:
    return f"{show_number(d.old)} → {show_number(d.new)} ({d.change:+,})"


def show_turns(turns: Sequence[int | None]) -> str:
    return ", ".join(map(str, turns)) if turns else "none"


def show_fired(turns: list[int], unit: str) -> str:
    return f"fired at {unit}s {show_turns(turns)}" if turns else "no summaries"


def show_template(value: Any) -> str:
    if not isinstance(value, dict):
        return "none"
    sha = str(value.get("sha256") or "")[:12]
    return f"{value.get('name')} ({value.get('kind')}, {sha})"


def show_setting(change: SettingChange) -> str:
    return f"{change.key}: {show_json(change.old)} → {show_json(change.new)}"


def show_json(value: Any) -> str:
    return orjson.dumps(value).decode()


def decision_list(session: SessionDiff, more: str = "") -> str:
    """The first ten decision changes of a session, then ``more`` (``{}``: how many others)."""
    changes = [f"{session.unit} {d.turn} {d.old} → {d.new}" for d in session.decisions]
    return shown_places(changes, 10, more, "; ")


def schedule_line(session: SessionDiff) -> str:
    unit = session.unit
    if not session.schedule:
        if not session.new_fired:
            return "unchanged (no summaries)"
        return f"unchanged ({show_fired(session.new_fired, unit)})"
    moved = [f"{unit} {c.old_turn} → {c.new_turn}" for c in session.schedule if c.kind == "moved"]
    added = [c.new_turn for c in session.schedule if c.kind == "added"]
    removed = [c.old_turn for c in session.schedule if c.kind == "removed"]
    items = []
    if moved:
        items.append("moved " + ", ".join(moved))
    for word, turns in (("added", added), ("removed", removed)):
        if turns:
            items.append(f"{word} at {unit}{'s' if len(turns) > 1 else ''} {show_turns(turns)}")
    return (
        "; ".join(items)
        + f" (fired at {unit}s {show_turns(session.old_fired)} → {show_turns(session.new_fired)})"
    )


def headline(session: SessionDiff) -> str:
    if session.state == "added":
        unit = session.unit
        return f"added: {session.new_turns} {unit}s, {show_fired(session.new_fired, unit)}"
    if session.state == "removed":
        unit = session.unit
        return f"removed: had {session.old_turns} {unit}s, {show_fired(session.old_fired, unit)}"
    parts = []
    if session.schedule:
        parts.append(f"{len(session.schedule)} schedule change(s)")
    if session.prompts_changed:
        parts.append(f"{session.prompts_changed} prompt(s) changed")
    if session.texts_changed:
        parts.append(f"{session.texts_changed} summary text(s) changed")
    status = sum(1 for s in session.summaries if {"decision", "status"} & set(s.changed))
    if status:
        parts.append(f"{status} summary status change(s)")
    models = sum(
        1
        for s in session.summaries
        if "model" in s.changed and not {"decision", "status"} & set(s.changed)
    )
    if models:
        parts.append(f"{models} model change(s)")
    return ", ".join(parts) or "changed"


def field_changes(change: SummaryChange) -> list[str]:
    a, b = change.old, change.new
    if "decision" in change.changed or "status" in change.changed:
        # One line: the outcome, and why (model and usage follow from it).
        why = f": {b['error']}" if b.get("error") else ""
        return [f"{a['decision']} → {b['decision']}{why}"]
    out = []
    if "model" in change.changed:
        out.append(f"model {a['model']} → {b['model']}")
    if "error" in change.changed:
        out.append(f"error {show_json(a['error'])} → {show_json(b['error'])}")
    if "usage" in change.changed:
        ua, ub = a["usage"] or {}, b["usage"] or {}
        out.append(
            f"summary call tokens in {show_number(ua.get('input_tokens', '-'))} → {show_number(ub.get('input_tokens', '-'))}, "
            f"out {show_number(ua.get('output_tokens', '-'))} → {show_number(ub.get('output_tokens', '-'))}"
        )
    return out


def session_tokens(session: SessionDiff) -> str | None:
    parts = []
    cost = session.tokens["cost_so_far"]
    if session.token_turns or cost.change:
        where = (
            f" (token numbers differ at {len(session.token_turns)} {session.unit}(s), "
            f"first: {session.unit} {session.token_turns[0]})"
            if session.token_turns
            else ""
        )
        parts.append(f"final cost_so_far {show_delta(cost)}{where}")
    for key, label in (("summary_input_tokens", "in"), ("summary_output_tokens", "out")):
        if session.tokens[key].change:
            parts.append(f"summary calls {label} {show_delta(session.tokens[key])}")
    return "; ".join(parts) or None


def clip(diff_text: str, max_lines: int) -> str:
    lines = diff_text.split("\n")
    if len(lines) <= max_lines:
        return diff_text
    return (
        "\n".join(lines[:max_lines])
        + f"\n… ({len(lines) - max_lines} more diff lines; see --json or the output files)"
    )


class SeenEdits:
    """Remembers diff bodies already shown (headers excluded)."""

    def __init__(self) -> None:
        self.first: dict[str, str] = {}

    def check(self, diff_text: str, where: str) -> str | None:
        body = "\n".join(
            line for line in diff_text.split("\n") if not line.startswith(("--- ", "+++ "))
        )
        earlier = self.first.get(body)
        if earlier is None:
            self.first[body] = where
        return earlier


def summary_diffs(change: SummaryChange) -> list[tuple[str, str]]:
    out = []
    if change.prompt_diff is not None:
        out.append(("prompt", change.prompt_diff))
    # A summary that failed on one side has no text: its status line says so.
    if change.text_diff is not None and change.old["text"] and change.new["text"]:
        out.append(("summary text", change.text_diff))
    return out


def prompt_line(change: SummaryChange) -> str:
    a, b = change.old, change.new
    return (
        f"prompt changed ({str(a['prompt_sha256'])[:12]} → {str(b['prompt_sha256'])[:12]}, "
        f"{show_number(a['prompt_chars'])} → {show_number(b['prompt_chars'])} chars)"
    )


# ---- text ----------------------------------------------------------------------------


def summary_items(session: Any, seen: Any) -> Iterator[tuple[int, str, str | None, str | None]]:
    """(turn, headline, unified diff or None, earlier place of the same edit or None) per
    change of a session's summaries, in the order both renderers show them."""
    for change in session.summaries:
        where = f"{session.session} {session.unit} {change.turn}"
        for text in field_changes(change):
            yield change.turn, text, None, None
        for kind, diff_text in summary_diffs(change):
            head = prompt_line(change) if kind == "prompt" else "summary text changed"
            yield change.turn, head, diff_text, seen.check(diff_text, where)


# ---- markdown ------------------------------------------------------------------------
