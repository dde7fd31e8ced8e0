"""``tsum replay`` end to end against a local OpenAI-compatible server, vs the ideal time.

The whole command runs as a child process (start-up, reading, the openai SDK,
outputs written with ``--out``, no cache) against the fake server of
``bench_providers.py`` in another process, answering every call after 200 ms and
counting the calls in flight. Each session's summaries are sequential (a summary
feeds the next turn), so the ideal wall time is

    max(calls × latency / concurrency, longest session's chain of summaries × latency)

and the target is wall / ideal <= 1.25 at -j 8, 32 and 128, on two corpora:

- ``uniform``: ``gen_corpus.py --conversations 200 --turns 30 --seed 7``;
- ``mixed``: 200 conversations of 5 to 150 turns (``MIXED`` below), generated as one
  corpus per length and interleaved in a fixed order, a long one first.

    python benchmarks/bench_replay_e2e.py                 # 6 cells, about 2-3 minutes
    python benchmarks/bench_replay_e2e.py -j 32 --corpus mixed

Nothing leaves the machine: the API key variables are removed from the child's
environment and ``--base-url`` points at 127.0.0.1.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import multiprocessing
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bench_providers import _serve, _server_stats  # noqa: E402
from run import CORPORA, GEN, WORK, tsum_command  # noqa: E402

LATENCY = 0.2
TARGET = 1.25
LEVELS = (8, 32, 128)
# (turns, conversations, seed) per length; about 2 / 6 / 8 / 18 / 48 summaries each.
MIXED = ((5, 100, 101), (10, 50, 102), (30, 30, 103), (60, 15, 104), (150, 5, 105))


# ---- corpora ----------------------------------------------------------------------------


def _generate(out: Path, conversations: int, turns: int, seed: int) -> None:
    cmd = [sys.executable, str(GEN), str(out), "--conversations", str(conversations)]
    subprocess.run([*cmd, "--turns", str(turns), "--seed", str(seed)], check=True)


def _stamped(out: Path, key: str) -> bool:
    stamp = out / ".stamp"
    return stamp.is_file() and stamp.read_text() == key


def uniform_corpus() -> Path:
    out = CORPORA / "e2e-uniform-c200x30"
    key = f"200x30s7:{hashlib.sha256(GEN.read_bytes()).hexdigest()}"
    if not _stamped(out, key):
        shutil.rmtree(out, ignore_errors=True)
        _generate(out, 200, 30, 7)
        (out / ".stamp").write_text(key)
    return out


def mixed_corpus() -> Path:
    """One corpus per length, interleaved: file k of the result takes the next file of
    the group whose share of the files so far lags most behind its share of the whole
    (a deterministic, even spread of every length over the corpus; a long one first)."""
    out = CORPORA / "e2e-mixed"
    key = f"{MIXED}:{hashlib.sha256(GEN.read_bytes()).hexdigest()}"
    if _stamped(out, key):
        return out
    shutil.rmtree(out, ignore_errors=True)
    parts = out / "parts"
    groups: list[list[Path]] = []
    for turns, conversations, seed in MIXED:
        group = parts / f"t{turns}"
        _generate(group, conversations, turns, seed)
        groups.append(sorted(group.glob("*.jsonl")))
    total = sum(len(g) for g in groups)
    taken = [0] * len(groups)
    for index in range(total):
        # the longest group wins ties, so the corpus starts with a long conversation
        lag = [
            ((index + 1) * len(g) / total - taken[i], i)
            for i, g in enumerate(groups)
            if taken[i] < len(g)
        ]
        _, pick = max(lag)
        src = groups[pick][taken[pick]]
        taken[pick] += 1
        shutil.copyfile(src, out / f"m{index:05d}-{src.parent.name}.jsonl")
    shutil.rmtree(parts)
    (out / ".stamp").write_text(key)
    return out


# ---- one cell ---------------------------------------------------------------------------


@dataclass
class Cell:
    corpus: str
    jobs: int
    calls: int
    chain: int
    wall: float
    span: float  # first call sent -> last answer, as the server saw it
    cpu: float  # the tsum process's user + system seconds
    peak: int  # most calls in flight at once (server side)
    load: float  # the machine's 1-minute load average when the cell started (shared machine)
    first: float | None = None  # process start -> first call (start-up, imports, first turns)
    sdk: float | None = None  # the SDK alone, same calls and -j, no chains (sdk_alone.py)

    @property
    def ideal(self) -> float:
        return max(self.calls * LATENCY / self.jobs, self.chain * LATENCY)

    @property
    def ratio(self) -> float:
        return self.wall / self.ideal


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed tool has bytecode caches
    for key in list(env):
        if key.startswith(("TSUM_", "OPENAI_", "ANTHROPIC_")):
            del env[key]
    return env


def _chains(out: Path) -> collections.Counter[str]:
    """Summary calls per session, from summaries.jsonl (one record per call made)."""
    import orjson

    counts: collections.Counter[str] = collections.Counter()
    with open(out / "summaries.jsonl", "rb") as handle:
        for line in handle:
            counts[orjson.loads(line)["session"]] += 1
    return counts


def run_cell(tsum: list[str], corpus: Path, name: str, jobs: int, port: int) -> Cell:
    out = WORK / f"e2e-out-{name}-j{jobs}"
    shutil.rmtree(out, ignore_errors=True)
    argv = [
        *tsum,
        "replay",
        str(corpus),
        "--provider",
        "openai",
        "--base-url",
        f"http://127.0.0.1:{port}/v1",
        "--model",
        "bench-model",
        "--no-cache",
        "-j",
        str(jobs),
        "--out",
        str(out),
        "--silent",
    ]
    _server_stats(port, reset=True)
    load = os.getloadavg()[0]
    started = time.perf_counter()
    launched = time.monotonic()  # the server's clock too (CLOCK_MONOTONIC is system-wide)
    proc = subprocess.Popen(
        argv, env=_child_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    stderr = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(argv)} failed:\n{stderr[-2000:]}")
    stats = _server_stats(port)
    chains = _chains(out)
    if sum(chains.values()) != stats["requests"]:
        raise RuntimeError(
            f"{sum(chains.values())} summaries recorded, {stats['requests']} calls served"
        )
    span = (stats["last"] - stats["first"]) if stats["first"] is not None else 0.0
    first = (stats["first"] - launched) if stats["first"] is not None else 0.0
    sdk = sdk_alone(port, stats["requests"], jobs, out / "prompts.jsonl")
    return Cell(
        name,
        jobs,
        stats["requests"],
        max(chains.values(), default=0),
        wall,
        span,
        usage.ru_utime + usage.ru_stime,
        stats["peak"],
        load,
        first,
        sdk,
    )


def sdk_alone(port: int, calls: int, jobs: int, prompts: Path) -> float:
    """Seconds the official SDK alone takes for ``calls`` independent calls at ``jobs``
    (``sdk_alone.py``, its own process): the machine's floor for the calls/-j term."""
    _server_stats(port, reset=True)
    done = subprocess.run(
        [
            sys.executable,
            str(HERE / "sdk_alone.py"),
            str(port),
            str(calls),
            str(jobs),
            str(prompts),
        ],
        env=_child_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout.strip().splitlines()[-1])


def format_table(cells: list[Cell]) -> str:
    header = [
        "corpus",
        "-j",
        "calls",
        "chain",
        "wall s",
        "ideal s",
        "ratio",
        "1st call at s",
        "calls span s",
        "peak in flight",
        "CPU s",
        "load",
        "SDK alone s",
        "SDK alone / ideal",
        "<= 1.25x",
    ]
    rows = [
        [
            c.corpus,
            str(c.jobs),
            str(c.calls),
            str(c.chain),
            f"{c.wall:.2f}",
            f"{c.ideal:.2f}",
            f"{c.ratio:.3f}",
            "-" if c.first is None else f"{c.first:.2f}",
            f"{c.span:.2f}",
            str(c.peak),
            f"{c.cpu:.1f}",
            f"{c.load:.1f}",
            "-" if c.sdk is None else f"{c.sdk:.2f}",
            "-" if c.sdk is None else f"{c.sdk / c.ideal:.2f}",
            "yes" if c.ratio <= TARGET else "NO",
        ]
        for c in cells
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells_: list[str]) -> str:
        return "| " + " | ".join(x.ljust(w) for x, w in zip(cells_, widths, strict=True)) + " |"

    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), sep, *(line(r) for r in rows)])


def run_all(corpora: list[str], levels: list[int]) -> list[Cell]:
    """Every (corpus, -j) cell, with the fake server in its own process."""
    paths = {"uniform": uniform_corpus, "mixed": mixed_corpus}
    built = {name: paths[name]() for name in corpora}
    tsum = tsum_command()
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    server = ctx.Process(target=_serve, args=(child, LATENCY), daemon=True)
    server.start()
    cells = []
    try:
        port = parent.recv()
        for name in corpora:
            for jobs in levels:
                cell = run_cell(tsum, built[name], name, jobs, port)
                print(
                    f"  {name} -j {jobs}: {cell.calls} calls in {cell.wall:.2f} s, ratio {cell.ratio:.3f}",
                    file=sys.stderr,
                )
                cells.append(cell)
    finally:
        server.terminate()
        server.join(timeout=5)
    return cells


# ---- the driver alone (in-process, no HTTP) ------------------------------------------------


class SleepProvider:
    """Answers every call after ``LATENCY`` seconds of ``asyncio.sleep``: no SDK, no HTTP."""

    name = "sleep"
    key_env = None
    default_model = "sleep-1"

    def __init__(self) -> None:
        self.active = self.peak = 0

    def identity(self, model: str | None) -> dict[str, Any]:
        return {"provider": self.name, "model": model or self.default_model}

    async def complete(self, prompt: str, model: str | None, max_tokens: int) -> Any:
        import asyncio

        from transcript_tools.engine.requests import SummaryResponse

        self.active += 1
        self.peak = max(self.peak, self.active)
        try:
            await asyncio.sleep(LATENCY)
        finally:
            self.active -= 1
        return SummaryResponse(
            text="The user asked for X; the assistant decided Y.", model="sleep-1"
        )


def driver_cell(corpus: Path, name: str, jobs: int, *, old: bool) -> Cell:
    """``ReplayDriver`` as ``tsum replay --out`` drives it, with ``SleepProvider``; ``old``:
    the window before the reorder buffer (``jobs`` sessions, no reorder buffer: the head blocks)."""
    import asyncio
    import resource

    from transcript_tools.engine.config import ReplaySettings
    from transcript_tools.engine.prompt import load_template
    from transcript_tools.providers.executor import SummaryExecutor
    from transcript_tools.replay.driver import ReplayDriver
    from transcript_tools.replay.output_dir import OutputDirectory
    from transcript_tools.reporter import QUIET

    out = WORK / f"e2e-driver-{name}-j{jobs}"
    shutil.rmtree(out, ignore_errors=True)
    provider = SleepProvider()
    executor = SummaryExecutor(provider, cache=None, concurrency=jobs, timeout=None)  # type: ignore[arg-type]
    sink = OutputDirectory(out)
    window = {"sessions": jobs, "reorder": 0} if old else {}
    run = ReplayDriver(
        ReplaySettings(),
        executor,
        sink,
        provider_name="sleep",
        template=load_template(None),
        concurrency=jobs,
        reporter=QUIET,
        **window,  # type: ignore[arg-type]
    )
    load = os.getloadavg()[0]
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()

    async def main() -> None:
        await run.run([str(corpus)])

    asyncio.run(main())
    wall = time.perf_counter() - started
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    sink.close()
    chains = _chains(out)
    return Cell(
        f"{name} ({'old window' if old else 'new'})",
        jobs,
        sum(chains.values()),
        max(chains.values(), default=0),
        wall,
        wall,
        cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime,
        provider.peak,
        load,
    )


def summary_rows(raw: dict[str, Any]) -> list[tuple[str, str, str, bool]]:
    """Every cell as a row of ``run.py --e2e``'s table (figure, measured, target, met)."""
    rows = []
    for c in run_all(["uniform", "mixed"], list(LEVELS)):
        raw[f"e2e {c.corpus} -j {c.jobs}"] = vars(c)
        rows.append(
            (
                f"tsum replay / ideal, {c.corpus}, -j {c.jobs} ({c.calls} calls, 200 ms)",
                f"{c.ratio:.2f}x  ({c.wall:.2f} / {c.ideal:.2f} s)",
                f"<= {TARGET}x",
                c.ratio <= TARGET,
            )
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", choices=("uniform", "mixed"), action="append")
    parser.add_argument("-j", "--concurrency", type=int, action="append")
    parser.add_argument(
        "--driver",
        action="store_true",
        help="instead: the replay driver alone, in-process, calls = asyncio.sleep(0.2) "
        "(no CPU-heavy SDK: shows the window, not the machine)",
    )
    parser.add_argument(
        "--old",
        action="store_true",
        help="with --driver: also the window before the reorder buffer",
    )
    args = parser.parse_args()
    if args.driver:
        corpora = {"uniform": uniform_corpus(), "mixed": mixed_corpus()}
        cells = []
        for name in args.corpus or ["uniform", "mixed"]:
            for jobs in args.concurrency or list(LEVELS):
                for old in (False, True) if args.old else (False,):
                    cells.append(driver_cell(corpora[name], name, jobs, old=old))
                    print(
                        f"  {cells[-1].corpus} -j {jobs}: ratio {cells[-1].ratio:.3f}",
                        file=sys.stderr,
                    )
        print("\nreplay driver alone (in-process, every call = asyncio.sleep(0.2))\n")
        print(format_table(cells))
        return 0
    cells = run_all(args.corpus or ["uniform", "mixed"], args.concurrency or list(LEVELS))
    print()
    print(
        f"tsum replay end to end, {LATENCY * 1000:.0f} ms per call; ideal = max(calls x latency / -j, "
        "longest chain x latency); python "
        f"{sys.version.split()[0]}, {os.cpu_count()} cores"
    )
    print()
    print(format_table(cells))
    print(
        "\ncalls span: first call sent -> last answer (server side); CPU s: the tsum process; "
        f"load: 1-minute load average at the cell's start ({os.cpu_count()} cores). A cell "
        "whose CPU s is near its wall s was CPU-bound (the machine's share, not the driver). "
        "SDK alone: the same number of calls with the same prompts at the same -j through the "
        "openai SDK and nothing else (benchmarks/sdk_alone.py, import included, no chains)."
    )
    return 0 if all(c.ratio <= TARGET for c in cells) else 1


if __name__ == "__main__":
    sys.exit(main())
