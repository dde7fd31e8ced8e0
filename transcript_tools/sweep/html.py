"""The sweep's HTML report: one self-contained file (inline CSS and SVG, no scripts).

The page: the headline numbers, a bar chart of summary calls per configuration,
the summary table, with ``chart`` the trade-off of recall against cost
(``present.chart``), and per sampled conversation its watermark curve with the
threshold lines, the recorded compactions and one row of trigger points per
configuration. Geometry is computed here; ``templates/report.html.j2`` only lays
it out. Templates are package resources (``transcript_tools.templates``).
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..engine.config import Measure
from ..present.chart import Point, Reference, linear, log_ticks, render_svg, ticks_from_zero
from ..present.numbers import short
from ..present.page import page_template
from .driver import ChartSample, SweepResult
from .tables import (
    POLICY_LEGEND,
    RECALL_NOT_MEASURED,
    cell,
    has_policy,
    recall_not_measured,
    recall_note,
    sorted_rows,
    table_columns,
)

PALETTE = [
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#9467bd",
    "#ff7f0e",
    "#17becf",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
]
WIDTH, PLOT_H, LEFT, RIGHT, TOP = 880, 190, 92, 16, 14
RUG_ROW = 13
# Money a row may carry (the cost model's columns, USD): the trade-off chart's x is then
# money; without it, the mean view the model is sent with summaries.
# sweep --cost's row keys (sweep/stats.py): USD per conversation as replayed, and the
# original runs' total over the conversations priced (the same pricing)
COST_KEY = "cost_per_conversation_usd"
ORIGINAL_COST_KEY = "original_cost_per_conversation"


@dataclass(slots=True)
class Chart:
    title: str
    subtitle: str
    height: int
    width: int = WIDTH
    plot_bottom: int = TOP + PLOT_H
    gridlines: list[dict[str, Any]] = field(default_factory=list)
    xticks: list[dict[str, Any]] = field(default_factory=list)
    paths: list[dict[str, Any]] = field(default_factory=list)
    thresholds: list[dict[str, Any]] = field(default_factory=list)
    compactions: list[dict[str, Any]] = field(default_factory=list)
    rugs: list[dict[str, Any]] = field(default_factory=list)
    note: str = ""


@dataclass(frozen=True, slots=True)
class _Level:
    """The watermark chart's y axis: linear from 0, or log (from a power of ten) when a
    cumulative series dwarfs the thresholds it crossed long ago."""

    log: bool
    low: float
    high: float  # log: of the power of ten
    visible: list[float]  # the thresholds drawn (the others are above the chart)

    @property
    def top(self) -> float:
        return 10**self.high if self.log else self.high

    def __call__(self, value: float) -> float:
        if not self.log:
            share = value / self.high
        else:
            share = (math.log10(value) - self.low) / (self.high - self.low) if value > 0 else 0.0
        return round(linear(1.0, 0.0, TOP, TOP + PLOT_H)(max(share, 0.0)), 1)

    def ticks(self) -> list[float]:
        ticks = log_ticks(self.low, self.high) if self.log else ticks_from_zero(self.top)
        return [v for v in ticks if (10**self.low if self.log else 0) <= v <= self.top]


def _level(series: list[int], thresholds: list[float]) -> _Level:
    top = max(series, default=0)
    positive = [v for v in (*series, *thresholds) if v > 0]
    if bool(thresholds) and top > 10 * thresholds[0] and bool(positive):
        visible = [t for t in thresholds if t <= top * 1.6] or thresholds[:1]
        low = float(math.floor(math.log10(min(positive))))
        return _Level(True, low, math.log10(max([top, *visible]) * 1.3), visible)
    visible = [t for t in thresholds if t <= max(top, 1) * 1.6] or thresholds[:1]
    return _Level(False, 0.0, max([top, *visible, 1]) * 1.08, visible)


def _chart(
    sample: ChartSample, measure: Measure, shown: list[tuple[int, int]], result: SweepResult
) -> Chart:
    """``shown``: (colour index, configuration index) of the configurations drawn."""
    p = sample.profile
    series = p.cost if measure is Measure.CUMULATIVE else p.view
    configs = [(c, i) for c, i in shown if result.configs[i].measure is measure]
    n = max(p.turns, 1)
    # with --max-context-tokens auto each conversation has its own: no one line to draw
    thresholds = sorted(
        {result.configs[i].threshold for _, i in configs if not result.configs[i].auto_window}
    )
    y = _level(series, thresholds)
    along = linear(0, max(n - 1, 1), LEFT, WIDTH - RIGHT)

    def x(turn: float) -> float:
        return round(along(turn), 1) if n > 1 else LEFT + (WIDTH - LEFT - RIGHT) / 2

    label = (
        "cost_so_far (cumulative)" if measure is Measure.CUMULATIVE else "context size (current)"
    )
    chart = Chart(
        title=f"{p.session_id}",
        subtitle=f"{Path(p.path).name} · {p.turns} turns · {label}"
        + (" · log scale" if y.log else "")
        + ("" if p.all_recorded else " · estimated usage"),
        height=TOP + PLOT_H + 28 + RUG_ROW * len(configs) + 6,
    )
    chart.gridlines = [{"y": y(v), "label": short(v)} for v in y.ticks()]
    chart.xticks = [{"x": x(t), "label": str(t)} for t in range(0, n, max(1, round(n / 10)))]
    _curves(chart, sample, series, configs, x, y)
    _thresholds(chart, thresholds, y)
    for turn in p.compaction_turns:
        at = x(min(turn + 0.5, n - 1) if n > 1 else turn)
        right = at > WIDTH - RIGHT - 110  # near the right edge: label on the left of the line
        chart.compactions.append(
            {
                "x": at,
                "label": "agent compacted",
                "tx": at - 4 if right else at + 4,
                "anchor": "end" if right else "start",
            }
        )
    rug_top = TOP + PLOT_H + 26
    for row, (colour, i) in enumerate(configs):
        fires = sample.fires[i] if i < len(sample.fires) else []
        chart.rugs.append(
            {
                "y": rug_top + row * RUG_ROW,
                "label": f"#{i + 1}",
                "color": PALETTE[colour],
                "dots": [{"x": x(t), "cy": y(series[t]) if t < len(series) else 0} for t in fires],
                "count": len(fires),
            }
        )
    return chart


def _curves(
    chart: Chart,
    sample: ChartSample,
    series: list[int],
    configs: list[tuple[int, int]],
    x: Callable[[float], float],
    y: _Level,
) -> None:
    """The watermark without summaries, and each drawn configuration's own (dashed)."""
    points = " L ".join(f"{x(t)},{y(v)}" for t, v in enumerate(series))
    chart.paths.append(
        {
            "d": f"M {points}" if points else "",
            "color": "#222",
            "width": 2.2,
            "dash": "",
            "label": "without summaries",
        }
    )
    for colour, i in configs:
        curve = sample.curves.get(i)
        if curve:
            pts = " L ".join(f"{x(t)},{y(min(v, y.top))}" for t, v in enumerate(curve))
            chart.paths.append(
                {
                    "d": f"M {pts}",
                    "color": PALETTE[colour],
                    "width": 1.4,
                    "dash": "4 2",
                    "label": f"#{i + 1} with its summaries",
                }
            )
    if len(series) < 2:  # one point draws no line: say why the chart is empty
        after = f"; the watermark after it: {series[0]:,} tokens" if series else ""
        chart.note = (
            f"no curve: a curve joins two turns or more, this conversation has "
            f"{sample.profile.turns}{after}"
        )


def _thresholds(chart: Chart, thresholds: list[float], y: _Level) -> None:
    """The threshold lines drawn, and a note naming those above the chart."""
    labelled: dict[str, Any] | None = None
    for value in y.visible:  # labels of lines closer than 11px share one line of text
        line = {"y": y(value), "label": f"threshold {short(value)}"}
        if labelled is not None and labelled["y"] - line["y"] < 11:
            labelled["label"] += f" · {short(value)}"
            line["label"] = ""
        else:
            labelled = line
        chart.thresholds.append(line)
    hidden = [t for t in thresholds if t not in y.visible]
    if hidden:
        above = "thresholds above the chart: " + ", ".join(short(t) for t in hidden)
        chart.note = f"{chart.note}; {above}" if chart.note else above


def _config_text(row: dict[str, Any]) -> str:
    """A configuration in words: the bar chart's label, the trade-off chart's tooltip."""
    return (
        f"#{row['config']} ratio {row['trigger_token_ratio']:g} · max {short(row['max_context_tokens'])} "
        f"· debounce {row['debounce_turns']} · {row['mode']} · {row['measure']}"
    )


def _bars(rows: list[dict[str, Any]], colours: dict[int, int]) -> dict[str, Any]:
    """The bar chart of summary calls; none when no configuration made one (the page then
    says so instead of drawing an empty chart)."""
    top = max((r["summary_calls"] for r in rows), default=0)
    if not top:
        return {"height": 0, "bars": []}
    height = 18
    bars = []
    for n, row in enumerate(rows):
        index = row["config"] - 1
        bars.append(
            {
                "y": 6 + n * height,
                "w": round(520 * row["summary_calls"] / top, 1),
                "label": _config_text(row),
                "value": row["summary_calls"],
                "color": PALETTE[colours[index]] if index in colours else "#9aa5b1",
            }
        )
    return {"height": 12 + len(rows) * height, "bars": bars}


def _point_label(row: dict[str, Any]) -> str:
    """A configuration on the chart: #n, then policy (when the row has one) · ratio ·
    window · debounce."""
    parts = [row.get("policy"), f"{row['trigger_token_ratio']:g}"]
    parts += [short(row["max_context_tokens"]), f"d{row['debounce_turns']}"]
    return f"#{row['config']} " + "·".join(str(p) for p in parts if p)


def _original_per_conversation(row: dict[str, Any]) -> float | None:
    """The recorded runs' cost per priced conversation (sweep --cost), or None."""
    total, priced = row.get("cost_original_usd"), row.get("cost_priced_conversations")
    return total / priced if total is not None and priced else None


def _tradeoff(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The trade-off chart (``present.chart``) of the configurations with a recall figure:
    x = cost per conversation where every one of them has it, else the mean view."""
    measured = [r for r in rows if r["artifact_recall"] is not None]
    money = bool(measured) and all(r.get(COST_KEY) is not None for r in measured)
    rows = [{**r, ORIGINAL_COST_KEY: _original_per_conversation(r)} for r in rows]
    key, original = (
        (COST_KEY, ORIGINAL_COST_KEY)
        if money
        else ("view_mean_with_summaries", "view_mean_without_summaries")
    )

    def shown(value: float) -> str:
        return f"${value:.4f} per conversation" if money else f"mean view {short(value)}"

    points = [
        Point(
            _point_label(r),
            float(r[key]),
            float(r["artifact_recall"]),
            f"{_config_text(r)}: recall {r['artifact_recall']:.0%}, {shown(r[key])}",
        )
        for r in measured
    ]
    # Nothing replaced, nothing lost: the uncompacted run keeps every probe (100%).
    runs = sorted(
        {
            (str(r.get("checkpoint", "turn")), float(r[original]))
            for r in rows
            if r.get(original) is not None
        }
    )
    references = [
        Reference("uncompacted run" + (f" ({unit})" if len(runs) > 1 else ""), 1.0, value)
        for unit, value in runs
    ]
    references.append(Reference("no-summary floor: 0% by construction", 0.0))
    unplotted: dict[str, list[str]] = {}
    for r in sorted(rows, key=lambda r: r["config"]):  # in grid order, as numbered
        reason = recall_not_measured(r)
        if reason is not None:
            unplotted.setdefault(RECALL_NOT_MEASURED[reason], []).append(f"#{r['config']}")
    notes = [
        f"Not plotted, no recall figure ({', '.join(names)}): {reason}."
        for reason, names in unplotted.items()
    ]
    notes.append(
        "The truncation floor (docs/eval.md, Floors) is not computed by the sweep: "
        "tsum eval --html --chart draws it next to each summary."
    )
    return {
        "svg": render_svg(
            points,
            references,
            x_title="cost per conversation (USD)"
            if money
            else "mean view with summaries (tokens the model is sent per turn)",
            x_unit="usd" if money else "tokens",
        ),
        "points": len(points),
        "notes": notes,
    }


def render_report(
    result: SweepResult,
    *,
    sort: str = "calls",
    title: str = "",
    max_configs: int = 10,
    chart: bool = False,
) -> str:
    rows, how = sorted_rows(result, sort)
    measures = [m for m in Measure if any(c.measure is m for c in result.configs)]
    # The first rows of the table, shared fairly between the measures (each chart shows one).
    per_measure = max(1, max_configs // max(len(measures), 1))
    picked = [
        row["config"] - 1
        for m in measures
        for row in [r for r in rows if r["measure"] == m.value][:per_measure]
    ]
    shown = [
        (colour, i)
        for colour, i in enumerate(sorted(picked, key=[r["config"] - 1 for r in rows].index))
    ]
    colours = {i: c for c, i in shown}
    charts = [_chart(s, m, shown, result) for s in result.samples for m in measures]
    columns = table_columns(rows)[0]  # + unit (turn / call) with --checkpoint call
    table = {
        "headers": [h for h, _ in columns],
        "rows": [
            {
                "cells": [cell(r, k) for _, k in columns],
                "notes": [recall_note(r) if k == "artifact_recall" else "" for _, k in columns],
                "color": PALETTE[colours[r["config"] - 1]] if r["config"] - 1 in colours else "",
            }
            for r in rows
        ],
    }
    total_calls = sum(r["summary_calls"] for r in rows)
    return page_template("report.html.j2").render(
        title=title or "corpus",
        how=how,
        result=result,
        table=table,
        bars=_bars(rows, colours),
        charts=charts,
        tradeoff=_tradeoff(rows) if chart else None,
        shown=len(shown),
        total_calls=total_calls,
        legend_note=html.escape(result.summary_source),
        policy_legend=POLICY_LEGEND if has_policy(rows) else (),
        sample_note=(
            f"{len(result.samples)} of {result.conversations} conversations "
            "(a deterministic sample: those where the agent recorded a compaction first, then those that summarize)"
            if len(result.samples) < result.conversations
            else f"all {result.conversations} conversations"
        ),
    )


def write_report(
    path: Path, result: SweepResult, *, sort: str = "calls", title: str = "", chart: bool = False
) -> None:
    """``chart``: add the trade-off chart (recall against cost, ``present.chart``)."""
    path.write_text(render_report(result, sort=sort, title=title, chart=chart), encoding="utf-8")
