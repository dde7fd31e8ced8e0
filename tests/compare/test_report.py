"""``tsum compare --report``: the page's table sorts by a click (inline script, figures in
``data-sort``), its chart labels every Pareto point with its policy, draws the intervals,
and is never empty (no recall: tokens kept instead, and it says so)."""

from __future__ import annotations

import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from transcript_tools.cli.main import cli
from transcript_tools.compare.bootstrap import Interval
from transcript_tools.compare.figures import ORIGINAL, Comparison, PolicyRow, mark_pareto
from transcript_tools.compare.report import SORT_VALUES, Axes, _point, table, tradeoff
from transcript_tools.compare.table import COLUMN_KEYS

SAMPLE = str(Path(__file__).parents[2] / "samples" / "long_session.jsonl")


class Page(HTMLParser):
    """The attributes of every header and cell, the chart's labels, the scripts."""

    def __init__(self) -> None:
        super().__init__()
        self.headers: list[dict[str, str | None]] = []
        self.cells: list[dict[str, str | None]] = []
        self.labels: list[str] = []
        self.others: list[str] = []  # the points off the front, named in grey
        self.scripts: list[dict[str, str | None]] = []
        self.external: list[str] = []
        self._in_label: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "th":
            self.headers.append(found)
        elif tag == "td":
            self.cells.append(found)
        elif tag == "script":
            self.scripts.append(found)
        kind = found.get("class") if tag == "text" else None
        self._in_label = {"front-label": self.labels, "dominated-label": self.others}.get(
            kind or ""
        )
        self.external += [v for k, v in attrs if k in ("src", "href") and v]

    def handle_data(self, data: str) -> None:
        if self._in_label is not None:
            self._in_label.append(data)
            self._in_label = None


def _page(tmp_path: Path, window: str) -> tuple[str, Page]:
    page = tmp_path / "compare.html"
    done = CliRunner().invoke(
        cli,
        [
            "compare",
            SAMPLE,
            "--policy",
            "seed,codex,aider",
            "--max-context-tokens",
            window,
            "--silent",
            "--report",
            str(page),
        ],
        catch_exceptions=False,
    )
    assert done.exit_code == 0, done.stderr
    parsed = Page()
    text = page.read_text()
    parsed.feed(text)
    return text, parsed


def test_the_table_sorts_and_the_front_is_labelled_with_policy_names(tmp_path: Path) -> None:
    text, page = _page(tmp_path, "4000")
    keys = [h["data-key"] for h in page.headers]
    assert keys == ["policy", "recall", "retained", "over", "invalid", "degen", "pareto"]
    assert [h["data-type"] for h in page.headers][:2] == ["text", "number"]
    assert len(page.cells) == 3 * len(keys) and all("data-sort" in c for c in page.cells)
    # the recall cells sort by the pooled share, not by the text "92 [92, 92] n=1"
    recall = [c["data-sort"] for c in page.cells[1 :: len(keys)]]
    assert all(value and 0 < float(value) <= 1 for value in recall)
    # one inline script, nothing loaded from anywhere
    assert page.scripts == [{}] and page.external == []
    # aider keeps the fewest tokens and seed recalls most on this sample: the front is the
    # two (the text table marks them too), each labelled with its name
    assert sorted(page.labels) == ["aider", "seed"]
    assert page.others == ["codex"]  # the other point is named too
    assert "artifact recall" in text and "no recall to plot" not in text


def test_no_recall_plots_tokens_kept_and_says_so(tmp_path: Path) -> None:
    text, page = _page(tmp_path, "400000")  # no policy fires at a 400k window
    assert "No action of any policy took out anything to probe, so no recall to plot" in text
    assert "both axes then measure the tokens each policy keeps" in text  # the sample is unpriced
    assert "tokens kept, share of the original run" in text
    # every policy keeps the whole run, measured in one size model: one point, drawn and
    # named for the three
    assert text.count('class="dominated"') + text.count('class="front"') >= 1
    assert page.labels == ["seed = codex = aider"] and page.others == []


def _row(name: str, usd: float, delta: Interval, recall: Interval | None) -> PolicyRow:
    return PolicyRow(
        name,
        4,
        cost_usd=usd,
        baseline_usd=10.0,
        priced=4,
        cost_delta_usd=delta,
        recall=recall,
        retained=500.0,
        original_retained=1000.0,
    )


def test_money_axis_and_interval_bars_by_hand() -> None:
    cheap = _row("cheap", 8.0, Interval(-2.0, -3.0, -0.5, 4), Interval(0.5, 0.4, 0.7, 3))
    dear = _row("dear", 12.0, Interval(2.0, 1.0, 4.0, 4), Interval(0.9, 0.8, 1.0, 3))
    bad = _row("bad", 13.0, Interval(3.0, 2.0, 5.0, 4), Interval(0.6, 0.5, 0.7, 3))
    never = _row("never", 9.0, Interval(-1.0, -2.0, 0.0, 4), None)
    chart = tradeoff(Comparison(ORIGINAL, [cheap, dear, bad, never], 4))
    assert chart["money"] and chart["recall"] and chart["points"] == 3
    assert "never" in chart["notes"][0]
    svg = chart["svg"]
    # the front: cheap (cheapest) and dear (recalls most); bad is dominated by dear
    assert 'class="front-label"' in svg and ">cheap<" in svg and ">dear<" in svg
    assert ">bad<" not in svg.split("<title>")[0] and svg.count('class="front-label"') == 2
    # each point: at its change against the baseline (Δ $), a horizontal bar (that change's
    # interval) and a vertical one (recall's interval): 3 points x 2 bars
    assert svg.count('class="interval"') == 6
    point = _point(cheap, Axes(money=True, recall=True), ORIGINAL)
    assert (point.x, point.y) == (-2.0, 0.5)
    assert point.x_bar == (-3.0, -0.5) and point.y_bar == (0.4, 0.7)
    assert "-$" in svg and "$-" not in svg  # a negative change's tick: -$2


def test_the_charts_front_is_the_tables_when_a_row_totals_fewer_conversations() -> None:
    # 'fewer' overflowed on some conversations: its bill totals fewer of them ($5, under
    # cheap's $8) though its change is dearer (+1 against -2) and it recalls less
    cheap = _row("cheap", 8.0, Interval(-2.0, -3.0, -0.5, 4), Interval(0.5, 0.4, 0.7, 3))
    fewer = _row("fewer", 5.0, Interval(1.0, 0.5, 1.5, 3), Interval(0.3, 0.2, 0.4, 3))
    fewer.baseline_usd, fewer.priced = 4.0, 3  # the baseline over the same 3 conversations
    comparison = Comparison(ORIGINAL, [cheap, fewer], 4)
    mark_pareto(comparison.rows)
    assert (cheap.pareto, fewer.pareto) == (True, False)  # the table's column
    svg = tradeoff(comparison)["svg"]
    fronts = re.findall(r'class="front-label"[^>]*>([^<]*)<', svg)
    assert fronts == ["cheap"]


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (apt-get install chromium)")
def test_a_click_on_a_header_sorts_the_rows_in_a_browser(tmp_path: Path) -> None:
    text, _ = _page(tmp_path, "4000")
    # the page as loaded, then two clicks on recall's header: descending by the figure
    click = "document.querySelector('th[data-key=recall]').click();"
    page = tmp_path / "clicked.html"
    page.write_text(text.replace("</body>", f"<script>{click * 2}</script></body>"))
    dom = subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    body = dom.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    order = re.findall(r'<tr><td data-sort="([^"]+)"', body)
    recall = [float(v) for v in re.findall(r'</td><td data-sort="([0-9.]+)"', body)[::6]]
    assert order == ["seed", "codex", "aider"]  # 92%, 87%, 86% on this sample
    assert recall == sorted(recall, reverse=True)
    assert 'aria-sort="descending"' in dom


def test_view_recall_shows_where_it_was_computed_and_sorts_by_its_share() -> None:
    assert set(SORT_VALUES) == set(COLUMN_KEYS)  # every column sorts by a figure
    row = _row("a", 8.0, Interval(-2.0, -3.0, -0.5, 4), Interval(0.5, 0.4, 0.7, 3))
    assert "vrecall" not in [c["key"] for c in table([row])["columns"]]  # not computed
    row.view_recall = Interval(0.25, 0.2, 0.3, 3)
    shown = table([row])
    at = [c["key"] for c in shown["columns"]].index("vrecall")
    assert shown["rows"][0][at]["text"] == "25 [20, 30] n=3"
    assert shown["rows"][0][at]["sort"] == "0.25"
