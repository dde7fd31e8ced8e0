#!/usr/bin/env python3
"""tsum's benchmark suite: one command, one table of ratios.

    python benchmarks/run.py            # full run (builds corpora once, ~10 min)
    python benchmarks/run.py --quick    # smaller corpora, fewer repeats (~2 min)

Corpora come from ../shared/bench/gen_corpus.py (beside the repository) (deterministic: OpenAI
Chat Completions JSONL, recorded usage, ~30% Chinese, emoji, occasional huge
tool results) and are built once under benchmarks/.work/corpora (gitignored),
plus a copy of some with every message's ``usage`` removed (tokens estimated).

The machine is shared and noisy, so every figure is a RATIO measured inside one
run: the baseline (the "floor": reading every line of the same files and
``json.loads``-ing it with the stdlib) is timed in the same process or the same
loop, interleaved with tsum, and each side is the median of several repeats.

Library figures go through ``ReplayDriver`` exactly as ``tsum replay --out`` does
(outputs written); whole-process figures run the real ``tsum`` command (or
``python benchmarks/tsum_main.py`` when the console script is unavailable).
Peak RSS is read per child with ``os.wait4``.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"
CORPORA = WORK / "corpora"
# The per-summary target: 1 ms when the json floor of t3000 took 37 ms on this machine.
PER_SUMMARY_FLOOR_MS = 37.0
# The workload generator lives in the shared folder beside the repository.
GEN = Path(
    os.environ.get(
        "TSUM_BENCH_GEN", Path(__file__).resolve().parents[2] / "shared" / "bench" / "gen_corpus.py"
    )
)


# ---- corpora ----------------------------------------------------------------------------


def build_corpus(name: str, conversations: int, turns: int) -> Path:
    """gen_corpus.py output, rebuilt only when its parameters or the generator change."""
    out = CORPORA / name
    stamp = out / ".stamp"
    key = f"{conversations}x{turns}:{hashlib.sha256(GEN.read_bytes()).hexdigest()}"
    if stamp.is_file() and stamp.read_text() == key:
        return out
    shutil.rmtree(out, ignore_errors=True)
    started = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            str(GEN),
            str(out),
            "--conversations",
            str(conversations),
            "--turns",
            str(turns),
        ],
        check=True,
    )
    stamp.write_text(key)
    print(f"  built {name} in {time.perf_counter() - started:.1f}s", file=sys.stderr)
    return out


def strip_usage(src: Path) -> Path:
    """A copy of ``src`` with ``usage`` removed from every message (tokens then estimated)."""
    import orjson

    out = src.with_name(src.name + "-nousage")
    stamp = out / ".stamp"
    key = (src / ".stamp").read_text()
    if stamp.is_file() and stamp.read_text() == key:
        return out
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    for path in sorted(src.glob("*.jsonl")):
        lines = []
        for raw in path.read_bytes().splitlines():
            obj = orjson.loads(raw)
            obj.pop("usage", None)
            lines.append(orjson.dumps(obj))
        (out / path.name).write_bytes(b"\n".join(lines) + b"\n")
    stamp.write_text(key)
    return out


def corpus_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.glob("*.jsonl"))


# ---- in-process measurements (the library, as `tsum replay --out` drives it) ------------


def json_floor(path: Path) -> None:
    """The floor: read every line of every file and parse it with the stdlib."""
    loads = json.loads
    for name in sorted(os.listdir(path)):
        if name.endswith(".jsonl"):
            with open(path / name, "rb") as fh:
                for line in fh:
                    if line.strip():
                        loads(line)


@dataclass
class ReplayFigures:
    seconds: float
    summaries: int
    would_summarize: int
    provider_seconds: float


def replay(path: Path, out: Path, *, dry_run: bool) -> ReplayFigures:
    """One ``tsum replay PATH --out OUT [--dry-run]`` at seed defaults, through the library."""
    from transcript_tools.engine.config import ReplaySettings
    from transcript_tools.engine.prompt import load_template
    from transcript_tools.providers.executor import SummaryExecutor
    from transcript_tools.providers.registry import get_provider
    from transcript_tools.replay.driver import ReplayDriver
    from transcript_tools.replay.output_dir import OutputDirectory
    from transcript_tools.reporter import QUIET

    started = time.perf_counter()
    template = load_template(None)
    settings = ReplaySettings(dry_run=dry_run)
    executor = None
    timer = _ProviderTimer()
    if not dry_run:
        executor = SummaryExecutor(timer.wrap(get_provider("offline")), cache=None)
    sink = OutputDirectory(out, write_compressed=not dry_run)  # as `tsum replay` does
    run = ReplayDriver(
        settings,
        executor,
        sink,
        provider_name="none" if executor is None else "offline",
        template=template,
        reporter=QUIET,
    )
    stats = _run_async(run, [str(path)])
    if executor is not None:
        executor.close()
    sink.close({})
    return ReplayFigures(
        time.perf_counter() - started, stats.summaries_ok, stats.would_summarize, timer.seconds
    )


def _run_async(run: Any, paths: list[str]) -> Any:
    # asyncio.run's return value must stay small: Python 3.11's SIGINT handler
    # cleanup can repr() the main task, result included.
    async def main() -> None:
        await run.run(paths)

    asyncio.run(main())
    return run.stats


class _ProviderTimer:
    """Wraps a provider to measure the time spent inside it (the stand-in for the LLM call)."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def wrap(self, provider: Any) -> Any:
        timer = self
        original = provider.complete

        async def complete(prompt: str, model: str | None, max_tokens: int) -> Any:
            started = time.perf_counter()
            try:
                return await original(prompt, model, max_tokens)
            finally:
                timer.seconds += time.perf_counter() - started

        provider.complete = complete
        original_request = getattr(provider, "complete_request", None)
        if original_request is not None:  # what executors call when a provider has it

            async def complete_request(request: Any, model: str) -> Any:
                started = time.perf_counter()
                try:
                    return await original_request(request, model)
                finally:
                    timer.seconds += time.perf_counter() - started

            provider.complete_request = complete_request
        return provider


def interleaved(fns: dict[str, Callable[[], Any]], repeats: int) -> dict[str, list[Any]]:
    """Run each function ``repeats`` times, round-robin, so that noise hits all alike."""
    results: dict[str, list[Any]] = {name: [] for name in fns}
    for fn in fns.values():  # warm-up: imports, page cache
        fn()
    for _ in range(repeats):
        for name, fn in fns.items():
            started = time.perf_counter()
            value = fn()
            results[name].append((time.perf_counter() - started, value))
    return results


def median_time(samples: list[Any]) -> float:
    return statistics.median(s[0] for s in samples)


# ---- subprocess measurements ------------------------------------------------------------


def tsum_command() -> list[str]:
    exe = shutil.which("tsum")
    if exe:
        probe = subprocess.run([exe, "--version"], capture_output=True, env=child_env())
        if probe.returncode == 0:
            return [exe]
    return [sys.executable, str(HERE / "tsum_main.py")]


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    # Measure an installed tool as users run it: with bytecode caches.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    for key in list(env):
        if key.startswith("TSUM_") or key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
            del env[key]
    return env


# A tiny launcher measures each child: on Linux a child's ru_maxrss starts from its
# parent's RSS at fork time, so the (large) benchmark process must not be the parent.
LAUNCHER = (
    "import os,subprocess,sys,time\n"
    "t=time.perf_counter()\n"
    "p=subprocess.Popen(sys.argv[1:],stdout=subprocess.DEVNULL)\n"
    "_,s,u=os.wait4(p.pid,0)\n"
    "w=time.perf_counter()-t\n"
    "print(os.waitstatus_to_exitcode(s),w,u.ru_maxrss*1024)\n"
)


def run_child(argv: list[str], cwd: Path) -> tuple[float, int, bytes]:
    """(wall seconds, peak RSS bytes, stderr) of one fresh child process."""
    proc = subprocess.run(
        [sys.executable, "-c", LAUNCHER, *argv], cwd=cwd, env=child_env(), capture_output=True
    )
    lines = proc.stdout.decode().split()
    if proc.returncode != 0 or len(lines) != 3 or lines[0] != "0":
        raise RuntimeError(
            f"{' '.join(argv)} failed: {proc.stdout.decode()} {proc.stderr.decode(errors='replace')[-2000:]}"
        )
    return float(lines[1]), int(lines[2]), proc.stderr


FLOOR_SCRIPT = (
    "import json,os,sys\n"
    "d=sys.argv[1]\n"
    "for n in sorted(os.listdir(d)):\n"
    "    if n.endswith('.jsonl'):\n"
    "        with open(os.path.join(d,n),'rb') as f:\n"
    "            for l in f:\n"
    "                if l.strip(): json.loads(l)\n"
)


# ---- the suite --------------------------------------------------------------------------


@dataclass
class Row:
    figure: str
    value: str
    target: str
    ok: bool | None  # None: informational

    def cells(self) -> list[str]:
        status = "-" if self.ok is None else ("yes" if self.ok else "NO")
        return [self.figure, self.value, self.target, status]


def table(rows: list[Row]) -> str:
    header = ["figure", "measured", "target", "met"]
    cells = [header] + [r.cells() for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(4)]

    def line(c: list[str]) -> str:
        return "| " + " | ".join(x.ljust(w) for x, w in zip(c, widths, strict=True)) + " |"

    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), sep] + [line(c) for c in cells[1:]])


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="smaller corpora and fewer repeats")
    parser.add_argument("--repeat", type=int, help="repeats per measurement (default 7, quick 5)")
    parser.add_argument("--json", type=Path, help="also write the figures here as JSON")
    parser.add_argument(
        "--e2e", action="store_true", help="also tsum replay end to end vs the ideal (~3 min)"
    )
    args = parser.parse_args()
    if not GEN.is_file():
        # The generator lives outside the repository: a clone without it gets one line.
        print(
            f"benchmarks/run.py: error: the corpus generator {GEN} is not there; point "
            "TSUM_BENCH_GEN at a copy of gen_corpus.py (../shared/bench/ beside the repository)",
            file=sys.stderr,
        )
        return 2
    # In-process figures stand for `tsum replay`: the same process-wide GC policy as the
    # tsum command sets around its run (the library itself never touches the collector).
    from transcript_tools.cli.main import tune_gc

    tune_gc()
    quick = args.quick
    repeats = args.repeat or (5 if quick else 7)
    WORK.mkdir(parents=True, exist_ok=True)
    out = WORK / "out"
    rows: list[Row] = []
    raw: dict[str, Any] = {"quick": quick, "repeats": repeats, "python": sys.version.split()[0]}

    print("building corpora ...", file=sys.stderr)
    long_name, long_turns = ("t3000", 3000)
    t3000 = build_corpus(long_name, 1, long_turns)
    c200 = build_corpus("c200x40", 200, 40)
    small_t, big_t = (300, 3000) if quick else (1000, 10000)
    t_small = build_corpus(f"t{small_t}", 1, small_t)
    t_big = build_corpus(f"t{big_t}", 1, big_t)
    few_c, many_c = (20, 200) if quick else (200, 2000)
    c_few = build_corpus(f"c{few_c}x40", few_c, 40)
    c_many = build_corpus(f"c{many_c}x40", many_c, 40)
    t3000_nu = strip_usage(t3000)
    c200_nu = strip_usage(c200)
    tiny = build_corpus("tiny", 1, 3)

    # 1. decisions vs the stdlib-json floor, in one process
    print("decisions vs json floor (library, in-process) ...", file=sys.stderr)
    for corpus, limit, label in (
        (t3000, 2.0, "t3000"),
        (c200, 2.0, "c200x40"),
        (t3000_nu, 3.0, "t3000, usage stripped"),
        (c200_nu, 3.0, "c200x40, usage stripped"),
    ):
        res = interleaved(
            {
                "floor": lambda c=corpus: json_floor(c),
                "tsum": lambda c=corpus: replay(c, out, dry_run=True),
            },
            repeats,
        )
        floor, tsum = median_time(res["floor"]), median_time(res["tsum"])
        ratio = tsum / floor
        raw[f"decisions {label}"] = {"floor_s": floor, "tsum_s": tsum, "ratio": ratio}
        rows.append(
            Row(
                f"decisions / json floor, {label} (in-process)",
                f"{ratio:.2f}x  ({tsum * 1000:.0f} / {floor * 1000:.0f} ms)",
                f"<= {limit:g}x",
                ratio <= limit,
            )
        )

    # 2. full replay with the offline provider: extra time per summary. The target was
    # set as 1 ms when this machine's json floor for t3000 took 37 ms; machines (and this
    # shared one, from day to day: 37 -> 111 ms) differ, so it is judged as that share of
    # the floor timed in the same loop: per summary <= floor / 37.
    print("full replay (offline provider) on t3000 ...", file=sys.stderr)
    res = interleaved(
        {
            "floor": lambda: json_floor(t3000),
            "dry": lambda: replay(t3000, out, dry_run=True),
            "full": lambda: replay(t3000, out, dry_run=False),
        },
        repeats,
    )
    floor_s = median_time(res["floor"])
    dry_s, full_s = median_time(res["dry"]), median_time(res["full"])
    n = res["full"][0][1].summaries
    provider_s = statistics.median(s[1].provider_seconds for s in res["full"])
    per = (full_s - dry_s) / n * 1000
    own = (full_s - dry_s - provider_s) / n * 1000
    budget = floor_s * 1000 / PER_SUMMARY_FLOOR_MS  # 1 ms at the 37 ms floor
    raw["full t3000"] = {
        "dry_s": dry_s,
        "full_s": full_s,
        "summaries": n,
        "provider_s": provider_s,
        "floor_s": floor_s,
    }
    rows.append(
        Row(
            f"full replay - decisions, per summary, t3000 ({n} summaries), / json floor",
            f"1/{floor_s * 1000 / per:.0f}  ({per:.2f} ms / {floor_s * 1000:.0f} ms)",
            f"<= 1/{PER_SUMMARY_FLOOR_MS:g}",
            per <= budget,
        )
    )
    rows.append(
        Row(
            "  the same in ms (the target's machine: json floor 37 ms)",
            f"{per:.2f} ms  (budget here {budget:.2f} ms)",
            "<= 1 ms there",
            None,
        )
    )
    rows.append(
        Row(
            "  of which tsum's own (offline summarizer excluded)",
            f"{own:.2f} ms  (summarizer {provider_s / n * 1000:.2f} ms)",
            f"<= {budget:.2f} ms",
            own <= budget,
        )
    )
    # 3. linear in conversation length
    print(f"linearity t{big_t} / t{small_t} ...", file=sys.stderr)
    for dry, label in ((True, "decisions"), (False, "full replay")):
        res = interleaved(
            {
                "small": lambda d=dry: replay(t_small, out, dry_run=d),
                "big": lambda d=dry: replay(t_big, out, dry_run=d),
            },
            repeats,
        )
        ratio = median_time(res["big"]) / median_time(res["small"])
        raw[f"linearity {label}"] = ratio
        rows.append(
            Row(f"{label}: time(t{big_t}) / time(t{small_t})", f"{ratio:.2f}", "<= 11", ratio <= 11)
        )

    # 4. whole processes, peak RSS
    tsum = tsum_command()
    raw["tsum_command"] = tsum
    print(f"whole processes ({' '.join(tsum)}) ...", file=sys.stderr)
    floor_walls, tsum_walls = [], []
    for _ in range(max(3, repeats - 2)):
        floor_walls.append(run_child([sys.executable, "-c", FLOOR_SCRIPT, str(c_many)], WORK)[0])
        tsum_walls.append(
            run_child(
                tsum + ["replay", str(c_many), "--dry-run", "--out", str(out), "--silent"], WORK
            )[0]
        )
    ratio = statistics.median(tsum_walls) / statistics.median(floor_walls)
    raw["whole process"] = {"floor_s": floor_walls, "tsum_s": tsum_walls}
    rows.append(
        Row(
            f"tsum replay --dry-run / python3 json floor, c{many_c}x40 (processes)",
            f"{ratio:.2f}x  ({statistics.median(tsum_walls):.2f} / {statistics.median(floor_walls):.2f} s)",
            # The target is set on c2000x40; on the quick corpus Python's start-up
            # (the same ~0.2 s for any corpus) dominates, so it is shown, not judged.
            "<= 2x (full run)" if quick else "<= 2x",
            None if quick else ratio <= 2,
        )
    )

    print("peak RSS ...", file=sys.stderr)
    rss = {}
    for corpus in (c_few, c_many):
        rss[corpus.name] = min(
            run_child(
                tsum + ["replay", str(corpus), "--dry-run", "--out", str(out), "--silent"], WORK
            )[1]
            for _ in range(2)
        )
    ratio = rss[c_many.name] / rss[c_few.name]
    raw["rss corpus"] = rss
    rows.append(
        Row(
            f"peak RSS c{many_c}x40 / c{few_c}x40 (dry run)",
            f"{ratio:.2f}  ({rss[c_many.name] >> 20} / {rss[c_few.name] >> 20} MiB)",
            "<= 1.2",
            ratio <= 1.2,
        )
    )
    size = corpus_bytes(t_big)
    for extra, label in ((["--dry-run"], "dry run"), ([], "full replay")):
        peak = run_child(
            tsum + ["replay", str(t_big), *extra, "--out", str(out), "--silent"], WORK
        )[1]
        raw[f"rss t{big_t} {label}"] = peak
        rows.append(
            Row(
                f"peak RSS / file size, t{big_t} ({label})",
                f"{peak / size:.1f}x  ({peak >> 20} MiB / {size >> 20} MiB)",
                "< 10x",
                peak < 10 * size,
            )
        )

    # 4b. all local cores (docs/scale.md; benchmarks/bench_scale.py has the details and Ray)
    print(f"sweep --workers 1 / 2, c{many_c}x40 ...", file=sys.stderr)
    walls: dict[str, list[float]] = {"1": [], "2": []}
    for _ in range(3):
        for workers in walls:
            argv = ["sweep", str(c_many), "--json", "--silent", "--workers", workers]
            walls[workers].append(run_child(tsum + argv, WORK)[0])
    speedup = statistics.median(walls["1"]) / statistics.median(walls["2"])
    raw["sweep workers"] = walls
    rows.append(
        Row(
            f"tsum sweep --workers 2 speed-up vs 1, c{many_c}x40 (processes)",
            f"{speedup:.2f}x  ({statistics.median(walls['1']):.2f} / {statistics.median(walls['2']):.2f} s)",
            ">= 1.7x (full run, idle machine)" if quick else ">= 1.7x",
            None if quick else speedup >= 1.7,
        )
    )

    # 5. start-up
    print("start-up ...", file=sys.stderr)
    tiny_file = next(tiny.glob("*.jsonl"))
    for argv, label in (
        (["--help"], "tsum --help"),
        (
            ["replay", str(tiny_file), "--dry-run", "--out", str(out), "--silent"],
            "tsum replay --dry-run (tiny)",
        ),
    ):
        err = run_child([sys.executable, "-X", "importtime", *tsum_script(tsum), *argv], WORK)[2]
        sdks = sorted(_imported_sdks(err.decode(errors="replace")))
        rows.append(Row(f"{label}: LLM SDKs imported", ", ".join(sdks) or "none", "none", not sdks))
    # Start-up against any click program's floor, interleaved in one run.
    click_walls: list[float] = []
    version_walls: list[float] = []
    help_walls: list[float] = []
    for _ in range(max(5, repeats)):
        click_walls.append(run_child([sys.executable, "-c", "import click"], WORK)[0])
        version_walls.append(run_child(tsum + ["--version"], WORK)[0])
        help_walls.append(run_child(tsum + ["replay", "--help"], WORK)[0])
    c, v, h = (statistics.median(w) for w in (click_walls, version_walls, help_walls))
    raw.update(version_s=version_walls, click_import_s=click_walls, replay_help_s=help_walls)
    rows.append(Row("tsum --version wall time (median)", f"{v:.3f} s", "<= 0.3 s", v <= 0.3))
    for label, t in (("tsum --version", v), ("tsum replay --help", h)):
        rows.append(
            Row(
                f"{label} / python -c 'import click'",
                f"{t / c:.2f}x  ({t:.3f} / {c:.3f} s)",
                "<= 1.5x",
                t <= 1.5 * c,
            )
        )

    if args.e2e:  # the whole tsum replay command against a 200 ms server
        from bench_replay_e2e import summary_rows

        rows += [Row(*row) for row in summary_rows(raw)]

    print()
    print(
        f"tsum benchmarks ({'quick' if quick else 'full'} run; medians of {repeats}; python {raw['python']}, {os.cpu_count()} cores)"
    )
    print()
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps(raw, indent=2, default=str))
    return 0 if all(r.ok is not False for r in rows) else 1


def tsum_script(tsum: list[str]) -> list[str]:
    """The Python script behind the tsum command (the console script is one)."""
    return tsum[1:] if tsum[0] == sys.executable else tsum


def _imported_sdks(importtime: str) -> set[str]:
    found = set()
    for line in importtime.splitlines():
        if not line.startswith("import time:"):
            continue
        name = line.rsplit("|", 1)[-1].strip()
        top = name.split(".", 1)[0]
        if top in ("anthropic", "openai"):
            found.add(top)
    return found


if __name__ == "__main__":
    sys.exit(main())
