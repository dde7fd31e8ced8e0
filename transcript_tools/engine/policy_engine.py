"""How the session engine applies a compaction policy other than the seed's.

The seed's checkpoint (``rules.skip_reason``: F2 + F6) is one form of the trigger; the
others (window minus a reserve, absolute tokens, every N units, a message count, never)
are decided here, by :func:`policy_skip`, with the same decisions and the same debounce.
:func:`with_policy` turns a policy into the settings the engine reads, so the engine's
measure, unit, caps and template come from the policy; the seed's own policy maps to no
policy at all (the seed's engine path, byte for byte).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol

from .compaction import formatter_cap
from .config import ReplaySettings, SummaryConfig
from .kinds import Threshold, TriggerMeasure
from .messages import Message
from .policy import Keep, Placement, Policy, SummarizerInput, SummarySpec, Trigger
from .policy_lines import threshold_tokens
from .records import PolicyFields, SummaryRecord
from .rules import Decision, skip_reason
from .seed_defaults import SUMMARY_MAX_TOKENS
from .validity import kept_answer

if TYPE_CHECKING:
    from .compaction import CompactionPlan
    from .slot import Slot


def is_seed(policy: Policy) -> bool:
    """Is ``policy`` the seed's checkpoint, whatever it is called?"""
    from .policy_toml import preset

    seed = preset("seed")
    return replace(policy, name=seed.name, description=seed.description) == seed


def seed_shaped(policy: Policy) -> bool:
    """Does the seed's own engine path express ``policy`` exactly? True when it differs
    from the seed only in what the seed's settings already vary (ratio, debounce,
    measure, unit, kept turns, the formatter's caps, the marker, the template): then it
    runs that path, so ``--policy seed --ratio 0.5`` is ``--ratio 0.5`` byte for byte."""
    from .policy_toml import preset

    seed = preset("seed")
    trigger, keep, given = policy.trigger, policy.keep, policy.summarizer_input
    if trigger.threshold is not Threshold.RATIO or trigger.floor_tokens or trigger.ceiling_tokens:
        return False
    if (
        trigger.reserve_tokens
        or trigger.reserve_ratio
        or trigger.measure is TriggerMeasure.CONVERSATION
    ):
        return False
    if policy.summary.max_tokens not in (0, SUMMARY_MAX_TOKENS) or keep.kind != "turns":
        return False
    if not given.max_tool_result_chars or not given.max_transcript_chars:
        return False  # "no cap": the seed's formatter has none
    normal = replace(
        policy,
        name=seed.name,
        description=seed.description,
        trigger=seed.trigger,
        keep=replace(keep, turns=seed.keep.turns),
        summarizer_input=seed.summarizer_input,
        placement=replace(policy.placement, marker=seed.placement.marker),
        summary=seed.summary,
    )
    return normal == seed


def with_policy(
    settings: ReplaySettings, policy: Policy | None, *, window_given: bool = True
) -> ReplaySettings:
    """The settings the engine runs ``policy`` with: its measure, unit, debounce, ratio,
    caps, marker and template replace the seed-shaped settings; the window, the turn path,
    the provider's model and a dry run stay. A seed-shaped policy (:func:`seed_shaped`)
    runs the seed's engine path with those settings (``policy`` None in them).
    ``window_given``: the run named its window; if not, the policy's ``trigger.window``
    (where it has one) is the window, and the fallback of ``--max-context-tokens auto``."""
    if policy is None:
        return replace(settings, policy=None) if settings.policy is not None else settings
    from .prompt import load_template

    cfg = settings.summary or SummaryConfig()
    if policy.trigger.window and (not window_given or settings.auto_window):
        cfg = replace(cfg, max_context_tokens=policy.trigger.window)
    given = policy.summarizer_input
    template = policy.summary.template
    cfg = replace(
        cfg,
        trigger_token_ratio=policy.trigger.ratio,
        debounce_turns=policy.trigger.debounce,
        max_tool_result_chars=formatter_cap(given.max_tool_result_chars),
        max_transcript_chars=formatter_cap(given.max_transcript_chars),
        summary_marker=policy.placement.marker,
        summary_prompt=load_template(template).source,  # a built-in name, or a file
    )
    changed = replace(
        settings,
        summary=cfg if settings.summary is not None else None,
        measure=policy.trigger.measure.engine,
        checkpoint=policy.trigger.unit,
        keep_recent_turns=max(policy.keep.turns, 1),
        template_name=load_template(template).name,
        policy=None if seed_shaped(policy) else policy,
    )
    return settings if changed == settings else changed


@lru_cache(maxsize=64)
def seed_policy(cfg: SummaryConfig | None, settings: ReplaySettings) -> Policy:
    """The seed's checkpoint as the ``Policy`` the engine runs (the preset ``seed`` with
    the SummaryConfig's and the run's values): ``with_policy``'s inverse. No SummaryConfig
    (N2): the preset's trigger, which never runs."""
    trigger = Trigger(measure=TriggerMeasure(settings.measure), unit=settings.checkpoint)
    if cfg is None:
        return Policy(trigger=trigger, keep=Keep(turns=settings.keep_recent_turns))
    return Policy(
        trigger=replace(trigger, ratio=cfg.trigger_token_ratio, debounce=cfg.debounce_turns),
        keep=Keep(turns=settings.keep_recent_turns),
        summarizer_input=SummarizerInput(
            max_transcript_chars=cfg.max_transcript_chars,
            max_tool_result_chars=cfg.max_tool_result_chars,
        ),
        placement=Placement(marker=cfg.summary_marker),
        summary=SummarySpec(template=settings.template_name),
    )


# The seed-shaped settings a flag may set on top of a policy: file key -> (part, field).
FLAG_FIELDS = {
    "trigger_token_ratio": ("trigger", "ratio"),
    "debounce_turns": ("trigger", "debounce"),
    "measure": ("trigger", "measure"),
    "checkpoint": ("trigger", "unit"),
    "keep_recent_turns": ("keep", "turns"),
    "max_tool_result_chars": ("summarizer_input", "max_tool_result_chars"),
    "max_transcript_chars": ("summarizer_input", "max_transcript_chars"),
    "summary_marker": ("placement", "marker"),
    "prompt": ("summary", "template"),
}


def policy_with_flags(policy: Policy, given: dict[str, Any]) -> Policy:
    """``policy`` with the values the command line (or environment) set explicitly:
    ``--ratio 0.5 --policy codex`` is Codex's policy at half the window. ``given`` maps
    file keys (``FLAG_FIELDS``) to values; keys not there are ignored. A flag whose part
    the policy does not use (``--keep-recent-turns`` with ``keep.kind = "tokens"``) still
    sets it, and changes nothing, as the policy's own value would not."""
    parts: dict[str, dict[str, Any]] = {}
    for key, value in given.items():
        if key in FLAG_FIELDS and value is not None:
            part, name = FLAG_FIELDS[key]
            parts.setdefault(part, {})[name] = value
    if not parts:
        return policy
    return replace(policy, **{p: replace(getattr(policy, p), **v) for p, v in parts.items()})


def summary_max_tokens(policy: Policy) -> int:
    """The summary call's ``max_tokens``: the policy's, or the seed's 1024 where the
    runtime sets none (``summary.max_tokens = 0``)."""
    return policy.summary.max_tokens or SUMMARY_MAX_TOKENS


def policy_threshold(policy: Policy, window: int) -> float | None:
    """The trigger's token line for a ``window``-token model; None for the forms that
    count no tokens."""
    return threshold_tokens(policy.trigger, window)


def policy_skip(
    trigger: Trigger,
    turn: int,
    last_summary_turn: int,
    watermark: float,
    line: float | None,
    view_messages: int,
    empty: bool,
) -> Decision | None:
    """Why the trigger does not fire at this unit, or None when it fires.

    Token forms: the seed's comparison (``rules.skip_reason``) against ``line``, the
    trigger's line for the session's window (:func:`policy_threshold`, the same float as
    F2's for the seed). ``every``: fires once ``every`` units passed since the last
    summary; ``messages``: once the view holds that many; ``never``: a pre-pass-only
    policy, no summary (``disabled``). The debounce applies to every form, as F6 does to
    the seed's."""
    if trigger.threshold is Threshold.NEVER:
        return Decision.DISABLED
    if line is None:  # every / messages: the measure is a count, the line that count
        since = turn - last_summary_turn
        measure, line = (
            (since, trigger.every)
            if trigger.threshold is Threshold.EVERY
            else (view_messages, trigger.messages)
        )
        return skip_reason(turn, last_summary_turn, measure, line, trigger.debounce, empty)
    return skip_reason(turn, last_summary_turn, watermark, line, trigger.debounce, empty)


def new_violations(history: list[Message], view: list[Message]) -> dict[str, list[str]]:
    """The rules of each target API that ``view`` (one a compaction made) breaks and the
    log's own ``history`` does not: what the policy did, not what the log already had (a
    tool result without its call in the log itself stays out). ``history`` is checked as
    a prefix that later actions extend (``validity.check_all``; both answers as kept,
    only read here)."""
    old = kept_answer(history, prefix=True)
    out: dict[str, list[str]] = {}
    for api, found in kept_answer(view).items():
        if found:
            rules = {v.rule for v in old[api]}
            fresh = [str(v) for v in found if v.rule not in rules]
            if fresh:
                out[api] = fresh
    return out


def policy_fields(policy: Policy) -> PolicyFields:
    """The fields every record of a run under ``policy`` carries."""
    return {"policy": policy.name}


class _PolicyView(Protocol):  # what a snapshot reads of engine/policy_slot.py's PolicySlot
    slot_id: str
    policy: Policy
    summary_text: str | None
    kept: list[int]
    replaced: dict[int, Any]


def policy_snapshot(slot: _PolicyView) -> dict[str, Any]:
    """The slot config of a run under a policy, as persisted (the slot snapshot output)."""
    placement = slot.policy.placement
    return {
        "slot_id": slot.slot_id,
        "policy": slot.policy.name,
        "placement": f"{placement.role}@{placement.position}",
        "summary_override": slot.summary_text,
        "marker": placement.marker,
        "kept_messages": len(slot.kept),
        "cleared_messages": len(slot.replaced),
    }


def summary_fields(slot: Slot, policy: Policy, plan: CompactionPlan) -> SummaryRecord:
    """What a summary record under ``policy`` adds once the summary is applied: the rules
    the new view breaks anew, the policy, what the summary replaced, the view's size."""
    fields: SummaryRecord = {"violations": new_violations(slot.messages, slot.load_messages())}
    fields.update(policy_fields(policy))
    fields.update(summarized_span(plan))
    fields["view_tokens_after"] = slot.view_size()[1]
    return fields


def summarized_span(plan: CompactionPlan) -> SummaryRecord:
    """The record fields that say what a summary replaced (``summaries.jsonl``)."""
    dropped = [index for index, _ in plan.dropped]
    return {
        "messages_summarized": len(plan.summarizer_input),
        "messages_dropped": len(dropped),
        "dropped": _ranges(dropped),
        "messages_kept": len(plan.kept),
        "view_tokens_before": plan.view_tokens_before,
    }


def _ranges(indices: Sequence[int]) -> list[list[int]]:
    """Sorted indices as [start, end) ranges (compact records)."""
    ranges: list[list[int]] = []
    for index in sorted(indices):
        if ranges and ranges[-1][1] == index:
            ranges[-1][1] = index + 1
        else:
            ranges.append([index, index + 1])
    return ranges
