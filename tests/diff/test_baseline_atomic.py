"""``check --update`` writes a baseline as a whole (diff/baseline.update_baseline): a kill
between any two of its writes leaves the old baseline or the new one, byte for byte,
never a mix that ``check`` could pass on; and ``--update`` always repairs what a kill, or
a torn file, left behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from transcript_tools.cli.main import cli
from transcript_tools.diff import baseline as baseline_module
from transcript_tools.diff.baseline import update_baseline

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
KILLED = 137  # 128 + SIGKILL


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, [*args], catch_exceptions=False)


def tree(root: Path) -> dict[str, bytes] | None:
    """Every file under ``root`` and its bytes; None: no such directory."""
    if not root.is_dir():
        return None
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def blessed(tmp_path: Path, name: str, prompt: str) -> Path:
    """A baseline written by ``check --update`` with ``prompt`` (eval.json included)."""
    target = tmp_path / name
    result = run("check", "--baseline", str(target), str(SAMPLES), "--prompt", prompt, "--update")
    assert result.exit_code == 0, result.stderr
    return target


def killed_at(step: int, fresh: Path, baseline: Path) -> bool:
    """Run ``update_baseline`` in a child process killed (``os._exit``: no cleanup, as
    kill -9) at its ``step``-th file system write; False when it finished first."""
    pid = os.fork()
    if pid == 0:  # the child: count the writes, die at the chosen one
        count = 0

        def counted(real):  # type: ignore[no-untyped-def]
            def write(*args, **kwargs):  # type: ignore[no-untyped-def]
                nonlocal count
                count += 1
                if count == step:
                    os._exit(KILLED)
                return real(*args, **kwargs)

            return write

        shutil = baseline_module.shutil
        shutil.copyfile = counted(shutil.copyfile)  # type: ignore[assignment]
        shutil.copy2 = counted(shutil.copy2)  # type: ignore[assignment]
        shutil.rmtree = counted(shutil.rmtree)  # type: ignore[assignment]
        os.rename = counted(os.rename)  # type: ignore[assignment]
        Path.mkdir = counted(Path.mkdir)  # type: ignore[method-assign]
        Path.unlink = counted(Path.unlink)  # type: ignore[method-assign]
        try:
            update_baseline(fresh, baseline)
        except BaseException:
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    assert code in (0, KILLED), code
    return code == KILLED


def test_a_kill_between_any_two_writes_leaves_the_old_or_the_new_baseline(
    tmp_path: Path,
) -> None:
    old = blessed(tmp_path, "old", "en")
    new = blessed(tmp_path, "new", "zh")
    (old / "README.md").write_text("kept across updates\n")
    old_tree, new_tree = tree(old), {**(tree(new) or {}), "README.md": b"kept across updates\n"}
    assert old_tree != new_tree and "eval.json" in old_tree
    work = tmp_path / "work"
    kills = 0
    for step in range(1, 200):
        baseline = work / "baseline"
        if work.exists():
            baseline_module.shutil.rmtree(work)
        baseline_module.shutil.copytree(old, baseline)
        if not killed_at(step, new, baseline):
            break
        kills += 1
        left = tree(baseline)
        assert left in (old_tree, new_tree, None), f"a mixed baseline after a kill at write {step}"
        if left is None:  # killed between the two renames: check fails, never passes
            assert run("check", "--baseline", str(baseline), str(SAMPLES)).exit_code == 3
        update_baseline(new, baseline)  # --update repairs
        assert tree(baseline) == new_tree
        assert sorted(p.name for p in work.iterdir()) == ["baseline"]  # no leftovers
    assert tree(baseline) == new_tree
    assert kills >= 10  # every file's write was a kill point


def test_update_repairs_a_torn_baseline(tmp_path: Path) -> None:
    baseline = blessed(tmp_path, "baseline", "zh")
    (baseline / "eval.json").write_bytes(b'{"extractor_version": 2, "checkp')
    (baseline / "summaries.jsonl").write_bytes(b'{"session": "long_sess')
    check = run("check", "--baseline", str(baseline), str(SAMPLES))
    assert check.exit_code == 3
    repaired = run("check", "--baseline", str(baseline), str(SAMPLES), "--update")
    assert repaired.exit_code == 0, repaired.stderr
    assert run("check", "--baseline", str(baseline), str(SAMPLES)).exit_code == 0


def test_update_repairs_a_baseline_whose_scores_alone_are_torn(tmp_path: Path) -> None:
    baseline = blessed(tmp_path, "baseline", "zh")
    (baseline / "eval.json").write_bytes(b'{"extractor_version": 2, "checkp')
    check = run("check", "--baseline", str(baseline), str(SAMPLES))
    assert check.exit_code == 3 and "eval.json: not valid JSON" in check.stderr
    repaired = run("check", "--baseline", str(baseline), str(SAMPLES), "--update")
    assert repaired.exit_code == 0, repaired.stderr
    assert "baseline scores unreadable, they will be replaced" in repaired.stderr
    assert run("check", "--baseline", str(baseline), str(SAMPLES)).exit_code == 0


@pytest.mark.parametrize("leftover", ["new", "old"])
def test_update_clears_what_a_killed_update_left_beside_the_baseline(
    tmp_path: Path, leftover: str
) -> None:
    baseline = blessed(tmp_path, "baseline", "zh")
    stale = tmp_path / f".baseline.tsum-{leftover}"
    stale.mkdir()
    (stale / "decisions.jsonl").write_text("half\n")
    assert run("check", "--baseline", str(baseline), str(SAMPLES), "--update").exit_code == 0
    assert not stale.exists()
