"""Rendering a ``RunDiff``: plain text (terminal), Markdown (a PR comment), JSON.

The same prompt edit usually shows up in every summary of a session (and often
of every session): a diff whose hunks were already shown is printed once and
then referred to ("the same edit as long_session turn 5").
"""

from __future__ import annotations

import re
from html import escape
from typing import Any

import orjson

from .changes import Delta, RunDiff, SessionDiff
from .parts import (
    SeenEdits,
    clip,
    decision_list,
    headline,
    schedule_line,
    session_tokens,
    show_delta,
    show_json,
    show_number,
    show_setting,
    show_template,
    summary_items,
)

DEFAULT_MAX_DIFF_LINES = 200
GITHUB_COMMENT_LIMIT = 60_000  # GitHub refuses comments over 65,536 characters


def render_json(diff: RunDiff, extra: dict[str, Any] | None = None) -> str:
    """The diff as JSON; ``extra``: keys added beside the diff's (check's ``gates``)."""
    data = diff.to_json() | (extra or {})
    return orjson.dumps(data, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2).decode() + "\n"


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
        out.append(
            f"template: {show_template(diff.template.old)} → {show_template(diff.template.new)}"
        )
    for change in diff.settings:
        out.append(f"setting {show_setting(change)}")
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
        f"tokens: summary calls in {show_delta(t['summary_input_tokens'])}, out {show_delta(t['summary_output_tokens'])}; "
        f"cost_so_far (all sessions, final) {show_delta(t['cost_so_far'])}"
    )
    for line in diff.other:
        out.append(f"other: {line}")
    seen = SeenEdits()
    for session in diff.sessions:
        out.append("")
        out.append(f"== {session.session}: {headline(session)}")
        if session.state != "changed":
            continue
        out.append(f"   schedule: {schedule_line(session)}")
        if session.decisions:
            out.append(f"   decisions: {decision_list(session, ' and {} more')}")
        tokens = session_tokens(session)
        if tokens:
            out.append(f"   tokens: {tokens}")
        for line in session.other:
            out.append(f"   other: {line}")
        for turn, head, diff_text, earlier in summary_items(session, seen):
            if earlier is not None:
                out.append(f"   {session.unit} {turn}: {head}: the same edit as {earlier}")
                continue
            out.append(f"   {session.unit} {turn}: {head}")
            if diff_text is not None:
                out.extend("      " + line for line in clip(diff_text, max_diff_lines).split("\n"))
    return "\n".join(out) + "\n"


def _md(text: str) -> str:
    """Inline text, safe inside a table cell or a <summary>."""
    for ch in "\\`*_[]<>|#":
        text = text.replace(ch, "\\" + ch)
    return text


def _code(text: str) -> str:
    ticks = "`" * (_longest_backticks(text) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _fence(body: str, lang: str = "diff") -> str:
    ticks = "`" * max(3, _longest_backticks(body) + 1)
    return f"{ticks}{lang}\n{body}\n{ticks}"


def _longest_backticks(text: str) -> int:
    return max(map(len, re.findall("`+", text)), default=0)


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
        head.append(f"| {label} | {show_number(d.old)} | {show_number(d.new)} | {d.change:+,} |")
    head.append("")
    head.append(
        f"Schedule: {c['summaries_added']} added, {c['summaries_removed']} removed, {c['summaries_moved']} moved. "
        f"Prompts changed: {c['prompts_changed']}. Summary texts changed: {c['texts_changed']}."
    )
    if diff.template:
        head.append("")
        head.append(
            f"**Template:** {_md(show_template(diff.template.old))} → {_md(show_template(diff.template.new))}"
        )
    if diff.settings:
        head.append("")
        head.append("**Settings:**")
        head.extend(
            f"- `{s.key}`: `{show_json(s.old)}` → `{show_json(s.new)}`" for s in diff.settings
        )
    for line in diff.other:
        head.append(f"- {_md(line)}")

    text = "\n".join(head) + "\n"
    seen = SeenEdits()
    for index, session in enumerate(diff.sessions):
        section = _md_session(session, seen, max_diff_lines)
        if len(text) + len(section) > max_chars:
            left = len(diff.sessions) - index
            text += f"\n_… {left} more changed session(s) not shown (comment size limit); see the uploaded diff._\n"
            break
        text += section
    return text


def render_gates_markdown(gates: list[tuple[bool, list[str]]]) -> str:
    """check's gates (recall, cost: each failed?, its lines) as a Markdown section after
    the diff, so a PR comment made from stdout carries their verdicts."""
    if not gates:
        return ""
    out = ["", "#### Gates", ""]
    for failed, lines in gates:
        mark = "**failed**: " if failed else ""
        out.extend(f"- {mark}{_md(line)}" for line in lines)
    return "\n".join(out) + "\n"


def _md_session(session: SessionDiff, seen: SeenEdits, max_diff_lines: int) -> str:
    out = [
        "",
        # raw HTML: GitHub does not apply Markdown escapes inside it
        f"<details><summary><b>{escape(session.session)}</b>: {escape(headline(session))}</summary>",
        "",
    ]
    unit = session.unit
    if session.state == "changed":
        out.append(f"- schedule: {_md(schedule_line(session))}")
        if session.decisions:
            out.append(f"- decisions: {_md(decision_list(session))}")
        tokens = session_tokens(session)
        if tokens:
            out.append(f"- tokens: {_md(tokens)}")
        out.extend(f"- {_md(line)}" for line in session.other)
        for turn, head, diff_text, earlier in summary_items(session, seen):
            if earlier is not None:
                out.append(f"- {unit} {turn}: {_md(head)}: the same edit as {_md(earlier)}")
            elif diff_text is None:
                out.append(f"- {unit} {turn}: {_md(head)}")
            else:
                out.append("")
                out.append(f"**{unit.capitalize()} {turn}: {_md(head)}**")
                out.append("")
                out.append(_fence(clip(diff_text, max_diff_lines)))
                out.append("")
    out.append("")
    out.append("</details>")
    return "\n".join(out) + "\n"
