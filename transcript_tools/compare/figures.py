"""Each policy against the baseline: paired changes with bootstrap intervals, counts of
flagged runs, the Pareto front, and the verdict worded from the intervals."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .bootstrap import Interval, mean_difference, paired_bootstrap, relative_change
from .collect import ArmRun

ORIGINAL = "original"


def ratio_of_sums(denominators: Sequence[float], numerators: Sequence[float]) -> float | None:
    """Σ numerators / Σ denominators (pooled recall: probes carried over probes asked)."""
    total = sum(denominators)
    return None if total == 0 else sum(numerators) / total


@dataclass(slots=True)
class PolicyRow:
    """One policy's figures against the baseline."""

    name: str
    conversations: int
    cost_usd: float | None = None  # the policy's total over the priced pairs
    baseline_usd: float | None = None  # the baseline's over the same pairs
    priced: int = 0  # conversations priced under both arms
    cost_delta_usd: Interval | None = None  # Σ (policy - baseline), paired
    cost_delta_share: Interval | None = None  # the same as a share of the baseline's total
    recall: Interval | None = None  # pooled artifact recall
    recall_delta: Interval | None = None  # paired, in points (a policy baseline only)
    retained: float = 0.0  # mean tokens the model is sent per turn
    original_retained: float = 0.0  # the same in the original run (no policy's actions)
    retained_delta_share: Interval | None = None
    overflow: int = 0
    invalid: int = 0
    degenerate: int = 0
    pareto: bool = False
    view_recall: Interval | None = None  # pooled over the whole view (only when asked for)

    @property
    def flags(self) -> str:
        marks = [("O", self.overflow), ("V", self.invalid), ("D", self.degenerate)]
        return "".join(mark for mark, count in marks if count)


@dataclass(slots=True)
class Comparison:
    baseline: str
    rows: list[PolicyRow]
    conversations: int
    windows: Counter[str] = field(default_factory=Counter)  # "200k (model)" -> conversations
    mixed: int = 0  # conversations left out: the policies' windows differ on them
    mixed_windows: Counter[str] = field(default_factory=Counter)


def pooled_recall(per_conversation: Sequence[tuple[int, int] | None]) -> Interval | None:
    """Probes carried over probes asked, pooled over the conversations that were measured,
    with its paired-bootstrap interval (None: none was)."""
    measured = [pair for pair in per_conversation if pair is not None]
    if not measured:
        return None
    return paired_bootstrap(
        [float(t) for _, t in measured], [float(h) for h, _ in measured], ratio_of_sums
    )


def _baseline_figures(run: ArmRun, base: ArmRun | None) -> tuple[float | None, float]:
    if base is None:  # the original run
        return run.original_usd, run.original_retained
    return base.usd, base.retained


def policy_row(name: str, runs: list[ArmRun], bases: list[ArmRun | None]) -> PolicyRow:
    """``runs[k]`` and ``bases[k]`` are conversation k under the policy and the baseline
    (None: the original run)."""
    row = PolicyRow(name, len(runs))
    priced: list[tuple[float, float]] = []
    for run, base in zip(runs, bases, strict=True):
        before_usd = _baseline_figures(run, base)[0]
        if before_usd is not None and run.usd is not None:
            priced.append((before_usd, run.usd))
    if priced:
        before = [b for b, _ in priced]
        after = [a for _, a in priced]
        row.cost_usd, row.baseline_usd, row.priced = sum(after), sum(before), len(priced)
        mean = paired_bootstrap(before, after, mean_difference)
        if mean is not None:  # the total change: n × the mean paired difference
            n = len(priced)
            row.cost_delta_usd = Interval(mean.estimate * n, mean.low * n, mean.high * n, n)
        row.cost_delta_share = paired_bootstrap(before, after, relative_change)
    row.recall = pooled_recall([r.recall for r in runs])
    row.view_recall = pooled_recall([r.view_recall for r in runs])
    pairs = [
        (base.recall[0] / base.recall[1], r.recall[0] / r.recall[1])
        for r, base in zip(runs, bases, strict=True)
        if base is not None and base.recall is not None and r.recall is not None
    ]
    if pairs:
        row.recall_delta = paired_bootstrap([b for b, _ in pairs], [a for _, a in pairs])
    row.retained = sum(r.retained for r in runs) / len(runs) if runs else 0.0
    row.original_retained = sum(r.original_retained for r in runs) / len(runs) if runs else 0.0
    row.retained_delta_share = paired_bootstrap(
        [_baseline_figures(r, b)[1] for r, b in zip(runs, bases, strict=True)],
        [r.retained for r in runs],
        relative_change,
    )
    row.overflow = sum(r.overflow for r in runs)
    row.invalid = sum(r.invalid for r in runs)
    row.degenerate = sum(r.degenerate for r in runs)
    return row


def cost(row: PolicyRow) -> float:
    """What a row costs, lower is better: its change in dollars against the baseline over
    its own pairs where priced (a row with overflowing runs leaves those conversations out
    of its total, never its change), else its retained tokens."""
    if row.cost_usd is None:
        return row.retained
    return row.cost_usd - (row.baseline_usd or 0.0)


def mark_pareto(rows: list[PolicyRow]) -> None:
    """The front of cost (dollars where priced, else retained tokens: lower is better)
    against recall (higher is better); a row without recall is on no front."""

    scored = [row for row in rows if row.recall is not None]
    for row in scored:
        assert row.recall is not None
        row.pareto = not any(
            other is not row
            and other.recall is not None
            and cost(other) <= cost(row)
            and other.recall.estimate >= row.recall.estimate
            and (cost(other) < cost(row) or other.recall.estimate > row.recall.estimate)
            for other in scored
        )


def window_cell(run: ArmRun) -> str:
    return f"{run.window // 1000}k ({run.window_from or 'given'})"


def one_window(windows: Iterable[int]) -> bool:
    """Every policy runs the conversation at one window (else it is left out)."""
    return len(set(windows)) == 1


def same_window(runs: dict[int, ArmRun]) -> bool:
    return one_window(run.window for run in runs.values())


def compare_runs(
    names: list[str], conversations: list[dict[int, ArmRun]], baseline: str = ORIGINAL
) -> Comparison:
    """Every policy in ``names`` against ``baseline`` (ORIGINAL or one of ``names``) over
    the conversations every policy ran at the same window; the others are counted."""
    same: list[dict[int, ArmRun]] = []
    result = Comparison(baseline, [], 0)
    for runs in conversations:
        if not same_window(runs):
            result.mixed += 1
            result.mixed_windows.update(window_cell(run) for run in runs.values())
            continue
        same.append(runs)
        result.windows[window_cell(runs[0])] += 1
    result.conversations = len(same)
    base_arm = None if baseline == ORIGINAL else names.index(baseline)
    for arm, name in enumerate(names):
        arm_runs = [c[arm] for c in same]
        bases = [None if base_arm is None else c[base_arm] for c in same]
        result.rows.append(policy_row(name, arm_runs, bases))
    mark_pareto(result.rows)
    return result
