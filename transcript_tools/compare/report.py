"""``tsum compare --report FILE``: the comparison as one self-contained HTML page.

The page: what the figures stand on (the text header), the comparison table — every
column, sortable by a click on its header (a few lines of inline script, nothing
loaded from anywhere) — and the trade-off chart of ``present.chart`` (the sweep's and
eval's): one point per policy, its 95% intervals as bars, the Pareto front labelled
with the policies' names. Without a recall figure the chart plots cost against the
tokens each policy keeps, and says so: a chart is never empty. The template is a
package resource (``templates/compare.html.j2``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..present.chart import Point, render_svg
from ..present.page import page_template
from .bootstrap import Interval
from .figures import ORIGINAL, Comparison, PolicyRow
from .table import COLUMNS, eligible_keys, sort_rows

SortValue = Callable[[PolicyRow], float | str | None]


def _estimate(get: Callable[[PolicyRow], Interval | None]) -> SortValue:
    def value(row: PolicyRow) -> float | None:
        interval = get(row)
        return None if interval is None else interval.estimate

    return value


# What a click on a column's header sorts by: the figure behind the cell, not its text.
SORT_VALUES: dict[str, SortValue] = {
    "policy": lambda r: r.name,
    "cost": lambda r: r.cost_usd,
    "dusd": _estimate(lambda r: r.cost_delta_usd),
    "verdict": _estimate(lambda r: r.cost_delta_share),
    "recall": _estimate(lambda r: r.recall),
    "drecall": _estimate(lambda r: r.recall_delta),
    "vrecall": _estimate(lambda r: r.view_recall),
    "retained": lambda r: r.retained,
    "over": lambda r: r.overflow,
    "invalid": lambda r: r.invalid,
    "degen": lambda r: r.degenerate,
    "pareto": lambda r: int(r.pareto),
}


def _sort_attr(value: float | str | None) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else repr(float(value))


def table(rows: Sequence[PolicyRow]) -> dict[str, Any]:
    """Every column with something to say (the page scrolls; it need not fit a terminal)."""
    priced = any(r.cost_usd is not None for r in rows)
    keys = set(eligible_keys(rows, priced))
    shown = [c for c in COLUMNS if c.key in keys]
    return {
        "columns": [
            {"key": c.key, "header": c.header, "legend": c.legend, "text": c.key == "policy"}
            for c in shown
        ],
        "rows": [
            [
                {"text": c.cell(r), "sort": _sort_attr(SORT_VALUES[c.key](r)), "left": not c.right}
                for c in shown
            ]
            for r in rows
        ],
    }


@dataclass(frozen=True, slots=True)
class Axes:
    """What the chart plots: x a cost, y a share (recall, else tokens kept). The money
    x is each row's change against the baseline (Δ $): a row with overflowing runs totals
    fewer conversations, so its bill would sit left of cheaper policies' (the table sorts
    and marks the front by the change, ``figures.cost``)."""

    money: bool
    recall: bool

    @property
    def x_title(self) -> str:
        if self.money:
            return "the change of its bill against the baseline (USD, Δ $)"
        return "mean tokens the model is sent per turn"

    @property
    def y_title(self) -> str:
        return "artifact recall" if self.recall else "tokens kept, share of the original run's"


def _share_kept(row: PolicyRow) -> float:
    return row.retained / row.original_retained if row.original_retained else 1.0


def _point(row: PolicyRow, axes: Axes, baseline: str) -> Point:
    x_bar = None
    if axes.money:
        delta = row.cost_delta_usd
        assert delta is not None
        x, x_bar = delta.estimate, (delta.low, delta.high)
        x_text = f"Δ {x:+.2f} USD [{delta.low:+.2f}, {delta.high:+.2f}] (bill ${row.cost_usd:.2f})"
    else:
        x = row.retained
        x_text = f"{x:,.0f} tokens per turn"
    if axes.recall:
        assert row.recall is not None
        y, y_bar = row.recall.estimate, (row.recall.low, row.recall.high)
        y_text = f"recall {y:.0%} [{row.recall.low:.0%}, {row.recall.high:.0%}]"
    else:
        y, y_bar = _share_kept(row), None
        change = row.retained_delta_share
        if change is not None and baseline == ORIGINAL:
            y_bar = (1.0 + change.low, 1.0 + change.high)
        y_text = f"keeps {y:.0%} of the original run's tokens"
    return Point(row.name, x, y, f"{row.name}: {y_text}, {x_text}", x_bar, y_bar)


def tradeoff(comparison: Comparison) -> dict[str, Any]:
    """The chart and the sentences under it. Recall where any policy has it (those
    without are listed, not plotted); else the share of tokens each policy keeps."""
    rows = comparison.rows
    measured = [r for r in rows if r.recall is not None]
    plotted = measured or list(rows)
    axes = Axes(
        money=bool(plotted) and all(r.cost_delta_usd is not None for r in plotted),
        recall=bool(measured),
    )
    points = [_point(r, axes, comparison.baseline) for r in plotted]
    notes = []
    if not axes.recall:
        notes.append(
            "No action of any policy took out anything to probe, so no recall to plot: "
            "the chart shows "
            + ("the change of the bill" if axes.money else "the tokens sent")
            + " against the share of the original run's tokens each policy keeps (up: keeps more)."
        )
    if not axes.recall and not axes.money:
        notes.append(
            "Unpriced as well (--no-cost, or logs the cost model cannot price): both axes "
            "then measure the tokens each policy keeps, so the points lie on one line and "
            "the chart only orders the policies."
        )
    unplotted = [r.name for r in rows if r not in plotted]
    if unplotted:
        notes.append(
            "Not plotted, no recall figure (no action, or nothing it took out to probe): "
            + ", ".join(unplotted)
            + "."
        )
    svg = render_svg(
        points,
        x_title=axes.x_title,
        x_unit="usd" if axes.money else "tokens",
        y_title=axes.y_title,
        label_dominated=True,  # a handful of policies: every point named
    )
    return {
        "svg": svg,
        "points": len(points),
        "notes": notes,
        "money": axes.money,
        "recall": axes.recall,
    }


def render_page(
    comparison: Comparison,
    header: Sequence[str],
    *,
    warnings: Sequence[str] = (),
    sections: Sequence[tuple[str, str]] = (),
    sort: str = "cost",
    title: str = "",
) -> str:
    """``sections``: (heading, preformatted text) shown under the chart (the matched-budget
    table, the drift by compaction)."""
    return page_template("compare.html.j2").render(
        title=title or "corpus",
        header=list(header),
        warnings=list(warnings),
        table=table(sort_rows(comparison.rows, sort)),
        tradeoff=tradeoff(comparison),
        sections=list(sections),
        conversations=comparison.conversations,
        policies=len(comparison.rows),
    )


def write_page(path: Path, comparison: Comparison, header: Sequence[str], **kw: Any) -> None:
    path.write_text(render_page(comparison, header, **kw), encoding="utf-8")
