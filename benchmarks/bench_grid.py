#!/usr/bin/env python3
"""The policy grid's cost, as ratios measured in one run (docs/performance.md, "The policy grid").

    python benchmarks/bench_grid.py                  # c200x40, 3 interleaved repeats
    python benchmarks/bench_grid.py --repeat 5 --corpus DIR
    python benchmarks/bench_grid.py --presets a2b44c2 --presets all --grid-only

``--presets`` names the grid (a comma list of presets; ``all``: every preset ``tsum
policies list`` names, the default; ``a2b44c2``: the 13 presets of that commit's grid);
given more than once, each grid is timed in the same run against the same seed's row,
the first also with ``--workers 2``. ``--grid-only`` leaves out the ``--workers 2`` and
100-configuration figures. ``--floor`` also runs each grid once in this process and splits
its CPU into the offline summaries (``OfflineProvider.complete_request``), the action
scoring (``ActionScorer.score``), the view checks (``validity.kept_answer``, which ``check_all`` copies) and the rest
(the engine's per-unit work, reading, the size model, the tables): each request of a grid
is a distinct input (no two configurations summarize the same messages with the same
prompt) and each action a distinct view, so summaries plus scoring is the floor no
sharing between configurations reaches under; it is given over the seed's row.

Targets:

* ``tsum sweep --policy <every preset>`` over c200x40 (``gen_corpus.py --conversations 200
  --turns 40``) costs at most 15x the seed's own row (``tsum sweep --policy seed``);
* the same grid with ``--workers 2`` at least 1.6x faster than with ``--workers 1``;
* the seed's 100-configuration sweep at most 3x one configuration (``bench_sweep.py``'s
  grids, in this process).

Every ``tsum`` command is a fresh process (``bench_scale.run_tsum``: wall time and the CPU
seconds of the process and its workers from ``os.wait4``), runs of one figure interleaved
round-robin, each figure the median of ``--repeat``. The machine is shared: the grid and
seed ratios are given in CPU seconds too (what a busy neighbour changes least), and the
2-worker figure beside what two processes get on a pure CPU loop in the same run
(``bench_scale.cpu_ceiling``) and the split of CPU between driver and workers
(``bench_scale.cpu_model``'s reading: on two idle cores two workers take about
max(driver, (driver + workers) / 2)). Exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import cpu_ceiling, run_tsum  # noqa: E402
from run import WORK, build_corpus, child_env, tsum_command  # noqa: E402

GRID_LIMIT, WORKERS_TARGET, HUNDRED_LIMIT = 15.0, 1.6, 3.0
# The grid of a2b44c2 (the presets tsum had then), as docs/performance.md first measured it
NAMED = {
    "a2b44c2": (
        "seed,aider,claude-code,claude-code-microcompact,clear-tool-uses,cline,codex,"
        "gemini-cli,inspect-ai,langchain,observation-masking,opencode,opencode-prune"
    )
}


def presets(tsum: list[str]) -> list[str]:
    """Every preset ``tsum policies list`` names (the seed's first), as a user would list them."""
    listed = subprocess.run(
        [*tsum, "policies", "list"], capture_output=True, env=child_env(), check=True
    )
    return [line.split("\t", 1)[0] for line in listed.stdout.decode().splitlines() if line]


def grid_names(tsum: list[str], given: str) -> list[str]:
    """A ``--presets`` value as preset names: ``all``, a name of ``NAMED``, or a comma list."""
    if given == "all":
        return presets(tsum)
    return [name for name in NAMED.get(given, given).split(",") if name]


def medians(commands: dict[str, list[str]], repeat: int) -> dict[str, tuple[float, float]]:
    """Per command: (median wall s, median CPU s), the commands interleaved round-robin.
    Each command's stdout must be the same bytes on every repeat."""
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    outputs: dict[str, bytes] = {}
    WORK.mkdir(parents=True, exist_ok=True)
    for _ in range(repeat):
        for name, argv in commands.items():
            stdout = WORK / f"grid-{name}.out"
            wall, _rss, cpu = run_tsum(argv, stdout)
            walls[name].append(wall)
            cpus[name].append(cpu)
            data = stdout.read_bytes()
            if outputs.setdefault(name, data) != data:
                raise RuntimeError(f"{name}: the output changed between repeats")
    return {n: (statistics.median(walls[n]), statistics.median(cpus[n])) for n in commands}


def hundred_vs_one(corpus: Path, repeat: int) -> tuple[float, float, float]:
    """(100 configurations s, 1 configuration s, ratio), in this process (bench_sweep.py)."""
    from transcript_tools.reporter import QUIET
    from transcript_tools.sweep.driver import Sweep, sweep_grid

    one = sweep_grid((), [32000], ratios=[0.75], debounces=[3])
    hundred = sweep_grid(
        (),
        [8000, 16000, 32000, 64000, 128000],
        ratios=[0.5, 0.6, 0.7, 0.8, 0.9],
        debounces=[1, 2, 3, 5],
    )
    times: dict[int, list[float]] = {1: [], 100: []}
    for _ in range(repeat):
        for configs in (one, hundred):
            sweep = Sweep(configs, reporter=QUIET)
            started = time.process_time()
            sweep.run([str(corpus)])
            times[len(configs)].append(time.process_time() - started)
    t1, t100 = statistics.median(times[1]), statistics.median(times[100])
    return t100, t1, t100 / t1


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", help="an existing corpus (default: c200x40, built once)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--presets",
        action="append",
        help="a grid: all (default), a2b44c2, or a comma list of presets; repeatable",
    )
    parser.add_argument(
        "--grid-only", action="store_true", help="only the grids against the seed's row"
    )
    parser.add_argument(
        "--floor", action="store_true", help="also split each grid's CPU in-process"
    )
    args = parser.parse_args()
    corpus = Path(args.corpus) if args.corpus else build_corpus("c200x40", 200, 40)
    tsum = tsum_command()
    grids = {given: grid_names(tsum, given) for given in args.presets or ["all"]}
    sweep = [*tsum, "sweep", str(corpus), "--silent"]
    commands = {"seed": [*sweep, "--policy", "seed", "--workers", "1"]}
    for n, names in enumerate(grids.values()):
        commands[f"grid{n}-1"] = [*sweep, "--policy", ",".join(names), "--workers", "1"]
    if not args.grid_only:
        commands["grid0-2"] = [*commands["grid0-1"][:-1], "2"]
    runs = medians(commands, args.repeat)
    seed_wall, seed_cpu = runs["seed"]
    print(f"corpus: {corpus}")
    print(f"seed's row (--policy seed):   {seed_wall:.2f} s wall, {seed_cpu:.2f} CPU-s")
    met = True
    for n, (given, names) in enumerate(grids.items()):
        one_wall, one_cpu = runs[f"grid{n}-1"]
        grid_wall, grid_cpu = one_wall / seed_wall, one_cpu / seed_cpu
        print(f"grid {given} ({len(names)} presets: {', '.join(names)})")
        print(f"  --workers 1:                 {one_wall:.2f} s wall, {one_cpu:.2f} CPU-s")
        print(
            f"  grid / seed's row:           {grid_wall:.1f}x wall, {grid_cpu:.1f}x CPU "
            f"(limit {GRID_LIMIT:.0f}x)"
        )
        met = met and grid_cpu <= GRID_LIMIT
        if args.floor:
            _print_floor(corpus, names, seed_cpu)
    if not args.grid_only:
        met = _workers_and_hundred(corpus, runs, args.repeat) and met
    print("all targets met" if met else "a target is missed")
    return 0 if met else 1


class ExclusiveCPU:
    """CPU seconds per bucket, each call's own (a bucket called inside another is
    charged to the inner one only), by wrapping functions in place."""

    def __init__(self) -> None:
        self.cpu: dict[str, float] = {}
        self._stack: list[list[Any]] = []  # [bucket, started]

    def _enter(self, bucket: str) -> None:
        now = time.process_time()
        if self._stack:
            outer = self._stack[-1]
            self.cpu[outer[0]] = self.cpu.get(outer[0], 0.0) + now - outer[1]
        self._stack.append([bucket, now])

    def _leave(self) -> None:
        now = time.process_time()
        bucket, started = self._stack.pop()
        self.cpu[bucket] = self.cpu.get(bucket, 0.0) + now - started
        if self._stack:
            self._stack[-1][1] = now

    def sync(self, bucket: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            self._enter(bucket)
            try:
                return fn(*args, **kwargs)
            finally:
                self._leave()

        return timed

    def coroutine(self, bucket: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        # the offline provider never suspends: the awaited call runs through at once
        async def timed(*args: Any, **kwargs: Any) -> Any:
            self._enter(bucket)
            try:
                return await fn(*args, **kwargs)
            finally:
                self._leave()

        return timed


def floor(corpus: Path, names: list[str]) -> dict[str, float]:
    """One in-process run of the grid: CPU seconds of the summaries, the action scoring,
    the view checks and the whole run (module docstring)."""
    from transcript_tools.cli.main import cli
    from transcript_tools.engine import policy_engine, validity
    from transcript_tools.eval import policy_probes
    from transcript_tools.providers.offline import OfflineProvider

    timer = ExclusiveCPU()
    saved = (
        OfflineProvider.complete_request,
        policy_probes.ActionScorer.score,
        validity.kept_answer,
    )
    OfflineProvider.complete_request = timer.coroutine("summaries", saved[0])  # type: ignore[method-assign]
    policy_probes.ActionScorer.score = timer.sync("scoring", saved[1])  # type: ignore[method-assign]
    # every check goes through kept_answer (check_all copies its answer)
    checks = timer.sync("view checks", saved[2])
    validity.kept_answer = policy_engine.kept_answer = checks  # type: ignore[assignment]
    argv = ["sweep", str(corpus), "--silent", "--policy", ",".join(names), "--workers", "1"]
    started = time.process_time()
    try:
        cli.main(args=argv, prog_name="tsum", standalone_mode=False)
    finally:
        OfflineProvider.complete_request = saved[0]  # type: ignore[method-assign]
        policy_probes.ActionScorer.score = saved[1]  # type: ignore[method-assign]
        validity.kept_answer = policy_engine.kept_answer = saved[2]  # type: ignore[assignment]
    return {**timer.cpu, "run": time.process_time() - started}


def _print_floor(corpus: Path, names: list[str], seed_cpu: float) -> None:
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):  # the table is not the figure
        cpu = floor(corpus, names)
    run = cpu["run"]
    parts = ("summaries", "scoring", "view checks")
    rest = run - sum(cpu.get(p, 0.0) for p in parts)
    split = ", ".join(f"{p} {cpu.get(p, 0.0):.2f}" for p in parts)
    print(f"  in-process run:              {run:.2f} CPU-s: {split}, the rest {rest:.2f}")
    least = cpu.get("summaries", 0.0) + cpu.get("scoring", 0.0)
    print(
        f"  floor (summaries + scoring): {least:.2f} CPU-s = {least / seed_cpu:.1f}x the "
        f"seed's row; with the view checks {(least + cpu.get('view checks', 0.0)) / seed_cpu:.1f}x"
    )


def _workers_and_hundred(corpus: Path, runs: dict[str, tuple[float, float]], repeat: int) -> bool:
    """The first grid with ``--workers 2`` against 1, and 100 configurations against 1."""
    if (WORK / "grid-grid0-1.out").read_bytes() != (WORK / "grid-grid0-2.out").read_bytes():
        raise RuntimeError("--workers 2 printed another table than --workers 1")
    ceiling = cpu_ceiling(5)
    t100, t1, hundred = hundred_vs_one(corpus, repeat)
    (one_wall, _), (two_wall, two_cpu) = runs["grid0-1"], runs["grid0-2"]
    speedup = one_wall / two_wall
    print(f"first grid, --workers 2:       {two_wall:.2f} s wall, {two_cpu:.2f} CPU-s")
    print(
        f"--workers 2 speed-up:          {speedup:.2f}x (target >= {WORKERS_TARGET}x; "
        f"a pure CPU loop got {ceiling:.2f}x in 2 processes just now: "
        f"{speedup / ceiling:.0%} of it)"
    )
    print(
        f"100 configurations / 1:        {hundred:.2f}x ({t100:.2f} / {t1:.2f} CPU-s; "
        f"limit {HUNDRED_LIMIT:.0f}x)"
    )
    return speedup >= WORKERS_TARGET and hundred <= HUNDRED_LIMIT


if __name__ == "__main__":
    sys.exit(main())
