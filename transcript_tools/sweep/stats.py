"""The sweep grid, per-configuration aggregates, and their table / CSV / JSON forms.

Aggregates only (counts, sums, maxima, small histograms of integers), so memory
does not grow with the corpus: a histogram of summary calls per conversation or
of first-trigger turns has at most one entry per distinct turn count.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..cost.overflow import run_price
from .config import ConfigOutcome, SweepConfig
from .simulate import ConversationSeries
from .tables import RECALL_NOT_MEASURED, recall_not_measured


def quantile(hist: Counter[int], q: float) -> int | None:
    """Nearest-rank quantile of a histogram of integers."""
    n = sum(hist.values())
    if n == 0:
        return None
    rank = max(math.ceil(q * n), 1)
    seen = 0
    for value in sorted(hist):
        seen += hist[value]
        if seen >= rank:
            return value
    return max(hist)  # pragma: no cover


def _over(part: float, whole: float) -> float | None:
    return round(part / whole, 4) if whole else None


@dataclass(slots=True)
class ConfigStats:
    config: SweepConfig
    price_per_mtok: float | None = None
    conversations: int = 0
    turns: int = 0
    summarizing: int = 0
    calls: int = 0
    failed: int = 0
    calls_hist: Counter[int] = field(default_factory=Counter)
    first_hist: Counter[int] = field(default_factory=Counter)
    prompt_chars: int = 0
    prompt_tokens: int = 0
    peak_without: int = 0
    peak_with: int = 0
    peaks_without_sum: int = 0
    peaks_with_sum: int = 0
    view_without_sum: int = 0
    view_with_sum: int = 0
    overflow_turns: int = 0
    overflow_convs: int = 0
    overflow_without: int = 0
    fixed_cadence: int = 0
    compaction_convs: int = 0
    compaction_missed: int = 0  # a recorded compaction, and this configuration never fired
    # first trigger - compaction turn
    compaction_delta: Counter[int] = field(default_factory=Counter)
    # --max-context-tokens auto: conversations by the window they ran with and its source
    windows: Counter[str] = field(default_factory=Counter)

    recall_hits: int = 0  # tsum eval's artifact probes carried by the summaries (engine path)
    recall_total: int = 0
    recall_conversations: int = 0  # summarizing conversations whose summary text was scored
    # --policy: the views its actions produced, by the target API they break (validity.py)
    views_checked: int = 0
    violations: Counter[str] = field(default_factory=Counter)
    cleared: int = 0
    # --cost (cost/): money in micro-dollars, so that parts of a parallel sweep add up
    cost_on: bool = False
    cost_conversations: int = 0  # conversations every call of which has a price
    cost_unpriced: int = 0
    cost_micro_usd: int = 0
    cost_summarizer_micro_usd: int = 0
    cost_break_micro_usd: int = 0
    cost_overflow_conversations: int = 0  # runs that overflowed: not priced (cost/overflow.py)
    cost_overflow_calls: int = 0  # their modeled calls over the model's window
    cost_original_micro_usd: int = 0
    # beside those conversations' replayed calls, the billed calls the replay does not
    # read (inline subagents, rewound branches): the same in every configuration's bill
    cost_off_chain_micro_usd: int = 0
    cost_policy_on_original_micro_usd: int = 0  # the same conversations' policy cost
    cost_same_model_delta_micro_usd: int = 0  # RunCost.same_model_delta, summed
    # of those, the conversations the agent compacted and this configuration never does:
    # their original prompts shrank at the compaction, this configuration's do not
    cost_missed_conversations: int = 0
    cost_missed_delta_micro_usd: int = 0
    cost_sources: Counter[str] = field(default_factory=Counter)
    cost_outcome_conversations: int = 0  # priced conversations whose log scores the task
    cost_outcome_micro_usd: int = 0
    cost_solved: int = 0  # of those, reward 1 (the original run's outcome)
    cost_solved_micro_usd: int = 0

    def add(
        self,
        result: ConfigOutcome,
        profile: ConversationSeries,
        *,
        limit: int | None = None,
        window_from: str | None = None,
    ) -> None:
        """Fold in one conversation; ``limit``: its window (``--max-context-tokens auto``),
        else the configuration's; ``window_from``: where auto found it."""
        self.conversations += 1
        if window_from is not None and limit is not None:
            self.windows[f"{limit} ({window_from})"] += 1
        self.turns += profile.turns
        calls = len(result.fires)
        self.calls += calls
        self.failed += result.failed
        self.calls_hist[calls] += 1
        if calls:
            self.summarizing += 1
            self.first_hist[result.fires[0]] += 1
        self.prompt_chars += result.prompt_chars
        self.prompt_tokens += result.prompt_tokens
        # the original as the run measures its own view (engine_path._original_figures)
        view, peak_without = result.original or (profile.view, profile.view_peak)
        self.peak_without = max(self.peak_without, peak_without)
        self.peaks_without_sum += peak_without
        self.view_without_sum += profile.view_sum if result.original is None else sum(view)
        self.peak_with = max(self.peak_with, result.peak_with)
        self.peaks_with_sum += result.peak_with
        self.view_with_sum += result.sum_with
        self.overflow_turns += result.overflow
        self.overflow_convs += result.overflow > 0
        if limit is None:
            limit = self.config.max_context_tokens
        self.overflow_without += sum(1 for v in view if v > limit)
        self.fixed_cadence += result.fixed_cadence
        if result.recall is not None:
            self.recall_hits += result.recall[0]
            self.recall_total += result.recall[1]
            self.recall_conversations += calls > 0
        self.views_checked += result.views_checked
        self.violations.update(result.violations)
        self.cleared += result.cleared
        if self.cost_on:
            self._add_cost(result, missed=bool(profile.compaction_turns) and not result.fires)
        if profile.compaction_turns:
            self.compaction_convs += 1
            if result.fires:
                self.compaction_delta[result.fires[0] - profile.compaction_turns[0]] += 1
            else:
                self.compaction_missed += 1

    def _policy_json(self) -> dict[str, Any]:
        """The policy columns: views breaking each API, tool results cleared, and how the
        first trigger lands on the compaction the log recorded (same unit, within one)."""
        delta = self.compaction_delta
        return {
            "views_checked": self.views_checked,
            "violations": {api: self.violations[api] for api in sorted(self.violations)},
            "tool_results_cleared": self.cleared,
            "compaction_agreement": {
                "same": delta[0],
                "within_one": delta[0] + delta[-1] + delta[1],
                "never": self.compaction_missed,
                "of": self.compaction_convs,
            },
        }

    def _add_cost(self, result: ConfigOutcome, *, missed: bool) -> None:
        run, original = result.cost, result.original_cost
        price = run_price(run, result.views_over)
        if price.overflow:
            self.cost_overflow_conversations += 1
            self.cost_overflow_calls += 0 if run is None else len(run.overflow)
            return
        usd = price.usd
        if run is None or usd is None:
            self.cost_unpriced += 1
            return
        micro = round(usd * 1e6)
        self.cost_conversations += 1
        self.cost_micro_usd += micro
        self.cost_summarizer_micro_usd += round(run.summarizer_usd * 1e6)
        self.cost_break_micro_usd += round(run.break_usd * 1e6)
        self.cost_sources.update(run.sources())
        reward = (result.task_outcome or {}).get("reward")
        if reward is not None:
            self.cost_outcome_conversations += 1
            self.cost_outcome_micro_usd += micro
            if reward >= 1:
                self.cost_solved += 1
                self.cost_solved_micro_usd += micro
        if original is not None and original.calls and original.usd is not None:
            self.cost_original_micro_usd += round(original.usd * 1e6)
            off_chain = None if result.off_chain_cost is None else result.off_chain_cost.usd
            self.cost_off_chain_micro_usd += round((off_chain or 0.0) * 1e6)
            self.cost_policy_on_original_micro_usd += micro
            same = (
                None if result.rebuilt_cost is None else run.same_model_delta(result.rebuilt_cost)
            )
            self.cost_same_model_delta_micro_usd += round((same or 0.0) * 1e6)
            if missed:
                self.cost_missed_conversations += 1
                self.cost_missed_delta_micro_usd += micro - round(original.usd * 1e6)

    def cost_json(self) -> dict[str, Any]:
        """The --cost figures (docs/cost.md): totals, per conversation, the summarizer's
        and the cache breaks' shares, and the change against the original runs."""
        total = self.cost_micro_usd / 1e6
        n = self.cost_conversations
        original = self.cost_original_micro_usd / 1e6
        policy_on_original = self.cost_policy_on_original_micro_usd / 1e6
        # the whole bill of those runs: Δ is a share of what was billed (docs/cost.md)
        billed = original + self.cost_off_chain_micro_usd / 1e6
        return {
            "cost_usd": round(total, 4),
            "cost_per_conversation_usd": round(total / n, 4) if n else None,
            "cost_priced_conversations": n,
            "cost_unpriced_conversations": self.cost_unpriced,
            "cost_summarizer_share": _over(self.cost_summarizer_micro_usd, self.cost_micro_usd),
            "cost_cache_break_share": _over(self.cost_break_micro_usd, self.cost_micro_usd),
            "cost_overflow_conversations": self.cost_overflow_conversations,
            "cost_overflow_calls": self.cost_overflow_calls,
            "cost_original_usd": round(original, 4),
            "cost_billed_usd": round(billed, 4),
            "cost_replayed_share": round(original / billed, 4) if billed else None,
            "cost_change_vs_original": round((policy_on_original - original) / billed, 4)
            if billed
            else None,
            "cost_change_same_model": round(self.cost_same_model_delta_micro_usd / 1e6 / billed, 4)
            if billed
            else None,
            "cost_priced_by": sorted(self.cost_sources),
            "cost_with_outcome": self._outcome_json(),
            "cost_missed_compaction": {
                "conversations": self.cost_missed_conversations,
                "delta_usd": round(self.cost_missed_delta_micro_usd / 1e6, 4),
                "delta_usd_elsewhere": round(
                    (policy_on_original - original) - self.cost_missed_delta_micro_usd / 1e6, 4
                ),
            }
            if self.cost_missed_conversations
            else None,
        }

    def _outcome_json(self) -> dict[str, Any] | None:
        """Cost beside the task's recorded outcome (tau-bench reward): the ORIGINAL run's
        outcome — a replay does not rerun the task, so "cheaper" here never says "and
        still solved it", only what the solved and unsolved conversations cost."""
        n, solved = self.cost_outcome_conversations, self.cost_solved
        if not n:
            return None
        unsolved_usd = (self.cost_outcome_micro_usd - self.cost_solved_micro_usd) / 1e6
        return {
            "conversations": n,
            "solved": solved,
            "usd_per_conversation": round(self.cost_outcome_micro_usd / 1e6 / n, 4),
            "usd_per_solved_conversation": _over(self.cost_solved_micro_usd / 1e6, solved),
            "usd_per_unsolved_conversation": _over(unsolved_usd, n - solved),
            "usd_per_solved_task": _over(self.cost_outcome_micro_usd / 1e6, solved),
        }

    def to_json(self) -> dict[str, Any]:
        n = self.conversations or 1
        turns = self.turns or 1
        out: dict[str, Any] = self.config.to_json()
        if self.config.auto_window:  # which windows auto found (engine/windows.py)
            out["max_context_tokens_used"] = dict(sorted(self.windows.items()))
        out.update(
            conversations=self.conversations,
            turns=self.turns,
            summarizing_conversations=self.summarizing,
            summarizing_share=round(self.summarizing / n, 4),
            summary_calls=self.calls,
            artifact_recall=round(self.recall_hits / self.recall_total, 4)
            if self.recall_total
            else None,
            artifact_probes=self.recall_total,
            artifact_recall_conversations=self.recall_conversations,
            failed_calls=self.failed,
            calls_per_conversation_mean=round(self.calls / n, 3),
            calls_per_conversation_p50=quantile(self.calls_hist, 0.5),
            calls_per_conversation_p95=quantile(self.calls_hist, 0.95),
            calls_per_conversation_max=max(self.calls_hist, default=None),
            first_trigger_turn_min=min(self.first_hist, default=None),
            first_trigger_turn_p50=quantile(self.first_hist, 0.5),
            first_trigger_turn_p95=quantile(self.first_hist, 0.95),
            first_trigger_turn_max=max(self.first_hist, default=None),
            first_trigger_turns={str(k): v for k, v in sorted(self.first_hist.items())},
            summarizer_input_chars=self.prompt_chars,
            summarizer_input_tokens_estimated=self.prompt_tokens,
            summarizer_cost=None
            if self.price_per_mtok is None
            else round(self.prompt_tokens * self.price_per_mtok / 1e6, 4),
            view_peak_without_summaries=self.peak_without,
            view_peak_with_summaries=self.peak_with,
            view_peak_mean_without_summaries=round(self.peaks_without_sum / n),
            view_peak_mean_with_summaries=round(self.peaks_with_sum / n),
            view_mean_without_summaries=round(self.view_without_sum / turns),
            view_mean_with_summaries=round(self.view_with_sum / turns),
            overflow_turns=self.overflow_turns,
            overflow_turns_without_summaries=self.overflow_without,
            overflow_conversations=self.overflow_convs,
            fixed_cadence_conversations=self.fixed_cadence,
            compaction_conversations=self.compaction_convs,
            compaction_never_triggered=self.compaction_missed,
            compaction_delta_median=quantile(self.compaction_delta, 0.5),
            compaction_deltas={str(k): v for k, v in sorted(self.compaction_delta.items())},
        )
        if self.config.policy is not None:  # only then: default outputs unchanged
            out.update(self._policy_json())
        missing = recall_not_measured(out)  # null recall: why (never a 0% that is no finding)
        out["artifact_recall_not_measured"] = (
            None if missing is None else RECALL_NOT_MEASURED[missing]
        )
        if self.cost_on:
            out.update(self.cost_json())
        return out
