"""Offline evaluation of trigger thresholds: ``tsum sweep``.

Every configuration (ratio x max_context_tokens x debounce x mode x measure) is
evaluated on every conversation of a corpus, streamed one conversation at a time.

Per conversation a :class:`Profile` is computed ONCE, by the session engine itself
with no checkpoint (N2): the per-turn ``cost_so_far`` series (the seed's cumulative
watermark), the per-turn size of the view without summaries (``--measure current``),
prefix sums of the formatted history (summary prompt sizes) and of the estimated
tokens a focused view drops. Then each configuration costs O(turns):

* fast path -- the schedule cannot depend on summary text: the cumulative measure
  with every call's usage recorded, or Full mode (summaries never change the view).
  The seed's rule ``turn - last >= debounce and watermark >= threshold`` (``last``
  starting at 0) is simulated with plain integers; it agrees exactly with
  :class:`SessionEngine` (a hypothesis test proves it). No provider is called.
* engine path -- estimated usage or ``--measure current`` in Focused mode: the view
  after a summary depends on the summary's length, so the real engine runs with an
  executor (the offline provider, or cached responses).

Memory stays bounded: per configuration only aggregates (:mod:`.sweep_stats`), plus
the per-turn curves of a small deterministic sample of conversations for the report.
"""

from __future__ import annotations

import asyncio
import bisect
import heapq
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .config import Measure, ReplaySettings, SlotMode, SummaryConfig
from .messages import Conversation, Message, SystemMessage
from .prompt import PromptTemplate
from .providers.base import SUMMARY_MAX_TOKENS, SummaryOutcome, SummaryRequest
from .replay import ReplayRun, compaction_by_turn, split_turns
from .session import FAILED, SUMMARIZED, SessionEngine
from .sweep_stats import ConfigStats, ConvResult, SweepConfig, config_grid, fixed_cadence
from .tokens import MESSAGE_OVERHEAD_TOKENS, estimate_text_tokens
from .transcript import MESSAGE_SEPARATOR, format_message

# ---- one conversation, computed once ---------------------------------------------------


@dataclass(slots=True)
class Profile:
    """The config-independent series of one conversation (all lists indexed by turn)."""

    index: int
    session_id: str
    path: str
    turns: int
    cost: list[int]  # cost_so_far after each turn (the cumulative watermark)
    view: list[int]  # size of the view without summaries (the current watermark)
    focused: list[int]  # size of the focused view, had a summary been written by then
    history_end: list[int]  # messages in the history after each turn
    all_recorded: bool  # every call's usage recorded (no estimate anywhere)
    compaction_turns: list[int]  # turns after which the original agent compacted
    # prefix sums over messages of the formatted history: code points + separators, tokens
    _chars: list[int] = field(default_factory=list)
    _tokens: list[int] = field(default_factory=list)
    _max_chars: int = 0
    _overhead: tuple[int, int] = (0, 0)
    _prompts: dict[int, tuple[int, int]] = field(default_factory=dict)
    _view_prefix: list[int] = field(default_factory=list)  # sum of view[:t]
    _view_max: list[int] = field(default_factory=list)  # max of view[:t]
    _focused_suffix: list[int] = field(default_factory=list)  # sum of focused[t:]
    _focused_max: list[int] = field(default_factory=list)  # max of focused[t:]

    def prompt_size(self, turn: int) -> tuple[int, int]:
        """(code points, estimated tokens) of the summary prompt at ``turn``'s checkpoint.

        The rule of ``format_messages_as_text``: whole messages dropped from the front
        until the text fits ``max_transcript_chars``; a newest message longer than that
        keeps its tail. Plus the template around it. O(log messages).
        """
        hit = self._prompts.get(turn)
        if hit is not None:
            return hit
        end = self.history_end[turn]
        chars, tokens = self._chars, self._tokens
        sep = len(MESSAGE_SEPARATOR)
        newest = chars[end] - chars[end - 1] - sep
        if newest > self._max_chars:
            text_chars = self._max_chars
            text_tokens = (tokens[end] - tokens[end - 1]) * text_chars // max(newest, 1)
        else:
            start = bisect.bisect_left(chars, chars[end] - sep - self._max_chars, 0, end - 1)
            text_chars = chars[end] - chars[start] - sep
            text_tokens = tokens[end] - tokens[start]
        size = (self._overhead[0] + text_chars, self._overhead[1] + text_tokens)
        self._prompts[turn] = size
        return size


def profile_conversation(
    conv: Conversation,
    *,
    index: int = 0,
    base: SummaryConfig | None = None,
    template: PromptTemplate | None = None,
    keep_recent_turns: int = 3,
    summary_tokens: int = SUMMARY_MAX_TOKENS,
    turns: list[tuple[int, list[Message]]] | None = None,
) -> Profile:
    """Run the engine once with no checkpoint and keep what every configuration needs."""
    base = base or SummaryConfig()
    turns = split_turns(conv.messages) if turns is None else turns
    settings = ReplaySettings(
        summary=None,
        mode=SlotMode.FULL,
        measure=Measure.CURRENT,
        keep_recent_turns=keep_recent_turns,
    )
    engine = SessionEngine(conv.session_id, settings)
    for _, messages in turns:
        engine.submit_turn(messages)
    slot = engine.slot
    cost = [d["cost_so_far"] for d in engine.decisions]
    view = [d["watermark"] for d in engine.decisions]
    history_end = [start + len(messages) for start, messages in turns]

    # Focused view after a summary: system messages + the last keep_recent_turns turns
    # + the summary message (assumed summary_tokens long: the call's max_tokens bound).
    summary_cost = (
        MESSAGE_OVERHEAD_TOKENS + estimate_text_tokens(base.summary_marker) + summary_tokens
    )
    starts = [start for start, _ in turns]
    system_before: dict[int, int] = {}
    system_tokens = 0
    wanted = set(starts)
    for i, message in enumerate(conv.messages):
        if i in wanted:
            system_before[i] = system_tokens
        if isinstance(message, SystemMessage):
            system_tokens += slot.tokens_between(i, i + 1)
    focused = []
    for t, size in enumerate(view):
        kept = starts[t + 1 - keep_recent_turns] if t + 1 > keep_recent_turns else 0
        dropped = slot.tokens_between(0, kept) - system_before.get(kept, 0)
        # as SessionEngine.current_context_tokens: never below the estimated view
        estimated = slot.tokens_between(0, history_end[t])
        focused.append(max(size, estimated) - dropped + summary_cost)

    # The formatted history, once: prefix sums of block lengths (+ separator) and tokens.
    chars = [0]
    tokens = [0]
    sep = len(MESSAGE_SEPARATOR)
    for message in conv.messages:
        block = format_message(message, base.max_tool_result_chars)
        chars.append(chars[-1] + len(block) + sep)
        tokens.append(tokens[-1] + estimate_text_tokens(block))
    shell = (template.render("") if template is not None else "{messages}").replace(
        "{messages}", ""
    )
    profile = Profile(
        index=index,
        session_id=conv.session_id,
        path=conv.path,
        turns=len(turns),
        cost=cost,
        view=view,
        focused=focused,
        history_end=history_end,
        all_recorded=engine.estimated_calls == 0,
        compaction_turns=sorted(compaction_by_turn(conv, turns)),
        _chars=chars,
        _tokens=tokens,
        _max_chars=base.max_transcript_chars,
        _overhead=(len(shell), estimate_text_tokens(shell)),
    )
    _prefix_tables(profile)
    return profile


def _prefix_tables(p: Profile) -> None:
    view_prefix, view_max = [0], [0]
    for size in p.view:
        view_prefix.append(view_prefix[-1] + size)
        view_max.append(max(view_max[-1], size))
    focused_suffix, focused_max = [0] * (p.turns + 1), [0] * (p.turns + 1)
    for t in range(p.turns - 1, -1, -1):
        focused_suffix[t] = focused_suffix[t + 1] + p.focused[t]
        focused_max[t] = max(focused_max[t + 1], p.focused[t])
    p._view_prefix, p._view_max = view_prefix, view_max
    p._focused_suffix, p._focused_max = focused_suffix, focused_max


# ---- one configuration on one conversation ----------------------------------------------


def needs_engine(profile: Profile, cfg: SweepConfig) -> bool:
    """True when the schedule or the view depends on summary text (estimates, current)."""
    if cfg.mode is SlotMode.FULL:
        return False  # summaries never change the view: every series is the profile's
    return cfg.measure is Measure.CURRENT or not profile.all_recorded


def simulate(profile: Profile, cfg: SweepConfig) -> list[int]:
    """The turns at which the checkpoint fires (the seed's rule, plain integers)."""
    series = profile.cost if cfg.measure is Measure.CUMULATIVE else profile.view
    threshold = cfg.threshold
    debounce = cfg.debounce_turns
    ends = profile.history_end
    last = 0  # the seed: last_summary_turn starts at 0
    fires: list[int] = []
    for turn, watermark in enumerate(series):
        # F2 + F6, in the engine's order: threshold, debounce, then the empty-history guard
        if watermark >= threshold and turn - last >= debounce and ends[turn] > 0:
            fires.append(turn)
            last = turn
    return fires


def evaluate_fast(profile: Profile, cfg: SweepConfig, *, keep_curve: bool = False) -> ConvResult:
    fires = simulate(profile, cfg)
    result = ConvResult(turns=profile.turns, fires=fires)
    for turn in fires:
        chars, tokens = profile.prompt_size(turn)
        result.prompt_chars += chars
        result.prompt_tokens += tokens
    series = profile.cost if cfg.measure is Measure.CUMULATIVE else profile.view
    threshold = cfg.threshold
    if len(fires) >= 2:
        first = fires[0]
        result.fixed_cadence = all(w >= threshold for w in series[first:])
    limit = cfg.max_context_tokens
    if fires and cfg.mode is SlotMode.FOCUSED:
        t1 = fires[0]
        result.peak_with = max(profile._view_max[t1], profile._focused_max[t1])
        result.sum_with = profile._view_prefix[t1] + profile._focused_suffix[t1]
        result.overflow = sum(1 for v in profile.view[:t1] if v > limit) + sum(
            1 for v in profile.focused[t1:] if v > limit
        )
        if keep_curve:
            result.curve = profile.view[:t1] + profile.focused[t1:]
    else:
        result.peak_with = profile._view_max[-1]
        result.sum_with = profile._view_prefix[-1]
        result.overflow = sum(1 for v in profile.view if v > limit)
    return result


async def evaluate_engine(
    conv: Conversation,
    turns: list[tuple[int, list[Message]]],
    profile: Profile,
    cfg: SweepConfig,
    *,
    base: SummaryConfig,
    template: PromptTemplate,
    keep_recent_turns: int,
    executor: Any,
    provider_name: str,
) -> ConvResult:
    """Run the real engine (summaries applied) and measure the same figures."""
    settings = ReplaySettings(
        summary=cfg.summary_config(base),
        mode=cfg.mode,
        keep_recent_turns=keep_recent_turns,
        measure=cfg.measure,
        template_name=template.name,
    )
    engine = SessionEngine(
        conv.session_id, settings, provider_name=provider_name, template=template
    )
    curve: list[int] = []
    for _, messages in turns:
        request = engine.submit_turn(messages)
        if request is not None:
            engine.complete_summary(await executor.execute(request))
        curve.append(engine.current_context_tokens())  # what the model is sent next turn
    fires = [d["turn"] for d in engine.decisions if d["decision"] in (SUMMARIZED, FAILED)]
    result = ConvResult(turns=profile.turns, fires=fires, curve=curve)
    for summary in engine.summaries:
        result.prompt_chars += summary["prompt_chars"]
        result.prompt_tokens += estimate_text_tokens(engine.prompts[summary["prompt_sha256"]])
        result.failed += summary["status"] != "ok"
    result.fixed_cadence = fixed_cadence(engine.decisions, cfg.debounce_turns)
    result.peak_with = max(curve, default=0)
    result.sum_with = sum(curve)
    result.overflow = sum(1 for v in curve if v > cfg.max_context_tokens)
    if cfg.measure is Measure.CURRENT:
        result.watermark = [d["watermark"] for d in engine.decisions]
    return result


__all__ = [
    "Profile",
    "Sweep",
    "SweepConfig",
    "SweepResult",
    "config_grid",
    "fixed_cadence",
    "profile_conversation",
    "simulate",
]


# ---- the corpus -----------------------------------------------------------------------


@dataclass(slots=True)
class Sample:
    """Per-turn curves of one conversation, for the report's charts."""

    profile: Profile
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
    samples: list[Sample] = field(default_factory=list)
    summary_source: str = ""
    elapsed: float = 0.0


@dataclass
class Sweep:
    """Streams a corpus through every configuration."""

    configs: list[SweepConfig]
    base: SummaryConfig = field(default_factory=SummaryConfig)
    template: PromptTemplate | None = None
    keep_recent_turns: int = 3
    executor: Any = None  # engine path; None: the offline provider, built on first use
    provider_name: str = "offline"
    describe_executor: Callable[[], str] | None = None
    summary_tokens: int = SUMMARY_MAX_TOKENS
    price_per_mtok: float | None = None
    sample_size: int = 0
    fmt: str | None = None
    skip_bad_lines: bool = False
    warn: Callable[[str], None] = print
    error: Callable[[str], None] = print
    on_conversation: Callable[[], None] | None = None
    # Session ids taken before these paths (one file of a parallel run: parallel_jobs.py)
    taken_ids: set[str] = field(default_factory=set)

    def run(self, paths: Iterable[str]) -> SweepResult:
        return asyncio.run(self.run_async(list(paths)))

    async def run_async(self, paths: list[str]) -> SweepResult:
        started = time.perf_counter()
        if self.template is None:
            from .prompt import template_from_config

            self.template = template_from_config(self.base.summary_prompt)
        result = SweepResult(
            self.configs, [ConfigStats(c, self.price_per_mtok) for c in self.configs]
        )
        reader = ReplayRun(
            ReplaySettings(),
            None,
            None,
            fmt=self.fmt,
            skip_bad_lines=self.skip_bad_lines,
            warn=self.warn,
            error=self.error,
            _seen_ids=self.taken_ids,
        )
        heap: list[tuple[tuple[int, int, int], int, Sample]] = []
        for index, conv in enumerate(reader.conversations(paths)):
            await self._one(index, conv, result, heap)
            if self.on_conversation is not None:
                self.on_conversation()
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
        turns = split_turns(conv.messages)
        profile = profile_conversation(
            conv,
            index=index,
            base=self.base,
            template=self.template,
            keep_recent_turns=self.keep_recent_turns,
            summary_tokens=self.summary_tokens,
            turns=turns,
        )
        result.conversations += 1
        result.turns += profile.turns
        keep = self.sample_size > 0
        fires: list[list[int]] = []
        curves: dict[int, list[int]] = {}
        ever = False
        for i, cfg in enumerate(self.configs):
            # Until the first summary the engine's state is the profile's: a configuration
            # that never fires on the profile never fires in the engine either.
            if needs_engine(profile, cfg) and simulate(profile, cfg):
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
                )
                result.engine_runs += 1
                if keep and outcome.watermark is not None:
                    curves[i] = outcome.watermark
            else:
                outcome = evaluate_fast(profile, cfg)
                result.fast_runs += 1
            result.stats[i].add(outcome, profile)
            ever = ever or bool(outcome.fires)
            if keep:
                fires.append(outcome.fires)
        if keep:
            # Deterministic sample, whatever the order: logs where the agent compacted
            # first, then those some configuration summarizes, then by a hash of the session.
            digest = zlib.crc32(f"{conv.path}\0{conv.session_id}".encode())
            key = (bool(profile.compaction_turns), ever, digest, -index)
            item = (key, index, Sample(profile, fires, curves))
            if len(heap) < self.sample_size:
                heapq.heappush(heap, item)
            elif key > heap[0][0]:
                heapq.heapreplace(heap, item)

    def _source(self, result: SweepResult) -> str:
        if result.engine_runs == 0:
            return (
                "no summary calls needed: every schedule was computed from the token series "
                "(recorded usage with the cumulative measure, Full mode, or no trigger at all); "
                "no provider was called"
            )
        how = (
            self.describe_executor()
            if self.describe_executor
            else "offline provider (extractive, not an LLM)"
        )
        return (
            f"{result.engine_runs} of {result.engine_runs + result.fast_runs} conversation runs needed "
            f"summary text (estimated usage or the current measure, Focused mode, and a trigger): {how}"
        )


def _offline_executor() -> Any:
    from .providers.executor import SummaryExecutor
    from .providers.registry import get_provider

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

    async def execute(self, request: SummaryRequest) -> SummaryOutcome:
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
