"""--workers N: the same bytes as one process (stdout, stderr, --out files), from a pool."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support.scale_corpus import build_corpus, invoke, same_files, same_run
from transcript_tools import inspection
from transcript_tools.engine.config import SummaryConfig
from transcript_tools.formats.inputs import InputFile, unique_name
from transcript_tools.parallel import pool as parallel
from transcript_tools.parallel.pool import Backend, SeenNames, batches, plan
from transcript_tools.replay import parallel as replay_parallel
from transcript_tools.reporter import QUIET
from transcript_tools.sweep import parallel as sweep_parallel
from transcript_tools.sweep.driver import Sweep, sweep_grid

SWEEP_GRID = ["--ratio", "0.5,0.75", "--max-context-tokens", "2000,32000", "--debounce", "1,3"]
SWEEP_GRID += ["--measure", "cumulative,current"]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return build_corpus(tmp_path)


@pytest.fixture
def spread(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Batches of two files (a tiny corpus still makes many parts); counts the parts."""
    monkeypatch.setattr(parallel, "BATCH_FILES", 2)
    parts: list[int] = []
    original = parallel.ordered_parts

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        for part in original(*args, **kwargs):
            parts.append(1)
            yield part

    for feature in (sweep_parallel, replay_parallel, inspection):
        monkeypatch.setattr(feature, "ordered_parts", counting)
    return parts


def test_sweep_table_and_json_match_one_process(corpus: Path, spread: list[int]) -> None:
    for output in ([], ["--json"]):
        one = invoke("sweep", str(corpus), *SWEEP_GRID, *output, "--workers", "1")
        two = invoke("sweep", str(corpus), *SWEEP_GRID, *output, "--workers", "2")
        same_run(one, two)
    assert one.exit_code == 3  # the malformed fixtures are errors, in both runs
    assert "error: " in one.stderr and "warning: " in one.stderr
    assert '"engine_runs": 0' not in one.stdout  # the engine path ran in the workers too
    assert len(spread) > 5  # and the second run really went through the pool


def test_sweep_report_sample_matches_one_process(corpus: Path) -> None:
    def run(workers: int) -> list[tuple[int, str, list[list[int]]]]:
        base = SummaryConfig(max_context_tokens=4000)
        sweep = Sweep(
            sweep_grid((), [4000], ratios=[0.5, 0.75], debounces=[1, 3], base=base),
            base=base,
            sample_size=4,
            reporter=QUIET,
        )
        result = sweep_parallel.run_sweep(sweep, [str(corpus)], Backend(workers))
        return [(s.profile.index, s.profile.session_id, s.fires) for s in result.samples]

    inline = run(1)
    assert len(inline) == 4
    assert run(2) == inline


def test_replay_dry_run_report_and_out_match_one_process(
    corpus: Path, tmp_path: Path, spread: list[int]
) -> None:
    args = ("replay", str(corpus), "--dry-run", "--max-context-tokens", "4000")
    one = invoke(*args, "--workers", "1")
    two = invoke(*args, "--workers", "2")
    same_run(one, two)
    assert "would_summarize" in one.stdout
    # the window of --concurrency orders stderr: reader warnings vs session warnings
    for concurrency in ("1", "3"):
        out1, out2 = tmp_path / f"one{concurrency}", tmp_path / f"two{concurrency}"
        common = (*args, "--concurrency", concurrency, "--out")
        same_run(
            invoke(*common, str(out1), "--workers", "1"),
            invoke(*common, str(out2), "--workers", "2"),
        )
        same_files(out1, out2)
    # b/same.jsonl repeats a/same.jsonl's session: its worker named it without the #2
    decisions = (out1 / "decisions.jsonl").read_text()
    assert '"session":"019c0000-1111-7222-8333-444455556666#2"' in decisions


def test_inspect_matches_one_process(corpus: Path, spread: list[int]) -> None:
    for output in ([], ["--json"]):
        same_run(
            invoke("inspect", str(corpus), *output, "--workers", "1"),
            invoke("inspect", str(corpus), *output, "--workers", "2"),
        )
    assert spread


def test_session_ids_renamed_across_files_as_one_process(tmp_path: Path) -> None:
    # x, x#2 taken by earlier files; this batch's own x, x, x#2 must skip them all
    names = ["x", "x#2", "x#3"]
    seen = {"x", "x#2", "x#4", "other", "y#2"}
    index = SeenNames()
    index.update(seen)
    seed = index.collision_seed(names)
    assert seed == {"x", "x#2", "x#4"}
    taken: set[str] = set(seen)
    expected = [unique_name(n, taken, "#") for n in ("x", "x", "x#2")]
    local: set[str] = set(seed)
    assert [unique_name(n, local, "#") for n in ("x", "x", "x#2")] == expected


def test_plan_runs_inline_for_one_worker_one_file_or_stdin(corpus: Path) -> None:
    one_file = str(corpus / "representative_codex.jsonl")
    assert plan([str(corpus)], Backend(1)) is None
    assert plan([one_file], Backend(4)) is None
    assert plan([one_file, "-"], Backend(4)) is None
    items = plan([str(corpus)], Backend(2))
    assert items is not None and len(items) > 10


def test_batches_are_bounded_and_keep_order(corpus: Path) -> None:
    items = [InputFile(str(p)) for p in sorted(corpus.rglob("*.json*"))]
    out = list(batches(items))
    assert [i for batch in out for i in batch] == items
    assert all(len(b) <= parallel.BATCH_FILES for b in out)


class _Done:
    """A future that is already done: what the window logic sees of a finished batch."""

    def __init__(self, value: object) -> None:
        self.value = value

    def result(self) -> object:
        return self.value


class _Recorder:
    """A stand-in executor that runs nothing and logs each submission."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def submit(self, _fn: object, batch: list[str], _taken: set[str]) -> _Done:
        self.log.append(f"submit {batch[0]}")
        return _Done(batch[0])

    def shutdown(self, wait: bool, cancel_futures: bool) -> None:
        self.log.append("shutdown")


@pytest.mark.parametrize(
    ("job", "in_flight"),
    [
        (replay_parallel.ReplayJob.__new__(replay_parallel.ReplayJob), 2 * 2),
        (sweep_parallel.SweepJob(Sweep([])), 16 * 2),
    ],
)
def test_pool_window_holds_the_jobs_parts_per_worker(
    job: object, in_flight: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two workers: a replay keeps 2 batches per worker in flight (its parts hold
    rendered records), a sweep 16 (its parts are aggregates), before it waits for the
    head's part; parts still come out in input order."""
    log: list[str] = []
    pool = parallel._Pool(job, 2)  # type: ignore[arg-type]
    monkeypatch.setattr(pool, "_start", lambda: _Recorder(log))
    work = [[f"b{n}"] for n in range(40)]
    out = []
    for _batch, part in pool.map(iter(work)):  # type: ignore[arg-type]
        out.append(part)
        log.append(f"part {part}")
    assert out == [f"b{n}" for n in range(40)]
    assert log.index("part b0") == in_flight  # submissions before the first wait
    assert log[: in_flight + 2] == [
        *(f"submit b{n}" for n in range(in_flight)),
        "part b0",
        f"submit b{in_flight}",
    ]


def test_workers_option_and_config_key(corpus: Path, tmp_path: Path) -> None:
    config = tmp_path / "tsum.toml"
    config.write_text("workers = 0\n")
    result = invoke("sweep", str(corpus), "--config", str(config))
    assert result.exit_code == 2
    # checked where it is written: the line names the settings file
    assert result.stderr == f"tsum: error: {config}:1: workers must be an integer >= 1, got 0\n"
    result = invoke("replay", str(corpus), "--dry-run", "--workers", "0")
    assert result.exit_code == 2 and "--workers" in result.stderr


def test_ray_missing_is_a_one_line_usage_error(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    result = invoke("sweep", str(corpus), "--ray")
    assert result.exit_code == 2
    assert result.stderr == (
        "tsum: error: --ray needs Ray Data: pip install 'transcript-tools[ray]'\n"
    )


def test_ray_refuses_summary_making_runs(corpus: Path) -> None:
    result = invoke("replay", str(corpus), "--ray")
    assert result.exit_code == 2
    assert "--batch" in result.stderr and len(result.stderr.splitlines()) == 1
    result = invoke("sweep", str(corpus), "--provider", "openai", "--ray")
    assert result.exit_code == 2 and "--batch" in result.stderr


def test_config_key_workers_sets_the_pool_size(
    corpus: Path, tmp_path: Path, spread: list[int]
) -> None:
    config = tmp_path / "tsum.toml"
    config.write_text("workers = 1\n")
    one = invoke("sweep", str(corpus), "--config", str(config))
    assert not spread  # one worker from the file: inline, no pool
    two = invoke("sweep", str(corpus), "--config", str(config), "--workers", "2")
    assert spread  # the command line wins over the file
    same_run(one, two)


def test_replay_dry_run_window_closed_by_messages_matches_one_process(
    corpus: Path, tmp_path: Path, spread: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A window also closes at HELD_MESSAGES (the one process's read bound), which orders
    stderr as the window of sessions does: a pool's run closes it at the same place."""
    from transcript_tools.replay import driver

    args = ("replay", str(corpus), "--dry-run", "--max-context-tokens", "4000")
    for held in (5, 40):  # below one conversation's messages, and a few conversations'
        monkeypatch.setattr(driver, "HELD_MESSAGES", held)
        common = (*args, "--concurrency", "8", "--warnings", "all", "--out")
        one = invoke(*common, str(tmp_path / f"one{held}"), "--workers", "1")
        two = invoke(*common, str(tmp_path / f"two{held}"), "--workers", "2")
        same_run(one, two)
        same_files(tmp_path / f"one{held}", tmp_path / f"two{held}")
        assert "warning: " in one.stderr
