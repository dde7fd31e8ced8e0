"""``tsum sweep`` shows artifact recall where summary text exists (engine path)."""

from __future__ import annotations

from pathlib import Path

import orjson
from click.testing import CliRunner

from transcript_tools.cli.main import cli
from transcript_tools.sweep.tables import recall_cell, recall_note

SAMPLES = str(Path(__file__).resolve().parents[2] / "samples")


def test_sweep_reports_recall_where_summaries_were_written() -> None:
    args = ["sweep", SAMPLES, "--max-context-tokens", "2000", "--mode", "focused,full"]
    args += ["--measure", "current", "--json"]  # summary text matters: the engine runs
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    rows = {row["mode"]: row for row in orjson.loads(result.stdout)["configs"]}
    focused = rows["focused"]  # the current measure in Focused mode: the engine ran, offline
    assert focused["summary_calls"] > 0 and focused["artifact_probes"] > 0
    assert 0 < focused["artifact_recall"] < 1
    assert rows["full"]["artifact_recall"] is None  # full mode: a summary replaces nothing
    table = CliRunner().invoke(cli, args[:-1], catch_exceptions=False).stdout
    assert "recall" in table and f"{focused['artifact_recall']:.0%}" in table


# ---- recall that was not measured is never 0% ---------------------------------------

RECORDED = Path(SAMPLES) / "long_session.jsonl"  # recorded usage: cumulative = token series
ESTIMATED = Path(SAMPLES) / "chinese_migration.jsonl"  # no usage recorded: the engine runs


def sweep(tmp_path: Path, files: list[Path], *args: str) -> tuple[dict[str, object], str, str]:
    """(the JSON row of the one configuration, the table, the CSV) of a sweep over files."""
    corpus = tmp_path / "corpus"
    corpus.mkdir(exist_ok=True)
    for path in files:
        (corpus / path.name).write_bytes(path.read_bytes())
    base = ["sweep", str(corpus), *args]
    outputs = []
    for form in (["--json"], [], ["--csv"]):
        result = CliRunner().invoke(cli, base + form, catch_exceptions=False)
        assert result.exit_code == 0, result.output
        outputs.append(result.stdout)
    (row,) = orjson.loads(outputs[0])["configs"]
    return row, outputs[1], outputs[2]


def recall_column(table: str) -> str:
    header, _, row = table.splitlines()[:3]
    start = header.index("sum.tok") + len("sum.tok")
    end = header.index("recall") + len("recall")
    return row[start:end].strip()


def csv_row(text: str) -> dict[str, str]:
    import csv
    import io

    (row,) = list(csv.DictReader(io.StringIO(text)))
    return row


def test_recorded_usage_and_cumulative_measure_is_not_measured(tmp_path: Path) -> None:
    row, table, csv_text = sweep(tmp_path, [RECORDED])
    assert row["summary_calls"] == 5  # summaries fired, from the token series alone
    assert row["artifact_recall"] is None and row["artifact_probes"] == 0
    reason = row["artifact_recall_not_measured"]
    assert isinstance(reason, str) and reason.startswith("not measured: no summary text was made")
    assert recall_column(table) == "no text"
    assert "'no text' = no summary text was made" in table
    values = csv_row(csv_text)
    assert values["artifact_recall"] == "" and values["artifact_recall_not_measured"] == reason


def test_partly_measured_recall_says_on_how_many_conversations() -> None:
    # Whether summary text exists is decided per configuration (engine.rules.
    # depends_on_summary_text), so a sweep over the samples never scores only some of a
    # configuration's conversations; the cell and its note are checked on a row as
    # ConfigStats.to_json makes it.
    row = {"artifact_probes": 21, "artifact_recall": 0.9524, "summary_calls": 3, "mode": "focused"}
    row |= {"artifact_recall_conversations": 1, "summarizing_conversations": 2}
    assert recall_cell(row) == "95% (1/2)"
    assert recall_note(row).startswith("21 artifact probe(s), on 1 of the 2 summarizing")
    assert recall_cell(row | {"artifact_recall_conversations": 2}) == "95%"


def test_no_summary_and_full_mode_say_why(tmp_path: Path) -> None:
    none, table, _ = sweep(tmp_path, [RECORDED], "--max-context-tokens", "1000000")
    assert none["summary_calls"] == 0 and none["artifact_recall"] is None
    assert none["artifact_recall_not_measured"] == "not measured: no summary fired"
    assert recall_column(table) == "-"
    full, table, _ = sweep(tmp_path, [ESTIMATED], "--max-context-tokens", "2000", "--mode", "full")
    assert full["summary_calls"] > 0 and full["artifact_recall"] is None
    assert "Full mode" in str(full["artifact_recall_not_measured"])
    assert recall_column(table) == "full"


def test_the_report_explains_the_recall_column(tmp_path: Path) -> None:
    (tmp_path / "c").mkdir()
    for path in (RECORDED, ESTIMATED):
        (tmp_path / "c" / path.name).write_bytes(path.read_bytes())
    for maximum, measure, name in (
        ("32000", "cumulative", "r32.html"),
        ("4000", "current", "r4.html"),
    ):
        args = ["sweep", str(tmp_path / "c"), "--max-context-tokens", maximum, "--report"]
        args = [*args[:-1], "--measure", measure, "--report"]
        result = CliRunner().invoke(cli, [*args, str(tmp_path / name)], catch_exceptions=False)
        assert result.exit_code == 0, result.output
    report = tmp_path / "r32.html"
    text = report.read_text(encoding="utf-8")
    assert "<dt>recall</dt><dd>the share of <code>tsum eval</code>" in text
    assert "Not measured is never shown as 0%" in text
    assert 'title="not measured: no summary text was made' in text and ">no text</td>" in text
    measured = (tmp_path / "r4.html").read_text(encoding="utf-8")  # the engine ran: text scored
    assert "artifact probe(s), on every summarizing conversation" in measured
