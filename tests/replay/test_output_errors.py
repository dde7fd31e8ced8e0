"""An output that cannot be written is not a bug (transcript_tools/writable.py): a
destination that cannot work is refused before the work (exit 2), a write that fails
mid-run is one line (exit 3, never 4), and the directory it leaves says it is partial,
so ``tsum diff`` calls it incomplete instead of reporting its sessions removed."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from transcript_tools.cli.main import cli
from transcript_tools.replay.output_dir import OutputDirectory

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, [*args], catch_exceptions=False)


def one_error(result: Result) -> str:
    errors = [line for line in result.stderr.splitlines() if line.startswith("tsum: error: ")]
    assert len(errors) == 1 and "Traceback" not in result.stderr, result.stderr
    return errors[0]


@pytest.mark.parametrize(
    "command", [("sweep",), ("compare", "--policy", "seed,codex", "--fallback-window", "32000")]
)
def test_a_report_whose_folder_does_not_exist_is_refused_before_the_sweep(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    report = tmp_path / "no-such-folder" / "report.html"
    result = run(command[0], str(SAMPLES), *command[1:], "--report", str(report))
    assert result.exit_code == 2
    assert one_error(result) == (
        f"tsum: error: --report {report}: its folder {report.parent} does not exist"
    )
    assert result.stdout == ""  # nothing computed


def test_eval_html_whose_folder_does_not_exist_is_refused_as_a_report_is(tmp_path: Path) -> None:
    """eval --html is an output file like sweep's and compare's --report: a missing folder
    is refused before the run in the same words (writable.check_output_file), not created
    (a mistyped folder name is more likely than a wish for a new one)."""
    page = tmp_path / "no-such-folder" / "eval.html"
    result = run("eval", str(SAMPLES), "--html", str(page))
    assert result.exit_code == 2
    assert (
        one_error(result) == f"tsum: error: --html {page}: its folder {page.parent} does not exist"
    )
    assert result.stdout == "" and not page.parent.exists()


def test_an_out_directory_under_a_file_is_refused_before_the_replay(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    for command in ("replay", "eval"):
        result = run(command, str(SAMPLES), "--out", str(tmp_path / "file" / "out"))
        assert result.exit_code == 2, result.stderr
        assert one_error(result).endswith(f"{tmp_path / 'file'} is not a directory")


def test_a_full_disk_is_one_line_and_exit_3(tmp_path: Path) -> None:
    result = run("sweep", str(SAMPLES), "--report", "/dev/full")  # ENOSPC on every write
    assert result.exit_code == 3
    assert one_error(result) == (
        "tsum: error: No space left on device (an output could not be written)"
    )


def test_a_write_failing_mid_run_leaves_a_directory_diff_calls_incomplete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    complete = tmp_path / "complete"
    assert run("replay", str(SAMPLES), "--out", str(complete)).exit_code == 0
    sessions = 0

    def full_after_one(real):  # type: ignore[no-untyped-def]
        def write(self: OutputDirectory, *args: object) -> None:
            nonlocal sessions
            sessions += 1
            if sessions > 1:
                raise OSError(errno.ENOSPC, "No space left on device", str(self.root / "x"))
            real(self, *args)

        return write

    for method in ("write_session", "write_rendered"):  # in order, or after waiting
        monkeypatch.setattr(
            OutputDirectory, method, full_after_one(getattr(OutputDirectory, method))
        )
    partial = tmp_path / "partial"
    result = run("replay", str(SAMPLES), "--out", str(partial))
    assert result.exit_code == 3
    assert one_error(result) == (
        f"tsum: error: {partial / 'x'}: No space left on device (an output could not be written)"
    )
    assert json.loads((partial / "manifest.json").read_text())["status"] == "failed"
    diff = run("diff", str(complete), str(partial))
    assert diff.exit_code == 3
    assert one_error(diff) == (
        f"tsum: error: {partial}: incomplete output directory (manifest.json: status failed): "
        "the run did not finish; rerun it before comparing"
    )
    assert "removed" not in diff.stdout + diff.stderr


def test_a_run_killed_before_its_end_is_incomplete(tmp_path: Path) -> None:
    """What a kill -9 leaves: the manifest written when the directory was opened."""
    complete, killed = tmp_path / "complete", tmp_path / "killed"
    assert run("replay", str(SAMPLES), "--out", str(complete)).exit_code == 0
    OutputDirectory(killed)  # opened, never closed
    assert json.loads((killed / "manifest.json").read_text()) == {"status": "running"}
    diff = run("diff", str(complete), str(killed))
    assert diff.exit_code == 3 and "incomplete output directory" in one_error(diff)


def test_the_exit_code_table_says_which_code_an_output_refusal_gets(tmp_path: Path) -> None:
    from transcript_tools.errors import EXIT_CODE_MEANINGS, ExitCode

    (tmp_path / "file").write_text("x")
    before = run("replay", str(SAMPLES), "--out", str(tmp_path / "file" / "out"))
    assert "an output refused before the run" in EXIT_CODE_MEANINGS[ExitCode(before.exit_code)]
    during = run("sweep", str(SAMPLES), "--report", "/dev/full")
    assert "full or read-only disk" in EXIT_CODE_MEANINGS[ExitCode(during.exit_code)]
    assert "refused" not in EXIT_CODE_MEANINGS[ExitCode.FAILED]


def test_an_out_folder_of_another_tool_is_refused_not_overwritten(tmp_path: Path) -> None:
    theirs = tmp_path / "results"
    (theirs / "compressed").mkdir(parents=True)
    (theirs / "run.json").write_text('{"tool": "another"}\n')
    (theirs / "compressed" / "mine.jsonl").write_text('{"mine": 1}\n')
    result = run("replay", str(SAMPLES), "--out", str(theirs))
    assert result.exit_code == 2
    assert one_error(result) == (
        f"tsum: error: --out {theirs}: not a folder tsum wrote (no .tsum-output), and it holds "
        "run.json, compressed/mine.jsonl, which tsum would replace: choose a new or empty folder"
    )
    assert (theirs / "run.json").read_text() == '{"tool": "another"}\n'  # nothing touched
    assert (theirs / "compressed" / "mine.jsonl").is_file()
    assert sorted(p.name for p in theirs.iterdir()) == ["compressed", "run.json"]
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "README.md").write_text("x")  # other files: written beside them
    for _ in range(2):  # and tsum's own folder is rewritten
        assert run("replay", str(SAMPLES), "--out", str(tmp_path / "notes")).exit_code == 0
    assert (tmp_path / "notes" / "README.md").read_text() == "x"


def _corpus_of_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``tmp_path/corpus`` holding one log, and ``tmp_path`` the current folder."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.jsonl").write_bytes((SAMPLES / "long_session.jsonl").read_bytes())
    monkeypatch.chdir(tmp_path)


def test_an_out_folder_holding_the_inputs_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _corpus_of_one(tmp_path, monkeypatch)
    for inputs, out in ((["corpus"], "corpus"), (["corpus/a.jsonl"], "corpus"), (["corpus"], ".")):
        result = run("replay", *inputs, "--out", out)
        assert result.exit_code == 2
        assert one_error(result) == (
            f"tsum: error: --out {out}: holds the input {inputs[0]}, and tsum marks its --out "
            "folder as output, which no run reads: choose a folder outside the inputs"
        )
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a.jsonl", "corpus"]  # unmarked
    assert run("replay", "corpus", "--out", "corpus/out").exit_code == 0  # inside: skipped
    assert "1 session(s)" in run("replay", "corpus", "--dry-run").stderr  # still read


def test_an_eval_out_folder_inside_the_corpus_is_not_read_as_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _corpus_of_one(tmp_path, monkeypatch)
    for _ in range(2):  # its checkpoints.jsonl, open while the corpus is walked, then written
        result = run("eval", "corpus", "--out", "corpus/ev")
        assert result.exit_code == 0, result.stderr
        assert "corpus/ev" not in result.stderr and "1 file(s), 1 session(s)" in result.stderr
    replay = run("replay", "corpus", "--dry-run")
    assert "corpus/ev" not in replay.stderr and "1 file(s)" in replay.stderr
    refused = run("eval", "corpus", "--out", "corpus")  # the marker would hide the corpus
    assert refused.exit_code == 2 and "holds the input corpus" in one_error(refused)
