#!/usr/bin/env python3
"""The policy grid's cost, as ratios measured in one run (docs/performance.md, "The policy grid").

    python benchmarks/bench_grid.py                  # c200x40, 3 interleaved repeats
    python benchmarks/bench_grid.py --repeat 5 --corpus DIR

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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import cpu_ceiling, run_tsum  # noqa: E402
from run import WORK, build_corpus, child_env, tsum_command  # noqa: E402

GRID_LIMIT, WORKERS_TARGET, HUNDRED_LIMIT = 15.0, 1.6, 3.0


def presets(tsum: list[str]) -> list[str]:
    """Every preset ``tsum policies list`` names (the seed's first), as a user would list them."""
    listed = subprocess.run(
        [*tsum, "policies", "list"], capture_output=True, env=child_env(), check=True
    )
    return [line.split("\t", 1)[0] for line in listed.stdout.decode().splitlines() if line]


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
    from transcript_tools.sweep.driver import Sweep, config_grid

    one = config_grid([0.75], [32000], [3])
    hundred = config_grid(
        [0.5, 0.6, 0.7, 0.8, 0.9], [8000, 16000, 32000, 64000, 128000], [1, 2, 3, 5]
    )
    times: dict[int, list[float]] = {1: [], 100: []}
    for _ in range(repeat):
        for configs in (one, hundred):
            sweep = Sweep(configs, warn=lambda _m: None, error=lambda _m: None)
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
    args = parser.parse_args()
    corpus = Path(args.corpus) if args.corpus else build_corpus("c200x40", 200, 40)
    tsum = tsum_command()
    names = presets(tsum)
    sweep = [*tsum, "sweep", str(corpus), "--silent"]
    grid = [*sweep, "--policy", ",".join(names)]
    runs = medians(
        {
            "seed": [*sweep, "--policy", "seed", "--workers", "1"],
            "grid-1": [*grid, "--workers", "1"],
            "grid-2": [*grid, "--workers", "2"],
        },
        args.repeat,
    )
    if (WORK / "grid-grid-1.out").read_bytes() != (WORK / "grid-grid-2.out").read_bytes():
        raise RuntimeError("--workers 2 printed another table than --workers 1")
    ceiling = cpu_ceiling(5)
    t100, t1, hundred = hundred_vs_one(corpus, args.repeat)
    (seed_wall, seed_cpu), (one_wall, one_cpu), (two_wall, two_cpu) = (
        runs["seed"],
        runs["grid-1"],
        runs["grid-2"],
    )
    grid_wall, grid_cpu = one_wall / seed_wall, one_cpu / seed_cpu
    speedup = one_wall / two_wall
    print(f"corpus: {corpus} ({len(names)} presets: {', '.join(names)})")
    print(f"seed's row (--policy seed):   {seed_wall:.2f} s wall, {seed_cpu:.2f} CPU-s")
    print(f"grid, --workers 1:             {one_wall:.2f} s wall, {one_cpu:.2f} CPU-s")
    print(f"grid, --workers 2:             {two_wall:.2f} s wall, {two_cpu:.2f} CPU-s")
    print(
        f"grid / seed's row:             {grid_wall:.1f}x wall, {grid_cpu:.1f}x CPU "
        f"(limit {GRID_LIMIT:.0f}x)"
    )
    print(
        f"--workers 2 speed-up:          {speedup:.2f}x (target >= {WORKERS_TARGET}x; "
        f"a pure CPU loop got {ceiling:.2f}x in 2 processes just now: "
        f"{speedup / ceiling:.0%} of it)"
    )
    print(
        f"100 configurations / 1:        {hundred:.2f}x ({t100:.2f} / {t1:.2f} CPU-s; "
        f"limit {HUNDRED_LIMIT:.0f}x)"
    )
    met = grid_cpu <= GRID_LIMIT and speedup >= WORKERS_TARGET and hundred <= HUNDRED_LIMIT
    print("all targets met" if met else "a target is missed")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
