"""``tsum eval --policy``'s table: each policy's pooled actions (eval/aggregate.py).

One row per policy — its next views' recall — and under it the two floors and the
ceiling on the same probes (docs/eval.md "Policies"), with the views' sizes and the
target APIs their views break (engine/validity.py), counted per API.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..engine.validity import APIS
from ..present.numbers import percent
from ..present.table import fixed_row
from .artifacts import ARTIFACT_KINDS, REQUEST

FLOOR_ROWS = (
    ("truncation", "  truncation floor"),
    ("none", "  nothing added floor"),
    ("ceiling", "  uncompacted (ceiling)"),
)


def render_policy_text(
    policies: dict[str, dict[str, Any]],
    recorded: dict[str, dict[str, Any]],
    failed: dict[str, int],
) -> str:
    """The policy table: ``policies`` label -> its ``Aggregate.as_json()`` (actions on
    the next view); ``recorded`` label -> the runtime's own compactions', scored on
    their summary text alone as without --policy."""
    if not any(sum(d["actions"].values()) for d in policies.values()) and not recorded:
        return "no policy acted: nothing to score (lower --max-context-tokens?)\n"
    width = max(24, *(len(label) + 2 for label in (*policies, *recorded)))
    lines = _action_rows(policies, recorded, width)
    lines.append("")
    kinds = [k for k in ARTIFACT_KINDS if any(d["probes"].get(k) for d in policies.values())]
    columns = [width, *[11] * len(kinds)]
    lines.append(fixed_row(["artifact recall (view)", *kinds], columns))
    for label, d in policies.items():
        lines.append(
            fixed_row([label, *(percent(d["recall"]["view"].get(k)) for k in kinds)], columns)
        )
    lines.append("")
    for label, d in policies.items():
        parts = "; ".join(f"{name} {get(d)}" for name, get in SUMMARY_LINE)
        lines.append(f"{label}: {parts}; failed summaries {failed.get(label, 0)}")
    lines.append("")
    lines.append(
        "view tok: mean tokens of the view after each action (ceiling row: of the uncompacted "
        "history), every row in one size model: the log's messages as billed where it records "
        "usage (the seed's row too, its schedule its own), new text (summaries, placeholders) and "
        "a log without usage estimated (engine/sized_view.py); per API: views that break a rule "
        "of it the log's own history keeps "
        "(policy_engine.new_violations, as replay and sweep count them) / views; ceiling row: the "
        "uncompacted views at the same actions that break one (what the log itself breaks)"
    )
    broken = [
        f"  {label}: {api}: " + ", ".join(f"{rule} {n}" for rule, n in v["rules"].items())
        for label, d in policies.items()
        for api, v in d["violations"].items()
        if v["views"]
    ]
    if broken:
        lines.append("violations the compaction made, by rule (count over all views):")
        lines.extend(broken)
    return "\n".join(lines) + "\n"


# the line under the tables per policy: (its name, its figure)
SUMMARY_LINE: list[tuple[str, Callable[[dict[str, Any]], str]]] = [
    (
        "summary actions: artifact",
        lambda d: percent(d["recall_by_action"]["summary"].get("artifact")),
    ),
    (
        "pre-pass actions: artifact",
        lambda d: percent(d["recall_by_action"]["prepass"].get("artifact")),
    ),
    (
        "carried probes survived",
        lambda d: f"{d['carried']['survived']}/{d['carried']['looked_for']}",
    ),
    (
        "summary cost in/out",
        lambda d: f"{d['summary_cost']['input_tokens']}/{d['summary_cost']['output_tokens']}",
    ),
]


def _action_rows(
    policies: dict[str, dict[str, Any]], recorded: dict[str, dict[str, Any]], width: int
) -> list[str]:
    """The first table: each policy's actions, recall and views, with its floor rows."""
    widths = [width, 10, 9, 8, 10, 9, 10, *[11] * len(APIS)]
    head = ["policy", "summaries", "pre-pass", "probes", "artifact", "request", "view tok"]
    lines = [fixed_row([*head, *APIS], widths)]

    def row(
        name: str,
        d: dict[str, Any] | None,
        recall: dict[str, Any],
        tokens: Any,
        broken: tuple[dict[str, int], int] | None = None,
    ) -> str:
        actions = d["actions"] if d else {}
        probes = str(sum(d["probes"].values())) if d else ""
        cells = [name, actions.get("summary", ""), actions.get("prepass", ""), probes]
        cells += [percent(recall.get("artifact")), percent(recall.get(REQUEST))]
        cells.append("" if tokens is None else str(tokens))
        if broken is not None:  # (views that break each API, views)
            cells += [f"{broken[0][api]:>7}/{broken[1]:<3}" for api in APIS]
        return fixed_row(cells, widths).rstrip()

    for label, d in policies.items():
        n = sum(d["actions"].values())
        views = {api: v["views"] for api, v in d["violations"].items()}
        lines.append(row(label, d, d["recall"]["view"], d["view_tokens_after_mean"], (views, n)))
        # the ceiling row: the uncompacted history's size, its views at the same actions
        ceiling = (d["uncompacted_tokens_mean"], (d["uncompacted_violations"], n))
        for variant, name in FLOOR_ROWS:
            figures = ceiling if variant == "ceiling" else (None, None)
            lines.append(row(name, None, d["recall"][variant], *figures))
    for label, d in recorded.items():
        lines.append(row(f"{label} (summary only)", None, d["recall"]["summary"], None))
        lines.append(row("  truncation floor", None, d["recall"]["truncation"], None))
    return lines
