"""The HTML pages: eval's table is a <table>; a chart with nothing to draw says why."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

from click.testing import CliRunner

from transcript_tools.cli.main import cli

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def test_eval_page_shows_the_recall_table_as_a_table_with_the_text_tables_cells(
    tmp_path: Path,
) -> None:
    page = tmp_path / "eval.html"
    done = CliRunner().invoke(cli, ["eval", str(SAMPLES), "--html", str(page)])
    assert done.exit_code == 0, done.stderr
    html = page.read_text()
    table = html.split('<table class="recall">', 1)[1].split("</table>", 1)[0]
    rows = [
        [unescape(cell).strip() for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row)]
        for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)
    ]
    # every row of the text table, cell for cell (the text aligns them with spaces)
    text_rows = [line.split("  ") for line in done.stdout.split("\n\n")[0].splitlines()]
    text_rows += [line.split("  ") for line in done.stdout.split("\n\n")[1].splitlines()]
    expected = [[cell.strip() for cell in line if cell.strip()] for line in text_rows]
    assert [[c for c in row if c] for row in rows] == expected
    assert rows[1][0] == "artifact (103)" and rows[2][0] == "path (41)"
    assert "<pre>recall" not in html  # no preformatted copy of it


def test_a_single_turn_chart_says_why_it_has_no_curve(tmp_path: Path) -> None:
    log = tmp_path / "one.jsonl"
    log.write_text(
        '{"role": "user", "content": "fix the build"}\n'
        '{"role": "assistant", "content": "done", '
        '"usage": {"prompt_tokens": 41000, "completion_tokens": 20}}\n'
    )
    page = tmp_path / "sweep.html"
    done = CliRunner().invoke(cli, ["sweep", str(log), "--report", str(page)])
    assert done.exit_code == 0, done.stderr
    assert (
        "no curve: a curve joins two turns or more, this conversation has 1; "
        "the watermark after it: 41,020 tokens"  # 41,000 in + 20 out: the cumulative cost
    ) in page.read_text()


def test_a_sweep_where_no_configuration_summarizes_says_so_instead_of_an_empty_chart(
    tmp_path: Path,
) -> None:
    page = tmp_path / "sweep.html"
    log = SAMPLES / "incident_tool_result.json"  # 2 turns, far under 24k: nothing fires
    done = CliRunner().invoke(cli, ["sweep", str(log), "--report", str(page)])
    assert done.exit_code == 0, done.stderr
    html = page.read_text()
    section = html.split("<h2>Summary calls per configuration</h2>", 1)[1].split("</section>")[0]
    assert "<svg" not in section  # before: an svg with one zero-width bar
    assert "No bars: no configuration made a summary call on these conversations" in section
    # a sweep with calls still draws its bars
    page_with = tmp_path / "calls.html"
    done = CliRunner().invoke(cli, ["sweep", str(SAMPLES), "--report", str(page_with)])
    assert done.exit_code == 0, done.stderr
    assert 'aria-label="summary calls per configuration"' in page_with.read_text()
