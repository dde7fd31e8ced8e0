"""check --max-cost-increase: the run's cost against the baseline's, as a CI gate.

Both sides are ``costs.jsonl`` of a replay with --cost (one record per session,
``cost/meter.py``). Sessions in both are compared by their policy cost; a relative
increase beyond the limit fails the gate the way a recall drop does (docs/cost.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import orjson

from ..errors import InputError
from .records import CostRecord

COST_FILE = "costs.jsonl"
NO_BASELINE_COSTS = (
    f"the baseline has no {COST_FILE} to compare the cost with "
    "(bless one with --update and --max-cost-increase)"
)


@dataclass(slots=True)
class CostComparison:
    failed: bool = False
    lines: list[str] = field(default_factory=list)
    # the totals compared (None: nothing compared) and the sessions they are over
    old_usd: float | None = None
    new_usd: float | None = None
    sessions: int = 0


def read_costs(directory: Path) -> dict[str, CostRecord] | None:
    """session -> its cost record; None when the directory has no costs.jsonl."""
    path = directory / COST_FILE
    if not path.is_file():
        return None
    out: dict[str, CostRecord] = {}
    for number, line in enumerate(path.read_bytes().splitlines(), 1):
        try:
            record = orjson.loads(line)
            out[str(record["session"])] = record
        except (orjson.JSONDecodeError, KeyError, TypeError) as exc:
            raise InputError(str(path), number, f"not a cost record ({exc})") from None
    return out


def _total(records: dict[str, CostRecord], sessions: list[str], key: str = "usd") -> float | None:
    """The sum of the sessions' ``policy[key]`` (None: one of them is not priced)."""
    values = [records[s]["policy"].get(key) for s in sessions]
    priced = [float(v) for v in values if isinstance(v, (int, float))]
    return None if len(priced) < len(values) else sum(priced)


def _what(old: dict[str, CostRecord], new: dict[str, CostRecord], shared: list[str]) -> str:
    """What the gate's totals are: the policy's whole run, the agent's calls and the
    summary calls (their part named: the end-of-run line prices those only)."""
    before, after = _total(old, shared, "summarizer_usd"), _total(new, shared, "summarizer_usd")
    if before is None or after is None:
        return "the agent's calls and the summary calls"
    return f"the agent's calls and ${before:.4f} -> ${after:.4f} of summary calls"


def compare_costs(
    old: dict[str, CostRecord] | None,
    new: dict[str, CostRecord],
    max_increase: float,
) -> CostComparison:
    """The gate's verdict and its lines (``cost: …``). It fails closed: with nothing to
    compare (no baseline costs, no session priced on both sides) it fails and says why, and
    a session that overflows where the baseline did not fails it too."""
    result = CostComparison()
    if old is None:
        result.failed = True
        result.lines.append(f"cost: FAILED, {NO_BASELINE_COSTS}")
        return result
    both = sorted(set(old) & set(new))
    # a run that overflowed is not priced (cost/overflow.py): out of both totals, and one
    # that overflows only in the new run fails the gate (its agent would have failed)
    over = [s for s in both if old[s].get("overflow") or new[s].get("overflow")]
    new_over = [s for s in over if not old[s].get("overflow")]
    shared = [s for s in both if s not in over]
    before, after = _total(old, shared), _total(new, shared)
    if not shared or before is None or after is None:
        result.failed = True
        result.lines.append("cost: FAILED, no session priced on both sides: nothing compared")
        return result
    result.old_usd, result.new_usd, result.sessions = before, after, len(shared)
    change = (after - before) / before if before else (0.0 if after == before else float("inf"))
    sources = sorted({s for r in new.values() for s in r["policy"].get("priced_by", [])})
    words = (
        f"cost: ${before:.4f} -> ${after:.4f} over {len(shared)} session(s) "
        f"({change:+.1%}; limit +{max_increase:.1%}), {_what(old, new, shared)} "
        f"[{'; '.join(sources) or 'no price'}]"
    )
    if change > max_increase:
        result.failed = True
        worst = sorted(
            shared,
            key=lambda s: (new[s]["policy"]["usd"] or 0) - (old[s]["policy"]["usd"] or 0),
            reverse=True,
        )[:3]
        words += "; FAILED, most of it in " + ", ".join(worst)
    if over:
        words += f"; {len(over)} session(s) overflowed, not priced"
    if new_over:
        result.failed = True
        words += "; FAILED, overflows the baseline did not: " + ", ".join(new_over[:3])
    result.lines.append(words)
    return result
