"""``tsum compare --json``: the comparison the table shows, as one JSON document.

The same figures as the table and its header (no second computation): each row's
intervals as ``{estimate, low, high, pairs}`` (shares as fractions, recall as a
fraction, Δ $ in dollars), the verdict worded as the table words it, and the sections
asked for (``--budget-windows``, ``--drift``, ``--canaries``, ``--replicates``) as data.
A figure not measured is null (docs/compare.md, "--json").
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from ..eval.canaries import STALE
from .bootstrap import LEVEL, RESAMPLES, SEED, Interval
from .budget import matched_budget
from .canaries import CLIFF, ROWS, cliff, round_labels
from .collect import DEGENERATE_MIN_FIRES, DEGENERATE_SHARE
from .table import cost_verdict, sort_rows

if TYPE_CHECKING:
    from .canaries import CanaryResult
    from .figures import PolicyRow
    from .workflow import CompareRun


def interval(value: Interval | None) -> dict[str, float] | None:
    return None if value is None else asdict(value)


def row_json(row: PolicyRow) -> dict[str, Any]:
    """One policy's figures against the baseline, as the table's row shows them."""
    return {
        "policy": row.name,
        "conversations": row.conversations,
        "priced": row.priced,
        "cost_usd": row.cost_usd,
        "baseline_usd": row.baseline_usd,
        "cost_delta_usd": interval(row.cost_delta_usd),
        "cost_delta_share": interval(row.cost_delta_share),
        "verdict": cost_verdict(row.cost_delta_share),
        "recall": interval(row.recall),
        "recall_delta": interval(row.recall_delta),
        "view_recall": interval(row.view_recall),
        "retained": row.retained,
        "original_retained": row.original_retained,
        "retained_delta_share": interval(row.retained_delta_share),
        "overflow": row.overflow,
        "invalid": row.invalid,
        "degenerate": row.degenerate,
        "pareto": row.pareto,
    }


def comparison_json(
    done: CompareRun, sort: str, canaries: CanaryResult | None = None
) -> dict[str, Any]:
    """The whole comparison: what it stands on (the header's facts), the rows in the
    table's order, the flagged-run warnings, and each section asked for."""
    c = done.comparison
    out: dict[str, Any] = {
        "baseline": c.baseline,
        "conversations": c.conversations,
        "window": done.window,
        "fallback_window": done.fallback_window or None,
        "windows": dict(sorted(c.windows.items())),
        "left_out": {"conversations": c.mixed, "windows": dict(sorted(c.mixed_windows.items()))},
        "summarizer": done.summarizer,
        "intervals": {"level": LEVEL, "resamples": RESAMPLES, "seed": SEED},
        "degenerate_rule": {"share": DEGENERATE_SHARE, "min_fires": DEGENERATE_MIN_FIRES},
        "sort": sort,
        "policies": [row_json(row) for row in sort_rows(c.rows, sort)],
        "warnings": done.warnings(),
    }
    if done.budget_windows:
        out["budget"] = {
            "windows": done.budget_windows,
            "conversations": done.budget_conversations,
            "matched_tokens": matched_budget([curve.points for curve in done.curves]),
            "curves": [
                {"policy": curve.name, "points": [list(p) for p in curve.points]}
                for curve in done.curves
            ],
        }
    if done.drift is not None:
        out["drift"] = [
            {
                "policy": r.policy,
                "round": r.label,
                "conversations": r.conversations,
                "summaries": r.summaries,
                "recall": interval(r.recall),
                "freed": r.freed,
                "kept": r.kept,
            }
            for r in done.drift
        ]
    if canaries is not None:
        out["canaries"] = canaries_json(canaries)
    if done.replicates is not None:
        out["replicates"] = [asdict(r) for r in done.replicates]
    return out


def _or_none(label: str | None) -> str | None:
    return None if label in (None, "-") else label


def canaries_json(result: CanaryResult) -> dict[str, Any]:
    """The planted canaries' survival per policy, type and round (survived / at risk),
    and each type's cliff as the table reads it (None for the stale row: no cliff)."""
    rows = []
    for name in result.names:
        table = result.pooled.get(name, {})
        labels = round_labels([table])
        for kind in ROWS:
            rounds = [
                {
                    "round": label,
                    "survived": table[kind, label][0],
                    "at_risk": table[kind, label][1],
                }
                for label in labels
                if (kind, label) in table
            ]
            if rounds:
                fell = None if kind == STALE else cliff(table, kind, labels)
                rows.append(
                    {"policy": name, "type": kind, "rounds": rounds, "cliff": _or_none(fell)}
                )
    return {
        "seed": result.seed,
        "planted": result.planted,
        "unplanted": result.unplanted,
        "left_out": result.mixed,
        "cliff_below": CLIFF,
        "survival": rows,
    }
