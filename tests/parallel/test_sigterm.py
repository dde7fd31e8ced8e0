"""SIGTERM (``timeout``, systemd, a container stop, a CI cancel) is handled as Ctrl-C is:
a real ``tsum`` process with a process pool gets the signal, stops, ends its workers
(none is left behind, reparented) and exits 143; a replay's records stay whole and the
manifest says the run was interrupted."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "long_session.jsonl"
TSUM = [sys.executable, "-c", "from transcript_tools.cli.main import main; main()"]


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Enough files that a run is still going when the signal comes."""
    root = tmp_path_factory.mktemp("sigterm") / "corpus"
    root.mkdir()
    for index in range(6000):  # links: as many files to read, no copying
        try:
            os.link(SAMPLE, root / f"s{index}.jsonl")
        except OSError:  # another file system
            shutil.copy(SAMPLE, root / f"s{index}.jsonl")
    return root


def terminate(
    args: list[str], *, wait_for_workers: int = 0, ready: tuple[Path, ...] = ()
) -> tuple[int, str, list[int], list[int]]:
    """Run tsum, send SIGTERM once it has ``wait_for_workers`` children and every file of
    ``ready`` holds a line (plus a moment of work), return its exit code, stderr, the
    children it had and those still running after it ended. Waiting for the files, not a
    fixed time, keeps the test meaningful on a loaded machine."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TSUM_")}
    # stderr to a file, not a pipe: a worker left behind would hold a pipe open forever
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen([*TSUM, *args], stdout=subprocess.DEVNULL, stderr=log, env=env)
    kids: list[int] = []
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
        kids = children(proc.pid)
        if len(kids) >= wait_for_workers and all(_has_line(path) for path in ready):
            break
    time.sleep(1.0)  # the workers are busy now (an idle machine reads ~1,500 files a second)
    kids = sorted(set(kids) | set(children(proc.pid)))
    assert proc.poll() is None, "the run ended before the signal: make the corpus larger"
    proc.send_signal(signal.SIGTERM)
    try:
        code = proc.wait(timeout=60)
        deadline = time.monotonic() + 5
        while any(running(pid) for pid in kids) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        survivors = [pid for pid in kids if running(pid)]
        for pid in survivors:  # the workers this test started are never left running
            os.kill(pid, signal.SIGKILL)
    log.seek(0)
    return code, log.read().decode(), kids, survivors


def _has_line(path: Path) -> bool:
    try:
        return b"\n" in path.read_bytes()
    except OSError:
        return False


@pytest.mark.parametrize(
    "command", [["sweep"], ["replay", "--dry-run"]], ids=["sweep", "replay-dry-run"]
)
def test_sigterm_ends_the_pool_and_exits_143(corpus: Path, command: list[str]) -> None:
    code, stderr, kids, survivors = terminate(
        [*command, str(corpus), "--workers", "2"], wait_for_workers=2
    )
    assert code == 143, stderr
    assert stderr.strip().splitlines()[-1] == "tsum: terminated (SIGTERM)"
    assert len(kids) >= 2  # the pool was running
    assert survivors == [], "a worker outlived tsum"


def test_sigterm_keeps_what_a_replay_wrote(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ["replay", str(corpus), "--out", str(out)]
    names = ("decisions", "summaries", "slots")
    code, stderr, _, _ = terminate(args, ready=tuple(out / f"{n}.jsonl" for n in names))
    assert code == 143, stderr
    assert json.loads((out / "manifest.json").read_text())["status"] == "interrupted"
    for name in names:
        lines = (out / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
        assert lines and all(json.loads(line) for line in lines)  # every line whole
