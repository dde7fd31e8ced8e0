"""formats.corpus.CorpusReader: the one reading loop of replay, sweep, eval and the jobs."""

from __future__ import annotations

from pathlib import Path

from transcript_tools.formats.corpus import CorpusReader
from transcript_tools.reporter import Callbacks, ignore

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "chinese_migration.jsonl"


def test_reads_in_order_with_unique_ids_and_goes_on_after_a_bad_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n", encoding="utf-8")
    copy = tmp_path / "copy.jsonl"  # another file with the same session id
    copy.write_bytes(SAMPLE.read_bytes())
    errors: list[str] = []
    reader = CorpusReader(reporter=Callbacks(ignore, errors.append), seen_ids={"taken"})
    ids = [c.session_id for c in reader.conversations([str(SAMPLE), str(bad), str(copy)])]
    first = ids[0]
    assert ids == [first, f"{first}#2"]  # one id in two files: the second is made unique
    assert (reader.stats.files, reader.stats.failed_files) == (3, 1)
    assert len(errors) == 1 and errors[0].startswith(f"tsum: error: {bad}:1")
    assert reader.stats.errors == [errors[0].removeprefix("tsum: error: ")]
    assert {"taken", first, f"{first}#2"} <= reader.seen_ids


def test_counts_warnings(tmp_path: Path) -> None:
    partial = tmp_path / "partial.jsonl"
    partial.write_bytes(SAMPLE.read_bytes().rstrip(b"\n")[:-5])  # a truncated last line
    warnings: list[str] = []
    reader = CorpusReader(reporter=Callbacks(warnings.append))
    list(reader.conversations([str(partial)]))
    assert warnings and reader.stats.warnings == len(warnings)


def test_a_file_named_twice_is_read_once_and_the_warning_counted(tmp_path: Path) -> None:
    warnings: list[str] = []
    reader = CorpusReader(reporter=Callbacks(warnings.append))
    ids = [c.session_id for c in reader.conversations([str(SAMPLE), str(SAMPLE)])]
    assert len(ids) == 1 and reader.stats.files == 1
    assert warnings == [f"warning: {SAMPLE}: given twice (also given as {SAMPLE}): read once"]
    assert reader.stats.warnings == 1
