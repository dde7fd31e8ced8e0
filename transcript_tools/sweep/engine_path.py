"""The sweep's engine path: one configuration on one conversation through the real
session engine (summaries applied), measured like the fast path (``simulate.py``).

Taken where the figures depend on summary text (``rules.depends_on_summary_text``) and
for every ``--policy`` row, whose views are also checked against the target APIs, and
with ``--cost`` for every configuration that fires (its views priced: ``cost.meter``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ..cost.meter import drive_priced
from ..engine.config import Checkpoint, Measure, ReplaySettings, SlotMode, SummaryConfig, TurnPath
from ..engine.messages import Conversation, Message
from ..engine.overflow import checkpoints_over
from ..engine.policy_engine import new_violations, with_policy
from ..engine.prompt import PromptTemplate, template_from_config
from ..engine.records import SummaryRecord, summary_ok, unit_key
from ..engine.requests import SummaryOutcome, SummaryRequest
from ..engine.rules import FIRED, fixed_cadence
from ..engine.session import SessionEngine
from ..engine.sized_view import measuring
from ..engine.tokens import estimate_text_tokens
from ..replay.sizes import log_sizes, policy_sizes
from .config import ConfigOutcome, SweepConfig
from .idle import idle_run, original_figures
from .simulate import ConversationSeries, peak_views, unit_spans

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..cost.prices import Pricer
    from ..engine.accounting import Measured
    from ..engine.sizes import SizeModel
    from ..eval.checkpoints import SummaryReplacement
    from ..eval.score import ConversationProbes


async def evaluate_engine(
    conv: Conversation,
    turns: list[tuple[int, list[Message]]],
    profile: ConversationSeries,
    cfg: SweepConfig,
    *,
    base: SummaryConfig,
    template: PromptTemplate,
    keep_recent_turns: int,
    executor: Any,
    provider_name: str,
    path: TurnPath = TurnPath.SYNC,
    pricer: Pricer | None = None,
    shared: SharedWork | None = None,
) -> ConfigOutcome:
    """Run the real engine (summaries applied) on the turn path ``path`` and measure the same
    figures; ``cfg`` is the conversation's own (``SweepConfig.for_conversation``), ``pricer``
    (--cost) prices the run (``cost.meter``), ``shared``: the grid's work on ``conv``."""
    shared = shared or SharedWork(conv, base.max_tool_result_chars)
    settings = engine_settings(cfg, base, template, keep_recent_turns, path)[0]
    if pricer is None and (idle := idle_run(conv, turns, profile, cfg, settings, shared)):
        return idle  # a policy proved never to act here: its original run (sweep/idle.py)
    engine = engine_for(
        conv, cfg, base, template, keep_recent_turns, provider_name, path, shared.log_sizes
    )
    engine.digest_prompts = False  # each prompt is read from its request (``prompts``)
    checks = ViewChecks() if cfg.policy is not None else None
    replaced: list[SummaryReplacement] = []  # the seed's grid: its summaries (_action_hooks)
    sized, view = measuring(engine, shared.log_sizes(conv) if cfg.policy is not None else None)
    actions = _action_hooks(conv, engine, shared, cfg, replaced, sized)
    curve: list[int] = []
    peak = 0
    measured_end = profile.measured_end

    def measure(_number: int) -> None:
        nonlocal peak
        curve.append(view())
        past = len(engine.slot.messages) > measured_end  # a peak: up to the last call only
        peak = max(peak, view(measured_end) if past else curve[-1])

    views_before: list[int] = []  # per summary request: the view it is to replace
    prompts: list[str] = []  # per summary request (each makes one summary record): its prompt

    async def execute(request: SummaryRequest, _left: int) -> SummaryOutcome:
        views_before.append(sized.view_size()[1])
        prompts.append(request.prompt)
        return await executor.execute(request)

    def after_unit(number: int) -> None:
        measure(number)
        if checks is not None:
            checks.after_unit(engine)
        if actions is not None:
            actions.after_unit(number)

    def after_summary(request: SummaryRequest) -> None:
        if checks is not None:
            checks.after_summary(engine)
        if actions is not None:
            actions.after_summary(request)

    # the one loop replay and eval run too (engine/drive.py): the same turn path;
    # with --cost priced as it runs (cost/meter.py)
    meter = await drive_priced(
        conv,
        engine,
        execute,
        pricer,
        units=unit_spans(turns),
        after_unit=after_unit,
        after_summary=after_summary,
        appended=None if actions is None else actions.appended,
    )
    result = _run_figures(engine, cfg, profile, curve, peak, checks, prompts)
    original_figures(result, conv, turns, cfg, engine.settings, shared)
    result.cost = None if meter is None else meter.run
    if actions is not None:
        _action_recall(result, actions, engine, views_before, shared, replaced)
    return result


def _run_figures(
    engine: SessionEngine,
    cfg: SweepConfig,
    profile: ConversationSeries,
    curve: list[int],
    peak: int,
    checks: ViewChecks | None,
    prompts: list[str],
) -> ConfigOutcome:
    """What one configuration's engine run did: its fires, summaries, views and curve;
    ``prompts``: the prompt of each summary, in order."""
    unit = unit_key(cfg.checkpoint)
    fires = [d[unit] for d in engine.decisions if d["decision"] in FIRED]
    result = ConfigOutcome(turns=profile.turns, fires=fires, curve=curve)
    for summary, prompt in zip(engine.summaries, prompts, strict=True):
        result.prompt_chars += summary["prompt_chars"]
        result.prompt_tokens += prompt_tokens(summary, prompt)
        result.failed += not summary_ok(summary)
    result.fixed_cadence = fixed_cadence(
        [d["decision"] for d in engine.decisions], cfg.debounce_turns
    )
    if checks is not None:
        result.views_checked, result.violations = checks.views, checks.broken
        result.cleared = checks.cleared
    result.peak_with = peak
    result.sum_with = sum(curve)
    result.overflow = sum(1 for v in curve if v > cfg.max_context_tokens)
    result.views_over = checkpoints_over(engine.decisions)
    if cfg.measure is Measure.CURRENT:
        result.watermark = [d["watermark"] for d in engine.decisions]
    return result


def prompt_tokens(summary: SummaryRecord, prompt: str) -> int:
    """The estimated tokens of a summary's ``prompt``: the input tokens the offline
    provider reported (its usage is the prompt's ``estimate_text_tokens``, counted as it
    summarized), else the prompt estimated here (a cached response of another provider,
    a failure)."""
    from ..providers.offline import OfflineProvider

    usage = summary["usage"]
    if usage is not None and summary["provider"] == OfflineProvider.name:
        return usage["input_tokens"]
    return estimate_text_tokens(prompt)


def _action_recall(
    result: ConfigOutcome,
    actions: Any,  # eval.policy_probes.ActionHooks
    engine: SessionEngine,
    views_before: list[int],
    shared: SharedWork,
    replaced: list[SummaryReplacement],
) -> None:
    """What the run's summaries kept, as tsum eval scores them: the seed's grid each on
    the history it ``replaced``; --policy every action's probes on the next view
    (eval/policy_probes.py), per summary too."""
    from ..eval.policy_probes import summary_figures
    from ..eval.score import artifact_hits

    if actions.on_replacement is not None:
        from ..eval.checkpoints import score_record

        probes = shared.probes()
        result.recall = artifact_hits((score_record(cp, probes) for cp in replaced), "summary")
        return
    result.recall = artifact_hits(actions.scorer.records, "view")
    done = [v for v, s in zip(views_before, engine.summaries, strict=False) if summary_ok(s)]
    result.by_summary = summary_figures(actions.scorer.records, done)
    if shared.whole_view:
        whole = [r["whole_view"] for r in actions.scorer.records if "whole_view" in r]
        probed = sum(t for _, t in whole)
        result.view_recall = (sum(k for k, _ in whole), probed) if probed else None


def engine_for(
    conv: Conversation,
    cfg: SweepConfig,
    base: SummaryConfig,
    template: PromptTemplate,
    keep_recent_turns: int,
    provider_name: str,
    path: TurnPath = TurnPath.SYNC,
    sizes_of: Callable[[Conversation], SizeModel | None] = log_sizes,
) -> SessionEngine:
    """The session engine of one configuration on one conversation (``cfg`` its own);
    ``sizes_of`` as ``replay.sizes.policy_sizes`` takes it."""
    settings, engine_template = engine_settings(cfg, base, template, keep_recent_turns, path)
    return SessionEngine(
        conv.session_id,
        settings,
        provider_name=provider_name,
        template=engine_template,
        sizes=policy_sizes(conv, settings, sizes_of),  # a policy measures in billed tokens
    )


@lru_cache(maxsize=256)
def engine_settings(
    cfg: SweepConfig,
    base: SummaryConfig,
    template: PromptTemplate,
    keep_recent_turns: int,
    path: TurnPath = TurnPath.SYNC,
) -> tuple[ReplaySettings, PromptTemplate]:
    """The settings and template the engine of ``cfg`` (a conversation's own) runs with:
    the same for every conversation of a grid that resolves to the same window, so made
    once per (configuration, window), not once per conversation."""
    settings = ReplaySettings(
        summary=cfg.summary_config(base),
        mode=cfg.mode,
        keep_recent_turns=keep_recent_turns,
        path=path,
        measure=cfg.measure,
        template_name=template.name,
        checkpoint=cfg.checkpoint,
    )
    settings = with_policy(settings, cfg.policy)  # the seed's policy: settings unchanged
    if settings.policy is None:
        return settings, template
    # a policy's own template (with_policy put it in the SummaryConfig), as the engine
    # would load it
    assert settings.summary is not None
    return settings, template_from_config(settings.summary.summary_prompt, settings.template_name)


def _action_hooks(
    conv: Conversation,
    engine: SessionEngine,
    shared: SharedWork,
    cfg: SweepConfig,
    replaced: list[SummaryReplacement],
    sized: Measured,
) -> Any:
    """eval's scorer on this run (None: Full mode without a policy, nothing replaced):
    with --policy every action scored as eval --policy scores it (eval/policy_probes.py),
    the seed's row too, so every row's recall stands on the same footing; the seed's
    grid each summary, kept in ``replaced``, on the history it replaced as tsum eval
    scores it (docs/eval.md). Probes cut as the seed's summarizer is shown tool results
    (``base.max_tool_result_chars``), whatever the policy's own cut."""
    from ..eval.policy_probes import ActionHooks, ActionScorer

    if cfg.policy is None and cfg.mode is not SlotMode.FOCUSED:
        return None

    probes = shared.probes()
    name = "seed" if cfg.policy is None else cfg.policy.name
    scorer = ActionScorer(probes, name, conv.session_id, conv.path, probes.max_tool_result_chars)
    scorer.whole_view = shared.whole_view
    scorer.detail = False  # the sweep reads each action's view counts only
    on_replacement = replaced.append if cfg.policy is None else None
    return ActionHooks(engine, scorer, lambda _record: None, on_replacement, sized=sized)


@dataclass(slots=True)
class SharedWork:
    """What every configuration of a grid computes the same on one conversation, done
    once for all of them: the log's size model (``replay.sizes.log_sizes``) and its
    probes (``eval.score.ConversationProbes``, which keeps each message's probes and
    texts), cut as the seed's summarizer is shown tool results (``cut``)."""

    conv: Conversation
    cut: int
    whole_view: bool = False  # score recall over the whole view too (eval/view_recall.py)
    _sizes: list[SizeModel | None] = field(default_factory=list)  # [] until asked
    _probes: ConversationProbes | None = None
    # original_views': by unit kind and slot (a policy's, or the seed's in a policy slot)
    _original: dict[tuple[Checkpoint, bool], tuple[list[int], int]] = field(default_factory=dict)

    def log_sizes(self, conv: Conversation) -> SizeModel | None:
        assert conv is self.conv, "one SharedWork per conversation"
        if not self._sizes:
            self._sizes.append(log_sizes(conv))
        return self._sizes[0]

    def original_views(
        self, settings: ReplaySettings, units: list[tuple[int, int]]
    ) -> tuple[list[int], int]:
        """After each of ``units``, the view the original run sends, and its peak
        (``simulate.peak_views``), measured as a
        policy run with ``settings`` measures its own (``sized_view.measured``): the same size
        model (``policy_sizes``), its slot with nothing acting, no summary and no
        pre-pass. A policy that never acts reads it exactly. A seed-shaped policy
        (``with_policy``: the seed's slot, ``settings.policy`` None) is measured in the
        log's billed sizes as every other policy: the seed's policy in a policy slot,
        idle, whose view is the whole history as the seed's is before a summary (the
        profile's figures are the seed's own, in estimates). Once per unit kind and slot."""
        key = (settings.checkpoint, settings.policy is None)
        if key not in self._original:
            from ..engine.drive import drive_without_summaries
            from ..engine.policy import PrePass, Trigger
            from ..engine.policy_engine import seed_policy

            # The trigger is the default's: a policy of no pre-pass and no trigger is
            # refused, and with no SummaryConfig no trigger fires.
            policy = settings.policy or seed_policy(settings.summary, settings)
            idle = replace(policy, prepass=PrePass(), trigger=Trigger())
            settings = replace(settings, summary=None, measure=Measure.CURRENT, policy=idle)
            engine = SessionEngine(
                self.conv.session_id,
                settings,
                sizes=policy_sizes(self.conv, settings, self.log_sizes),
            )
            drive_without_summaries(self.conv, engine, units=units)
            views = [d["watermark"] for d in engine.decisions]
            peaks = peak_views(self.conv, engine, views, [end for _, end in units])[1]
            self._original[key] = (views, max(peaks, default=0))
        return self._original[key]

    def probes(self) -> ConversationProbes:
        if self._probes is None:
            from ..eval.checkpoints import compaction_message_indices
            from ..eval.score import ConversationProbes

            self._probes = ConversationProbes(
                self.conv.messages, self.cut, compaction_message_indices(self.conv)
            )
        return self._probes


@dataclass(slots=True)
class ViewChecks:
    """--policy: every view a summary made, checked against each target API for rules
    the log itself does not break (``policy_engine.new_violations``); the tool results
    the pre-pass cleared (a cleared result keeps its role, its call id and a non-empty
    placeholder: it breaks no rule the view did not)."""

    views: int = 0
    broken: dict[str, int] = field(default_factory=dict)
    cleared: int = 0

    def after_summary(self, engine: SessionEngine) -> None:
        if not engine.summaries or not summary_ok(engine.summaries[-1]):
            return
        self.views += 1
        # the summary record's own count where the policy's slot made it (the view is
        # still the one it was made on); a seed-shaped policy's slot records none
        found = engine.summaries[-1].get("violations")
        if found is None:
            found = new_violations(engine.slot.messages, engine.load_messages())
        for api in found:
            self.broken[api] = self.broken.get(api, 0) + 1

    def after_unit(self, engine: SessionEngine) -> None:
        record = engine.decisions[-1]
        if "cleared" in record:
            self.cleared += record["cleared"]["messages_cleared"]
