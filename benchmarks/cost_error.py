"""The cost model's own error bar: each original run reconstructed vs its recorded usage.

    python benchmarks/cost_error.py ../shared/corpus/real/claude-code ../shared/corpus/real/codex

Per conversation with recorded usage: the recorded cost; the reconstruction's signed
error in money (the model alone: every call reads the previous call's prompt) and in
cache writes; and the money error with the recorded cache breaks carried over
(``cost.original.recorded_breaks``), as the replay's cost does after a compaction.
docs/cost.md reads the table.
"""

from __future__ import annotations

import sys

from transcript_tools import api
from transcript_tools.cost.original import reconstructed_run, recorded_breaks, recorded_run
from transcript_tools.cost.prices import Pricer
from transcript_tools.cost.sizes import calibrate


def _pct(new: float | None, old: float | None, digits: int = 1) -> str:
    if new is None or not old:
        return "–"
    return f"{(new - old) / old:+.{digits}%}"


def main(paths: list[str]) -> None:
    pricer = Pricer()
    print(
        "| conversation | format | calls | breaks | recorded $ | model $ | error "
        "| cache-write error | error, breaks carried |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for conv in api.read_corpus(paths):
        recorded = recorded_run(conv, pricer)
        if not recorded.calls or recorded.usd is None:
            continue
        sizes = calibrate(conv)
        modeled = reconstructed_run(conv, sizes, pricer)
        carried = reconstructed_run(conv, sizes, pricer, carry_breaks=True)
        print(
            f"| {conv.session_id[:13]} | {conv.format} | {len(recorded.calls)} "
            f"| {len(recorded_breaks(conv)) - 1} | {recorded.usd:.4f} | {modeled.usd or 0:.4f} "
            f"| {_pct(modeled.usd, recorded.usd)} "
            f"| {_pct(modeled.tokens().cache_write, recorded.tokens().cache_write)} "
            f"| {_pct(carried.usd, recorded.usd, 2)} |"
        )


if __name__ == "__main__":
    if not sys.argv[1:] or sys.argv[1] in ("-h", "--help"):
        sys.exit(f"usage: python {sys.argv[0]} PATH...  (e.g. ../shared/corpus/real/claude-code)")
    main(sys.argv[1:])
