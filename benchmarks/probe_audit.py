"""Draw artifact probes at random from a corpus, with their context, for a human audit.

    python benchmarks/probe_audit.py /work/shared/corpus/real -n 50 --seed 13

Prints one numbered probe per block: kind, file, message index, the probe text and
the 160 characters around it. docs/eval-probe-audit.md holds the audit made with it.
"""

from __future__ import annotations

import argparse
import random
import sys

from transcript_tools.engine.config import ReplaySettings
from transcript_tools.eval.artifacts import ARTIFACT_KINDS
from transcript_tools.eval.score import ConversationProbes
from transcript_tools.replay.driver import ReplayDriver
from transcript_tools.reporter import QUIET


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("paths", nargs="+")
    parser.add_argument("-n", type=int, default=50)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    pool = []
    reader = ReplayDriver(ReplaySettings(), None, None, reporter=QUIET)
    for conv in reader.conversations(args.paths):
        probes = ConversationProbes(conv.messages)
        for i in range(len(conv.messages)):
            for p in probes.message_probes(i):
                if p.kind in ARTIFACT_KINDS:
                    block = probes.block(i)
                    at = block.find(p.text)
                    ctx = block[max(0, at - 80) : at + len(p.text) + 80] if at >= 0 else block[:160]
                    pool.append((conv.path, type(conv.messages[i]).__name__, p, ctx))
    rng = random.Random(args.seed)
    sample = rng.sample(pool, min(args.n, len(pool)))
    print(
        f"{len(pool)} artifact probes in the corpus; {len(sample)} drawn (seed {args.seed})",
        file=sys.stderr,
    )
    for n, (path, role, p, ctx) in enumerate(sample, 1):
        short = path.split("/real/")[-1]
        print(
            f"{n}. [{p.kind}] {p.text!r}\n   {short} msg {p.message} ({role})\n   …{' '.join(ctx.split())[:240]}…\n"
        )


if __name__ == "__main__":
    main()
