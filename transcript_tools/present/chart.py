"""The charts' axes, ticks and scales (``axis_ticks``, ``ticks_from_zero``, ``log_ticks``,
``linear``), and the trade-off chart of the sweep's report, eval's page and compare's
report drawn with them: one self-contained SVG.

One point per configuration: x a cost (lower is better: money per conversation, or the
tokens the model is still sent), y a recall share (higher is better). The Pareto front —
the points no other point beats on both axes — is drawn as a staircase and its points
are labelled; reference marks (the uncompacted run, the floors of docs/eval.md "Floors")
sit beside them. Inline SVG only: no script, no web font, no external reference.

Pure (numbers and strings in, a string out) and importing nothing of the package outside
``present/``, so that every layer can use it: see LAYERS in tests/test_import_graph.py.
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
PLOT_RIGHT, PLOT_BOTTOM = WIDTH - RIGHT, HEIGHT - BOTTOM
FONT = f'font-family="system-ui, sans-serif" font-size="11" fill="{INK}"'
BOLD = "font-weight: 600"
Scale = Callable[[float], float]


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
    px, py = linear(ticks[0], ticks[-1], LEFT, PLOT_RIGHT), linear(Y_HIGH, Y_LOW, TOP, PLOT_BOTTOM)
    out = [
        f'<svg class="tradeoff" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" '
        f'height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(y_title)} against {escape(x_title)}, one point per configuration">',
        f'<rect class="plot" x="{LEFT}" y="{TOP}" width="{PLOT_RIGHT - LEFT}" '
        f'height="{PLOT_BOTTOM - TOP}" fill="#fff" stroke="#b8c0ca"/>',
    ]
    out += _axes([(px(t), tick_label(t, x_unit, decimals)) for t in ticks], py, x_title, y_title)
    labels = _Labels(LEFT + 4, PLOT_RIGHT - 4)
    out += _reference_lines(references, py, labels)
    front = pareto_front(points)
    out += _front_line([(px(points[i].x), py(points[i].y)) for i in front])
    out += _bars(points, px, py)
    groups: dict[tuple[float, float], list[Point]] = {}
    for i in front:  # points at one place share one mark and one label
        groups.setdefault((points[i].x, points[i].y), []).append(points[i])
    on_front = set(front)
    off_front = [p for i, p in enumerate(points) if i not in on_front]
    markers = [(px(r.x), py(r.y), r.label) for r in references if r.x is not None]
    out += _marks(off_front, markers, groups, px, py)
    # Labels go where no mark is: the front's first (they name the configurations to pick).
    for x, y in [(px(p.x), py(p.y)) for p in points] + [(x, y) for x, y, _ in markers]:
        labels.mark(x, y)
    named = [(px(x), py(y), " = ".join(m.label for m in group)) for (x, y), group in groups.items()]
    out += [
        _text(*labels.place(x, y, text), text, f"fill: {FRONT}", "front-label")
        for x, y, text in named
    ]
    for p in off_front if label_dominated else []:
        spot = labels.place(px(p.x), py(p.y), p.label)
        out.append(_text(*spot, p.label, f"fill: {DOMINATED}", "dominated-label"))
    out += [_text(*labels.place(x, y, text), text, f"fill: {REFERENCE}") for x, y, text in markers]
    out.extend(_legend(has_references=bool(references)))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _text(
    x: object, y: object, anchor: str, body: str, style: str = "", cls: str = "", turn: str = ""
) -> str:
    """One label in the chart's font (``body`` escaped); a float position rounded."""
    x, y = (_fmt(v) if isinstance(v, float) else v for v in (x, y))
    head = (f'<text class="{cls}"' if cls else "<text") + f' x="{x}" y="{y}"'
    head += f' text-anchor="{anchor}"' if anchor else ""
    tail = (f' style="{style}"' if style else "") + (f' transform="{turn}"' if turn else "")
    return f"{head} {FONT}{tail}>{escape(body)}</text>"


def _axes(ticks: list[tuple[float, str]], py: Scale, x_title: str, y_title: str) -> list[str]:
    """The grid and its labels (recall every 20%; x at ``ticks``, (position, label)), and
    the axes' titles."""
    out: list[str] = []
    for share in (0.0, 0.2, 0.4, 0.6, 0.8, 1.0):
        row = _fmt(py(share))
        out.append(f'<line x1="{LEFT}" x2="{PLOT_RIGHT}" y1="{row}" y2="{row}" stroke="{GRID}"/>')
        out.append(_text(LEFT - 6, py(share) + 4, "end", f"{share:.0%}"))
    for at, label in ticks:
        column = _fmt(at)
        out.append(
            f'<line x1="{column}" x2="{column}" y1="{TOP}" y2="{PLOT_BOTTOM}" stroke="{GRID}"/>'
        )
        out.append(_text(column, PLOT_BOTTOM + 15, "middle", label))
    out.append(
        _text((LEFT + PLOT_RIGHT) / 2, HEIGHT - 12, "middle", f"{x_title} — left: cheaper", BOLD)
    )
    middle = _fmt((TOP + PLOT_BOTTOM) / 2)
    turn = f"rotate(-90 14 {middle})"
    out.append(_text(14, middle, "middle", f"{y_title} — up: keeps more", BOLD, turn=turn))
    return out


def _reference_lines(references: Sequence[Reference], py: Scale, labels: _Labels) -> list[str]:
    """Each reference without an x: a dashed line across the plot, named at its right end."""
    out: list[str] = []
    for ref in references:
        if ref.x is not None:
            continue
        y = py(ref.y)
        out.append(
            f'<line class="reference" x1="{LEFT}" x2="{PLOT_RIGHT}" y1="{_fmt(y)}" '
            f'y2="{_fmt(y)}" stroke="{REFERENCE}" stroke-dasharray="6 4"/>'
        )
        width = len(ref.label) * CHAR_W
        labels.boxes.append((PLOT_RIGHT - 6 - width, y - 4 - LINE_H, PLOT_RIGHT - 6, y - 2))
        out.append(_text(PLOT_RIGHT - 6, y - 4, "end", ref.label, f"fill: {REFERENCE}"))
    return out


def _front_line(front: list[tuple[float, float]]) -> list[str]:
    """The Pareto front (its points' positions, x ascending) as a staircase."""
    if len(front) < 2:
        return []
    corners = [front[0]]
    for x, y in front[1:]:
        corners += [(x, corners[-1][1]), (x, y)]
    steps = [f"{_fmt(x)},{_fmt(y)}" for x, y in corners]
    path = " L ".join(c for n, c in enumerate(steps) if n == 0 or c != steps[n - 1])
    return [
        f'<path class="front" d="M {path}" fill="none" stroke="{FRONT}" '
        f'stroke-width="1.6" stroke-linejoin="round"/>'
    ]


def _marks(
    off_front: list[Point],
    markers: list[tuple[float, float, str]],
    groups: dict[tuple[float, float], list[Point]],
    px: Scale,
    py: Scale,
) -> list[str]:
    """The dominated points, the reference marks (x, y, label) and the front's points,
    one mark per place, each with its tooltip."""
    out = [
        f'<circle class="dominated" cx="{_fmt(px(p.x))}" cy="{_fmt(py(p.y))}" r="3.5" '
        f'fill="#fff" stroke="{DOMINATED}" stroke-width="1.4">'
        f"<title>{escape(p.detail or p.label)}</title></circle>"
        for p in off_front
    ]
    out += [
        f'<rect class="reference" x="{_fmt(x - 4)}" y="{_fmt(y - 4)}" width="8" height="8" '
        f'fill="#fff" stroke="{REFERENCE}" stroke-width="1.6" transform="rotate(45 '
        f'{_fmt(x)} {_fmt(y)})"><title>{escape(label)}</title></rect>'
        for x, y, label in markers
    ]
    for (gx, gy), members in groups.items():
        tooltip = "\n".join(m.detail or m.label for m in members)
        out.append(
            f'<circle class="front" cx="{_fmt(px(gx))}" cy="{_fmt(py(gy))}" r="4.5" '
            f'fill="{FRONT}"><title>{escape(tooltip)}</title></circle>'
        )
    return out


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


def _legend(*, has_references: bool) -> list[str]:
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
        out.append(_text(x + 13, y + 4, "", label))
        x += 13 + len(label) * CHAR_W + 18
    return out
