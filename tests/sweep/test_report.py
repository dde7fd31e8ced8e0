"""The sweep's HTML report: self-contained, and really rendered by a browser."""

from __future__ import annotations

import re
import shutil
import subprocess
from html.parser import HTMLParser
from importlib import resources
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.png import pixels_of, read_png
from transcript_tools.engine.config import Measure
from transcript_tools.engine.messages import (
    AssistantMessage,
    Compaction,
    Conversation,
    Message,
    SystemMessage,
    Usage,
    UserMessage,
)
from transcript_tools.present.chart import FRONT, REFERENCE
from transcript_tools.sweep.driver import Sweep, SweepResult, sweep_grid
from transcript_tools.sweep.html import render_report, write_report
from transcript_tools.sweep.stats import ConfigStats

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def conversation(
    name: str, turns: int, step: int, compact_at: int | None = None, usage: bool = True
) -> Conversation:
    messages: list[Message] = [SystemMessage("You are a careful assistant.")]
    for i in range(turns):
        messages.append(UserMessage.text(f"request {i}: " + "please check the logs " * 30))
        messages.append(
            AssistantMessage.text("checked " * 120, Usage(step * (i + 1), 150) if usage else None)
        )
    conv = Conversation(name, f"corpus/{name}.jsonl", "native", messages)
    if compact_at is not None:
        conv.compactions.append(
            Compaction(1 + 2 * compact_at, "claude-code:isCompactSummary", step * compact_at)
        )
    return conv


def sweep_result() -> SweepResult:
    import asyncio

    from transcript_tools.engine.prompt import template_from_config

    configs = sweep_grid(
        (),
        [8000, 32000],
        ratios=[0.5, 0.9],
        debounces=[1, 3],
        measures=[Measure.CUMULATIVE, Measure.CURRENT],
    )
    sweep = Sweep(configs, sample_size=4)
    sweep.template = template_from_config(sweep.base.summary_prompt)
    result = SweepResult(configs, [ConfigStats(c, 3.0) for c in configs])
    convs = [
        conversation("alpha", 14, 2500, compact_at=9),
        conversation("beta", 6, 900),
        conversation("gamma <b>", 10, 0, usage=False),
        conversation("delta", 20, 1800),
    ]
    heap: list = []
    for i, conv in enumerate(convs):
        asyncio.run(sweep._one(i, conv, result, heap))
    result.samples = [s for _, _, s in sorted(heap, key=lambda item: item[2].profile.index)]
    result.files = len(convs)
    result.summary_source = sweep._source(result)
    return result


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


@pytest.mark.parametrize("chart", [False, True])
def test_report_is_self_contained(chart: bool) -> None:
    page = render_report(sweep_result(), sort="calls", title="test corpus", chart=chart)
    assert ('<svg class="tradeoff"' in page) is chart
    parser = _Collector()
    parser.feed(page)
    names = [t for t, _ in parser.tags]
    assert "script" not in names and "link" not in names and "img" not in names
    for _, attrs in parser.tags:
        for key in ("src", "href"):
            assert not attrs.get(key), f"external reference: {attrs}"
    assert "@import" not in page and "url(" not in page
    assert "gamma &lt;b&gt;" in page and "gamma <b>" not in page  # conversation text is escaped
    assert names.count("tr") == 1 + 16  # header + one row per configuration
    assert names.count("figure") == 4 * 2  # 4 sampled conversations x 2 measures
    assert "agent compacted" in page and "log scale" in page


def test_templates_ship_as_package_data() -> None:
    files = {p.name for p in resources.files("transcript_tools.templates").iterdir()}
    assert "report.html.j2" in files


@pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium not installed (Debian: apt-get install -y chromium); "
    "the browser rendering check needs it",
)
def test_report_renders_in_chromium(tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    write_report(report, sweep_result(), sort="-calls", title="test corpus")
    base = [str(CHROMIUM), *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run(
        [*base, "--dump-dom", report.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert dom.count("<tr>") >= 17
    assert len(re.findall(r'<path class="curve" d="M [0-9.]+,[0-9.]+ L', dom)) >= 6
    assert len(re.findall(r'<circle class="trigger"', dom)) > 10
    assert "summary calls per configuration" in dom.lower()
    shot = tmp_path / "report.png"
    subprocess.run(
        [*base, f"--screenshot={shot}", "--window-size=1400,2400", report.as_uri()],
        capture_output=True,
        timeout=120,
        check=True,
    )
    assert shot.stat().st_size > 20_000  # a rendered page, not a blank one


def _screenshot(page: Path, shot: Path, profile: Path) -> None:
    subprocess.run(
        [
            str(CHROMIUM),
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            "--force-color-profile=srgb",  # the exact colours of the page, not a display's
            "--hide-scrollbars",
            f"--screenshot={shot}",
            "--window-size=960,2400",
            page.as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=True,
    )


SAMPLES = Path(__file__).resolve().parents[2] / "samples"
CHART_PAGES = {  # a sweep grid whose configurations have recall figures, and eval's page
    "sweep": [
        "sweep",
        str(SAMPLES),
        "--measure",
        "current",
        "--ratio",
        "0.5,0.75",
        "--max-context-tokens",
        "4000,8000",
        "--silent",
        "--report",
    ],
    "eval": ["eval", str(SAMPLES), "--prompt", "zh", "--silent", "--html"],
}


@pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium not installed (Debian: apt-get install -y chromium); "
    "the browser rendering check needs it",
)
@pytest.mark.parametrize("command", sorted(CHART_PAGES))
def test_tradeoff_chart_is_painted_in_chromium(command: str, tmp_path: Path) -> None:
    """The chart's two colours (present.chart.FRONT, REFERENCE) are named nowhere else on
    the page: pixels of exactly those colours are the chart's marks, painted."""
    from transcript_tools.cli.main import cli

    page = tmp_path / f"{command}.html"
    for args in ([*CHART_PAGES[command], str(page)], [*CHART_PAGES[command], str(page), "--chart"]):
        assert CliRunner().invoke(cli, args).exit_code == 0
        text = page.read_text(encoding="utf-8")
        chart = "--chart" in args
        assert (FRONT in text, REFERENCE in text) == (chart, chart)
    shot = tmp_path / f"{command}.png"
    _screenshot(page, shot, tmp_path / "profile")
    image = read_png(shot)
    front, reference = pixels_of(image, FRONT), pixels_of(image, REFERENCE)
    assert len(front) >= 20 and len(reference) >= 20  # filled marks, not stray pixels
    xs, ys = [x for x, _ in front + reference], [y for _, y in front + reference]
    # the marks spread over the chart's box (880 x 400 px), not one corner of it
    assert 150 <= max(xs) - min(xs) <= 880 and 100 <= max(ys) - min(ys) <= 400
