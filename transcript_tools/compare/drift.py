"""Drift over repeated compactions: per policy, the k-th summary of each conversation
pooled over the conversations that reached it — its artifact recall, the view tokens it
freed and those left after it.

A conversation compacted again summarizes a summary: what the first round lost stays
lost, and each round may lose more. Reading recall by round shows whether a policy's
later summaries keep as much as its first (a public study of repeated compaction:
github.com/profff/lost-in-compaction). Rounds from ``ROUNDS`` on are pooled into one row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..eval.aggregate import POSITION_CAP
from ..present.table import text_table
from .bootstrap import Interval, paired_bootstrap
from .collect import ArmRun
from .figures import ratio_of_sums, same_window
from .table import interval

# rounds from the cap on share one row ("5+"), as eval's by-position recall pools them
ROUNDS = POSITION_CAP


@dataclass(frozen=True, slots=True)
class Round:
    """The k-th summaries of one policy, pooled."""

    policy: str
    label: str  # "1", "2", ... or "6+"
    conversations: int
    summaries: int
    recall: Interval | None  # pooled artifact recall, 95% paired-bootstrap interval
    freed: float  # mean view tokens a summary of this round freed
    kept: float  # mean view tokens left after it


def _label(k: int, cap: int) -> str:
    return f"{cap}+" if k >= cap else str(k)


def policy_rounds(policy: str, runs: Sequence[ArmRun], cap: int = ROUNDS) -> list[Round]:
    """``runs``: the policy's run of each conversation. Round k pools the k-th summary of
    every conversation that made k summaries or more (rounds from ``cap`` on: one row)."""
    pooled: dict[str, list[list[tuple[int, int, int, int]]]] = {}
    for run in runs:
        per_round: dict[str, list[tuple[int, int, int, int]]] = {}
        for k, figures in enumerate(run.by_summary, start=1):
            per_round.setdefault(_label(k, cap), []).append(figures)
        for label, summaries in per_round.items():
            pooled.setdefault(label, []).append(summaries)
    out = []
    for label in sorted(pooled, key=lambda text: int(text.rstrip("+"))):
        groups = pooled[label]
        flat = [s for group in groups for s in group]
        # a conversation's summaries of a round stay together in a resample
        kept = [float(sum(s[0] for s in g)) for g in groups]
        probed = [float(sum(s[1] for s in g)) for g in groups]
        recall = paired_bootstrap(probed, kept, ratio_of_sums) if sum(probed) else None
        out.append(
            Round(
                policy,
                label,
                len(groups),
                len(flat),
                recall,
                sum(s[2] for s in flat) / len(flat),
                sum(s[3] for s in flat) / len(flat),
            )
        )
    return out


def drift_table(names: Sequence[str], conversations: Sequence[dict[int, ArmRun]]) -> list[Round]:
    """Every policy's rounds over the conversations the comparison pairs (one window)."""
    paired = [c for c in conversations if same_window(c)]
    return [
        row
        for arm, name in enumerate(names)
        for row in policy_rounds(name, [c[arm] for c in paired])
    ]


def render_drift(table: Sequence[Round]) -> str:
    """The drift table: one line per policy and round."""
    lines = [
        "recall by the k-th compaction: each conversation's k-th summary, pooled over the "
        "conversations that made k or more",
        f"(recall: artifact probes it carried, 95% interval; freed / kept: mean view tokens; "
        f"rounds {ROUNDS} and later in one row)",
    ]
    rows = [("policy", "k", "n", "summaries", "recall", "freed", "kept")]
    for r in table:
        rows.append(
            (
                r.policy,
                r.label,
                str(r.conversations),
                str(r.summaries),
                interval(r.recall, 100, ".0f"),
                f"{r.freed:,.0f}",
                f"{r.kept:,.0f}",
            )
        )
    lines += text_table(rows)
    if len(rows) == 1:
        lines.append("  (no policy summarized)")
    return "\n".join(lines) + "\n"
