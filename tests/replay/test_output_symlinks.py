"""A symlink inside a directory tsum owns (an ``--out`` directory, a baseline: it comes
from the repository, so from a pull request) never redirects tsum's deletes, writes or
reads outside it (writable.drop_links, read_output's refusal)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result

from transcript_tools.cli.main import cli

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, [*args], catch_exceptions=False)


def elsewhere(tmp_path: Path) -> Path:
    """A folder outside the output with files a redirected delete or write would hit."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    (folder / "long_session.jsonl").write_text("precious\n")
    (folder / "notes.txt").write_text("precious\n")
    return folder


def untouched(folder: Path) -> bool:
    return sorted(p.name for p in folder.iterdir()) == ["long_session.jsonl", "notes.txt"] and all(
        p.read_text() == "precious\n" for p in folder.iterdir()
    )


def test_links_in_an_out_directory_are_replaced_never_followed(tmp_path: Path) -> None:
    target = elsewhere(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "compressed").symlink_to(target)
    (out / "decisions.jsonl").symlink_to(target / "notes.txt")
    (out / "manifest.json").symlink_to(target / "notes.txt")
    assert run("replay", str(SAMPLES), "--out", str(out)).exit_code == 2  # not marked as tsum's
    assert untouched(target) and (out / "compressed").is_symlink()
    (out / ".tsum-output").write_text("written by tsum replay\n")  # a folder of tsum's
    assert run("replay", str(SAMPLES), "--out", str(out)).exit_code == 0
    assert untouched(target)
    assert not (out / "compressed").is_symlink() and (out / "compressed").is_dir()
    assert not (out / "decisions.jsonl").is_symlink()
    assert len(list((out / "compressed").glob("*.jsonl"))) == 3


def test_eval_out_links_are_never_written_through(tmp_path: Path) -> None:
    target = elsewhere(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "eval.json").symlink_to(target / "notes.txt")
    (out / "checkpoints.jsonl").symlink_to(target / "long_session.jsonl")
    assert run("eval", str(SAMPLES), "--out", str(out)).exit_code == 0
    assert untouched(target)
    assert not (out / "eval.json").is_symlink()


def test_a_baseline_with_links_is_refused_and_update_replaces_it(tmp_path: Path) -> None:
    target = elsewhere(tmp_path)
    baseline = tmp_path / "baseline"
    assert run("check", "--baseline", str(baseline), str(SAMPLES), "--update").exit_code == 0
    for path in (baseline / "compressed").iterdir():
        path.unlink()
    (baseline / "compressed").rmdir()
    (baseline / "compressed").symlink_to(target)
    check = run("check", "--baseline", str(baseline), str(SAMPLES))
    assert check.exit_code == 3
    assert f"{baseline / 'compressed'}: a symlink; tsum does not follow links" in check.stderr
    assert run("check", "--baseline", str(baseline), str(SAMPLES), "--update").exit_code == 0
    assert untouched(target)
    assert not (baseline / "compressed").is_symlink()
    assert run("check", "--baseline", str(baseline), str(SAMPLES)).exit_code == 0
