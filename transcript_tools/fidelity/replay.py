"""One conversation's recorded compactions against a policy's replay of the same log.

The log is cut at its own compactions: each stretch from one recorded compaction (or the
start) to the next is what the original agent's context held, its recorded prompts
included, so the policy is replayed on each stretch afresh (a dry run: the engine's own
schedule, ``engine/drive.py``) and its first firing is compared with the call the runtime
compacted after. The size after is the policy's own view when it compacts at the
recorded call, with the runtime's summary text where the log keeps it, sized the way the
log billed it (docs/fidelity.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..engine.config import ReplaySettings, SummaryConfig
from ..engine.drive import drive_without_summaries, unit_bounds
from ..engine.messages import (
    INJECTED,
    Compaction,
    Conversation,
    Message,
    SystemMessage,
    UserMessage,
    is_turn_start,
)
from ..engine.person_fates import person_text
from ..engine.policy import Policy
from ..engine.policy_engine import policy_threshold, with_policy
from ..engine.policy_slot import PolicySlot
from ..engine.reinjection import reinjected_tokens
from ..engine.rules import Decision, UnitCounter, is_model_call
from ..engine.runtime_policy import reinjection
from ..engine.seed_defaults import SUMMARY_MAX_TOKENS
from ..engine.session import SessionEngine
from ..engine.sizes import ESTIMATES, SizeModel
from ..engine.tokens import (
    MESSAGE_OVERHEAD_TOKENS,
    assumed_summary_tokens,
    estimate_message_tokens,
    estimate_text_tokens,
)
from ..replay.sizes import log_sizes
from .recorded import recorded_fates, runtime_summary
from .records import FidelityRow
from .window import replay_policy


@dataclass(frozen=True, slots=True)
class _Stretch:
    """Messages ``start:end`` of the log (a stretch between recorded compactions), shown
    after the system messages that came before ``start``."""

    head: tuple[Message, ...]
    start: int
    end: int


def compaction_rows(
    conv: Conversation, preset: Policy, *, own: Policy | None, follow: bool = True
) -> list[FidelityRow]:
    """One row per recorded compaction of ``conv`` (none: no rows); ``follow``: the preset
    follows the runtime release that wrote each part of the log (fidelity/window.py);
    ``own``: the preset of the log's own runtime (None: none), whose re-injected files
    the rebuilt view holds whatever policy is replayed."""
    if not conv.compactions:
        return []
    messages = conv.messages
    calls = [0]  # calls[i]: model calls in messages[:i]
    for message in messages:
        calls.append(calls[-1] + is_model_call(message))
    rows: list[FidelityRow] = []
    start = 0
    for comp, fates in zip(conv.compactions, recorded_fates(conv), strict=True):
        policy, window, window_from = replay_policy(conv, comp, preset, follow=follow)
        end = min(comp.message_index, len(messages))
        head = tuple(m for m in messages[:start] if type(m) is SystemMessage)
        stretch = _Stretch(head, start, end)
        # the prompt to predict is not evidence of the hidden prefix (docs/fidelity.md, "Sizes")
        sizes = log_sizes(conv, frozenset({comp.message_index})) or ESTIMATES
        files = reinjection(preset) if follow else None
        reinjected = 0 if files is None else reinjected_tokens(messages[:end], sizes, files)
        files = None if own is None else reinjection(own)  # the runtime's, not the policy's
        rebuilt_files = 0 if files is None else reinjected_tokens(messages[:end], sizes, files)
        fired = _first_fire(conv, stretch, policy, window, sizes)
        predicted = None if fired is None else calls[fired]
        after, kept, summary_from = _view_after(conv, stretch, comp, policy, window, sizes)
        after = None if after is None else after + reinjected
        rebuilt = _rebuilt_after(conv, comp, messages[start:end], sizes) + rebuilt_files
        rows.append(
            FidelityRow(
                path=conv.path,
                session_id=conv.session_id,
                runtime=conv.format,
                version=comp.version,
                model=comp.model,
                trigger=comp.trigger,
                policy=policy.name,
                window=window,
                window_from=window_from,
                threshold=policy_threshold(policy, window),
                recorded_call=calls[end],
                predicted_call=predicted,
                recorded_tokens_before=_tokens_before(messages, start, end, comp),
                recorded_tokens_after=_next_prompt(messages, end),
                recorded_post_tokens=comp.post_tokens,
                predicted_tokens_after=after,
                rebuilt_tokens_after=rebuilt if _next_prompt(messages, end) else None,
                summary_from=summary_from,
                recorded_kept_messages=comp.kept_messages,
                predicted_kept_messages=kept if comp.kept_messages is not None else None,
                recorded_person_fates=fates,
            )
        )
        start = end
    return rows


def _stretch_conversation(conv: Conversation, stretch: _Stretch) -> Conversation:
    messages = [*stretch.head, *conv.messages[stretch.start : stretch.end]]
    return Conversation(conv.session_id, conv.path, conv.format, messages)


def _first_fire(
    conv: Conversation, stretch: _Stretch, policy: Policy, window: int, sizes: SizeModel
) -> int | None:
    """The log index just after the unit at whose checkpoint the policy first fires on
    the stretch (a dry run), or None when it never does."""
    part = _stretch_conversation(conv, stretch)
    settings = with_policy(
        ReplaySettings(summary=SummaryConfig(max_context_tokens=window), dry_run=True), policy
    )
    engine = SessionEngine(conv.session_id, settings=settings, sizes=sizes)
    bounds = unit_bounds(part, settings)
    drive_without_summaries(part, engine, units=bounds)
    shift = stretch.start - len(stretch.head)  # a stretch index -> a log index
    for record, (_, unit_end) in zip(engine.decisions, bounds, strict=True):
        if record["decision"] == Decision.WOULD_SUMMARIZE:
            return unit_end + shift
    return None


def _view_after(
    conv: Conversation,
    stretch: _Stretch,
    comp: Compaction,
    policy: Policy,
    window: int,
    sizes: SizeModel,
) -> tuple[int | None, int | None, str]:
    """(the next call's prompt as the policy predicts it had it compacted at the recorded
    call, the person's messages it kept, where its summary text came from): the policy's
    own view and size model (engine/policy_slot.py, engine/sizes.py), the hidden prefix,
    and what the log adds before that call. A policy that never summarizes has no view
    after a compaction: (None, None, "none")."""
    if not policy.summarizes:
        return None, None, "none"
    part = _stretch_conversation(conv, stretch)
    slot = PolicySlot(policy, window, sizes, units=UnitCounter(policy.trigger.unit))
    slot.append_messages(part.messages)
    if policy.prepass.kind != "none":
        slot.prepass(slot.view_size()[1] + slot.hidden_tokens)
    plan = slot.plan()
    text = runtime_summary(conv, comp)
    # without the runtime's text, a dry run's summary: SUMMARY_MAX_TOKENS long
    assumed = None if text else assumed_summary_tokens(slot.marker, SUMMARY_MAX_TOKENS)
    slot.set_summary(text or "", plan, assumed_tokens=assumed)
    total = slot.hidden_tokens + slot.view_size()[1]
    total += sum(estimate_message_tokens(m) for m in _until_next_call(conv, comp))
    kept = sum(1 for index, _ in plan.kept if is_turn_start(part.messages[index]))
    return total, kept, "log" if text else "assumed"


def _rebuilt_after(
    conv: Conversation, comp: Compaction, before: list[Message], sizes: SizeModel
) -> int:
    """The next call's prompt as the original run's own view makes it, sized as the
    policy's view is (so the gap to the recorded prompt is what the size model cannot
    see): the hidden prefix, the runtime's summary (new text: its estimate; an unreadable
    one SUMMARY_MAX_TOKENS long), the person's messages it kept verbatim, and what the
    log adds before that call."""
    text = runtime_summary(conv, comp)
    summary = MESSAGE_OVERHEAD_TOKENS + (estimate_text_tokens(text) if text else SUMMARY_MAX_TOKENS)
    kept = set(comp.kept_texts or ())
    preserved = sum(sizes.of(m) for m in before if kept and person_text(m) in kept)
    added = sum(estimate_message_tokens(m) for m in _until_next_call(conv, comp))
    return sizes.hidden + summary + preserved + added


def _until_next_call(conv: Conversation, comp: Compaction) -> list[Message]:
    """What the log adds after the compaction before the next call, less the runtime's
    own summary message (the policy places its own)."""
    out: list[Message] = []
    for index in range(comp.message_index, len(conv.messages)):
        message = conv.messages[index]
        if is_model_call(message):
            break
        if type(message) is UserMessage and message.origin == INJECTED:
            continue
        out.append(message)
    return out


def _next_prompt(messages: list[Message], end: int) -> int | None:
    for message in messages[end:]:
        if is_model_call(message):
            usage = getattr(message, "usage", None)
            return usage.input_tokens if usage is not None and usage.input_tokens else None
    return None


def _tokens_before(messages: list[Message], start: int, end: int, comp: Compaction) -> int | None:
    """The runtime's own count (``preTokens``), else the last call's prompt plus output."""
    if comp.pre_tokens is not None:
        return comp.pre_tokens
    for message in reversed(messages[start:end]):
        if is_model_call(message):
            usage = getattr(message, "usage", None)
            return None if usage is None else usage.input_tokens + usage.output_tokens
    return None
