"""The trade-off chart (transcript_tools/present/chart.py): the Pareto front on hand-computed
points, the axis ticks, a golden SVG, and its wiring into `tsum sweep --report --chart` and
`tsum eval --html --chart` (off by default: the pages without the flag are unchanged).
The browser check is in tests/test_report.py (test_tradeoff_chart_is_painted_in_chromium)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_tools.cli.main import cli
from transcript_tools.present.chart import (
    Point,
    Reference,
    axis_ticks,
    pareto_front,
    render_svg,
)
from transcript_tools.present.numbers import tick_label

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
GRID = ["--measure", "current", "--ratio", "0.5,0.75", "--max-context-tokens", "4000,8000"]


def P(label: str, x: float, y: float) -> Point:
    return Point(label, x, y)


# ---- the Pareto front ------------------------------------------------------------------


def test_front_on_hand_computed_points() -> None:
    points = [
        P("A", 100, 0.5),  # 0 front
        P("B", 200, 0.8),  # 1 front
        P("C", 200, 0.7),  # 2 dominated by B: same cost, keeps less
        P("D", 300, 0.8),  # 3 dominated by B: keeps as much, costs more
        P("E", 150, 0.5),  # 4 dominated by A: keeps as much, costs more
        P("F", 400, 0.9),  # 5 front
        P("G", 400, 0.9),  # 6 front: a tie with F, neither dominates the other
        P("H", 50, 0.2),  # 7 front: the cheapest
        P("I", 500, 0.85),  # 8 dominated by F
        P("J", 200, 0.7),  # 9 dominated by B, a tie with C does not save it
    ]
    assert pareto_front(points) == [7, 0, 1, 5, 6]  # by cost; the tie in input order


def test_front_edge_cases() -> None:
    assert pareto_front([]) == []
    assert pareto_front([P("only", 3, 0.1)]) == [0]
    # everything at one place: all of it is the front
    assert pareto_front([P("a", 1, 0.5), P("b", 1, 0.5), P("c", 1, 0.5)]) == [0, 1, 2]
    # one point beats all others on both axes
    assert pareto_front([P("a", 5, 0.5), P("b", 1, 0.9), P("c", 3, 0.2)]) == [1]
    # a tie in cost only: the one that keeps more wins, whichever comes first
    assert pareto_front([P("a", 2, 0.4), P("b", 2, 0.6)]) == [1]


def _brute_force(points: list[Point]) -> set[int]:
    def dominates(q: Point, p: Point) -> bool:
        return q.x <= p.x and q.y >= p.y and (q.x < p.x or q.y > p.y)

    return {i for i, p in enumerate(points) if not any(dominates(q, p) for q in points)}


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 6), st.integers(0, 6)),  # small grids: many ties
        max_size=12,
    )
)
def test_front_is_the_set_of_undominated_points(pairs: list[tuple[int, int]]) -> None:
    points = [P(str(i), x, y / 6) for i, (x, y) in enumerate(pairs)]
    front = pareto_front(points)
    assert set(front) == _brute_force(points)
    assert [points[i].x for i in front] == sorted(points[i].x for i in front)


# ---- axes --------------------------------------------------------------------------------


def test_ticks_are_round_and_span_the_values() -> None:
    ticks, decimals = axis_ticks([1630, 2470])
    assert (ticks, decimals) == ([1400, 1600, 1800, 2000, 2200, 2400, 2600], 0)
    assert [tick_label(t, "tokens", decimals) for t in ticks[:4]] == ["1.4k", "1.6k", "1.8k", "2k"]
    ticks, decimals = axis_ticks([0.012, 0.031])
    assert (ticks, decimals) == ([0.01, 0.015, 0.02, 0.025, 0.03, 0.035], 3)
    assert tick_label(ticks[0], "usd", decimals) == "$0.010"
    ticks, decimals = axis_ticks([0, 1570])  # never below 0 for values that are not
    assert (ticks, decimals) == ([0, 500, 1000, 1500, 2000], 0)
    ticks, decimals = axis_ticks([500])  # one value: a range around it
    assert ticks[0] < 500 < ticks[-1] and decimals == 0
    assert tick_label(2.5e6, "tokens", 0) == "2.5M" and tick_label(2.5, "tokens", 1) == "2.5"


# ---- the SVG -----------------------------------------------------------------------------


def golden_svg() -> str:
    points = [
        P("#1 0.5·4k·d1", 1630, 0.86),
        P("#2 0.5·4k·d3", 1630, 0.86),  # a tie on the front: one label for both
        P("#3 0.75·4k·d3", 1880, 0.95),
        P("#4 0.5·8k·d3", 2060, 0.85),  # dominated
        Point("<b>&co</b>", 2400, 0.99, "an escaped label & tooltip"),  # at the right edge
    ]
    references = [
        Reference("uncompacted run", 1.0, 2470),
        Reference("truncation floor", 0.36, 1880),
        Reference("no-summary floor: 0%", 0.0),
    ]
    return render_svg(points, references, x_title="mean view with summaries (tokens)")


def test_golden_svg(text_snapshot) -> None:
    svg = golden_svg()
    assert svg == golden_svg()  # deterministic
    assert svg.count('<circle class="front"') == 3  # #1 = #2 share one mark
    assert svg.count('<circle class="dominated"') == 1
    assert ">#1 0.5·4k·d1 = #2 0.5·4k·d3</text>" in svg
    assert "&lt;b&gt;&amp;co&lt;/b&gt;" in svg and "<b>" not in svg
    for banned in ("<script", "href", "url(", "@import", "@font-face"):
        assert banned not in svg
    assert svg == text_snapshot


def test_an_empty_chart_still_has_axes() -> None:
    svg = render_svg([], [Reference("no summary", 0.0)], x_title="tokens")
    assert '<path class="front"' not in svg and '<circle class="front"' not in svg
    assert "100%" in svg and ">0</text>" in svg


# ---- wiring ------------------------------------------------------------------------------


def tsum(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_sweep_chart_is_opt_in(tmp_path: Path) -> None:
    plain, charted = tmp_path / "plain.html", tmp_path / "chart.html"
    assert tsum("sweep", str(SAMPLES), *GRID, "--report", str(plain), "--silent")[0] == 0
    assert (
        tsum("sweep", str(SAMPLES), *GRID, "--report", str(charted), "--chart", "--silent")[0] == 0
    )
    page, with_chart = plain.read_text(encoding="utf-8"), charted.read_text(encoding="utf-8")
    assert "tradeoff" not in page
    assert with_chart.count('<svg class="tradeoff"') == 1
    assert with_chart.count('<circle class="front"') >= 1
    assert "uncompacted run" in with_chart and "no-summary floor" in with_chart
    assert "tokens the model is sent per turn" in with_chart
    # everything else on the page is what it was without the flag
    start, end = (
        with_chart.index('  <section id="tradeoff">'),
        with_chart.index('<section id="curves">'),
    )
    assert with_chart[:start] + with_chart[end - 2 :] == page


def test_chart_without_its_page_is_a_usage_error() -> None:
    code, _, err = tsum("sweep", str(SAMPLES), "--chart")
    assert code == 2 and "--chart draws into the HTML report: give --report FILE too" in err
    code, _, err = tsum("eval", str(SAMPLES), "--chart")
    assert code == 2 and "--chart draws into the HTML page: give --html FILE too" in err


def test_sweep_chart_uses_money_when_every_row_has_it() -> None:
    from transcript_tools.sweep.html import _tradeoff

    code, out, _ = tsum("sweep", str(SAMPLES), *GRID, "--json", "--silent")
    rows = orjson.loads(out)["configs"]
    measured = [r for r in rows if r["artifact_recall"] is not None]
    assert len(measured) >= 3
    tokens = _tradeoff(rows)
    assert tokens["points"] == len(measured)
    for n, row in enumerate(measured):
        row["cost_per_conversation_usd"] = 0.01 + 0.005 * n
        row["cost_original_usd"], row["cost_priced_conversations"] = 0.15, 3  # 0.05 each
    money = _tradeoff(rows)
    assert "cost per conversation (USD)" in money["svg"] and "$0.0" in money["svg"]
    assert "tokens the model is sent" not in money["svg"]
    # the cheapest configuration is on the front: its label is drawn
    cheapest = measured[0]
    assert f">#{cheapest['config']} " in money["svg"]
    assert "uncompacted run" in money["svg"]
    measured[-1]["cost_per_conversation_usd"] = None  # one without money: tokens for all
    assert "cost per conversation" not in _tradeoff(rows)["svg"]


@pytest.fixture(scope="module")
def eval_pages(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    out = tmp_path_factory.mktemp("eval")
    args = ["eval", str(SAMPLES), "--prompt", "zh", "--silent", "--html"]
    assert tsum(*args, str(out / "plain.html"))[0] == 0
    assert tsum(*args, str(out / "chart.html"), "--chart")[0] == 0
    return (out / "plain.html").read_text("utf-8"), (out / "chart.html").read_text("utf-8")


def test_eval_chart_is_opt_in(eval_pages: tuple[str, str]) -> None:
    plain, chart = eval_pages
    assert "tradeoff" not in plain
    assert chart.count('<svg class="tradeoff"') == 1
    for mark in ("truncation floor", "no summary", "uncompacted"):
        assert f">{mark}</text>" in chart
    assert '<circle class="front"' in chart and ">zh</text>" in chart
    start = chart.index('<section id="tradeoff">')
    end = chart.index("</section>", start) + len("</section>")
    assert chart[:start].removesuffix("\n") + chart[end:] == plain


def test_eval_chart_under_policies_has_one_point_per_policy(tmp_path: Path) -> None:
    """--policy: the chart plots each policy's recall in the next view against that view's
    size (eval/render._policy_tradeoff), not the seed-shaped per-template points."""
    page = tmp_path / "policies.html"
    args = ["eval", str(SAMPLES), "--policy", "seed", "--policy", "gemini-cli"]
    args += ["--policy", "observation-masking", "--max-context-tokens", "4000"]
    code, _, err = tsum(*args, "--silent", "--html", str(page), "--chart")
    assert code == 0, err
    html = page.read_text("utf-8")
    chart = html[html.index('<section id="tradeoff">') :]
    assert "tokens in the view after each action" in chart
    for name in ("seed", "gemini-cli"):
        assert f"{name}: artifact recall" in chart
    assert "One point per policy" in chart and "truncation floor sits" not in chart
