"""The trade-off chart of the sweep's report and eval's page: one self-contained SVG.

One point per configuration: x a cost (lower is better: money per conversation, or the
tokens the model is still sent), y a recall share (higher is better). The Pareto front —
the points no other point beats on both axes — is drawn as a staircase and its points
are labelled; reference marks (the uncompacted run, the floors of docs/eval.md "Floors")
sit beside them. Inline SVG only: no script, no web font, no external reference.

Pure (strings in, a string out) and importing nothing of the package, so that both
``sweep/`` and ``eval/`` (which sits below sweep) can use it: see LAYERS in
tests/test_import_graph.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

from .numbers import Unit, tick_label

WIDTH, HEIGHT = 880, 400
LEFT, RIGHT, TOP, BOTTOM = 64, 24, 34, 50
Y_LOW, Y_HIGH = -0.05, 1.05  # recall 0% and 100% sit inside the frame, not on it
CHAR_W, LINE_H = 6.2, 12  # the width of one 11px character, and a label's height (estimates)
FRONT, DOMINATED, REFERENCE, GRID, INK = "#1a56db", "#8a94a3", "#b45309", "#eceff3", "#4a5562"


@dataclass(frozen=True, slots=True)
class Point:
    """One configuration: ``label`` names it on the chart, ``detail`` is its tooltip;
    ``x_bar`` and ``y_bar`` (low, high), when given, are drawn as interval bars."""

    label: str
    x: float
    y: float
    detail: str = ""
    x_bar: tuple[float, float] | None = None
    y_bar: tuple[float, float] | None = None


@dataclass(frozen=True, slots=True)
class Reference:
    """A mark to read the points against: at (x, y), or a horizontal line at y when x is None."""

    label: str
    y: float
    x: float | None = None


def pareto_front(points: Sequence[Point]) -> list[int]:
    """Indices of the points no other point dominates, by x ascending (ties: input order).

    ``q`` dominates ``p`` when q.x <= p.x and q.y >= p.y, one of them strictly: lower
    cost, higher recall. Points at the same (x, y) do not dominate each other, so a tie
    on the front keeps every one of them.
    """
    order = sorted(range(len(points)), key=lambda i: (points[i].x, -points[i].y, i))
    front: list[int] = []
    best = -math.inf
    for i in order:
        p = points[i]
        if p.y > best:
            front.append(i)
            best = p.y
        elif front and (p.x, p.y) == (points[front[-1]].x, points[front[-1]].y):
            front.append(i)
    return front


def nice_step(raw: float) -> tuple[float, int]:
    """The round step (1, 2, 2.5 or 5 times a power of ten) nearest above ``raw``, and
    the decimals its labels need."""
    power = math.floor(math.log10(raw))
    for mantissa in (1.0, 2.0, 2.5, 5.0, 10.0):
        if mantissa * 10.0**power >= raw * (1 - 1e-9):
            break
    if mantissa == 10.0:
        mantissa, power = 1.0, power + 1
    decimals = max(0, -power + (1 if mantissa == 2.5 else 0))  # 25: none, 2.5: one
    return mantissa * 10.0**power, decimals


def axis_ticks(values: Sequence[float], count: int = 5) -> tuple[list[float], int]:
    """Ticks spanning ``values`` (with a margin, never below 0 for values that are not),
    and the decimals of their labels."""
    lo, hi = min(values, default=0.0), max(values, default=1.0)
    if hi - lo < 1e-12:
        pad = abs(hi) * 0.1 or 1.0
        lo, hi = lo - pad, hi + pad
    margin = (hi - lo) * 0.05
    floor = 0.0 if lo >= 0 else -math.inf
    lo, hi = max(lo - margin, floor), hi + margin
    step, decimals = nice_step((hi - lo) / count)
    first, last = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
    return [round(i * step, decimals + 1) for i in range(first, last + 1)], decimals


def ticks_from_zero(top: float, count: int = 4) -> list[float]:
    """About ``count`` ticks from 0 up to ``top``, a round step (at least 1) apart."""
    if top <= 0:
        return [0.0]
    step = nice_step(max(top / count, 1.0))[0]
    return [step * i for i in range(int(top // step) + 1)]


def log_ticks(low: float, high: float) -> list[float]:
    """1, 2 and 5 times each power of ten from ``10**low`` to ``10**high`` (a log axis)."""
    return [10.0**e * m for e in range(int(low), math.ceil(high) + 1) for m in (1, 2, 5)]


def linear(low: float, high: float, start: float, end: float) -> Callable[[float], float]:
    """The scale from ``low``..``high`` onto ``start``..``end`` (SVG units: a y axis runs
    from the bottom, the larger number, up to the top)."""
    return lambda value: start + (end - start) * (value - low) / (high - low)


def _fmt(value: float) -> str:
    return f"{value:.1f}"


Box = tuple[float, float, float, float]  # x0, y0, x1, y1


class _Labels:
    """Places each label where it overlaps no mark and no label placed before it: the
    first free spot of right or left of its mark, then further above or below (first fit)."""

    def __init__(self, left: float, right: float) -> None:
        self.left, self.right = left, right
        self.boxes: list[Box] = []

    def mark(self, x: float, y: float, radius: float = 5.0) -> None:
        self.boxes.append((x - radius, y - radius, x + radius, y + radius))

    def place(self, x: float, y: float, text: str) -> tuple[float, float, str]:
        width = len(text) * CHAR_W
        sides = ["start", "end"] if x + 7 + width <= self.right else ["end", "start"]
        spots: list[tuple[float, float, str, Box]] = []
        for baseline in (y - 6, y + 15, y - 18, y + 27, y - 30, y + 39, y - 42):
            for anchor in sides:
                tx = x + 7 if anchor == "start" else x - 7
                x0 = tx if anchor == "start" else tx - width
                spots.append(
                    (tx, baseline, anchor, (x0, baseline - LINE_H + 2, x0 + width, baseline + 2))
                )
        inside = [
            spot
            for spot in spots
            if self.left <= spot[3][0]
            and spot[3][2] <= self.right
            and TOP <= spot[3][1]
            and spot[3][3] <= HEIGHT - BOTTOM
        ] or spots
        tx, baseline, anchor, box = next((s for s in inside if not self._hits(s[3])), inside[0])
        self.boxes.append(box)
        return tx, baseline, anchor

    def _hits(self, box: Box) -> bool:
        return any(
            box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in self.boxes
        )


def render_svg(
    points: Sequence[Point],
    references: Sequence[Reference] = (),
    *,
    x_title: str,
    x_unit: Unit = "tokens",
    y_title: str = "artifact recall",
    label_dominated: bool = False,
) -> str:
    """The chart as one ``<svg>`` element (escaped text, rounded coordinates: the same
    input gives the same bytes). ``label_dominated``: name the points off the front too
    (in grey, after the front's labels have their places)."""
    xs = [p.x for p in points] + [r.x for r in references if r.x is not None]
    xs += [end for p in points if p.x_bar is not None for end in p.x_bar]
    ticks, decimals = axis_ticks(xs)
    x_lo, x_hi = ticks[0], ticks[-1]
    plot_right, plot_bottom = WIDTH - RIGHT, HEIGHT - BOTTOM

    px, py = linear(x_lo, x_hi, LEFT, plot_right), linear(Y_HIGH, Y_LOW, TOP, plot_bottom)

    out = [
        f'<svg class="tradeoff" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" '
        f'height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(y_title)} against {escape(x_title)}, one point per configuration">',
        f'<rect class="plot" x="{LEFT}" y="{TOP}" width="{plot_right - LEFT}" '
        f'height="{plot_bottom - TOP}" fill="#fff" stroke="#b8c0ca"/>',
    ]
    text = f'font-family="system-ui, sans-serif" font-size="11" fill="{INK}"'
    for share in (0.0, 0.2, 0.4, 0.6, 0.8, 1.0):
        row = _fmt(py(share))
        out.append(f'<line x1="{LEFT}" x2="{plot_right}" y1="{row}" y2="{row}" stroke="{GRID}"/>')
        out.append(
            f'<text x="{LEFT - 6}" y="{_fmt(py(share) + 4)}" text-anchor="end" {text}>'
            f"{share:.0%}</text>"
        )
    for tick in ticks:
        column = _fmt(px(tick))
        out.append(
            f'<line x1="{column}" x2="{column}" y1="{TOP}" y2="{plot_bottom}" stroke="{GRID}"/>'
        )
        out.append(
            f'<text x="{column}" y="{plot_bottom + 15}" text-anchor="middle" {text}>'
            f"{escape(tick_label(tick, x_unit, decimals))}</text>"
        )
    out.append(
        f'<text x="{_fmt((LEFT + plot_right) / 2)}" y="{HEIGHT - 12}" text-anchor="middle" '
        f'{text} style="font-weight: 600">{escape(x_title)} — left: cheaper</text>'
    )
    out.append(
        f'<text x="14" y="{_fmt((TOP + plot_bottom) / 2)}" text-anchor="middle" {text} '
        f'style="font-weight: 600" transform="rotate(-90 14 {_fmt((TOP + plot_bottom) / 2)})">'
        f"{escape(y_title)} — up: keeps more</text>"
    )
    labels = _Labels(LEFT + 4, plot_right - 4)
    for ref in references:  # lines first, under the points
        if ref.x is not None:
            continue
        y = py(ref.y)
        out.append(
            f'<line class="reference" x1="{LEFT}" x2="{plot_right}" y1="{_fmt(y)}" '
            f'y2="{_fmt(y)}" stroke="{REFERENCE}" stroke-dasharray="6 4"/>'
        )
        width = len(ref.label) * CHAR_W
        labels.boxes.append((plot_right - 6 - width, y - 4 - LINE_H, plot_right - 6, y - 2))
        out.append(
            f'<text x="{plot_right - 6}" y="{_fmt(y - 4)}" text-anchor="end" {text} '
            f'style="fill: {REFERENCE}">{escape(ref.label)}</text>'
        )
    front = pareto_front(points)
    on_front = set(front)
    if len(front) > 1:
        corners = [(px(points[front[0]].x), py(points[front[0]].y))]
        for i in front[1:]:
            corners += [(px(points[i].x), corners[-1][1]), (px(points[i].x), py(points[i].y))]
        steps = [f"{_fmt(x)},{_fmt(y)}" for x, y in corners]
        path = " L ".join(c for n, c in enumerate(steps) if n == 0 or c != steps[n - 1])
        out.append(
            f'<path class="front" d="M {path}" fill="none" stroke="{FRONT}" '
            f'stroke-width="1.6" stroke-linejoin="round"/>'
        )
    out.extend(_bars(points, px, py))
    for i, p in enumerate(points):
        if i in on_front:
            continue
        out.append(
            f'<circle class="dominated" cx="{_fmt(px(p.x))}" cy="{_fmt(py(p.y))}" r="3.5" '
            f'fill="#fff" stroke="{DOMINATED}" stroke-width="1.4">'
            f"<title>{escape(p.detail or p.label)}</title></circle>"
        )
    markers = [r for r in references if r.x is not None]
    for ref in markers:
        x, y = px(ref.x or 0.0), py(ref.y)
        out.append(
            f'<rect class="reference" x="{_fmt(x - 4)}" y="{_fmt(y - 4)}" width="8" height="8" '
            f'fill="#fff" stroke="{REFERENCE}" stroke-width="1.6" transform="rotate(45 '
            f'{_fmt(x)} {_fmt(y)})"><title>{escape(ref.label)}</title></rect>'
        )
    groups: dict[tuple[float, float], list[Point]] = {}
    for i in front:  # points at one place share one mark and one label
        groups.setdefault((points[i].x, points[i].y), []).append(points[i])
    for (gx, gy), members in groups.items():
        tooltip = "\n".join(m.detail or m.label for m in members)
        out.append(
            f'<circle class="front" cx="{_fmt(px(gx))}" cy="{_fmt(py(gy))}" r="4.5" '
            f'fill="{FRONT}"><title>{escape(tooltip)}</title></circle>'
        )
    # Labels go where no mark is: the front's first (they name the configurations to pick).
    for p in points:
        labels.mark(px(p.x), py(p.y))
    for ref in markers:
        labels.mark(px(ref.x or 0.0), py(ref.y))
    for (gx, gy), members in groups.items():
        label = " = ".join(m.label for m in members)
        tx, ty, anchor = labels.place(px(gx), py(gy), label)
        out.append(
            f'<text class="front-label" x="{_fmt(tx)}" y="{_fmt(ty)}" text-anchor="{anchor}" '
            f'{text} style="fill: {FRONT}">{escape(label)}</text>'
        )
    if label_dominated:
        for i, p in enumerate(points):
            if i in on_front:
                continue
            tx, ty, anchor = labels.place(px(p.x), py(p.y), p.label)
            out.append(
                f'<text class="dominated-label" x="{_fmt(tx)}" y="{_fmt(ty)}" '
                f'text-anchor="{anchor}" {text} style="fill: {DOMINATED}">{escape(p.label)}</text>'
            )
    for ref in markers:
        tx, ty, anchor = labels.place(px(ref.x or 0.0), py(ref.y), ref.label)
        out.append(
            f'<text x="{_fmt(tx)}" y="{_fmt(ty)}" text-anchor="{anchor}" {text} '
            f'style="fill: {REFERENCE}">{escape(ref.label)}</text>'
        )
    out.extend(_legend(text, has_references=bool(references)))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _bars(
    points: Sequence[Point], px: Callable[[float], float], py: Callable[[float], float]
) -> list[str]:
    """Each point's interval bars (under the marks), with short caps at their ends."""
    out: list[str] = []
    for p in points:
        x, y = px(p.x), py(p.y)
        if p.x_bar is not None and p.x_bar[0] != p.x_bar[1]:
            x0, x1 = (_fmt(px(v)) for v in p.x_bar)
            out.append(
                f'<path class="interval" d="M {x0},{_fmt(y - 3)} V {_fmt(y + 3)} M {x0},{_fmt(y)} '
                f'H {x1} M {x1},{_fmt(y - 3)} V {_fmt(y + 3)}" stroke="{DOMINATED}" fill="none"/>'
            )
        if p.y_bar is not None and p.y_bar[0] != p.y_bar[1]:
            y0, y1 = (_fmt(py(v)) for v in p.y_bar)
            out.append(
                f'<path class="interval" d="M {_fmt(x - 3)},{y0} H {_fmt(x + 3)} M {_fmt(x)},{y0} '
                f'V {y1} M {_fmt(x - 3)},{y1} H {_fmt(x + 3)}" stroke="{DOMINATED}" fill="none"/>'
            )
    return out


def _legend(text: str, *, has_references: bool) -> list[str]:
    """One row above the plot: what each mark is."""
    out: list[str] = []
    x, y = float(LEFT), TOP - 14
    items = [("front", "Pareto front (labelled)"), ("dominated", "dominated")]
    if has_references:
        items.append(("reference", "reference: uncompacted run, floors"))
    for kind, label in items:
        if kind == "front":
            out.append(f'<circle cx="{_fmt(x + 4)}" cy="{y}" r="4.5" fill="{FRONT}"/>')
        elif kind == "dominated":
            out.append(
                f'<circle cx="{_fmt(x + 4)}" cy="{y}" r="3.5" fill="#fff" '
                f'stroke="{DOMINATED}" stroke-width="1.4"/>'
            )
        else:
            out.append(
                f'<rect x="{_fmt(x)}" y="{y - 4}" width="8" height="8" fill="#fff" '
                f'stroke="{REFERENCE}" stroke-width="1.6" transform="rotate(45 {_fmt(x + 4)} {y})"/>'
            )
        out.append(f'<text x="{_fmt(x + 13)}" y="{y + 4}" {text}>{escape(label)}</text>')
        x += 13 + len(label) * CHAR_W + 18
    return out
