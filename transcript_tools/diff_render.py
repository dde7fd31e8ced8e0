"""Rendering a ``RunDiff``: plain text (terminal), Markdown (a PR comment), JSON.

The same prompt edit usually shows up in every summary of a session (and often
of every session): a diff whose hunks were already shown is printed once and
then referred to ("the same edit as long_session turn 5").
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from html import escape
from typing import Any

import orjson

from .diff import Delta, RunDiff, SessionDiff, SettingChange, SummaryChange

DEFAULT_MAX_DIFF_LINES = 200
GITHUB_COMMENT_LIMIT = 60_000  # GitHub refuses comments over 65,536 characters


def render_json(diff: RunDiff) -> str:
    return (
        orjson.dumps(diff.to_json(), option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2).decode()
        + "\n"
    )


def verdict_line(diff: RunDiff) -> str:
    """One line for stderr."""
    c = diff.counts
    if diff.identical:
        return f"tsum: no differences ({c['sessions_new']} session(s), {c['firings_new']} summary firing(s))"
    moves = c["summaries_added"] + c["summaries_removed"] + c["summaries_moved"]
    parts = [
        f"{c['sessions_changed']} of {c['sessions_new']} session(s) changed",
        f"{c['sessions_added']} added, {c['sessions_removed']} removed",
        f"{moves} schedule change(s)",
        f"{c['prompts_changed']} prompt(s) and {c['texts_changed']} summary text(s) changed",
    ]
    if diff.template:
        parts.append("template changed")
    if diff.settings:
        parts.append(f"{len(diff.settings)} setting(s) changed")
    return "tsum: differences: " + "; ".join(parts)


# ---- shared pieces -------------------------------------------------------------------


def _n(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def _delta(d: Delta) -> str:
    return f"{_n(d.old)} → {_n(d.new)} ({d.change:+,})"


def _turns(turns: list[int]) -> str:
    return ", ".join(map(str, turns)) if turns else "none"


def _fired(turns: list[int]) -> str:
    return f"fired at turns {_turns(turns)}" if turns else "no summaries"


def _template(value: Any) -> str:
    if not isinstance(value, dict):
        return "none"
    sha = str(value.get("sha256") or "")[:12]
    return f"{value.get('name')} ({value.get('kind')}, {sha})"


def _setting(change: SettingChange) -> str:
    return f"{change.key}: {_json(change.old)} → {_json(change.new)}"


def _json(value: Any) -> str:
    return orjson.dumps(value).decode()


def _schedule(session: SessionDiff) -> str:
    if not session.schedule:
        if not session.new_fired:
            return "unchanged (no summaries)"
        return f"unchanged (fired at turns {_turns(session.new_fired)})"
    moved = [f"turn {c.old_turn} → {c.new_turn}" for c in session.schedule if c.kind == "moved"]
    added = [c.new_turn for c in session.schedule if c.kind == "added"]
    removed = [c.old_turn for c in session.schedule if c.kind == "removed"]
    items = []
    if moved:
        items.append("moved " + ", ".join(moved))
    if added:
        items.append(f"added at turn{'s' if len(added) > 1 else ''} {', '.join(map(str, added))}")
    if removed:
        items.append(
            f"removed at turn{'s' if len(removed) > 1 else ''} {', '.join(map(str, removed))}"
        )
    return (
        "; ".join(items)
        + f" (fired at turns {_turns(session.old_fired)} → {_turns(session.new_fired)})"
    )


def _headline(session: SessionDiff) -> str:
    if session.state == "added":
        return f"added: {session.new_turns} turns, {_fired(session.new_fired)}"
    if session.state == "removed":
        return f"removed: had {session.old_turns} turns, {_fired(session.old_fired)}"
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


def _field_changes(change: SummaryChange) -> list[str]:
    a, b = change.old, change.new
    if "decision" in change.changed or "status" in change.changed:
        # One line: the outcome, and why (model and usage follow from it).
        why = f": {b['error']}" if b.get("error") else ""
        return [f"{a['decision']} → {b['decision']}{why}"]
    out = []
    if "model" in change.changed:
        out.append(f"model {a['model']} → {b['model']}")
    if "error" in change.changed:
        out.append(f"error {_json(a['error'])} → {_json(b['error'])}")
    if "usage" in change.changed:
        ua, ub = a["usage"] or {}, b["usage"] or {}
        out.append(
            f"summary call tokens in {_n(ua.get('input_tokens', '-'))} → {_n(ub.get('input_tokens', '-'))}, "
            f"out {_n(ua.get('output_tokens', '-'))} → {_n(ub.get('output_tokens', '-'))}"
        )
    return out


def _session_tokens(session: SessionDiff) -> str | None:
    parts = []
    cost = session.tokens["cost_so_far"]
    if session.token_turns or cost.change:
        where = (
            f" (token numbers differ at {len(session.token_turns)} turn(s), first: turn {session.token_turns[0]})"
            if session.token_turns
            else ""
        )
        parts.append(f"final cost_so_far {_delta(cost)}{where}")
    for key, label in (("summary_input_tokens", "in"), ("summary_output_tokens", "out")):
        if session.tokens[key].change:
            parts.append(f"summary calls {label} {_delta(session.tokens[key])}")
    return "; ".join(parts) or None


def _clip(diff_text: str, max_lines: int) -> str:
    lines = diff_text.split("\n")
    if len(lines) <= max_lines:
        return diff_text
    return (
        "\n".join(lines[:max_lines])
        + f"\n… ({len(lines) - max_lines} more diff lines; see --json or the output files)"
    )


class _Seen:
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


def _diffs(change: SummaryChange) -> list[tuple[str, str]]:
    out = []
    if change.prompt_diff is not None:
        out.append(("prompt", change.prompt_diff))
    # A summary that failed on one side has no text: its status line says so.
    if change.text_diff is not None and change.old["text"] and change.new["text"]:
        out.append(("summary text", change.text_diff))
    return out


def _prompt_line(change: SummaryChange) -> str:
    a, b = change.old, change.new
    return (
        f"prompt changed ({str(a['prompt_sha256'])[:12]} → {str(b['prompt_sha256'])[:12]}, "
        f"{_n(a['prompt_chars'])} → {_n(b['prompt_chars'])} chars)"
    )


# ---- text ----------------------------------------------------------------------------


def render_text(diff: RunDiff, *, max_diff_lines: int = DEFAULT_MAX_DIFF_LINES) -> str:
    out: list[str] = []
    c = diff.counts
    out.append(f"tsum diff {diff.old_label} → {diff.new_label}")
    if diff.identical:
        out.append(
            f"no differences: {c['sessions_new']} session(s), {c['firings_new']} summary firing(s)"
        )
        return "\n".join(out) + "\n"
    if diff.template:
        out.append(f"template: {_template(diff.template.old)} → {_template(diff.template.new)}")
    for change in diff.settings:
        out.append(f"setting {_setting(change)}")
    out.append(
        f"sessions: {c['sessions_old']} → {c['sessions_new']}; {c['sessions_changed']} changed, "
        f"{c['sessions_added']} added, {c['sessions_removed']} removed"
    )
    out.append(
        f"summaries: {c['firings_old']} → {c['firings_new']} firings; {c['summaries_added']} added, "
        f"{c['summaries_removed']} removed, {c['summaries_moved']} moved; {c['prompts_changed']} prompt(s) changed, "
        f"{c['texts_changed']} summary text(s) changed"
    )
    t = diff.tokens
    out.append(
        f"tokens: summary calls in {_delta(t['summary_input_tokens'])}, out {_delta(t['summary_output_tokens'])}; "
        f"cost_so_far (all sessions, final) {_delta(t['cost_so_far'])}"
    )
    for line in diff.other:
        out.append(f"other: {line}")
    seen = _Seen()
    for session in diff.sessions:
        out.append("")
        out.append(f"== {session.session}: {_headline(session)}")
        if session.state != "changed":
            continue
        out.append(f"   schedule: {_schedule(session)}")
        if session.decisions:
            shown = "; ".join(f"turn {d.turn} {d.old} → {d.new}" for d in session.decisions[:10])
            more = f" and {len(session.decisions) - 10} more" if len(session.decisions) > 10 else ""
            out.append(f"   decisions: {shown}{more}")
        tokens = _session_tokens(session)
        if tokens:
            out.append(f"   tokens: {tokens}")
        for line in session.other:
            out.append(f"   other: {line}")
        for turn, head, diff_text, earlier in _summary_items(session, seen):
            if earlier is not None:
                out.append(f"   turn {turn}: {head}: the same edit as {earlier}")
                continue
            out.append(f"   turn {turn}: {head}")
            if diff_text is not None:
                out.extend("      " + line for line in _clip(diff_text, max_diff_lines).split("\n"))
    return "\n".join(out) + "\n"


def _summary_items(session: Any, seen: Any) -> Iterator[tuple[int, str, str | None, str | None]]:
    """(turn, headline, unified diff or None, earlier place of the same edit or None) per
    change of a session's summaries, in the order both renderers show them."""
    for change in session.summaries:
        where = f"{session.session} turn {change.turn}"
        for text in _field_changes(change):
            yield change.turn, text, None, None
        for kind, diff_text in _diffs(change):
            head = _prompt_line(change) if kind == "prompt" else "summary text changed"
            yield change.turn, head, diff_text, seen.check(diff_text, where)


# ---- markdown ------------------------------------------------------------------------


def _md(text: str) -> str:
    """Inline text, safe inside a table cell or a <summary>."""
    for ch in "\\`*_[]<>|#":
        text = text.replace(ch, "\\" + ch)
    return text


def _code(text: str) -> str:
    ticks = "`" * (max((len(r) for r in _backtick_runs(text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _fence(body: str, lang: str = "diff") -> str:
    longest = max((len(run) for run in body.split("\n") for run in _backtick_runs(run)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{body}\n{ticks}"


def _backtick_runs(line: str) -> list[str]:
    runs, current = [], ""
    for ch in line:
        if ch == "`":
            current += ch
        elif current:
            runs.append(current)
            current = ""
    if current:
        runs.append(current)
    return runs


def render_markdown(
    diff: RunDiff,
    *,
    max_diff_lines: int = DEFAULT_MAX_DIFF_LINES,
    max_chars: int = GITHUB_COMMENT_LIMIT,
) -> str:
    c, t = diff.counts, diff.tokens
    head: list[str] = []
    if diff.identical:
        head.append(
            f"### tsum: no differences ({c['sessions_new']} sessions, {c['firings_new']} summary firings)"
        )
        return "\n".join(head) + "\n"
    head.append(
        f"### tsum: {c['sessions_changed'] + c['sessions_added'] + c['sessions_removed']} of "
        f"{c['sessions_new']} sessions differ — {c['prompts_changed']} prompts, {c['texts_changed']} summaries changed"
    )
    head.append("")
    head.append(f"{_code(diff.old_label)} → {_code(diff.new_label)}")
    head.append("")
    head.append("| | before | after | change |")
    head.append("|---|---:|---:|---:|")
    rows: list[tuple[str, Delta]] = [
        ("sessions", Delta(c["sessions_old"], c["sessions_new"])),
        ("summary firings", Delta(c["firings_old"], c["firings_new"])),
        ("summary call input tokens", t["summary_input_tokens"]),
        ("summary call output tokens", t["summary_output_tokens"]),
        ("final cost_so_far, all sessions", t["cost_so_far"]),
    ]
    for label, d in rows:
        head.append(f"| {label} | {_n(d.old)} | {_n(d.new)} | {d.change:+,} |")
    head.append("")
    head.append(
        f"Schedule: {c['summaries_added']} added, {c['summaries_removed']} removed, {c['summaries_moved']} moved. "
        f"Prompts changed: {c['prompts_changed']}. Summary texts changed: {c['texts_changed']}."
    )
    if diff.template:
        head.append("")
        head.append(
            f"**Template:** {_md(_template(diff.template.old))} → {_md(_template(diff.template.new))}"
        )
    if diff.settings:
        head.append("")
        head.append("**Settings:**")
        head.extend(f"- `{s.key}`: `{_json(s.old)}` → `{_json(s.new)}`" for s in diff.settings)
    for line in diff.other:
        head.append(f"- {_md(line)}")

    text = "\n".join(head) + "\n"
    seen = _Seen()
    for index, session in enumerate(diff.sessions):
        section = _md_session(session, seen, max_diff_lines)
        if len(text) + len(section) > max_chars:
            left = len(diff.sessions) - index
            text += f"\n_… {left} more changed session(s) not shown (comment size limit); see the uploaded diff._\n"
            break
        text += section
    return text


def _md_session(session: SessionDiff, seen: _Seen, max_diff_lines: int) -> str:
    out = [
        "",
        # raw HTML: GitHub does not apply Markdown escapes inside it
        f"<details><summary><b>{escape(session.session)}</b>: {escape(_headline(session))}</summary>",
        "",
    ]
    if session.state == "changed":
        out.append(f"- schedule: {_md(_schedule(session))}")
        if session.decisions:
            out.append(
                "- decisions: "
                + _md("; ".join(f"turn {d.turn} {d.old} → {d.new}" for d in session.decisions[:10]))
            )
        tokens = _session_tokens(session)
        if tokens:
            out.append(f"- tokens: {_md(tokens)}")
        out.extend(f"- {_md(line)}" for line in session.other)
        for turn, head, diff_text, earlier in _summary_items(session, seen):
            if earlier is not None:
                out.append(f"- turn {turn}: {_md(head)}: the same edit as {_md(earlier)}")
            elif diff_text is None:
                out.append(f"- turn {turn}: {_md(head)}")
            else:
                out.append("")
                out.append(f"**Turn {turn}: {_md(head)}**")
                out.append("")
                out.append(_fence(_clip(diff_text, max_diff_lines)))
                out.append("")
    out.append("")
    out.append("</details>")
    return "\n".join(out) + "\n"


RENDERERS: dict[str, Callable[..., str]] = {"text": render_text, "markdown": render_markdown}
