"""tsum eval's deterministic cost: probe extraction + scoring per checkpoint (target <= 1 ms).

Generates the shared synthetic corpus (200 conversations x 40 turns, recorded usage;
``/work/shared/bench/gen_corpus.py``) unless given one, replays it through the
checkpoint with the offline summarizer (NOT timed: that is the summary's cost, not
eval's), then times what ``tsum eval`` adds: extracting every message's probes once
per conversation and scoring each checkpoint against its summary and floors
(truncation, no summary). Prints the mean per checkpoint (best of --repeat runs).

usage: python benchmarks/bench_eval.py [--corpus DIR] [--conversations 200] [--turns 40] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from transcript_tools.config import ReplaySettings, SummaryConfig
from transcript_tools.eval.checkpoints import compaction_message_indices, tsum_checkpoints
from transcript_tools.eval.run import score
from transcript_tools.eval.score import ConversationProbes
from transcript_tools.providers.executor import SummaryExecutor
from transcript_tools.providers.offline import OfflineProvider
from transcript_tools.replay import ReplayRun
from transcript_tools.session import SessionEngine

GENERATOR = Path(__file__).resolve().parents[1].parent / "shared" / "bench" / "gen_corpus.py"


def checkpoints_of(corpus: str, max_context_tokens: int) -> list:
    """(conversation, its checkpoints) for the corpus, with offline summaries (untimed)."""
    settings = ReplaySettings(summary=SummaryConfig(max_context_tokens=max_context_tokens))
    executor = SummaryExecutor(OfflineProvider(), timeout=None)
    reader = ReplayRun(ReplaySettings(), None, None, warn=lambda m: None, error=lambda m: None)
    out = []
    for conv in reader.conversations([corpus]):
        engine = SessionEngine(conv.session_id, settings)
        cps, _ = asyncio.run(tsum_checkpoints(conv, engine, executor, "zh"))
        out.append((conv, cps))
    return out


def timed(work: list) -> tuple[float, int, int]:
    """CPU seconds of this process (the machine may be shared: wall time would count the
    other processes' turns), checkpoints, probes."""
    started = time.process_time()
    n = probes_total = 0
    for conv, cps in work:
        probes = ConversationProbes(conv.messages, 500, compaction_message_indices(conv))
        for cp in cps:
            record = score(cp, probes)
            n += 1
            probes_total += len(record["probes"])
    return time.process_time() - started, n, probes_total


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus")
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--max-context-tokens", type=int, default=32000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        corpus = args.corpus
        if corpus is None:
            corpus = str(Path(tmp) / "corpus")
            subprocess.run(
                [
                    sys.executable,
                    str(GENERATOR),
                    corpus,
                    "--conversations",
                    str(args.conversations),
                    "--turns",
                    str(args.turns),
                ],
                check=True,
                stdout=subprocess.DEVNULL,
            )
        work = checkpoints_of(corpus, args.max_context_tokens)
        best = min(timed(work)[0] for _ in range(args.repeat))
        _, n, probes = timed(work)
    per = best / n * 1000 if n else float("nan")
    started = time.process_time()
    sum(range(10**7))
    calibration = time.process_time() - started
    print(
        f"machine: sum(range(10**7)) takes {calibration:.3f} s of CPU here (an idle 3 GHz core: about 0.12 s); load average {os.getloadavg()[0]:.1f}"
    )
    print(
        f"tsum eval, deterministic part: {n} checkpoints in {len(work)} conversations, {probes} probes scored; "
        f"{best:.3f} s of CPU (best of {args.repeat}) = {per:.3f} ms per checkpoint (target <= 1 ms): "
        + ("OK" if per <= 1.0 else "OVER")
    )


if __name__ == "__main__":
    main()
