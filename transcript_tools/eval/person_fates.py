"""``tsum eval --person-fates``: each recorded compaction scored as an action on the
person's messages it took out of the view (docs/eval.md, "The person's messages").

Eval scores a recorded compaction's summary text on the artifact probes of what it
replaced, and skips one whose summary it cannot read (Codex's encrypted summary). Its
record of what the view kept still says what became of each earlier person message —
kept, partly kept, dropped, re-supplied later by the person (engine/person_fates.py) —
whether the summary is readable or not. The rule is the one ``tsum fidelity`` reports
(fidelity/recorded.py); this module only gathers and totals it.
"""

from __future__ import annotations

from typing import Any

from ..engine.messages import Conversation
from ..engine.person_fates import FATES
from ..fidelity.recorded import recorded_fates, runtime_summary
from .records import recorded_label


def fate_records(conv: Conversation) -> list[dict[str, Any]]:
    """One record per recorded compaction of ``conv`` whose log says what it kept."""
    out: list[dict[str, Any]] = []
    for comp, fates in zip(conv.compactions, recorded_fates(conv), strict=True):
        if fates is None:
            continue
        out.append(
            {
                "path": conv.path,
                "session": conv.session_id,
                "label": recorded_label(comp.source),
                "source": comp.source,
                "message_index": comp.message_index,
                "trigger": comp.trigger,
                "summary_readable": runtime_summary(conv, comp) is not None,
                **fates,
            }
        )
    return out


def fate_totals(records: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per label, the compactions and the sum of each fate."""
    totals: dict[str, dict[str, int]] = {}
    for record in records:
        total = totals.setdefault(record["label"], dict.fromkeys(("compactions", *FATES), 0))
        total["compactions"] += 1
        for fate in FATES:
            total[fate] += record[fate]
    return totals


def render_fates(records: list[dict[str, Any]]) -> str:
    """The totals as lines under eval's table."""
    lines = ["", "the person's earlier messages after each recorded compaction (--person-fates):"]
    for label, total in fate_totals(records).items():
        counts = ", ".join(f"{total[fate]} {fate}" for fate in FATES)
        lines.append(f"  {label}: {total['compactions']} compaction(s): {counts}")
    if not records:
        lines.append("  no recorded compaction says what it kept")
    return "\n".join(lines) + "\n"
