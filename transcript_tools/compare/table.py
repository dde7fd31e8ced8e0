"""The comparison as a table that fits the terminal, its legend, and the words of its
verdicts (a change whose interval spans zero is "no difference")."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..present.numbers import kilo, percent
from ..present.table import text_table
from .bootstrap import Interval
from .figures import Comparison, PolicyRow, cost


def cost_verdict(delta: Interval | None) -> str:
    """ "cheaper by 12.0% [8.0%, 15.0%]", "costlier by ...", or "no difference (...)";
    from one conversation no interval can be drawn (every resample is that one pair), so
    no verdict either: "one conversation (-5.1%, no interval)"."""
    if delta is None:
        return "unpriced"
    if delta.pairs < 2:
        return f"one conversation ({delta.estimate * 100:+.1f}%, no interval)"
    if delta.spans_zero:
        return f"no difference ({delta.estimate * 100:+.1f}% [{percent(delta.low)}, {percent(delta.high)}])"
    if delta.high < 0:
        return (
            f"cheaper by {percent(-delta.estimate)} [{percent(-delta.high)}, {percent(-delta.low)}]"
        )
    return f"costlier by {percent(delta.estimate)} [{percent(delta.low)}, {percent(delta.high)}]"


def interval(value: Interval | None, scale: float, fmt: str) -> str:
    if value is None:
        return "-"
    est, low, high = (v * scale for v in (value.estimate, value.low, value.high))
    return f"{est:{fmt}} [{low:{fmt}}, {high:{fmt}}]"


def _retained(row: PolicyRow) -> str:
    change = row.retained_delta_share
    if change is None:
        return kilo(row.retained)
    return f"{kilo(row.retained)} ({interval(change, 100, '+.0f')}%)"


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    header: str
    legend: str
    cell: Callable[[PolicyRow], str]
    right: bool = True


COLUMNS: tuple[Column, ...] = (
    Column(
        "policy",
        "policy",
        "the policy; [O] [V] [D] mark overflow, invalid views, degenerate runs",
        lambda r: r.name + (f" [{r.flags}]" if r.flags else ""),
        False,
    ),
    Column(
        "cost",
        "$ total",
        "the policy's whole bill over the priced conversations (USD, --cost's model)",
        lambda r: "-" if r.cost_usd is None else f"{r.cost_usd:.2f}",
    ),
    Column(
        "dusd",
        "Δ $",
        "its change against the baseline in USD, 95% interval",
        lambda r: interval(r.cost_delta_usd, 1, "+.2f"),
    ),
    Column(
        "verdict",
        "Δ cost",
        "its change as a share of the baseline's bill, worded from "
        "the 95% interval (no difference: the interval spans 0)",
        lambda r: cost_verdict(r.cost_delta_share),
        False,
    ),
    Column(
        "recall",
        "recall",
        "artifact recall, % of the probes its actions (summaries, cleared tool results) "
        "took out of the view that the next view carries, 95% interval, over the n "
        "conversations where they took out any (- : on none: no action, or nothing to probe)",
        lambda r: interval(r.recall, 100, ".0f") + (f" n={r.recall.pairs}" if r.recall else ""),
    ),
    Column(
        "vrecall",
        "view recall",
        "artifact probes of the history up to each action that the whole next view "
        "carries (kept verbatim too), %, 95% interval, n conversations (opt-in: --columns)",
        lambda r: (
            interval(r.view_recall, 100, ".0f")
            + (f" n={r.view_recall.pairs}" if r.view_recall else "")
        ),
    ),
    Column(
        "drecall",
        "Δ recall",
        "recall change against a baseline policy, points, the mean paired change over the "
        "n conversations where both have a recall figure, 95% interval",
        lambda r: (
            interval(r.recall_delta, 100, "+.0f")
            + (f" n={r.recall_delta.pairs}" if r.recall_delta else "")
        ),
    ),
    Column(
        "retained",
        "retained",
        "mean tokens the model is sent per turn, and their change "
        "against the baseline (%, 95% interval); every row, the seed's too, in the log's "
        "billed sizes where it records usage, else in estimates",
        _retained,
    ),
    Column("over", "over", "conversations with a view over the window", lambda r: str(r.overflow)),
    Column(
        "invalid",
        "invalid",
        "conversations with a view breaking a target API's rules",
        lambda r: str(r.invalid),
    ),
    Column(
        "degen",
        "degen",
        "conversations where the policy fires at >= 50% of its units (and >= 3 times)",
        lambda r: str(r.degenerate),
    ),
    Column(
        "pareto",
        "pareto",
        "* : no other policy costs less and recalls more",
        lambda r: "*" if r.pareto else "",
    ),
)
COLUMN_KEYS = tuple(c.key for c in COLUMNS)
# dropped last to first when the terminal is narrower than the table
KEEP_ORDER = (
    "policy",
    "verdict",
    "recall",
    "retained",
    "pareto",
    "degen",
    "over",
    "invalid",
    "dusd",
    "cost",
    "drecall",
    "vrecall",
)
SORT_KEYS = ("cost", "recall", "retained", "policy")


def sort_rows(rows: Sequence[PolicyRow], key: str) -> list[PolicyRow]:
    """``cost``: by ``figures.cost`` (dollars against the baseline where priced, else
    retained tokens), ascending; ``recall``: descending (unmeasured last); ``retained``:
    ascending; ``policy``: as given."""
    if key == "cost":
        return sorted(rows, key=lambda r: (r.cost_usd is None, cost(r)))
    if key == "recall":
        return sorted(rows, key=lambda r: -(r.recall.estimate if r.recall else -1.0))
    if key == "retained":
        return sorted(rows, key=lambda r: r.retained)
    return list(rows)


def _grid(columns: Sequence[Column], rows: Sequence[PolicyRow]) -> list[str]:
    cells = [[c.header for c in columns]] + [[c.cell(r) for c in columns] for r in rows]
    return text_table(cells, [i for i, c in enumerate(columns) if not c.right], strip=True)


def eligible_keys(rows: Sequence[PolicyRow], priced: bool) -> list[str]:
    """The columns with something to say, most needed first: no money unpriced, no
    recall change without a policy baseline."""
    keys = [k for k in KEEP_ORDER if priced or k not in ("cost", "dusd", "verdict")]
    if all(r.recall_delta is None for r in rows):
        keys.remove("drecall")
    if all(r.view_recall is None for r in rows):  # computed only when asked for
        keys.remove("vrecall")
    return keys


def fitting_columns(
    rows: Sequence[PolicyRow], width: int, chosen: Sequence[str] | None, priced: bool
) -> list[Column]:
    """``chosen`` as given; else the eligible columns, the least needed dropped first
    until the table fits ``width``."""
    by_key = {c.key: c for c in COLUMNS}
    if chosen:
        return [by_key[k] for k in chosen]
    keys = eligible_keys(rows, priced)
    while len(keys) > 1:
        shown = [c for c in COLUMNS if c.key in keys]
        if max(len(line) for line in _grid(shown, rows)) <= width:
            return shown
        keys.pop()
    return [c for c in COLUMNS if c.key in keys]


def render(
    comparison: Comparison,
    header: Sequence[str],
    *,
    width: int,
    columns: Sequence[str] | None = None,
    sort: str = "cost",
) -> str:
    rows = sort_rows(comparison.rows, sort)
    priced = any(r.cost_usd is not None for r in rows)
    shown = fitting_columns(rows, width, columns, priced)
    lines = list(header) + [""] + _grid(shown, rows) + [""]
    lines += [f"  {c.header}: {c.legend}" for c in shown]
    hidden = [k for k in eligible_keys(rows, priced) if k not in {c.key for c in shown}]
    if hidden and not columns:
        lines.append(f"  (not shown to fit {width} columns: {', '.join(hidden)}; --columns)")
    return "\n".join(lines) + "\n"
