#!/usr/bin/env python3
"""Past one core: ``tsum sweep`` (and ``replay --dry-run``) with 1 and 2 workers, and Ray.

    python benchmarks/bench_scale.py                    # c2000x40: the 2-worker target
    python benchmarks/bench_scale.py --sizes 2000,20000 --ray --json scale.json

Target (docs/scale.md): ``--workers 2`` at least 1.7x faster than ``--workers 1`` on
``gen_corpus.py --conversations 2000 --turns 40 --seed 7``, same output bytes.

Every command is a fresh ``tsum`` process (wall time and peak RSS from ``os.wait4`` in a
tiny launcher, as ``run.py`` does: the largest single process, driver or worker; Ray's
own processes are not the driver's children and are not counted). Runs of one size are
interleaved round-robin and each figure is the median of ``--repeat`` runs.

The machine is shared, so the same run also measures what two processes can get at all:
a pure-Python CPU loop timed in 1 and in 2 processes. ``speed-up / that ceiling`` is
the figure that does not depend on how busy the neighbours are.

Sizes above 2000 are the 2000 generated files linked N times under new names (same
distribution of conversations, unique session ids; generating 200k at ~15 files/s on a
busy machine takes hours).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from multiprocessing import get_context
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import CORPORA, WORK, build_corpus, child_env, tsum_command  # noqa: E402

GRID = ["--ratio", "0.5,0.75,0.9", "--max-context-tokens", "32000,128000", "--debounce", "1,3"]

# stdout to a file (the outputs are compared), wall time and peak RSS of the child
LAUNCHER = (
    "import os,subprocess,sys,time\n"
    "t=time.perf_counter()\n"
    "p=subprocess.Popen(sys.argv[2:],stdout=open(sys.argv[1],'wb'),stderr=subprocess.PIPE)\n"
    "err=p.stderr.read()\n"
    "_,s,u=os.wait4(p.pid,0)\n"
    "w=time.perf_counter()-t\n"
    "sys.stderr.buffer.write(err)\n"
    "print(os.waitstatus_to_exitcode(s),w,u.ru_maxrss*1024,u.ru_utime+u.ru_stime)\n"
)


def run_tsum(argv: list[str], stdout: Path) -> tuple[float, int, float]:
    """(wall seconds, peak RSS bytes, CPU seconds of the process and its workers)."""
    proc = subprocess.run(
        [sys.executable, "-c", LAUNCHER, str(stdout), *argv],
        cwd=WORK,
        env=child_env(),
        capture_output=True,
    )
    fields = proc.stdout.decode().split()
    if len(fields) != 4 or fields[0] != "0":
        raise RuntimeError(
            f"{' '.join(argv)} failed: {proc.stderr.decode(errors='replace')[-2000:]}"
        )
    return float(fields[1]), int(fields[2]), float(fields[3])


def linked_corpus(base: Path, conversations: int) -> Path:
    """``conversations`` files: base's files linked round-robin under unique names."""
    out = CORPORA / f"linked{conversations}"
    stamp = out / ".stamp"
    key = f"{conversations}:{(base / '.stamp').read_text()}"
    if stamp.is_file() and stamp.read_text() == key:
        return out
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.jsonl"):
        old.unlink()
    files = sorted(base.glob("*.jsonl"))
    for i in range(conversations):
        os.symlink(files[i % len(files)], out / f"conv-{i:07d}.jsonl")
    stamp.write_text(key)
    return out


def _burn(n: int) -> int:
    total = 0
    for i in range(n):
        total += i
    return total


def cpu_ceiling(repeat: int) -> float:
    """Speed-up two processes get on a pure CPU loop right now (2.0 on an idle 2-core box)."""
    work = 4_000_000
    one, two = [], []
    with get_context("fork").Pool(2) as pool:
        for _ in range(repeat):
            started = time.perf_counter()
            _burn(work)
            _burn(work)
            one.append(time.perf_counter() - started)
            started = time.perf_counter()
            pool.map(_burn, [work, work])
            two.append(time.perf_counter() - started)
    return statistics.median(one) / statistics.median(two)


def cpu_model(corpus: Path) -> dict[str, float]:
    """In this process: CPU seconds of the driver and of the workers, 1 vs 2 workers.

    Load-independent where wall time is not: on two idle cores, two workers take about
    max(driver, (driver + workers) / 2) -- the driver only merges parts.
    """
    import resource

    from transcript_tools.parallel.pool import Backend
    from transcript_tools.reporter import QUIET
    from transcript_tools.sweep.driver import Sweep, sweep_grid
    from transcript_tools.sweep.parallel import run_sweep

    grid = sweep_grid((), [32000, 128000], ratios=[0.5, 0.75, 0.9], debounces=[1, 3])

    def children() -> float:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    out: dict[str, float] = {}
    for workers in (1, 2):
        before, mine = children(), time.process_time()
        sweep = Sweep(grid, reporter=QUIET)
        run_sweep(sweep, [str(corpus)], Backend(workers))
        out[f"driver_{workers}"] = time.process_time() - mine
        out[f"workers_{workers}"] = children() - before
    two = max(out["driver_2"], (out["driver_2"] + out["workers_2"]) / 2)
    out["allows"] = out["driver_1"] / two
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="2000", help="conversations, comma-separated")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--ray", action="store_true", help="also --ray (a local Ray per run)")
    parser.add_argument("--dry-run", action="store_true", help="also replay --dry-run --out")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    tsum = tsum_command()
    base = build_corpus("c2000x40", 2000, 40)
    modes = {"1 worker": ["--workers", "1"], "2 workers": ["--workers", "2"]}
    if args.ray:
        modes["ray"] = ["--ray"]
    figures: dict[str, Any] = {}
    rows = []
    ok = True
    ceiling = cpu_ceiling(args.repeat)
    model = cpu_model(base)
    figures["cpu_model"] = model
    for size in [int(s) for s in args.sizes.split(",")]:
        corpus = base if size == 2000 else linked_corpus(base, size)
        commands = {"sweep": ["sweep", str(corpus), *GRID, "--json", "--silent"]}
        if args.dry_run:
            commands["dry-run"] = ["replay", str(corpus), "--dry-run", "--silent", "--out"]
        for name, command in commands.items():
            samples: dict[str, list[tuple[float, int, float]]] = {mode: [] for mode in modes}
            outputs = {}
            for _ in range(args.repeat):
                for mode, extra in modes.items():
                    out = WORK / f"scale-{name}-{mode.replace(' ', '')}"
                    argv = [*tsum, *command]
                    if name == "dry-run":
                        argv.append(str(out))
                    samples[mode].append(run_tsum([*argv, *extra], out.with_suffix(".stdout")))
                    result = (
                        out / "decisions.jsonl" if name == "dry-run" else out.with_suffix(".stdout")
                    )
                    outputs[mode] = result.read_bytes()
            same = len(set(outputs.values())) == 1
            ok = ok and same
            wall = {m: statistics.median(s[0] for s in samples[m]) for m in modes}
            rss = {m: max(s[1] for s in samples[m]) for m in modes}
            cpu = {m: statistics.median(s[2] for s in samples[m]) for m in modes}
            figures[f"{name} {size}"] = {
                m: {"seconds": wall[m], "peak_rss_bytes": rss[m], "cpu_seconds": cpu[m]}
                for m in modes
            }
            speedup = wall["1 worker"] / wall["2 workers"]
            for mode in modes:
                rows.append(
                    f"| {name} | {size:,} | {mode} | {wall[mode]:.1f} s | {cpu[mode]:.1f} s | "
                    f"{rss[mode] >> 20} MiB | "
                    + (f"{wall['1 worker'] / wall[mode]:.2f}x" if mode != "1 worker" else "-")
                    + f" | {'yes' if same else 'NO'} |"
                )
            if name == "sweep" and size == 2000:
                met = speedup >= 1.7
                ok = ok and met
                figures["target"] = {"speedup": speedup, "cpu_ceiling": ceiling, "met": met}
    print(
        f"\ntsum scale benchmark (medians of {args.repeat}; {os.cpu_count()} cores; python {sys.version.split()[0]})"
    )
    print(
        f"CPU ceiling now: a pure-Python loop runs {ceiling:.2f}x faster in 2 processes than in 1\n"
    )
    print("| command | conversations | run | wall | CPU | peak RSS | speed-up vs 1 | same output |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    target = figures.get("target")
    if target:
        print(
            f"\n2-worker speed-up on c2000x40 (sweep): {target['speedup']:.2f}x (target >= 1.7x: "
            f"{'met' if target['met'] else 'NOT met'}); {target['speedup'] / ceiling:.0%} of the "
            "CPU ceiling measured in this run"
        )
    print(
        f"CPU time (in-process, c2000x40 sweep): 1 worker {model['driver_1']:.1f} s; 2 workers: "
        f"driver {model['driver_2']:.2f} s + workers {model['workers_2']:.1f} s, so on two idle "
        f"cores 2 workers can be {model['allows']:.2f}x faster"
    )
    if args.json:
        figures["cpu_ceiling"] = {"speedup": ceiling}
        args.json.write_text(json.dumps(figures, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
