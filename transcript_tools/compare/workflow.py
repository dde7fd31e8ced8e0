"""``tsum compare`` as a library call: every policy over the corpus at the same window,
each conversation's runs collected, then each policy against the baseline."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..engine.config import AUTO, RunSettings
from ..engine.policy import Policy
from ..errors import ConfigError
from ..reporter import QUIET, Reporter, notes_only
from ..sweep.config import SweepConfig
from ..sweep.driver import Sweep, SweepResult, sweep_grid
from ..sweep.workflow import summary_source
from .bootstrap import LEVEL, RESAMPLES, SEED
from .budget import BudgetCurve, matched_budget, render_curves
from .collect import DEGENERATE_MIN_FIRES, DEGENERATE_SHARE, ArmRun, Collected
from .drift import Round, drift_table, render_drift
from .figures import ORIGINAL, Comparison, compare_runs
from .replicates import ReplicateRow, Replicates, render_replicates, replicate_rows

if TYPE_CHECKING:
    from ..cost.prices import Pricer

OFFLINE_RECALL = (
    "the offline provider, an extractive baseline that copies sentences of the "
    "conversation, not a model: its recall is no model's"
)


@dataclass(slots=True)
class CompareRun:
    comparison: Comparison
    result: SweepResult
    summarizer: str  # who wrote the summaries the recall figures score
    window: int | str
    budget_windows: list[int] = field(default_factory=list)
    curves: list[BudgetCurve] = field(default_factory=list)
    budget_conversations: int = 0  # those every policy summarized at every window
    drift: list[Round] | None = None  # --drift: recall by the k-th compaction
    replicates: list[ReplicateRow] | None = None  # --replicates: recall per live replicate
    replicate_spec: Replicates | None = None
    fallback_window: int = 0  # auto: the one window of the logs naming none (0: left out)

    def replicates_table(self) -> str | None:
        """The spread of recall over --replicates' live runs, or None without it."""
        if self.replicates is None or self.replicate_spec is None:
            return None
        return render_replicates(self.replicates, self.replicate_spec)

    def drift_table(self) -> str | None:
        """Recall and tokens by the k-th compaction (--drift), or None without it."""
        return None if self.drift is None else render_drift(self.drift)

    def budget_table(self) -> str | None:
        """Recall at a matched budget (--budget-windows), or None without it."""
        if not self.budget_windows:
            return None
        tokens = matched_budget([c.points for c in self.curves])
        return render_curves(self.curves, self.budget_windows, tokens, self.budget_conversations)

    @property
    def failed(self) -> bool:
        return bool(self.result.errors) or self.result.conversations == 0

    def left_out(self) -> str:
        """The conversations the policies would run at different windows, and the way in."""
        c = self.comparison
        own = ", ".join(sorted(c.mixed_windows))
        return (
            f"left out: {c.mixed} conversation(s) whose log names no window: each policy "
            f"would run at its own ({own}); --fallback-window N runs them at one (every "
            "other log at its own), --max-context-tokens N every log"
        )

    def header(self) -> list[str]:
        c = self.comparison
        priced = [r for r in c.rows if r.baseline_usd is not None]
        base = (
            "the original run (as recorded"
            + (", priced by the cost model: docs/cost.md)" if priced else ", unpriced)")
            if c.baseline == ORIGINAL
            else f"policy {c.baseline}"
        )
        found = ", ".join(f"{w} x{n}" for w, n in sorted(c.windows.items()))
        how = (
            "each log's own window (--max-context-tokens auto)"
            if self.window == AUTO
            else (f"--max-context-tokens {self.window}")
        )
        if self.window == AUTO and self.fallback_window:
            how += f", a log naming none at --fallback-window {self.fallback_window}"
        lines = [
            f"baseline: {base}; {c.conversations} conversation(s), each paired across policies",
            f"window: every policy at {how}: {found or 'none'}",
        ]
        if priced:
            first = max(priced, key=lambda r: r.priced)
            same = all(r.priced == first.priced for r in priced)
            lines.append(
                f"baseline bill: ${first.baseline_usd:.2f} over the {first.priced} priced "
                + (
                    "conversation(s) (each row's $ over the same)"
                    if same
                    else "conversation(s); a row with overflowing runs [O] leaves those out"
                    " of its $ total and of its pairs (never priced as if they ran): rows sort"
                    " by their change, Δ $"
                )
            )
        if c.mixed:
            lines.append(self.left_out())
        lines.append(
            f"recall: artifact probes (tsum eval) carried by summaries of {self.summarizer}"
        )
        if any(r.view_recall is not None for r in c.rows):
            lines.append(
                "view recall: every artifact probe of the history up to each action, looked"
                " for in the whole next view (summary and messages kept verbatim), same summaries"
            )
        lines += [
            f"intervals: {LEVEL:.0%} percentile, paired bootstrap over conversations "
            f"({RESAMPLES} resamples, seed {SEED})",
            f"degenerate: a policy firing at >= {DEGENERATE_SHARE:.0%} of a conversation's "
            f"units, at least {DEGENERATE_MIN_FIRES} times",
        ]
        return lines

    def warnings(self) -> list[str]:
        """One line per kind of flagged run, with the counts per policy."""
        out = []
        kinds = (
            ("degenerate", "fire at >= half their units", "degenerate"),
            ("overflow", "send a view over the window", "overflow"),
            ("invalid", "send a view breaking a target API's rules", "invalid"),
        )
        for attr, what, word in kinds:
            counts = [(r.name, getattr(r, attr)) for r in self.comparison.rows]
            flagged = [f"{name} {n}" for name, n in counts if n]
            if flagged:
                total = self.comparison.conversations
                out.append(
                    f"{word} runs: conversations (of {total}) where policies {what}: "
                    + ", ".join(flagged)
                )
        return out


def compare_paths(
    paths: list[str],
    run: RunSettings,
    policies: Sequence[Policy],
    *,
    baseline: str = ORIGINAL,
    window: int | str = AUTO,
    pricer: Pricer | None = None,
    cache: str | Path | None = None,
    reporter: Reporter = QUIET,
    budget_windows: Sequence[int] = (),
    drift: bool = False,
    replicates: Replicates | None = None,
    view_recall: bool = False,
    fallback_window: int = 0,
) -> CompareRun:
    """Each of ``policies`` over ``paths`` at ``window`` (AUTO: each log's own), against
    ``baseline`` (ORIGINAL, or one of the policies' names). In one process: the pairing
    needs every conversation's outcome, which a parallel part keeps to itself.
    ``view_recall``: score recall over the whole view too (eval/view_recall.py; the
    ``vrecall`` column), which the --budget-windows runs always do. ``fallback_window``
    (with AUTO): every policy's window on a log naming none (else such a log is left out,
    each policy falling back to its own)."""
    names = _checked_names(policies, baseline)
    base = run.settings.summary
    assert base is not None
    configs = sweep_grid(policies, [window], base=base, fallback_window=fallback_window)
    executor = summary_source(run, cache)
    collected = Collected(len(configs))
    sweep = Sweep.for_run(
        configs,
        run,
        executor,
        pricer=pricer,
        reporter=reporter,
        on_outcome=collected.add,
        whole_view=view_recall,
    )
    try:
        result = sweep.run(list(paths))
        summarizer = OFFLINE_RECALL if executor is None else executor.describe()
        comparison = compare_runs(names, collected.complete(), baseline)
        done = CompareRun(
            comparison,
            result,
            summarizer,
            window,
            list(budget_windows),
            fallback_window=fallback_window,
        )
        if drift:
            done.drift = drift_table(names, collected.complete())
        if replicates is not None:  # the same sweep, with live executors of their own
            done.replicates = replicate_rows(sweep, names, run, replicates, list(paths))
            done.replicate_spec = replicates
        if budget_windows:  # the same summary source, before it is closed
            grid = sweep_grid(policies, list(budget_windows), base=base)
            done.curves, done.budget_conversations = _budget_run(sweep, grid, names, list(paths))
    finally:
        if executor is not None:
            executor.primary.close()
    return done


def _checked_names(policies: Sequence[Policy], baseline: str) -> list[str]:
    names = [p.name for p in policies]
    if len(set(names)) != len(names):
        raise ConfigError(f"--policy names a policy twice: {', '.join(names)}")
    if baseline != ORIGINAL and baseline not in names:
        raise ConfigError(f"--baseline {baseline}: not one of --policy ({', '.join(names)})")
    return names


def _budget_run(
    sweep: Sweep, grid: list[SweepConfig], names: list[str], paths: list[str]
) -> tuple[list[BudgetCurve], int]:
    """Every policy at every window of ``grid`` (unpriced, view recall; no progress,
    warning or error: the comparison's sweep said them), collected per conversation."""
    runs = Collected(len(grid))
    quiet = notes_only(sweep.reporter)
    curves = replace(sweep, configs=grid, pricer=None, reporter=quiet, whole_view=True)
    replace(curves, on_outcome=runs.add).run(paths)
    owners = [cfg.policy.name if cfg.policy is not None else "" for cfg in grid]
    return budget_curves(names, owners, runs.complete())


def budget_curves(
    names: list[str], owners: list[str], conversations: list[dict[int, ArmRun]]
) -> tuple[list[BudgetCurve], int]:
    """Per policy, (mean retained tokens, pooled view recall) at each window, over the
    conversations where every policy acted at every window: the same conversations under
    every point (pooling each point's own acting conversations would mix a small
    window's easy logs with a large window's long ones), and how many they are.

    View recall (eval/view_recall.py) counts the probes the whole view carries, those of
    messages kept verbatim too: keeping more can raise it, as a budget should."""
    common = [c for c in conversations if all(run.view_recall is not None for run in c.values())]
    curves = {name: BudgetCurve(name, []) for name in names}
    for arm, name in enumerate(owners):
        if not common:
            break
        runs = [c[arm] for c in common]
        hits = sum(run.view_recall[0] for run in runs if run.view_recall is not None)
        total = sum(run.view_recall[1] for run in runs if run.view_recall is not None)
        retained = sum(run.retained for run in runs) / len(runs)
        curves[name].points.append((retained, hits / total))
    return list(curves.values()), len(common)
