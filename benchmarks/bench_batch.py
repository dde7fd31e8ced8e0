"""``tsum replay --batch`` at scale: ~10,000 summary requests through a fake batch API.

A synthetic corpus (``/work/shared/bench/gen_corpus.py``: 500 conversations of 62
turns, recorded usage) replayed with ``--max-context-tokens 2000`` fires 20 times
per conversation. The fake batch server (``tests/support/fake_batch_server.py``, its own
process, 127.0.0.1) ends each batch a fixed ``--delay`` after its creation. tsum
runs as a subprocess, as a user would run it. Reported:

* rounds and batches (the schedule is text-independent here: one round);
* wall time, and wall time beyond ``rounds x delay`` (tsum's own work: planning,
  submitting, polling overshoot, streaming results into the cache, the final pass);
* peak RSS of the tsum process (results are streamed into the cache, not held),
  beside the peak of a ``--dry-run`` of the same corpus for scale;
* a second ``--batch`` run and a synchronous run of the same inputs: zero requests.

    python benchmarks/bench_batch.py                         # 500 x 62 turns, delay 5 s
    python benchmarks/bench_batch.py --conversations 50 --delay 1 --provider openai
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GEN = Path("/work/shared/bench/gen_corpus.py")


def run_tsum(args: list[str], env: dict[str, str]) -> tuple[float, int, str, float]:
    """(seconds, peak RSS in MiB of this child, stderr, CPU seconds of this child)."""
    code = "from transcript_tools.cli.main import main; main()"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=ROOT, env=env, capture_output=True, text=True
    )
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        sys.exit(f"tsum failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
    # ru_maxrss of the children waited for so far: the largest tsum run up to now
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return elapsed, after.ru_maxrss // 1024, proc.stderr, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=500)
    parser.add_argument("--turns", type=int, default=62)
    parser.add_argument(
        "--delay", type=float, default=5.0, help="the server's processing time per batch"
    )
    parser.add_argument("--poll", type=float, default=0.5, help="--batch-poll")
    parser.add_argument("--provider", choices=("anthropic", "openai"), default="anthropic")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="tsum-bench-batch-") as tmp:
        corpus = Path(tmp) / "corpus"
        subprocess.run(
            [
                sys.executable,
                str(GEN),
                str(corpus),
                "--conversations",
                str(args.conversations),
                "--turns",
                str(args.turns),
            ],
            check=True,
        )
        server = subprocess.Popen(
            [
                sys.executable,
                str(ROOT / "tests" / "support" / "fake_batch_server.py"),
                "--delay",
                str(args.delay),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert server.stdout is not None
            url = server.stdout.readline().strip()
            env = {
                k: v
                for k, v in os.environ.items()
                if not k.startswith(("TSUM_", "ANTHROPIC_", "OPENAI_"))
            }
            env.update(
                TSUM_HOME=str(Path(tmp) / "home"),
                ANTHROPIC_API_KEY="sk-bench",
                OPENAI_API_KEY="sk-bench",
            )
            common = [str(corpus), "--max-context-tokens", "2000", "--provider", args.provider]
            if args.provider == "anthropic":
                common += ["--base-url", url]
            else:
                common += ["--base-url", f"{url}/v1", "--model", "bench-model"]
            dry_s, dry_peak, _, _ = run_tsum(
                ["replay", *common[:3], "--dry-run", "--out", f"{tmp}/dry", "--silent"], env
            )
            batch_args = ["replay", *common, "--batch", "--batch-poll", str(args.poll), "--out"]
            wall, peak, stderr, cpu = run_tsum([*batch_args, f"{tmp}/out"], env)
            again_s, _, _, again_cpu = run_tsum([*batch_args, f"{tmp}/again"], env)
            sync_s, _, _, sync_cpu = run_tsum(["replay", *common, "--out", f"{tmp}/sync"], env)
        finally:
            server.kill()
            server.wait()
        manifest = json.loads((Path(tmp) / "out" / "manifest.json").read_text())
        again_manifest = json.loads((Path(tmp) / "again" / "manifest.json").read_text())
        sync_manifest = json.loads((Path(tmp) / "sync" / "manifest.json").read_text())
        batch = manifest["batch"]
        requests = batch["requests_submitted"]
        beyond = wall - batch["rounds"] * args.delay
        print(
            f"corpus: {args.conversations} conversations x {args.turns} turns, provider {args.provider}"
        )
        print(
            f"summary requests: {requests} in {len(batch['batches_submitted'])} batch(es), "
            f"{batch['rounds']} round(s); ok {batch['results_ok']}, failed {batch['results_failed']}"
        )
        print(
            f"wall {wall:.1f}s = {batch['rounds']} x {args.delay:g}s server delay + {beyond:.1f}s "
            f"beyond it ({beyond / max(requests, 1) * 1000:.2f} ms per request); "
            f"tsum's CPU time {cpu:.1f}s (the machine is shared: CPU time is the steadier figure)"
        )
        print(
            f"peak RSS: --batch {peak} MiB (a --dry-run of the same corpus: {dry_peak} MiB, {dry_s:.1f}s)"
        )
        print(
            f"rerun with --batch: {again_manifest['batch']['requests_submitted']} requests, "
            f"{again_s:.1f}s, CPU {again_cpu:.1f}s; synchronous rerun: "
            f"{sync_manifest['executor']['calls']} API calls, {sync_s:.1f}s, CPU {sync_cpu:.1f}s"
        )
        print(stderr.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
