"""Sweep cost: 100 configurations must cost at most 3x one configuration.

Each conversation's token series is computed once; every configuration is then an
O(turns) pass over integers. This script generates the benchmark corpus (the shared
generator: 200 conversations x 40 turns, recorded usage) unless given one, times a
sweep of 1 and of 100 configurations (best of --repeat runs each) and prints the ratio.

usage: python benchmarks/bench_sweep.py [--corpus DIR] [--repeat 3]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from transcript_tools.reporter import QUIET
from transcript_tools.sweep.driver import Sweep, sweep_grid

GENERATOR = Path(__file__).resolve().parents[1].parent / "shared" / "bench" / "gen_corpus.py"


def timed(configs: list, corpus: str, repeat: int) -> tuple[float, int]:
    best = float("inf")
    calls = 0
    for _ in range(repeat):
        started = time.perf_counter()
        result = Sweep(configs, reporter=QUIET).run([corpus])
        best = min(best, time.perf_counter() - started)
        calls = sum(s.calls for s in result.stats)
        assert result.engine_runs == 0, "the benchmark corpus records usage: no engine run expected"
    return best, calls


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", help="an existing corpus directory (default: generate one)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        corpus = args.corpus
        if corpus is None:
            corpus = str(Path(tmp) / "corpus")
            subprocess.run(
                [sys.executable, str(GENERATOR), corpus, "--conversations", "200", "--turns", "40"],
                check=True,
                stdout=subprocess.DEVNULL,
            )
        one = sweep_grid((), [32000], ratios=[0.75], debounces=[3])
        hundred = sweep_grid(
            (),
            [8000, 16000, 32000, 64000, 128000],
            ratios=[0.5, 0.6, 0.7, 0.8, 0.9],
            debounces=[1, 2, 3, 5],
        )
        assert len(hundred) == 100
        t1, calls1 = timed(one, corpus, args.repeat)
        t100, calls100 = timed(hundred, corpus, args.repeat)
        print(f"corpus: {corpus}")
        print(f"1 configuration:    {t1:.3f} s  ({calls1} summary calls)")
        print(f"100 configurations: {t100:.3f} s  ({calls100} summary calls)")
        ratio = t100 / t1
        print(f"ratio: {ratio:.2f}x (limit 3x) -> {'OK' if ratio <= 3 else 'TOO SLOW'}")
        sys.exit(0 if ratio <= 3 else 1)


if __name__ == "__main__":
    main()
