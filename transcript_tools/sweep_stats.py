"""The sweep grid, per-configuration aggregates, and their table / CSV / JSON forms.

Aggregates only (counts, sums, maxima, small histograms of integers), so memory
does not grow with the corpus: a histogram of summary calls per conversation or
of first-trigger turns has at most one entry per distinct turn count.
"""

from __future__ import annotations

import csv
import io
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import orjson

from .config import Measure, SlotMode, SummaryConfig
from .session import BELOW_THRESHOLD, FAILED, SUMMARIZED, WOULD_SUMMARIZE

if TYPE_CHECKING:
    from .sweep import Profile, SweepResult


@dataclass(slots=True)
class ConvResult:
    """One configuration on one conversation (transient: folded into ConfigStats)."""

    turns: int
    fires: list[int]  # turns at which a summary call was made
    prompt_chars: int = 0
    prompt_tokens: int = 0
    failed: int = 0
    peak_with: int = 0  # view the model is sent, with this configuration's summaries
    sum_with: int = 0
    overflow: int = 0  # turns whose view (with summaries) exceeds max_context_tokens
    fixed_cadence: bool = False
    curve: list[int] | None = None  # per-turn view with summaries (engine path)
    watermark: list[int] | None = None  # per-turn watermark (engine path, current measure)
    recall: tuple[int, int] | None = None  # artifact probes (recalled, total): tsum eval, engine path


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


@dataclass(frozen=True, slots=True)
class SweepConfig:
    """One point of the grid: the trigger settings a sweep varies."""

    trigger_token_ratio: float
    max_context_tokens: int
    debounce_turns: int
    mode: SlotMode = SlotMode.FOCUSED
    measure: Measure = Measure.CUMULATIVE

    @property
    def threshold(self) -> float:
        return self.max_context_tokens * self.trigger_token_ratio  # exactly SummaryConfig.threshold

    @property
    def label(self) -> str:
        return (
            f"ratio={self.trigger_token_ratio:g} max={self.max_context_tokens} "
            f"debounce={self.debounce_turns} {self.mode.value} {self.measure.value}"
        )

    def summary_config(self, base: SummaryConfig) -> SummaryConfig:
        return replace(
            base,
            trigger_token_ratio=self.trigger_token_ratio,
            max_context_tokens=self.max_context_tokens,
            debounce_turns=self.debounce_turns,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "trigger_token_ratio": self.trigger_token_ratio,
            "max_context_tokens": self.max_context_tokens,
            "debounce_turns": self.debounce_turns,
            "mode": self.mode.value,
            "measure": self.measure.value,
            "threshold": self.threshold,
        }


def config_grid(
    ratios: Sequence[float],
    max_context_tokens: Sequence[int],
    debounces: Sequence[int],
    modes: Sequence[SlotMode] = (SlotMode.FOCUSED,),
    measures: Sequence[Measure] = (Measure.CUMULATIVE,),
    base: SummaryConfig | None = None,
) -> list[SweepConfig]:
    """Every combination, in the order given (duplicates dropped); each is validated."""
    base = base or SummaryConfig()
    out: dict[SweepConfig, None] = {}
    for measure in measures:
        for mode in modes:
            for maximum in max_context_tokens:
                for ratio in ratios:
                    for debounce in debounces:
                        cfg = SweepConfig(
                            ratio, maximum, debounce, SlotMode(mode), Measure(measure)
                        )
                        cfg.summary_config(base)  # raises ConfigError for a bad value
                        out[cfg] = None
    return list(out)


FIRED = (SUMMARIZED, WOULD_SUMMARIZE)


def fixed_cadence(decisions: Sequence[dict[str, Any]], debounce: int) -> bool:
    """Did the run degenerate into a fixed cadence: one summary every ``debounce`` turns?

    True when the checkpoint fired at least twice and the watermark never fell back
    below the threshold after the first fire -- from then on only the debounce
    decides, which is what the cumulative ``cost_so_far`` (it never goes down) does
    once crossed. Failed calls (N3: retried at the next eligible turn) may shift
    the cadence; any other gap than ``max(debounce, 1)`` without a failure means the
    schedule still depends on the conversation.
    """
    fires: list[int] = []
    failed = False
    for index, record in enumerate(decisions):
        decision = record.get("decision")
        if decision in FIRED:
            fires.append(index)
        elif decision == FAILED:
            failed = True
        elif decision == BELOW_THRESHOLD and fires:
            return False
    if len(fires) < 2:
        return False
    step = max(debounce, 1)
    return failed or all(b - a == step for a, b in zip(fires, fires[1:], strict=False))


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
    compaction_delta: Counter[int] = field(
        default_factory=Counter
    )  # first trigger - compaction turn
    recall_hits: int = 0  # tsum eval's artifact probes carried by the summaries (engine path)
    recall_total: int = 0

    def add(self, result: ConvResult, profile: Profile) -> None:
        self.conversations += 1
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
        peak_without = profile._view_max[-1]
        self.peak_without = max(self.peak_without, peak_without)
        self.peaks_without_sum += peak_without
        self.view_without_sum += profile._view_prefix[-1]
        self.peak_with = max(self.peak_with, result.peak_with)
        self.peaks_with_sum += result.peak_with
        self.view_with_sum += result.sum_with
        self.overflow_turns += result.overflow
        self.overflow_convs += result.overflow > 0
        limit = self.config.max_context_tokens
        self.overflow_without += sum(1 for v in profile.view if v > limit)
        self.fixed_cadence += result.fixed_cadence
        if result.recall is not None:
            self.recall_hits += result.recall[0]
            self.recall_total += result.recall[1]
        if profile.compaction_turns:
            self.compaction_convs += 1
            if result.fires:
                self.compaction_delta[result.fires[0] - profile.compaction_turns[0]] += 1
            else:
                self.compaction_missed += 1

    def to_json(self) -> dict[str, Any]:
        n = self.conversations or 1
        turns = self.turns or 1
        out: dict[str, Any] = self.config.to_json()
        out.update(
            conversations=self.conversations,
            turns=self.turns,
            summarizing_conversations=self.summarizing,
            summarizing_share=round(self.summarizing / n, 4),
            summary_calls=self.calls,
            artifact_recall=round(self.recall_hits / self.recall_total, 4) if self.recall_total else None,
            artifact_probes=self.recall_total,
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
        return out


# ---- sorting and output ----------------------------------------------------------------

SORT_KEYS: dict[str, tuple[str, str]] = {
    "config": ("", "the order of the grid"),
    "calls": ("summary_calls", "total summary calls"),
    "cost": ("summarizer_input_tokens_estimated", "tokens sent to the summarizer"),
    "summarizing": ("summarizing_conversations", "conversations that ever summarize"),
    "first": ("first_trigger_turn_p50", "median first-trigger turn"),
    "peak": ("view_peak_with_summaries", "peak view with summaries"),
    "mean-view": ("view_mean_with_summaries", "mean view with summaries"),
    "overflow": ("overflow_turns", "turns above max_context_tokens"),
    "cadence": ("fixed_cadence_conversations", "conversations in a fixed cadence"),
}


def sorted_rows(result: SweepResult, sort: str = "calls") -> tuple[list[dict[str, Any]], str]:
    """Rows (JSON dicts, with their grid index as ``config``), and how they are sorted."""
    descending = sort.startswith("-")
    key_name = sort.lstrip("-")
    if key_name not in SORT_KEYS:
        raise ValueError(f"unknown sort key {key_name!r} (known: {', '.join(SORT_KEYS)})")
    rows = []
    for index, stats in enumerate(result.stats):
        row = {"config": index + 1}
        row.update(stats.to_json())
        rows.append(row)
    field_name, text = SORT_KEYS[key_name]
    if field_name:

        def key(row: dict[str, Any]) -> tuple[int, float, int]:
            value = row[field_name]
            if value is None:  # nothing to compare: last
                return (1, 0.0, row["config"])
            return (0, -value if descending else value, row["config"])

        rows.sort(key=key)
    order = "descending" if descending else "ascending"
    return rows, f"sorted by {text}" + (f" ({order}, ties in grid order)" if field_name else "")


def _k(value: float | int | None) -> str:
    if value is None:
        return "-"
    value = float(value)
    if abs(value) >= 10_000_000:
        return f"{value / 1e6:.0f}M"
    if abs(value) >= 1_000_000:
        return f"{value / 1e6:.1f}M"
    if abs(value) >= 10_000:
        return f"{value / 1e3:.0f}k"
    if abs(value) >= 1000:
        return f"{value / 1e3:.1f}k"
    return f"{value:.0f}"


COLUMNS: list[tuple[str, str]] = [
    ("#", "config"),
    ("ratio", "trigger_token_ratio"),
    ("max_ctx", "max_context_tokens"),
    ("deb", "debounce_turns"),
    ("mode", "mode"),
    ("measure", "measure"),
    ("summarize", "summarizing"),
    ("calls", "summary_calls"),
    ("mean", "calls_per_conversation_mean"),
    ("p50", "calls_per_conversation_p50"),
    ("p95", "calls_per_conversation_p95"),
    ("max", "calls_per_conversation_max"),
    ("1st p50", "first_trigger_turn_p50"),
    ("1st range", "first_range"),
    ("sum.tok", "summarizer_input_tokens_estimated"),
    ("recall", "artifact_recall"),
    ("peak w/o", "view_peak_without_summaries"),
    ("peak with", "view_peak_with_summaries"),
    ("mean w/o", "view_mean_without_summaries"),
    ("mean with", "view_mean_with_summaries"),
    ("over", "overflow_turns"),
    ("cadence", "fixed_cadence_conversations"),
    ("Δcompact", "compaction_delta_median"),
]


def _cell(row: dict[str, Any], key: str) -> str:
    if key == "artifact_recall":
        return "-" if row.get(key) is None else f"{row[key]:.0%}"
    if key == "summarizing":
        return f"{row['summarizing_conversations']}/{row['conversations']}"
    if key == "first_range":
        lo, hi = row["first_trigger_turn_min"], row["first_trigger_turn_max"]
        return "-" if lo is None else f"{lo}-{hi}"
    if key == "compaction_delta_median":
        if not row["compaction_conversations"]:
            return "-"
        value = row[key]
        missed = row["compaction_never_triggered"]
        text = "-" if value is None else f"{value:+d}"
        return text + (f" ({missed} never)" if missed else "")
    if key == "trigger_token_ratio":
        return f"{row[key]:g}"
    if key == "calls_per_conversation_mean":
        return f"{row[key]:.1f}"
    if key == "summarizer_input_tokens_estimated" and row.get("summarizer_cost") is not None:
        return f"{_k(row[key])} ${row['summarizer_cost']:.2f}"
    if key in (
        "mode",
        "measure",
        "config",
        "debounce_turns",
        "summary_calls",
        "overflow_turns",
        "fixed_cadence_conversations",
    ):
        value = row[key]
        return str(value) if value is not None else "-"
    return _k(row[key])


def render_table(result: SweepResult, sort: str = "calls") -> str:
    rows, how = sorted_rows(result, sort)
    cells = [[h for h, _ in COLUMNS]] + [[_cell(r, k) for _, k in COLUMNS] for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(COLUMNS))]
    left = {1, 4, 5}  # text columns
    lines = []
    for n, line in enumerate(cells):
        parts = [
            c.ljust(w) if i in left else c.rjust(w)
            for i, (c, w) in enumerate(zip(line, widths, strict=True))
        ]
        lines.append("  ".join(parts).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    legend = (
        f"{result.conversations} conversation(s), {result.turns} turn(s), {len(result.configs)} configuration(s); "
        f"{how}.\n"
        "summarize: conversations that ever summarize; calls: summary calls (total, then per conversation); "
        "1st: first-trigger turn; sum.tok: estimated tokens sent to the summarizer; "
        "peak/mean: tokens of the view the model is sent, without / with summaries; "
        "over: turns above max_context_tokens with summaries; cadence: conversations that fell into a fixed "
        "cadence (one summary every debounce turns to the end); Δcompact: median turns from the recorded "
        "Claude Code / Codex compaction to the first trigger (negative: earlier); "
        "recall: artifact probes the summaries carry (tsum eval), where summary text exists (engine path).\n"
        f"summaries: {result.summary_source}."
    )
    return "\n".join(lines) + "\n\n" + legend + "\n"


def render_json(result: SweepResult, sort: str = "calls") -> str:
    rows, how = sorted_rows(result, sort)
    doc = {
        "conversations": result.conversations,
        "turns": result.turns,
        "files": result.files,
        "errors": result.errors,
        "summary_source": result.summary_source,
        "fast_runs": result.fast_runs,
        "engine_runs": result.engine_runs,
        "sort": how,
        "configs": rows,
    }
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode() + "\n"


def render_csv(result: SweepResult, sort: str = "calls") -> str:
    rows, _ = sorted_rows(result, sort)
    buffer = io.StringIO()
    if not rows:
        return ""
    names = [k for k, v in rows[0].items() if not isinstance(v, dict)]
    writer = csv.DictWriter(buffer, fieldnames=names, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if row[k] is None else row[k]) for k in names})
    return buffer.getvalue()
