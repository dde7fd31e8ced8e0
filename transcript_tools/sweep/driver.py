"""Offline evaluation of trigger thresholds: ``tsum sweep`` -- the driver.

Every configuration (ratio x max_context_tokens x debounce x mode x measure) is
evaluated on every conversation of a corpus, streamed one conversation at a time:
a :class:`~.sweep_sim.ConversationSeries` per conversation, then per configuration the fast path
or the engine path (:mod:`.sweep_sim` says which and computes both).

Memory stays bounded: per configuration only aggregates (:mod:`.sweep_stats`), plus
the per-turn curves of a small deterministic sample of conversations for the report.
"""

from __future__ import annotations

import heapq
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..engine.config import DEFAULT_PROVIDER, Checkpoint, RunSettings, SummaryConfig, TurnPath
from ..engine.messages import Conversation, Message
from ..engine.prompt import PromptTemplate
from ..engine.requests import SummaryOutcome, SummaryRequest
from ..engine.rules import depends_on_summary_text, split_units, unit_turns
from ..engine.seed_defaults import SUMMARY_MAX_TOKENS
from ..engine.tokens import estimates_kept
from ..formats.corpus import CorpusReader
from ..formats.inputs import NameSet
from ..reporter import LOGGED, Reporter
from .config import ConfigOutcome, SweepConfig, sweep_grid
from .engine_path import SharedWork, evaluate_engine
from .idle import unit_profile
from .simulate import (
    ConversationSeries,
    evaluate_fast,
    per_turn,
    profile_conversation,
    simulate,
)
from .stats import ConfigStats

if TYPE_CHECKING:
    from ..cost.model import RunCost
    from ..cost.prices import Pricer

__all__ = [
    "ConversationSeries",
    "Sweep",
    "SweepConfig",
    "SweepResult",
    "profile_conversation",
    "simulate",
    "sweep_grid",
]


# ---- the corpus -----------------------------------------------------------------------


@dataclass(slots=True)
class ChartSample:
    """Per-turn curves of one conversation, for the report's charts."""

    profile: ConversationSeries
    fires: list[list[int]]  # per configuration
    curves: dict[int, list[int]]  # per configuration: its own watermark (engine path, current)


@dataclass(slots=True)
class SweepResult:
    configs: list[SweepConfig]
    stats: list[ConfigStats]
    files: int = 0
    conversations: int = 0
    turns: int = 0
    fast_runs: int = 0
    engine_runs: int = 0
    errors: list[str] = field(default_factory=list)
    warnings: int = 0
    samples: list[ChartSample] = field(default_factory=list)
    summary_source: str = ""
    elapsed: float = 0.0

    def __repr__(self) -> str:  # counts, not every configuration's statistics
        return (
            f"<SweepResult {len(self.configs)} configuration(s) over {self.conversations} "
            f"conversation(s) in {self.files} file(s), {self.turns} turn(s), "
            f"{len(self.errors)} error(s), {self.warnings} warning(s)>"
        )


@dataclass
class Sweep:
    """Streams a corpus through every configuration."""

    configs: list[SweepConfig]
    base: SummaryConfig = field(default_factory=SummaryConfig)
    template: PromptTemplate | None = None
    keep_recent_turns: int = 3
    path: TurnPath = TurnPath.SYNC  # the engine path's turn path (the schedule is the same)
    executor: Any = None  # engine path; None: the offline provider, built on first use
    provider_name: str = DEFAULT_PROVIDER
    summary_tokens: int = SUMMARY_MAX_TOKENS
    price_per_mtok: float | None = None
    pricer: Pricer | None = None  # --cost: price every configuration's run (cost/)
    sample_size: int = 0
    fmt: str | None = None
    skip_bad_lines: bool = False
    # warnings, errors and progress (each conversation done, with its file's path);
    # never stdout: a library's caller owns it
    reporter: Reporter = LOGGED
    # after each (conversation, configuration): its index in the grid, the configuration
    # as resolved for it (its window), its outcome and the unit profile (tsum compare
    # pairs conversations); in-process runs only: a parallel part's outcomes stay there
    on_outcome: Callable[[int, SweepConfig, ConfigOutcome, ConversationSeries], None] | None = None
    whole_view: bool = False  # --policy rows: recall over the whole view too (compare)
    # Session ids taken before these paths (one file of a parallel run: sweep/parallel.py)
    taken_ids: set[str] = field(default_factory=NameSet)

    @classmethod
    def for_run(
        cls, configs: list[SweepConfig], run: RunSettings, executor: Any, **more: Any
    ) -> Sweep:
        """A sweep of ``configs`` with ``run``'s settings (``settings.load_settings``);
        ``executor``: cached responses (``workflow.summary_source``) or None (offline)."""
        settings = run.settings
        assert settings.summary is not None
        return cls(
            configs,
            base=settings.summary,
            template=run.template,
            keep_recent_turns=settings.keep_recent_turns,
            path=settings.path,
            executor=executor,
            provider_name=run.provider["provider"],
            fmt=run.fmt,
            skip_bad_lines=run.skip_bad_lines,
            **more,
        )

    def new_stats(self) -> list[ConfigStats]:
        cost_on = self.pricer is not None
        return [ConfigStats(c, self.price_per_mtok, cost_on=cost_on) for c in self.configs]

    def run(self, paths: Iterable[str]) -> SweepResult:
        from .._sync import run_sync  # also inside a running event loop (Jupyter)

        listed = list(paths)
        return run_sync(lambda: self.run_async(listed))

    async def run_async(self, paths: list[str]) -> SweepResult:
        started = time.perf_counter()
        if self.template is None:
            from ..engine.prompt import template_from_config

            self.template = template_from_config(self.base.summary_prompt)
        result = SweepResult(self.configs, self.new_stats())
        reader = CorpusReader(
            self.fmt, self.skip_bad_lines, self.reporter, self.taken_ids, own_warnings=True
        )
        heap: list[tuple[tuple[int, int, int], int, ChartSample]] = []
        for index, conv in enumerate(reader.conversations(paths)):
            with estimates_kept():  # sized once for the profile and every configuration
                await self._one(index, conv, result, heap)
            self.reporter.session(conv.path)
        stats = reader.stats
        result.files, result.errors, result.warnings = stats.files, stats.errors, stats.warnings
        result.samples = [s for _, _, s in sorted(heap, key=lambda item: item[2].profile.index)]
        result.summary_source = self._source(result)
        result.elapsed = time.perf_counter() - started
        return result

    async def _one(
        self, index: int, conv: Conversation, result: SweepResult, heap: list[Any]
    ) -> None:
        assert self.template is not None
        # one profile per checkpoint unit in the grid (turns; calls with --checkpoint call)
        units: dict[Checkpoint, tuple[list[tuple[int, list[Message]]], ConversationSeries]] = {}

        def profiled(
            checkpoint: Checkpoint,
        ) -> tuple[list[tuple[int, list[Message]]], ConversationSeries]:
            if checkpoint not in units:
                units[checkpoint] = self._profile(conv, index, checkpoint, units)
            return units[checkpoint]

        turns, profile = profiled(Checkpoint.TURN)
        result.conversations += 1
        result.turns += profile.turns
        keep = self.sample_size > 0
        fires: list[list[int]] = []
        curves: dict[int, list[int]] = {}
        uncompacted, original, rebuilt, off_chain = self._recorded_costs(conv)
        # for every engine run
        shared = SharedWork(conv, self.base.max_tool_result_chars, self.whole_view)
        for i, grid_cfg in enumerate(self.configs):
            turns, profile = profiled(grid_cfg.checkpoint)
            cfg = grid_cfg.for_conversation(conv)  # --max-context-tokens auto: its window
            outcome, engine_ran = await self._outcome(conv, turns, profile, cfg, shared)
            if engine_ran:
                result.engine_runs += 1
                if keep and outcome.watermark is not None:
                    curves[i] = per_turn(conv, turns, outcome.watermark, cfg.checkpoint)
            else:
                outcome.cost = uncompacted  # never fires: nothing is compacted
                result.fast_runs += 1
            outcome.original_cost, outcome.rebuilt_cost = original, rebuilt
            outcome.off_chain_cost = off_chain
            outcome.task_outcome = conv.outcome
            result.stats[i].add(
                outcome, profile, limit=cfg.max_context_tokens, window_from=cfg.window_from
            )
            if self.on_outcome is not None:
                self.on_outcome(i, cfg, outcome, profile)
            if keep:
                if cfg.checkpoint is Checkpoint.CALL:  # the report charts turns
                    of_turn = unit_turns(conv.messages, [start for start, _ in turns])
                    fires.append(sorted({of_turn[f] for f in outcome.fires}))
                else:
                    fires.append(outcome.fires)
        if keep:
            sample = ChartSample(profiled(Checkpoint.TURN)[1], fires, curves)  # charts turns
            keep_sample(heap, self.sample_size, sample)

    def _profile(
        self,
        conv: Conversation,
        index: int,
        checkpoint: Checkpoint,
        made: dict[Checkpoint, tuple[list[tuple[int, list[Message]]], ConversationSeries]],
    ) -> tuple[list[tuple[int, list[Message]]], ConversationSeries]:
        """``conv``'s units in ``checkpoint``'s unit and its profile over them; ``made``:
        its profiles in other units so far (the formatted history is per message: the
        turns' profile's, in any unit)."""
        split = split_units(conv.messages, checkpoint)
        if self.sample_size == 0 and all(cfg.policy is not None for cfg in self.configs):
            # every row measures its own original run; no chart reads the seed's series
            keep = self.keep_recent_turns
            return split, unit_profile(conv, split, index=index, keep_recent_turns=keep)
        turn = made.get(Checkpoint.TURN)
        return split, profile_conversation(
            conv,
            index=index,
            base=self.base,
            template=self.template,
            keep_recent_turns=self.keep_recent_turns,
            summary_tokens=self.summary_tokens,
            turns=split,
            checkpoint=checkpoint,
            formatted=None if turn is None else turn[1].formatted,
        )

    def _recorded_costs(self, conv: Conversation) -> tuple[RunCost | None, ...]:
        """--cost: the conversation's uncompacted, recorded, rebuilt and off-chain runs
        (cost/meter.py, cost/original.py), the same for every configuration; else Nones."""
        if self.pricer is None:
            return None, None, None, None
        from ..cost.meter import uncompacted_run
        from ..cost.original import off_chain_run, reconstructed_run, recorded_run
        from ..cost.sizes import calibrate

        return (
            uncompacted_run(conv, self.pricer),
            recorded_run(conv, self.pricer),
            reconstructed_run(conv, calibrate(conv), self.pricer, carry_breaks=True),
            off_chain_run(conv, self.pricer),
        )

    async def _outcome(
        self,
        conv: Conversation,
        turns: list[tuple[int, list[Message]]],
        profile: ConversationSeries,
        cfg: SweepConfig,
        shared: SharedWork,
    ) -> tuple[ConfigOutcome, bool]:
        """One configuration on one conversation, and whether the engine ran it (else the
        fast path did).
        Until the first summary the engine's state is the profile's: a configuration that
        never fires on the profile never fires in the engine either. A policy runs the
        engine: its trigger and pre-pass are not the profile's series, and its views are
        checked against the APIs (the seed's row too). --cost needs the views of every
        configuration that fires: the engine's."""
        assert self.template is not None
        needs_text = self.pricer is not None or depends_on_summary_text(
            cfg.mode, cfg.measure, self.template
        )
        if cfg.policy is None and not (needs_text and simulate(profile, cfg)):
            return evaluate_fast(profile, cfg), False
        if self.executor is None:
            self.executor = _offline_executor()
        outcome = await evaluate_engine(
            conv,
            turns,
            profile,
            cfg,
            base=self.base,
            template=self.template,
            keep_recent_turns=self.keep_recent_turns,
            executor=self.executor,
            provider_name=self.provider_name,
            path=self.path,
            pricer=self.pricer,
            shared=shared,
        )
        return outcome, True

    def _source(self, result: SweepResult) -> str:
        if result.engine_runs == 0:
            return (
                "no summary calls needed: every schedule was computed from the token series "
                "(the cumulative measure, Full mode, or no trigger at all); "
                "no provider was called"
            )
        why = "the current measure in Focused mode, and a trigger"
        if self.template is not None and "previous_summary" in self.template.variables:
            why += "; or a prompt that shows the previous summary"
        describe = getattr(self.executor, "describe", None)  # CachedThenOffline's
        how = describe() if describe else "offline provider (extractive, not an LLM)"
        return (
            f"{result.engine_runs} of {result.engine_runs + result.fast_runs} conversation runs needed "
            f"summary text ({why}): {how}"
        )


def _offline_executor() -> Any:
    from ..providers.executor import SummaryExecutor
    from ..providers.registry import get_provider

    return SummaryExecutor(get_provider("offline"), cache=None, concurrency=1, timeout=None)


class CachedThenOffline:
    """Engine-path executor: cached responses of a real provider; misses summarized offline.

    A sweep never calls an API: ``primary`` must be a cache-only executor.
    """

    def __init__(self, primary: Any, fallback: Any | None = None) -> None:
        self.primary = primary
        self.fallback = fallback or _offline_executor()
        self.hits = 0
        self.misses = 0

    async def execute(self, request: SummaryRequest, *, priority: int = 0) -> SummaryOutcome:
        outcome = await self.primary.execute(request)
        if outcome.ok:
            self.hits += 1
            return outcome
        self.misses += 1
        return await self.fallback.execute(request)

    def describe(self) -> str:
        name = self.primary.provider.name
        return (
            f"cached {name} responses ({self.hits} hit(s)); "
            f"{self.misses} miss(es) summarized by the offline provider"
        )


def keep_sample(heap: list[Any], size: int, sample: ChartSample) -> None:
    """Deterministic sample, whatever the order (a parallel sweep's parts too): logs where
    the agent compacted first, then those some configuration summarizes, then by a hash of
    the session; the conversation's index breaks ties."""
    profile = sample.profile
    digest = zlib.crc32(f"{profile.path}\0{profile.session_id}".encode())
    key = (bool(profile.compaction_turns), any(sample.fires), digest, -profile.index)
    item = (key, profile.index, sample)
    if len(heap) < size:
        heapq.heappush(heap, item)
    elif key > heap[0][0]:
        heapq.heapreplace(heap, item)
