"""Comparing two ``tsum replay --out`` directories (``tsum diff``, ``tsum check``).

Per session and turn: the trigger schedule (summaries added, removed, moved),
the rendered prompts and the summary texts (unified diffs, by ``difflib``),
status changes, token deltas; per run: the template (by its sha256 in
``run.json``) and the other settings. ``manifest.json`` is never compared: it
holds timings. Whatever the structured comparison does not explain, a
byte-for-byte comparison of every diffable file still reports, so "identical"
means the diffable files are byte-identical.

Loading lives in ``replay.read_output``, the records found in :mod:`.changes`, the firings and texts lined
up in :mod:`.lineup`, rendering
(text, Markdown) in :mod:`.render`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..engine.config import DEFAULT_DIFF_CONTEXT
from ..engine.records import UnitKey
from ..engine.rules import (
    FIRED,  # a checkpoint firing: a summary call (ok or failed), or a dry run's
)
from ..present.numbers import shown_places
from ..replay.output_dir import safe_filename
from ..replay.read_output import (
    DIFFABLE_FILES,
    DiffInputError,
    ReplayOutput,
    SessionRecords,
    load_output,
)
from .changes import (
    DecisionChange,
    Delta,
    RunDiff,
    SessionDiff,
    SettingChange,
    SummaryChange,
)
from .lineup import match_schedule, unified_diff

__all__ = [
    "DIFFABLE_FILES",
    "DiffInputError",
    "ReplayOutput",
    "compare_dirs",
    "diff_outputs",
    "load_output",
]

TOKEN_FIELDS = (
    "turn_tokens",
    "input_tokens",
    "output_tokens",
    "cost_so_far",
    "watermark",
    "tokens",
)
# Decision fields that follow from what is reported elsewhere: the settings (threshold), the schedule.
EXPLAINED_FIELDS = ("threshold", "turns_since_last_summary", "error")  # error: see the summary
SUMMARY_FIELDS = (
    "status",
    "prompt_sha256",
    "prompt_chars",
    "model",
    "template",
    "template_sha256",
    "usage",
    "error",
)
# What a SummaryChange lists (besides prompt and text); the template is reported once per run.
SHOWN_FIELDS = ("decision", "status", "model", "error", "usage")


def diff_outputs(
    old: ReplayOutput,
    new: ReplayOutput,
    *,
    old_label: str = "old",
    new_label: str = "new",
    context: int = DEFAULT_DIFF_CONTEXT,
) -> RunDiff:
    """Everything that differs between two loaded replay outputs."""
    template = None
    if old.run.get("template") != new.run.get("template"):
        template = SettingChange("template", old.run.get("template"), new.run.get("template"))
    old_settings = _flatten({k: v for k, v in old.run.items() if k != "template"})
    new_settings = _flatten({k: v for k, v in new.run.items() if k != "template"})
    settings = [
        SettingChange(key, old_settings.get(key), new_settings.get(key))
        for key in sorted(old_settings.keys() | new_settings.keys())
        if old_settings.get(key) != new_settings.get(key)
    ]

    order = list(new.sessions) + [s for s in old.sessions if s not in new.sessions]
    sessions = []
    for name in order:
        d = _diff_session(
            name,
            old.sessions.get(name),
            new.sessions.get(name),
            old,
            new,
            old_label,
            new_label,
            context,
            unit_of(old.run, new.run),
        )
        if d is not None:
            sessions.append(d)

    other = _unexplained_files(old, new, sessions, bool(template or settings), old_label, new_label)

    counts = _counts(old, new, sessions)
    tokens = _token_deltas(list(old.sessions.values()), list(new.sessions.values()))
    return RunDiff(old_label, new_label, template, settings, sessions, counts, tokens, other)


def unit_of(old_run: dict[str, Any], new_run: dict[str, Any]) -> UnitKey:
    """What both runs' records number: model calls when both checkpointed per call
    (``--checkpoint call``), else turns (runs checkpointing differently show that as a
    setting change)."""
    both = {old_run.get("checkpoint"), new_run.get("checkpoint")}
    return "call" if both == {"call"} else "turn"


def compare_dirs(
    old_dir: str | Path, new_dir: str | Path, *, context: int = DEFAULT_DIFF_CONTEXT
) -> RunDiff:
    """Load both directories and diff them, labelled with the paths as given."""
    old, new = load_output(old_dir), load_output(new_dir)
    return diff_outputs(old, new, old_label=str(old_dir), new_label=str(new_dir), context=context)


def _diff_session(
    name: str,
    a: SessionRecords | None,
    b: SessionRecords | None,
    old: ReplayOutput,
    new: ReplayOutput,
    old_label: str,
    new_label: str,
    context: int,
    unit: str,
) -> SessionDiff | None:
    empty = SessionRecords()
    ra, rb = a or empty, b or empty
    fired_a, fired_b = _fired(ra), _fired(rb)
    state = "added" if a is None else "removed" if b is None else "changed"
    out = SessionDiff(
        name, state, len(ra.decisions), len(rb.decisions), fired_a, fired_b, unit=unit
    )
    out.tokens = _token_deltas([ra], [rb])
    if state != "changed":
        return out
    out.schedule = match_schedule(fired_a, fired_b)

    for turn in sorted(set(fired_a) & set(fired_b)):
        change = _diff_summary(name, turn, ra, rb, old, new, old_label, new_label, context, unit)
        if change is not None:
            out.summaries.append(change)

    _decision_changes(out, ra, rb)
    slot_turns = [
        t for t in sorted(ra.slots.keys() | rb.slots.keys()) if ra.slots.get(t) != rb.slots.get(t)
    ]
    if slot_turns and not out.summaries and not out.schedule:
        out.other.append(
            f"slot snapshots differ at turn(s) {shown_places(slot_turns, 12, ' and {} more')}"
        )
    key = f"compressed/{safe_filename(name)}.jsonl"
    if old.digests.get(key) != new.digests.get(key) and not (out.schedule or out.summaries):
        out.other.append(f"the compressed transcript ({key}) differs")

    if out.schedule or out.summaries or out.decisions or out.token_turns or out.other:
        return out
    if (
        _strip(ra.decisions) != _strip(rb.decisions)
        or ra.summaries != rb.summaries
        or ra.slots != rb.slots
    ):
        out.other.append("records differ")
        return out
    return None


def _unexplained_files(
    old: ReplayOutput,
    new: ReplayOutput,
    sessions: list[SessionDiff],
    settings_changed: bool,
    old_label: str,
    new_label: str,
) -> list[str]:
    """The output files that differ where no session's or setting's change explains it."""
    explained = {f"compressed/{safe_filename(s.session)}.jsonl" for s in sessions}
    other = []
    for name in sorted(old.digests.keys() | new.digests.keys()):
        a, b = old.digests.get(name), new.digests.get(name)
        if a == b:
            continue
        if name.startswith("compressed/"):
            if name in explained:
                continue
            other.append(
                f"{name}: {'only in ' + new_label if a is None else 'only in ' + old_label if b is None else 'differs'}"
            )
        elif not (sessions or settings_changed):
            # Nothing above explains it: still a difference. The usual cause is the
            # order of the inputs (outputs follow it): say so when that is all it is.
            if list(old.sessions) != list(new.sessions) and set(old.sessions) == set(new.sessions):
                other.append(
                    f"{name}: the same sessions in another order (were the inputs given in another order?)"
                )
            else:
                other.append(f"{name}: differs byte for byte")
    return other


def _decision_changes(out: SessionDiff, ra: SessionRecords, rb: SessionRecords) -> None:
    """Into ``out``: the units whose decision, tokens or other fields changed."""
    unit = out.unit
    other_fields: set[str] = set()
    other_turns = []
    for turn in sorted(ra.decisions.keys() & rb.decisions.keys()):
        da, db = ra.decisions[turn], rb.decisions[turn]
        if da == db:
            continue
        if (
            da["decision"] != db["decision"]
            and da["decision"] not in FIRED
            and db["decision"] not in FIRED
        ):
            out.decisions.append(
                DecisionChange(turn, da["decision"], db["decision"])
            )  # fired: see schedule
        if any(da.get(k) != db.get(k) for k in TOKEN_FIELDS):
            out.token_turns.append(turn)
        rest = {
            k
            for k in da.keys() | db.keys()
            if k not in (*TOKEN_FIELDS, *EXPLAINED_FIELDS, "decision")
        }
        differing = {k for k in rest if da.get(k) != db.get(k)}
        if differing:
            other_fields |= differing
            other_turns.append(turn)
    if out.old_turns != out.new_turns:
        out.other.append(f"turns: {out.old_turns} → {out.new_turns}")
    if other_turns:
        out.other.append(
            f"decision records differ at {len(other_turns)} {unit}(s) "
            f"(first: {unit} {other_turns[0]}; "
            f"fields: {', '.join(sorted(other_fields))})"
        )


def _strip(decisions: Mapping[int, Mapping[str, Any]]) -> dict[int, dict[str, Any]]:
    return {
        t: {k: v for k, v in d.items() if k not in EXPLAINED_FIELDS} for t, d in decisions.items()
    }


def _diff_summary(
    session: str,
    turn: int,
    ra: SessionRecords,
    rb: SessionRecords,
    old: ReplayOutput,
    new: ReplayOutput,
    old_label: str,
    new_label: str,
    context: int,
    unit: str,
) -> SummaryChange | None:
    # the fields diff compares and shows (SummaryChange.old / .new)
    sides: list[dict[str, Any]] = [
        {
            "decision": r.decisions[turn]["decision"],
            **{k: r.summaries.get(turn, {}).get(k) for k in (*SUMMARY_FIELDS, "text")},
        }
        for r in (ra, rb)
    ]
    va, vb = sides
    changed = [k for k in SHOWN_FIELDS if va[k] != vb[k]]
    change = SummaryChange(turn, changed, va, vb)
    where = f"{session} {unit} {turn}"
    if va["prompt_sha256"] != vb["prompt_sha256"]:
        changed.insert(0, "prompt")
        old_prompt = old.prompt(va["prompt_sha256"]) if va["prompt_sha256"] else ""
        new_prompt = new.prompt(vb["prompt_sha256"]) if vb["prompt_sha256"] else ""
        change.prompt_diff = unified_diff(
            old_prompt,
            new_prompt,
            f"{old_label}: {where} prompt",
            f"{new_label}: {where} prompt",
            context,
        )
    if va["text"] != vb["text"]:
        changed.insert(1 if "prompt" in changed else 0, "text")
        change.text_diff = unified_diff(
            va["text"] or "",
            vb["text"] or "",
            f"{old_label}: {where} summary",
            f"{new_label}: {where} summary",
            context,
        )
    return change if changed else None


# ---- helpers -------------------------------------------------------------------------


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _final_cost(records: SessionRecords) -> int:
    if not records.decisions:
        return 0
    last = records.decisions[max(records.decisions)]
    value = last.get("cost_so_far")
    return value if isinstance(value, int) else 0


def _session_usage(records: SessionRecords, key: str) -> int:
    total = 0
    for summary in records.summaries.values():
        usage = summary.get("usage")
        if isinstance(usage, dict) and isinstance(usage.get(key), int):
            total += usage[key]
    return total


def _token_deltas(a: list[SessionRecords], b: list[SessionRecords]) -> dict[str, Delta]:
    """The token figures of ``b`` against ``a``: one session each, or every session of a run."""

    def both(figure: Callable[[SessionRecords], int]) -> Delta:
        return Delta(sum(map(figure, a)), sum(map(figure, b)))

    return {
        "cost_so_far": both(_final_cost),
        "summary_input_tokens": both(lambda r: _session_usage(r, "input_tokens")),
        "summary_output_tokens": both(lambda r: _session_usage(r, "output_tokens")),
    }


def _fired(records: SessionRecords) -> list[int]:
    """The units where the checkpoint fired (a summary call, ok or failed, or a dry run's)."""
    return [t for t, d in records.decisions.items() if d["decision"] in FIRED]


def _counts(old: ReplayOutput, new: ReplayOutput, sessions: list[SessionDiff]) -> dict[str, int]:
    schedule = [c for s in sessions for c in s.schedule]
    return {
        "sessions_old": len(old.sessions),
        "sessions_new": len(new.sessions),
        "sessions_changed": sum(1 for s in sessions if s.state == "changed"),
        "sessions_added": sum(1 for s in sessions if s.state == "added"),
        "sessions_removed": sum(1 for s in sessions if s.state == "removed"),
        "firings_old": sum(len(_fired(r)) for r in old.sessions.values()),
        "firings_new": sum(len(_fired(r)) for r in new.sessions.values()),
        "summaries_added": sum(1 for c in schedule if c.kind == "added"),
        "summaries_removed": sum(1 for c in schedule if c.kind == "removed"),
        "summaries_moved": sum(1 for c in schedule if c.kind == "moved"),
        "prompts_changed": sum(s.prompts_changed for s in sessions),
        "texts_changed": sum(s.texts_changed for s in sessions),
    }
